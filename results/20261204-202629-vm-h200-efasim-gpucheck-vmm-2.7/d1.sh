#!/bin/bash
# device call 1 (stop 54): gpu-check 2.6.0 at HEAD (issue 45, VMM cases of 47); builds 2.7.0a1 and
# efabench against NVSHMEM 3.8.0 with the kernel initiators; then the blocking on-stream put's stacks
# and a first kernel-initiator (thread) run
set -u
export EFAB_DEPS=$PWD/.dc
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-575} - ($(date +%s)-t0) )); }
nvidia-smi -L; git log --oneline -1 2>/dev/null
( make efasim V=2.6.0 ) > $O/b26.log 2>&1; el "build 2.6.0 rc=$?"; tail -2 $O/b26.log
mkdir -p /tmp/nv380 && tar xJf .dc/nvshmem-3.8.0.tar.xz -C /tmp/nv380
B=$PWD/build-efasim
( JOBS=6 make efasim V=2.7.0a1 ) > $O/b27.log 2>&1 &
p27=$!
( make -s -j4 BUILD="$B/lf-2.6.0/efab-nv380" LIBFABRIC_HOME="$B/lf-2.6.0/prefix" NVSHMEM_HOME=/tmp/nv380 \
	LDFLAGS="-Wl,-rpath-link,$B/rdma-core-64.0/prefix/lib" all ) > $O/bnv.log 2>&1 &
pnv=$!
EFASIM_VERSIONS=2.6.0 timeout 380 make gpu-check > $O/gc26.log 2>&1; el "gpu-check 2.6.0 rc=$?"
grep -E '^efasim-gpu|^FAIL|fail' $O/gc26.log | cut -c1-300 | head -20
wait $pnv; el "nv380 build rc=$?"; tail -3 $O/bnv.log
nm $B/lf-2.6.0/efab-nv380/bin/efab_shmem_lat | grep -c ' T .*nvshmemi_init_thread'
export EFAB_STACKS_TIMEOUT=20
env EFAB_NV_STACKS=8 PUT_FABRICS=default PUT_MODES=lat PUT_INITIATORS=stream PUT_OPS=put PUTSZ="-m 8" PUT_LAT_N=3 \
	PUT_RAW=0 PUT_CORRUPT=0 PUT_T=45 EFAB_PUT_TIMEOUT=80 timeout $(left) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/blk put > $O/blk.out 2>&1
el "blocking on-stream rc=$?"; cut -c1-300 $O/blk/summary.txt
env EFAB_NV_STACKS=12 PUT_FABRICS=default PUT_MODES="bw lat" PUT_INITIATORS=thread PUT_OPS=put PUTSZ="-m 8:64K:x16" PUT_LAT_N=5 PUT_BW_N=3 \
	PUTSZ_CHECK="-m 4K" PUT_RAW=0 PUT_CORRUPT=0 PUT_T=12 EFAB_PUT_TIMEOUT=60 timeout $(left) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/kth put > $O/kth.out 2>&1
el "kernel thread rc=$?"; cut -c1-300 $O/kth/summary.txt
wait $p27; el "build 2.7.0a1 rc=$?"; tail -2 $O/b27.log
pkill -f efab_shmem_ 2>/dev/null
cp -r build/gpu-check/matrix-2.6.0 $O/m26 2>/dev/null
tar czf $O/d1.tgz -C $O blk kth m26 blk.out kth.out gc26.log b26.log b27.log bnv.log 2>/dev/null; rm -rf $O/blk $O/kth $O/m26 $O/*.log $O/*.out
el done

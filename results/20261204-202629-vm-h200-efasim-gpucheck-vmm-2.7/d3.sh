#!/bin/bash
# device call 3 (stop 54): diagnostics with efasim's new log lines: 2.7.0a1 efa-direct cuda:host
# (mk_copy failure, SIGSEGV core), 2.6.0 VMM on efa-direct (data errors, illegal address), and the
# blocking on-stream put under MPS
set -u
export EFAB_DEPS=$PWD/.dc
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
( make efasim V=2.6.0 ) > $O/b26.log 2>&1; el "build 2.6.0 rc=$?"
B=$PWD/build-efasim
mkdir -p /tmp/nv380 && tar xJf .dc/nvshmem-3.8.0.tar.xz -C /tmp/nv380
( make -s -j6 BUILD="$B/lf-2.6.0/efab-nv380" LIBFABRIC_HOME="$B/lf-2.6.0/prefix" NVSHMEM_HOME=/tmp/nv380 \
	LDFLAGS="-Wl,-rpath-link,$B/rdma-core-64.0/prefix/lib" all ) > $O/bnv.log 2>&1 &
pnv=$!
( make efasim V=2.7.0a1 ) > $O/b27.log 2>&1; el "build 2.7.0a1 rc=$?"
echo "core_pattern: $(cat /proc/sys/kernel/core_pattern)"; ulimit -c unlimited; mkdir -p /tmp/cores; cd /tmp/cores
M=/work/main/tests/gpu/efasim_matrix.sh
EFASIM_LOG=1 EFASIM_GPU_ONLY=efa-direct EFASIM_GPU_SIZES=1:8 EFAB_MATRIX_ONLY='^(put_bw writedata|get_lat) --mem cuda:host ?$' \
	timeout 150 $M 2.7.0a1 $O/x27 > $O/x27.out 2>&1; el "2.7.0a1 cuda:host rc=$?"; grep -E '^(PASS|FAIL)' $O/x27.out | cut -c1-200
grep -h 'efasim\[' $O/x27/*.log | sort | uniq -c | sort -rn | head -12 | cut -c1-300
ls -la /tmp/cores /work/main/core* 2>/dev/null | head
for c in $(find /tmp/cores /work/main -maxdepth 1 -name 'core*' -type f 2>/dev/null | head -2); do
	echo "== core $c: $(file $c | cut -c1-200)"
	timeout 90 /usr/local/cuda/bin/cuda-gdb -q -batch -nx -ex 'bt 25' -ex 'info threads' $B/lf-2.7.0a1/efab/bin/efab_put_bw $c 2>&1 | grep -v '^\[New LWP' | head -60
done
cd /work/main
EFASIM_LOG=1 EFASIM_GPU_ONLY=efa-direct EFAB_MATRIX_ONLY='^vmm (mr_reg --mem cuda-vmm \(all regimes\)|put_lat writedata --mem cuda-vmm|put_lat writedata --mem cuda-vmm:host)$' \
	timeout 200 $M 2.6.0 $O/v26 > $O/v26.out 2>&1; el "2.6.0 vmm rc=$?"; grep -E '^(PASS|FAIL)' $O/v26.out | cut -c1-200
grep -h 'efasim\[' $O/v26/*.log | sed 's/efasim\[[0-9]*\]/efasim[P]/; s/0x[0-9a-f]*/X/g' | sort | uniq -c | sort -rn | head -20 | cut -c1-300
wait $pnv; el "nv380 build rc=$?"
nvidia-cuda-mps-control -d && el "MPS on"
env EFAB_NV_STACKS=25 EFAB_STACKS_TIMEOUT=20 PUT_FABRICS=default PUT_MODES=lat PUT_INITIATORS=stream PUT_OPS="put get" PUTSZ="-m 8:4K:x8" PUT_LAT_N=3 \
	PUT_RAW=0 PUT_CORRUPT=0 PUT_T=20 EFAB_PUT_TIMEOUT=70 timeout 170 tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/mps put > $O/mps.out 2>&1
el "blocking on-stream under MPS rc=$?"; cut -c1-300 $O/mps/summary.txt
echo quit | nvidia-cuda-mps-control; el "MPS off"
pkill -f efab_ 2>/dev/null
tar czf $O/d3.tgz -C $O x27 v26 mps x27.out v26.out mps.out b26.log b27.log bnv.log 2>/dev/null; rm -rf $O/x27 $O/v26 $O/mps $O/*.log $O/*.out
el done

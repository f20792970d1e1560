#!/bin/bash
# device call: (A) 2.7.0a1 gpu-check remainder + cq-depth cases, (B) NVSHMEM 3.6.5 proxy hang diagnosis
set -u
export EFAB_DEPS=$PWD/.deps-ext
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
( make efasim V=2.6.0 && make efasim V=2.7.0a1 ) > $O/build.log 2>&1; el "builds rc=$?"
EFAB_MATRIX_ONLY='reg_path|max_cq_depth' timeout 150 tests/gpu/efasim_matrix.sh 2.7.0a1 $PWD/build/gr27 > $O/m27.log 2>&1; el "m27 rc=$?"; grep -E "^(PASS|FAIL)|pass," $O/m27.log | cut -c1-300
EFAB_MATRIX_ONLY='max_cq_depth' timeout 60 tests/gpu/efasim_matrix.sh 2.6.0 $PWD/build/gr26 > $O/m26.log 2>&1; el "m26 rc=$?"; grep -E "^(PASS|FAIL)|pass," $O/m26.log | cut -c1-300
mkdir -p /tmp/nv365 && tar xJf .nv/nvshmem-3.6.5.tar.xz -C /tmp/nv365
mkdir -p /tmp/cores; echo '/tmp/cores/core.%p' > /proc/sys/kernel/core_pattern; ulimit -c unlimited
export NVSHMEM_DEBUG=TRACE NVSHMEM_DEBUG_SUBSYS=PROXY,TRANSPORT,INIT EFASIM_LOG=1 EFAB_STACKS_TIMEOUT=40
S="SEED_FABRICS=default SEED_APIS=putmem_nbi_on_stream"
env SEED_FABRICS=default SEED_APIS=putmem_nbi_on_stream SEED_REGS=--register EFAB_SEED_TIMEOUT=40 EFAB_NV_STACKS=15 EFASIM_QP_STATS=1 \
  timeout 200 tests/nvshmem/sitting.sh /tmp/nv365 2.6.0 $O/s1 seed > /dev/null 2>&1; el "s1 rc=$?"; cat $O/s1/summary.txt
env SEED_FABRICS=default SEED_APIS=putmem_nbi_on_stream SEED_REGS=--register EFAB_SEED_TIMEOUT=30 EFASIM_NICS=1 \
  timeout 100 tests/nvshmem/sitting.sh /tmp/nv365 2.6.0 $O/s2 seed > /dev/null 2>&1; el "s2 rc=$?"; tail -2 $O/s2/summary.txt
env SEED_FABRICS=default SEED_APIS=putmem SEED_REGS=--register EFAB_SEED_TIMEOUT=30 \
  timeout 100 tests/nvshmem/sitting.sh /tmp/nv365 2.6.0 $O/s3 seed > /dev/null 2>&1; el "s3 rc=$?"; tail -2 $O/s3/summary.txt
ls -la /tmp/cores; c=$(ls /tmp/cores/core.* 2>/dev/null | head -1)
B=$(ls -d build-efasim/lf-2.6.0/efab-*/bin | head -1)
[ -n "$c" ] && timeout 60 cuda-gdb -q -batch -nx -ex "thread apply all bt 25" $B/efab_shmem_seed $c > $O/s3/core-bt.txt 2>&1; el "core bt rc=$?"
grep -c . $O/s3/core-bt.txt 2>/dev/null
tar czf $O/nv.tgz -C $O s1 s2 s3 2>/dev/null; rm -rf $O/s1 $O/s2 $O/s3
el done

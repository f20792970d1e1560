#!/bin/bash
# device call 2: cq-depth GDA case (log), NVSHMEM 3.6.5 seed matrix after the efasim fixes, then 3.4.5 if time is left
set -u
export EFAB_DEPS=$PWD/.deps-ext
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-440} - ($(date +%s)-t0) )); }
( tests/efasim/build 2.6.0 sim && tests/efasim/build 2.6.0 libfabric && tests/efasim/build 2.6.0 efab ) > $O/build.log 2>&1; el "build rc=$?"
EFAB_MATRIX_ONLY='max_cq_depth' timeout 60 tests/gpu/efasim_matrix.sh 2.6.0 $PWD/build/gq > $O/m26.log 2>&1; el "m26 rc=$?"; grep -E "^(PASS|FAIL)|pass," $O/m26.log | cut -c1-400
for f in build/gq/*.log; do grep -q max_cq_depth $f 2>/dev/null || grep -q EFASIM_MAX_CQE $f && { echo "== $f"; grep -v "^#" $f | head -30 | cut -c1-300; }; done
mkdir -p /tmp/nv365 && tar xJf .nv/nvshmem-3.6.5.tar.xz -C /tmp/nv365
mkdir -p /tmp/cores; echo '/tmp/cores/core.%p' > /proc/sys/kernel/core_pattern; ulimit -c unlimited
export EFAB_STACKS_TIMEOUT=30 EFASIM_LOG=1
env EFAB_SEED_TIMEOUT=30 EFAB_NV_STACKS=20 timeout $(left) tests/nvshmem/sitting.sh /tmp/nv365 2.6.0 $O/s365 seed > /dev/null 2>&1; el "seed 3.6.5 rc=$?"; cat $O/s365/summary.txt | cut -c1-400
ls /tmp/cores 2>/dev/null | head
NV34=$(python3 -c "import nvidia.nvshmem as m, os; print(list(m.__path__)[0])" 2>/dev/null)
echo "3.4.5 at: $NV34; $(left) s left"
if [ -n "$NV34" ] && [ $(left) -gt 90 ]; then
  env EFAB_SEED_TIMEOUT=30 timeout $(left) tests/nvshmem/sitting.sh "$NV34" 2.6.0 $O/s345 seed > /dev/null 2>&1; el "seed 3.4.5 rc=$?"; cat $O/s345/summary.txt | cut -c1-400
fi
ls /tmp/cores 2>/dev/null | head
tar czf $O/nv2.tgz -C $O s365 s345 build.log 2>/dev/null; rm -rf $O/s365 $O/s345
el done

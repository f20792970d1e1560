#!/bin/bash
# device call 1: 2.7.0a1 max_cq_depth GDA case (issue 45), NVSHMEM 3.8.0 smoke + seed + seedlocal (issue 47)
set -u
export EFAB_DEPS=$PWD/.deps-ext
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-570} - ($(date +%s)-t0) )); }
nvidia-smi -L
( make efasim V=2.7.0a1 ) > $O/b27.log 2>&1; el "build 2.7.0a1 rc=$?"; tail -3 $O/b27.log
nvidia-cuda-mps-control -d && el "MPS on"
EFAB_MATRIX_ONLY='max_cq_depth' timeout 120 tests/gpu/efasim_matrix.sh 2.7.0a1 $PWD/build/gq27 > $O/m27.log 2>&1; el "m27 rc=$?"; grep -E "^(PASS|FAIL)|pass" $O/m27.log | cut -c1-300
for f in build/gq27/*.log; do grep -q 'receive CQ ring' $f && { echo "== $f"; grep -i 'receive CQ ring\|max_cq' $f | head -5 | cut -c1-300; }; done
echo quit | nvidia-cuda-mps-control; el "MPS off"
mkdir -p /tmp/nv380 && tar xJf .nv/nvshmem-3.8.0.tar.xz -C /tmp/nv380
export EFAB_STACKS_TIMEOUT=30
env EFAB_SEED_TIMEOUT=30 EFAB_NV_STACKS=22 timeout $(left) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/s380 smoke seed seedlocal > $O/s380.out 2>&1; el "sitting 3.8.0 rc=$?"; cut -c1-400 $O/s380/summary.txt
tar czf $O/dev1.tgz -C $O s380 m27.log b27.log s380.out 2>/dev/null; rm -rf $O/s380
cp -r build/gq27 $O/ 2>/dev/null; tar czf $O/gq27.tgz -C $O gq27; rm -rf $O/gq27
nvidia-smi --query-compute-apps=pid,name --format=csv
el done

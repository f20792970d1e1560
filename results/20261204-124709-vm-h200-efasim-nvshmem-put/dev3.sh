#!/bin/bash
# device call 3: NVSHMEM 3.7.2 smoke+seed+seedlocal; 3.8.0 seedlocal (shm evidence); 3.8.0 part put on the default fabric
set -u
export EFAB_DEPS=$PWD/.deps-ext
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-560} - ($(date +%s)-t0) )); }
for v in 3.7.2 3.8.0; do d=/tmp/nv${v//./}; mkdir -p $d && tar xJf .nv/nvshmem-$v.tar.xz -C $d; done
export EFAB_STACKS_TIMEOUT=30
env EFAB_SEED_TIMEOUT=30 EFAB_NV_STACKS=22 timeout $(left) tests/nvshmem/sitting.sh /tmp/nv372 2.6.0 $O/s372 smoke seed seedlocal > $O/s372.out 2>&1; el "sitting 3.7.2 rc=$?"; cut -c1-300 $O/s372/summary.txt
env EFAB_SEED_TIMEOUT=30 timeout $(left) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/l380 seedlocal > $O/l380.out 2>&1; el "seedlocal 3.8.0 rc=$?"; cut -c1-300 $O/l380/summary.txt
tar czf $O/dev3a.tgz -C $O s372 l380 s372.out l380.out 2>/dev/null; rm -rf $O/s372 $O/l380
env PUT_FABRICS=default PUT_T=15 PUT_LAT_N=30 EFAB_PUT_TIMEOUT=100 timeout $(left) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/p380 put > $O/p380.out 2>&1; el "put 3.8.0 rc=$?"; cut -c1-250 $O/p380/summary.txt
[ -f $O/p380/put_table.txt ] || python3 tests/nvshmem/put_table.py $O/p380 > $O/p380/put_table.txt 2>&1
tar czf $O/dev3b.tgz -C $O p380 p380.out 2>/dev/null; rm -rf $O/p380
pkill -f efab_shmem_ 2>/dev/null; nvidia-smi --query-compute-apps=pid,name --format=csv
el done

#!/bin/bash
# device call 2: NVSHMEM 3.8.0 part put (efab_shmem_lat/bw beside the raw fabric) on 2.6.0
set -u
export EFAB_DEPS=$PWD/.deps-ext
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-540} - ($(date +%s)-t0) )); }
[ -d /tmp/nv380/include ] || { mkdir -p /tmp/nv380 && tar xJf .nv/nvshmem-3.8.0.tar.xz -C /tmp/nv380; }
env PUT_FABRICS="${PF:-default efa}" EFAB_PUT_TIMEOUT=120 timeout $(left) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/p380 put > $O/p380.out 2>&1; el "put 3.8.0 rc=$?"; cut -c1-300 $O/p380/summary.txt
head -5 $O/p380/put_table.txt
tar czf $O/dev2.tgz -C $O p380 p380.out 2>/dev/null; rm -rf $O/p380
nvidia-smi --query-compute-apps=pid,name --format=csv
el done

#!/bin/bash
# device call 2 (2026-12-05, second session), issue 47: part put: NVSHMEM 3.8.0's own put/get from the
# kernel initiators (thread, warp, block) beside the raw fabric, one sitting, on PUT_FABRICS (default:
# NVSHMEM's own, efa-direct); then, with the time left, part blockdiag (the blocking on-stream put as it
# hung, then polled copies, then mpirun --bind-to none)
. results/20261205-h200-efasim-gpucheck-nvshmem/common.sh
[ -f $B/lf-2.6.0/prefix/lib/libfabric.so ] || { ( JOBS=12 make efasim V=2.6.0 ) > $O/b26.log 2>&1; el "build 2.6.0 rc=$?"; }
[ -x $B/lf-2.6.0/efab-nv380/bin/efab_shmem_lat ] || { bnv; el "nv380 build rc=$?"; }
export EFAB_STACKS_TIMEOUT=15
env PUT_FABRICS=${PUT_FABRICS:-default} PUT_INITIATORS="${PUT_INITIATORS:-thread warp block}" PUT_LAT_FORMS="blocking nbi" \
	PUTSZ="-m 8:16M:x16" PUTSZ_CHECK="-m 4K:1M:x16" PUT_LAT_N=20 PUT_BW_N=3 PUT_CORRUPT=0 PUT_T=15 EFAB_PUT_TIMEOUT=60 EFAB_NV_STACKS=40 \
	timeout $(( $(left) - ${BLOCK_S:-150} )) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/put put > $O/put.out 2>&1
el "put rc=$?"; cut -c1-220 $O/put/summary.txt
[ -s $O/put/put_table.txt ] || python3 tests/nvshmem/put_table.py $O/put > $O/put/put_table.txt 2>&1; head -40 $O/put/put_table.txt
pkill -f efab_shmem_ 2>/dev/null; sleep 1
env BLOCK_OPS=put EFAB_BLOCK_TIMEOUT=35 EFAB_NV_STACKS=20 BLOCK_VARIANTS="${BLOCK_VARIANTS:-as-hung: query:EFASIM_CUDA_WAIT=query,EFASIM_LOG=1 unbound:+bind-to-none}" \
	timeout $(( $(left) - 15 )) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/blk blockdiag > $O/blk.out 2>&1
el "blockdiag rc=$?"; cut -c1-300 $O/blk/summary.txt
pkill -f efab_shmem_ 2>/dev/null
tar czf $O/e2.tgz -C $O put blk put.out blk.out b26.log bnv.log 2>/dev/null; rm -rf $O/blk $O/put $O/*.out $O/*.log
el done

#!/bin/bash
# device call 2 (2026-12-05, second session), issue 47: part put: NVSHMEM 3.8.0's own put/get from the
# kernel initiators (thread, warp, block) beside the raw fabric, one sitting, on PUT_FABRICS (default:
# NVSHMEM's own, efa-direct); then, with the time left, part blockdiag (the blocking on-stream put as it
# hung, then polled copies, then mpirun --bind-to none; BLOCK=0 leaves it out: BLOCK=0 BLOCK_S=20
# PUT_FABRICS=efa gives the efa fabric's sitting the whole call)
. results/20261205-065151-vm-h200-efasim-gpucheck-nvshmem/common.sh
need26
export EFAB_STACKS_TIMEOUT=15
putsit ${BLOCK_S:-150}
pkill -f efab_shmem_ 2>/dev/null; sleep 1
if [ "${BLOCK:-1}" = 1 ]; then
	env BLOCK_OPS=put EFAB_BLOCK_TIMEOUT=35 EFAB_NV_STACKS=20 BLOCK_VARIANTS="${BLOCK_VARIANTS:-as-hung: query:EFASIM_CUDA_WAIT=query,EFASIM_LOG=1 unbound:+bind-to-none}" \
		timeout $(( $(left) - 15 )) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/blk blockdiag > $O/blk.out 2>&1
	el "blockdiag rc=$?"; cut -c1-300 $O/blk/summary.txt
fi
pkill -f efab_shmem_ 2>/dev/null
tar czf $O/e2.tgz -C $O put blk put.out blk.out b26.log bnv.log 2>/dev/null; rm -rf $O/blk $O/put $O/*.out $O/*.log
el done

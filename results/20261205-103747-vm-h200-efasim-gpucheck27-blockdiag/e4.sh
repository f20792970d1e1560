#!/bin/bash
# device call 3 (2026-12-05, third session), issue 47: (1) the blocking on-stream put with efasim's
# copies made in a CUDA context of efasim's own (EFASIM_CUDA_COPY=ownctx, new), then with
# CUDA_DEVICE_MAX_CONNECTIONS=32 (e2.sh's three variants all hung, the engine thread in
# cuStreamSynchronize of an 8-byte copy, memkind.c copy_wait, each time); the get too where ownctx
# completes the put; (2) part put on the efa fabric (kernel initiators beside the raw fabric) with the
# time left
. results/20261205-065151-vm-h200-efasim-gpucheck-nvshmem/common.sh
need26
export EFAB_STACKS_TIMEOUT=15
bd() { env BLOCK_OPS="$1" EFAB_BLOCK_TIMEOUT=35 EFAB_NV_STACKS=20 BLOCK_VARIANTS="$2" \
	timeout $(( $(left) - 15 )) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/$3 blockdiag > $O/$3.out 2>&1
	el "blockdiag $3 rc=$?"; cut -c1-300 $O/$3/summary.txt; pkill -f efab_shmem_ 2>/dev/null; sleep 1; }
bd put "ownctx:EFASIM_CUDA_COPY=ownctx,EFASIM_LOG=1" blk1
grep -h 'EFASIM_CUDA_COPY\|not done' $O/blk1/*.log 2>/dev/null | sort | uniq -c | head -5
if grep -q '^block_ownctx_put: exit 0' $O/blk1/summary.txt; then
	bd get "ownctx:EFASIM_CUDA_COPY=ownctx,EFASIM_LOG=1" blk2
fi
bd put "connections32:CUDA_DEVICE_MAX_CONNECTIONS=32" blk3
PUT_FABRICS=efa putsit 20
pkill -f efab_shmem_ 2>/dev/null
tar czf $O/e4.tgz -C $O put blk1 blk2 blk3 put.out blk1.out blk2.out blk3.out b26.log bnv.log 2>/dev/null; rm -rf $O/blk* $O/put $O/*.out $O/*.log
el done

#!/bin/bash
# device call 2 (2026-12-05): make gpu-check for libfabric 2.7.0a1 + rdma-core main at HEAD (issue 45);
# then spin_copy if call 1 did not reach it, and part blockdiag (issue 47's blocking on-stream hang)
. results/20261205-065151-vm-h200-efasim-gpucheck-nvshmem/common.sh
( make efasim V=2.7.0a1 ) > $O/b27.log 2>&1; el "build 2.7.0a1 rc=$?"; tail -1 $O/b27.log
EFASIM_VERSIONS=2.7.0a1 timeout $(( $(left) - ${BLOCK_S:-150} )) make gpu-check > $O/gc27.log 2>&1; el "gpu-check 2.7.0a1 rc=$?"
grep -E '^efasim-gpu|^FAIL|^make.*Error' $O/gc27.log | cut -c1-300 | head -30
[ "${SPIN:-0}" = 1 ] && spin 90
[ -x $B/lf-2.6.0/efab-nv380/bin/efab_shmem_lat ] || { bnv; el "nv380 build rc=$?"; }
export EFAB_STACKS_TIMEOUT=15
env BLOCK_OPS=put EFAB_BLOCK_TIMEOUT=40 EFAB_NV_STACKS=20 BLOCK_VARIANTS="${BLOCK_VARIANTS:-as-hung: query:EFASIM_CUDA_WAIT=query,EFASIM_LOG=1 unbound:+bind-to-none}" \
	timeout $(( $(left) - 10 )) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/blk blockdiag > $O/blk.out 2>&1
el "blockdiag rc=$?"; cut -c1-300 $O/blk/summary.txt
pkill -f efab_shmem_ 2>/dev/null
cp -r build/gpu-check/matrix-2.7.0a1 $O/m27 2>/dev/null
tar czf $O/dB.tgz -C $O m27 blk gc27.log b27.log bnv.log blk.out spin.txt spin.out 2>/dev/null; rm -rf $O/m27 $O/blk $O/*.log $O/*.out $O/spin.txt
el done

#!/bin/bash
# device call 1 (2026-12-05, second session): make gpu-check for libfabric 2.7.0a1 + rdma-core main
# at HEAD, with the GDA lap pair under the matrix's own MPS daemon (issue 45); libfabric 2.6.0 and
# efabench against NVSHMEM 3.8.0 built beside it for the next call (issue 47)
. results/20261205-065151-vm-h200-efasim-gpucheck-nvshmem/common.sh
nvidia-smi -L; git log --oneline -1 2>/dev/null
( JOBS=10 make efasim V=2.7.0a1 ) > $O/b27.log 2>&1; el "build 2.7.0a1 rc=$?"; tail -1 $O/b27.log
( ( JOBS=4 make efasim V=2.6.0 ) > $O/b26.log 2>&1; el "build 2.6.0 rc=$?"; bnv; el "nv380 build rc=$?" ) & pbg=$!
EFASIM_VERSIONS=2.7.0a1 timeout $(( $(left) - 25 )) make gpu-check > $O/gc27.log 2>&1; el "gpu-check 2.7.0a1 rc=$?"
grep -E '^efasim-gpu|^FAIL|SKIP|^make.*Error|mps' $O/gc27.log | cut -c1-300 | head -30
wait $pbg
cp -r build/gpu-check/matrix-2.7.0a1 $O/m27 2>/dev/null
tar czf $O/e1.tgz -C $O m27 gc27.log b27.log b26.log bnv.log 2>/dev/null; rm -rf $O/m27 $O/*.log
el done

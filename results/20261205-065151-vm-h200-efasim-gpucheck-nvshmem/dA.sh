#!/bin/bash
# device call 1 (2026-12-05): make gpu-check for libfabric 2.6.0 at HEAD (issue 45);
# builds 2.7.0a1 and efabench against NVSHMEM 3.8.0 in the background; spin_copy (issue 47)
. results/20261205-065151-vm-h200-efasim-gpucheck-nvshmem/common.sh
nvidia-smi -L; git log --oneline -1 2>/dev/null
( make efasim V=2.6.0 ) > $O/b26.log 2>&1; el "build 2.6.0 rc=$?"; tail -2 $O/b26.log
( JOBS=6 make efasim V=2.7.0a1 ) > $O/b27.log 2>&1 & p27=$!
bnv & pnv=$!
EFASIM_VERSIONS=2.6.0 timeout $(( $(left) - 40 )) make gpu-check > $O/gc26.log 2>&1; el "gpu-check 2.6.0 rc=$?"
grep -E '^efasim-gpu|^FAIL|^make.*Error' $O/gc26.log | cut -c1-300 | head -30
wait $pnv; el "nv380 build rc=$?"; tail -3 $O/bnv.log
wait $p27; el "build 2.7.0a1 rc=$?"; tail -2 $O/b27.log
[ $(left) -gt 30 ] && spin $(( $(left) - 15 ))
cp -r build/gpu-check/matrix-2.6.0 $O/m26 2>/dev/null
tar czf $O/dA.tgz -C $O m26 gc26.log b26.log b27.log bnv.log spin.txt spin.out 2>/dev/null; rm -rf $O/m26 $O/*.log $O/*.out $O/spin.txt
el done

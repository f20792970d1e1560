#!/bin/bash
# for the next device session (written 2026-12-05, not run): builds everything e2.sh needs, then
# the part of libfabric 2.7.0a1's make gpu-check that e1.sh's two calls did not reach (the VMM
# cases, the efa fabric's gda exit 77, EFASIM_EXT_CQ=0, the probes); run e2.sh next on the same
# warm machine (within 30 s), then knobs (dC.sh's second half)
. results/20261205-h200-efasim-gpucheck-nvshmem/common.sh
( JOBS=12 make efasim V=2.7.0a1 ) > $O/b27.log 2>&1; el "build 2.7.0a1 rc=$?"
( ( JOBS=4 make efasim V=2.6.0 ) > $O/b26.log 2>&1; el "build 2.6.0 rc=$?"; bnv; el "nv380 build rc=$?" ) & pbg=$!
EFAB_MATRIX_ONLY='vmm|on efa \(no GDA|EXT_CQ=0' EFASIM_VERSIONS=2.7.0a1 timeout $(( $(left) - 25 )) make gpu-check > $O/gc27t.log 2>&1
el "gpu-check 2.7.0a1 (tail) rc=$?"; grep -E '^efasim-gpu|^FAIL|SKIP|^make.*Error' $O/gc27t.log | cut -c1-300 | head -30
wait $pbg
tar czf $O/e3.tgz -C $O gc27t.log b27.log b26.log bnv.log 2>/dev/null; rm -f $O/*.log
el done

#!/bin/bash
# for the next device session (written 2026-12-05, not run): builds everything e2.sh needs, then
# the part of libfabric 2.7.0a1's make gpu-check that e1.sh's two calls did not reach (the VMM
# cases, the efa fabric's gda exit 77, EFASIM_EXT_CQ=0, the probes), then efab_shmem_reg --mem
# cuda-vmm through NVSHMEM 3.8.0 (part reg); run e2.sh next on the same warm machine (within 30 s),
# then knobs (dC.sh's second half)
. results/20261205-065151-vm-h200-efasim-gpucheck-nvshmem/common.sh
( JOBS=12 make efasim V=2.7.0a1 ) > $O/b27.log 2>&1; el "build 2.7.0a1 rc=$?"
J26=4 need26 & pbg=$!
EFAB_MATRIX_ONLY='vmm|on efa \(no GDA|EXT_CQ=0' EFASIM_VERSIONS=2.7.0a1 timeout $(( $(left) - 25 )) make gpu-check > $O/gc27t.log 2>&1
el "gpu-check 2.7.0a1 (tail) rc=$?"; grep -E '^efasim-gpu|^FAIL|SKIP|^make.*Error' $O/gc27t.log | cut -c1-300 | head -30
wait $pbg
# issue 47 deliver 4: what nvshmemx_buffer_register costs for VMM memory (cuMemCreate: PyTorch's
# expandable segments, NCCL, NVSHMEM's own heap), transport none (one PE) and libfabric, one round
env REPS=1 REGSZ="-m 4K:1G:x16 -n 20 --max-total 4G --mem cuda-vmm" timeout $(( $(left) - 20 )) \
	tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/regvmm reg > $O/regvmm.out 2>&1; el "reg cuda-vmm rc=$?"; cut -c1-220 $O/regvmm/summary.txt
tar czf $O/e3.tgz -C $O regvmm regvmm.out gc27t.log b27.log b26.log bnv.log 2>/dev/null; rm -rf $O/regvmm $O/*.log $O/*.out
el done

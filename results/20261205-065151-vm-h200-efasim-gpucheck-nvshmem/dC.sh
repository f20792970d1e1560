#!/bin/bash
# device call 3 (2026-12-05): NVSHMEM 3.8.0's own put/get from the kernel initiators beside the raw
# fabric, one sitting on efa-direct (issue 47 deliver 3); the batching knobs
. results/20261205-065151-vm-h200-efasim-gpucheck-nvshmem/common.sh
need26
export EFAB_STACKS_TIMEOUT=15
putsit ${KNOB_S:-170}
env REPS=2 KNOB_INITIATORS="host stream" KNOB_N=10 PUT_T=15 EFAB_PUT_TIMEOUT=40 \
	timeout $(( $(left) - 45 )) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/knobs knobs > $O/knobs.out 2>&1
el "knobs rc=$?"; cut -c1-220 $O/knobs/summary.txt; cat $O/knobs/knobs_table.txt 2>/dev/null | head -40
pkill -f efab_shmem_ 2>/dev/null
tar czf $O/dC.tgz -C $O put knobs put.out knobs.out b26.log bnv.log 2>/dev/null; rm -rf $O/put $O/knobs $O/*.out $O/*.log
el done

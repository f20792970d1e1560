#!/bin/bash
# device call 3 (2026-12-05): NVSHMEM 3.8.0's own put/get from the kernel initiators beside the raw
# fabric, one sitting on efa-direct (issue 47 deliver 3); the batching knobs; efab_shmem_reg --mem cuda-vmm
. results/20261205-h200-efasim-gpucheck-nvshmem/common.sh
[ -x $B/lf-2.6.0/prefix/lib/libfabric.so ] || { ( make efasim V=2.6.0 ) > $O/b26.log 2>&1; el "build 2.6.0 rc=$?"; }
[ -x $B/lf-2.6.0/efab-nv380/bin/efab_shmem_lat ] || { bnv; el "nv380 build rc=$?"; }
export EFAB_STACKS_TIMEOUT=15
env PUT_FABRICS=${PUT_FABRICS:-default} PUT_INITIATORS="${PUT_INITIATORS:-thread warp block}" PUT_LAT_FORMS="blocking nbi" \
	PUTSZ="-m 8:16M:x16" PUTSZ_CHECK="-m 4K:1M:x16" PUT_LAT_N=20 PUT_BW_N=3 PUT_CORRUPT=0 PUT_T=15 EFAB_PUT_TIMEOUT=60 EFAB_NV_STACKS=40 \
	timeout $(( $(left) - ${KNOB_S:-170} )) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/put put > $O/put.out 2>&1
el "put rc=$?"; cut -c1-220 $O/put/summary.txt
[ -f $O/put/put_table.txt ] || python3 tests/nvshmem/put_table.py $O/put > $O/put/put_table.txt 2>&1
env REPS=2 KNOB_INITIATORS="host stream" KNOB_N=10 PUT_T=15 EFAB_PUT_TIMEOUT=40 \
	timeout $(( $(left) - 45 )) tests/nvshmem/sitting.sh /tmp/nv380 2.6.0 $O/knobs knobs > $O/knobs.out 2>&1
el "knobs rc=$?"; cut -c1-220 $O/knobs/summary.txt; cat $O/knobs/knobs_table.txt 2>/dev/null | head -40
pkill -f efab_shmem_ 2>/dev/null
tar czf $O/dC.tgz -C $O put knobs put.out knobs.out b26.log bnv.log 2>/dev/null; rm -rf $O/put $O/knobs $O/*.out $O/*.log
el done

#!/bin/bash
# issue 62 item 3: NVSHMEM put and put-signal on efa-direct beside the raw partners
# (efab_put_bw -W 1 / --signal-send ...), for each NVSHMEM version given, in turn:
#   DEADLINE=570 bash build-gpucheck-x/nv.sh 3.6.5 3.8.0
#   (carry build-dc26 [libfabric 2.6.0 + rdma-core 64.0 tarballs], build-nvpack/nvshmem-V.tar.xz)
set -u
export EFAB_DEPS=$PWD/build-dc26/deps
[ -d "$EFAB_DEPS" ] || export EFAB_DEPS=$PWD/build-dc/deps
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-570} - ($(date +%s)-t0) )); }
nvidia-smi -L; nproc; git log --oneline -1 2>/dev/null | cut -c1-80
export JOBS=16
n=$#
for v in "$@"; do
	d=/tmp/nv${v//./}
	[ -d $d/include ] || { mkdir -p $d && tar xJf build-nvpack/nvshmem-$v.tar.xz -C $d; }
	el "unpacked $v"
	share=$(( ($(left) - 20) / n )); n=$((n - 1))
	PUT_OPS=put PUT_MODES="lat bw" PUT_INITIATORS="stream thread" PUT_FABRICS=default PUT_CORRUPT=0 \
		EFAB_PUT_TIMEOUT=90 timeout $share tests/nvshmem/sitting.sh $d 2.6.0 $O/p$v put > $O/p$v.out 2>&1
	el "sitting $v rc=$? (limit $share s)"
	cut -c1-300 $O/p$v/summary.txt
	echo ----; cut -c1-330 $O/p$v/put_table.txt
	tar czf $O/p$v.tgz -C $O p$v p$v.out 2>/dev/null; rm -rf $O/p$v $O/p$v.out
done
el done

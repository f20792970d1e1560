#!/bin/bash
# device call 2 (the command line as sent, warm H200 after dev1-nv.sh cut both sittings at the
# put rows): only the put-signal block and the raw partners, at put-signal's sizes
export EFAB_DEPS=$PWD/build-dc26/deps JOBS=16
for v in 3.6.5 3.8.0; do
	d=/tmp/nv${v//./}
	[ -d $d/include ] || { mkdir -p $d && tar xJf build-nvpack/nvshmem-$v.tar.xz -C $d; }
	# PUT_MODES=x: no put/get rows (efab_shmem_x does not exist: one run exits 127 at once)
	PUTSZ="-m 8:64K:x8" PUT_OPS=put PUT_MODES=x PUT_INITIATORS=stream PUT_FABRICS=default PUT_CORRUPT=0 \
		EFAB_PUT_TIMEOUT=60 timeout 265 tests/nvshmem/sitting.sh $d 2.6.0 $OUT/q$v put > $OUT/q$v.out 2>&1
	echo "$v rc=$?"
	cut -c1-250 $OUT/q$v/summary.txt; cut -c1-300 $OUT/q$v/put_table.txt
	tar czf $OUT/q$v.tgz -C $OUT q$v q$v.out; rm -rf $OUT/q$v
done

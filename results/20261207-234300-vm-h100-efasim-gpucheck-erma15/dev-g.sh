#!/bin/bash
# Adapted from results/20261206-h200-gpucheck-head/g.sh (helper session of 2026-12-07).
#   build        libfabric 2.6.0 (rdma-core 64.0) and 2.7.0a1 (rdma-core main) side by side
#   build26      libfabric 2.6.0 only
#   check V [N]  EFASIM_VERSIONS=V make gpu-check until DEADLINE, from matrix case N (EFAB_MATRIX_FROM)
#   reglog V     build tests/unit/test_reglog against efasim's libfabric V (cmocka from carried debs) and run it
# Deps from build-dc/deps (carried). cmocka debs from build-dc/debs. Logs tarred into $OUT/$TAG.tgz.
set -u
export EFAB_DEPS=$PWD/build-dc/deps
O=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-570} - ($(date +%s)-t0) )); }
nvidia-smi -L; git log --oneline -1 2>/dev/null | cut -c1-80
tag=${TAG:-g}; logs=()
while [ $# -gt 0 ]; do
	case $1 in
	build)
		( JOBS=8 make efasim V=2.6.0 > $O/b26.log 2>&1; el "build 2.6.0 rc=$?" ) &
		( JOBS=8 make efasim V=2.7.0a1 > $O/b27.log 2>&1; el "build 2.7.0a1 rc=$?" ) &
		wait; grep -h 'built in\|seconds\| s (' $O/b26.log $O/b27.log | tail -12; logs+=(b26.log b27.log); shift ;;
	build26)
		JOBS=16 make efasim V=2.6.0 > $O/b26.log 2>&1; el "build 2.6.0 rc=$?"
		grep -h 'built in' $O/b26.log; logs+=(b26.log); shift ;;
	check)
		v=$2; from=1; shift 2
		case ${1:-} in [0-9]*) from=$1; shift ;; esac
		l=gc-$v-from$from.log
		EFAB_MATRIX_FROM=$from EFASIM_VERSIONS=$v timeout $(( $(left) - ${RESERVE:-20} )) make gpu-check > $O/$l 2>&1
		el "gpu-check $v from case $from rc=$?"
		grep -E '^efasim-gpu|^FAIL|SKIP|^make.*Error|^MPS' $O/$l | cut -c1-300 | head -40
		echo "last case line: $(grep -E '^(PASS|FAIL) ' $O/$l | tail -1 | cut -c1-160)"
		logs+=($l); mkdir -p $O/m-$v-$from; cp build/gpu-check/matrix-$v/*.log $O/m-$v-$from/ 2>/dev/null; logs+=(m-$v-$from) ;;
	reglog)
		v=$2; shift 2
		B=$PWD/build-efasim; rc=64.0; [ $v = 2.7.0a1 ] && rc=main
		cm=/tmp/cm; mkdir -p $cm; for f in build-dc/debs/*.deb; do dpkg -x $f $cm; done
		cl=$cm/usr/lib/x86_64-linux-gnu
		l=reglog-$v.log
		{ make -s -j8 BUILD=$PWD/build-reglog-$v LIBFABRIC_HOME=$B/lf-$v/prefix CFLAGS="-I$cm/usr/include" \
			LDFLAGS="-L$cl -Wl,-rpath,$cl -Wl,-rpath-link,$B/rdma-core-$rc/prefix/lib" $PWD/build-reglog-$v/tests/test_reglog \
		  && timeout 60 tests/efasim/run $v $PWD/build-reglog-$v/tests/test_reglog; echo "test_reglog rc=$?"; } > $O/$l 2>&1
		el "reglog $v: $(tail -1 $O/$l)"; grep -n -A3 'gdr_live_init\|# libfabric here' $O/$l | head -20
		logs+=($l) ;;
	*) echo "unknown step $1"; exit 2 ;;
	esac
done
tar czf $O/$tag.tgz -C $O "${logs[@]}" 2>/dev/null; rm -rf $O/*.log $O/m-*
el done

#!/bin/bash
# device calls of 2026-12-06: make gpu-check at HEAD for libfabric 2.6.0 and 2.7.0a1 (issue 45's
# "make gpu-check passes"), after the review of efasim's GPU copy path (2f76135) and the targeted
# rdma-core builds (ada264d). Steps, in order, as arguments:
#   build        libfabric 2.6.0 (rdma-core 64.0) and 2.7.0a1 (rdma-core main) side by side
#   check V [N]  EFASIM_VERSIONS=V make gpu-check until DEADLINE, from matrix case N (EFAB_MATRIX_FROM)
# Deps from .dc (carried: the four tarballs of ../shared/deps it needs). Logs tarred into $OUT/gN.tgz.
set -u
export EFAB_DEPS=$PWD/.dc
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
	check)
		v=$2; from=1; shift 2
		case ${1:-} in [0-9]*) from=$1; shift ;; esac
		l=gc-$v-from$from.log
		EFAB_MATRIX_FROM=$from EFASIM_VERSIONS=$v timeout $(( $(left) - 20 )) make gpu-check > $O/$l 2>&1
		el "gpu-check $v from case $from rc=$?"
		grep -E '^efasim-gpu|^FAIL|SKIP|^make.*Error|^MPS' $O/$l | cut -c1-300 | head -30
		echo "last case line: $(grep -E '^(PASS|FAIL) ' $O/$l | tail -1 | cut -c1-160)"
		logs+=($l); mkdir -p $O/m-$v; cp build/gpu-check/matrix-$v/*.log $O/m-$v/ 2>/dev/null; logs+=(m-$v) ;;
	*) echo "unknown step $1"; exit 2 ;;
	esac
done
tar czf $O/$tag.tgz -C $O "${logs[@]}" 2>/dev/null; rm -rf $O/*.log $O/m-*
el done

#!/bin/sh
# The issue-48 sitting: efab_sidebyside parts one after the other, load logged around each.
# usage: [W=TREE] run.sh OUTDIR PART...   (parts: shm-lat shm-bw shm-rate-before efa260 efa260-unbound efa270
#   efa270-unbound; the last ran later, 10:13 UTC, as W=/work/main run.sh OUTDIR efa270-unbound,
#   with EFASIM_DIR /tmp/efasim-peak-sit270)
set -u
O=$1; shift
W=${W:-/work/wt-peak}
L6=$W/build-efasim/lf-2.6.0
L7=$W/build-efasim/lf-2.7.0a1
export EFASIM_DIR=/tmp/efasim-peak-sit
ERMA=""
for op in write writedata read; do
	for s in 8 64K 4M; do
		for m in "" +pl8 +hp; do
			[ "$op" = read ] && [ "$m" = +hp ] && continue
			ERMA="$ERMA,erma-$op-$s$m"
		done
	done
done
ERMA="${ERMA#,},erma-write-8+pl8+hp,erma-writedata-8+pl8+hp"
snap() { { date -u +%FT%TZ; uptime; pgrep -af "tests/run|make check|mpirun|efasim|fi_|cc1|nvcc" | grep -v pgrep | head -20; } >>"$O/load.log"; }
mkdir -p "$O"
for p in "$@"; do
	echo "== part $p start" >>"$O/load.log"; snap
	case $p in
	shm-lat) timeout 1800 $W/bench/tools/efab_sidebyside --efab $L6/efab/bin --efab-before /tmp/efab-base/build/bin \
		--fabtests $L6/fabtests/bin --lib $L6/prefix/lib --providers shm --cases latdata,lat --reps 9 \
		--wait-idle 3 -o "$O/shm-lat" ;;
	shm-bw) timeout 1800 $W/bench/tools/efab_sidebyside --efab $L6/efab/bin --fabtests $L6/fabtests/bin \
		--lib $L6/prefix/lib --providers shm --cases rate,ratedata,bw64k,bw4m --reps 5 --wait-idle 3 \
		-o "$O/shm-bw" ;;
	shm-rate-before) timeout 1800 $W/bench/tools/efab_sidebyside --efab $L6/efab/bin --efab-before /tmp/efab-base/build/bin \
		--fabtests $L6/fabtests/bin --lib $L6/prefix/lib --providers shm --cases rate,ratedata --reps 7 \
		--wait-idle 3 -o "$O/shm-rate-before" ;;
	efa260) timeout 3000 $W/bench/tools/efab_sidebyside --efab $L6/efab/bin --fabtests $L6/fabtests/bin \
		--lib $L6/prefix/lib --providers "" --efasim $W/tests/efasim/run:2.6.0 --efasim-fabrics efa-direct \
		--cases "$ERMA" --reps 5 --wait-idle 3 -o "$O/efasim-2.6.0" ;;
	efa260-unbound) timeout 3000 $W/bench/tools/efab_sidebyside --efab $L6/efab/bin --fabtests $L6/fabtests/bin \
		--lib $L6/prefix/lib --providers "" --efasim $W/tests/efasim/run:2.6.0 --efasim-fabrics efa-direct \
		--efab-bind none --cases "$ERMA" --reps 3 --wait-idle 3 -o "$O/efasim-2.6.0-unbound" ;;
	efa270) timeout 3000 $W/bench/tools/efab_sidebyside --efab $L7/efab/bin --fabtests $L7/fabtests/bin \
		--lib $L7/prefix/lib --providers "" --efasim $W/tests/efasim/run:2.7.0a1 --efasim-fabrics efa-direct \
		--cases "$ERMA" --reps 3 --wait-idle 3 -o "$O/efasim-2.7.0a1-prerelease" ;;
	efa270-unbound) timeout 3000 $W/bench/tools/efab_sidebyside --efab $L7/efab/bin --fabtests $L7/fabtests/bin \
		--lib $L7/prefix/lib --providers "" --efasim $W/tests/efasim/run:2.7.0a1 --efasim-fabrics efa-direct \
		--efab-bind none --cases "$ERMA" --reps 3 --wait-idle 3 -o "$O/efasim-2.7.0a1-prerelease-unbound" ;;
	esac
	echo "== part $p end rc=$?" >>"$O/load.log"; snap
done

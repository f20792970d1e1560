#!/bin/sh
set -u
O=$1
W=/work/main
L7=$W/build-efasim/lf-2.7.0a1
export EFASIM_DIR=/tmp/efasim-peak-sit270
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
echo "== part efa270-unbound start" >>"$O/load.log"; snap
timeout 3000 $W/bench/tools/efab_sidebyside --efab $L7/efab/bin --fabtests $L7/fabtests/bin \
	--lib $L7/prefix/lib --providers "" --efasim $W/tests/efasim/run:2.7.0a1 --efasim-fabrics efa-direct \
	--efab-bind none --cases "$ERMA" --reps 3 --wait-idle 3 -o "$O/efasim-2.7.0a1-prerelease-unbound"
echo "== part efa270-unbound end rc=$?" >>"$O/load.log"; snap

# The benchmarks' terminal table (issue 61 item 1): at default
# verbosity at most 8 short '#' lines (what ran, on what, the metric in one
# line) above a table of the benchmark's first columns, aligned in fixed
# widths, no line over 120 characters; --columns all|a,b,c shows more or
# fewer; --help wraps to 100 columns. The CSV keeps every column (tests of
# csvcheck.py and the golden files check it).

LAT_DEFAULT=size,iters,min_us,p50_us,p99_us,max_us,errors
BW_DEFAULT=size,MB/s,Mops/s,errors
REG_DEFAULT=size,op,iters,min_us,p50_us,p99_us,max_us,dereg_us_p50,first_us
CONNECT_DEFAULT=peers,iters,min_us,p50_us,p99_us,max_us,av_insert_us,second_us_p50,errors

tablecheck() { python3 tests/tablecheck.py "$WORK/last.out" "$@" || die "tablecheck $*"; }

# BENCH -> ranks, arguments and default columns
table_bench() { # BENCH: sets NP ARGS DEFAULT
	case $1 in
	put_lat | get_lat) NP=2 ARGS="-m 8:4K:x8 -n 20" DEFAULT=$LAT_DEFAULT ;;
	atomic_lat) NP=2 ARGS="-m 8:16 -n 20" DEFAULT=$LAT_DEFAULT ;;
	put_bw | get_bw) NP=2 ARGS="-m 8:64K:x8 -n 10" DEFAULT=$BW_DEFAULT ;;
	atomic_bw) NP=2 ARGS="-m 8:16 -n 10" DEFAULT=$BW_DEFAULT ;;
	connect) NP=3 ARGS="-n 2" DEFAULT=$CONNECT_DEFAULT ;;
	esac
}

t_table_default_short_and_aligned() {
	local b
	for b in put_lat get_lat put_bw get_bw atomic_lat atomic_bw connect; do
		table_bench $b
		expect_rc 0 mpi $NP "$BIN/efab_$b" -p shm $ARGS
		tablecheck --notes 8 --width 120 --columns $DEFAULT
		grep -q "^# efabench .*: $b" "$WORK/last.out" || die "$b: no line saying what ran"
		grep -q "^# provider shm, fabric shm, domain shm; libfabric " "$WORK/last.out" ||
			die "$b: no line saying what it ran on"
		grep -q "^# memory: local host, remote host; ranks $NP" "$WORK/last.out" ||
			die "$b: no memory and ranks line"
	done
	# efab_mr_reg (one process): the registration figures; its fit sentences
	# between the regimes' rows fit the width too
	for p in shm tcp; do
		expect_rc 0 "$BIN/efab_mr_reg" -p $p -m 4K:1M:x16 -n 5 --max-total 4M
		tablecheck --notes 8 --width 120 --columns $REG_DEFAULT
		[ "$(grep -c '^# [a-z]*: registration costs\|^# accumulate (largest size): ' "$WORK/last.out")" = 3 ] ||
			die "mr_reg -p $p: not one fit sentence per regime"
	done
	expect_rc 0 mpi 2 "$BIN/efab_mr_reg" -p shm -m 4K:64K:x16 -n 5 --regime fresh
	tablecheck --width 120 --columns $REG_DEFAULT,rank
	# and on tcp
	table_bench put_lat
	expect_rc 0 mpi 2 "$BIN/efab_put_lat" -p tcp $ARGS
	tablecheck --notes 8 --width 120 --columns $LAT_DEFAULT
	table_bench put_bw
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p tcp $ARGS
	tablecheck --notes 8 --width 120 --columns $BW_DEFAULT
}

t_table_columns_all_and_list() {
	local b n
	for b in put_lat put_bw connect; do
		table_bench $b
		n=$(echo "$DEFAULT" | tr ',' '\n' | wc -l)
		expect_rc 0 mpi $NP "$BIN/efab_$b" -p shm $ARGS --columns all
		tablecheck --min-columns $((n + 3))
		# columns that cannot apply to a CPU run without -c are not shown
		head -n 20 "$WORK/last.out" | grep -v '^#' | head -1 |
			grep -Eq '(^| )(initiator|gpu_post_ns|gpu_threads|late_msgs|late_bytes)( |$)' &&
			die "$b --columns all: a column that cannot apply to this run"
		# -v: every note and every column, as --columns all
		expect_rc 0 mpi $NP "$BIN/efab_$b" -p shm $ARGS -v
		tablecheck --min-columns $((n + 3))
		grep -Eq "^# clock (tsc|cntvct_el0|CLOCK_MONOTONIC) " "$WORK/last.out" || die "$b -v: no clock line"
	done
	table_bench put_lat
	expect_rc 0 mpi 2 "$BIN/efab_put_lat" -p shm $ARGS --columns size,p50_us,lat_us_p99,first_us
	tablecheck --width 120 --columns size,p50_us,p99_us,first_us
	# a column named is shown even where "all" leaves it out
	expect_rc 0 mpi 2 "$BIN/efab_put_lat" -p shm $ARGS --columns size,initiator
	tablecheck --columns size,initiator
	table_bench put_bw
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p shm $ARGS --columns size,bw_MBps,end_confirm
	tablecheck --columns size,MB/s,end_confirm
}

t_table_bad_column_exit_2() {
	local b
	for b in put_lat put_bw; do
		table_bench $b
		expect_rc 2 mpi $NP "$BIN/efab_$b" -p shm $ARGS --columns size,nosuch
		[ "$(grep -c '^efab_' "$WORK/last.err")" = 1 ] || die "$b: not one line on stderr"
		expect_msg "--columns: .* has no column 'nosuch'; columns: all, size, .*errors"
	done
	expect_rc 2 "$BIN/efab_mr_reg" -p shm -m 4K --columns size,nosuch
	[ "$(grep -c '^efab_' "$WORK/last.err")" = 1 ] || die "mr_reg: not one line on stderr"
	expect_msg "--columns: mr_reg has no column 'nosuch'; columns: all, size, .*reg_path$"
}

t_table_help_wraps_at_100() {
	local exe
	for exe in put_lat get_lat put_bw get_bw atomic_lat atomic_bw connect mr_reg probe scan sweep topo; do
		[ -x "$BIN/efab_$exe" ] || continue
		expect_rc 0 "$BIN/efab_$exe" --help
		awk -v e=$exe 'length > 100 { print e ": " length ": " $0; bad = 1 } END { exit bad }' \
			"$WORK/last.out" || die "efab_$exe --help: lines over 100 characters"
	done
	grep -q -- "--columns all|a,b,c" <("$BIN/efab_put_lat" --help) || die "--help lacks --columns"
}

# --per-pair: pair follows size (its rows differ in it)
t_table_per_pair() {
	expect_rc 0 mpi 4 "$BIN/efab_put_bw" -p shm -m 8:4K:x8 -n 10 --per-pair
	tablecheck --notes 8 --width 120 --columns size,pair,$(echo $BW_DEFAULT | cut -d, -f2-)
}

# On the simulated EFA device: the SIMULATED line is never left out, and the
# NIC counters give the default table its path column.
t_table_efasim_simulated_and_path() {
	EFAB_EBIN=$ABIN efasim_need 2.6.0
	expect_rc 0 efa_mpi 2.6.0 2 "$EBIN/efab_put_lat" -p efa -f efa-direct -m 8:4K:x8 -n 20
	tablecheck --notes 8 --width 120 --columns $LAT_DEFAULT,path
	grep -q "^# SIMULATED EFA device (efasim): these figures measure the simulator" "$WORK/last.out" ||
		die "put_lat: no SIMULATED line"
	expect_rc 0 efa_mpi 2.6.0 2 "$EBIN/efab_put_bw" -p efa -f efa-direct -m 8:64K:x8 -n 10
	tablecheck --notes 8 --width 120 --columns $BW_DEFAULT,path
	grep -q "^# SIMULATED EFA device" "$WORK/last.out" || die "put_bw: no SIMULATED line"
	awk '!/^#/ && $1 == "4K" { print $NF }' "$WORK/last.out" | grep -qx device-write ||
		die "put_bw: 4K's path is not device-write"
}

# efab_probe's matrix and verdicts within 120 columns (issue 61 item 1): a
# value cut to its cell ends in '~' (--json holds it whole), a verdict longer
# than a line is folded and its continuation indented; -v prints each whole.
t_table_probe_within_120() {
	expect_rc 0 "$BIN/efab_probe" -p tcp
	awk 'length > 120 { print length ": " $0; bad = 1 } END { exit bad }' "$WORK/last.out" ||
		die "efab_probe: lines over 120 characters"
	grep -Eq '^rdma_core_libs +/[^ ]{21}~' "$WORK/last.out" || die "a cut cell does not end in '~'"
	grep -q '^verdict (provider tcp' "$WORK/last.out" || die "no verdict"
	grep -q '^  [a-zA-Z]' "$WORK/last.out" || die "no folded verdict line"
	expect_rc 0 "$BIN/efab_probe" -p tcp -v
	awk '/^verdict/ && length > 120 { long = 1 } END { exit !long }' "$WORK/last.out" ||
		die "efab_probe -v: the verdict is not whole"
}

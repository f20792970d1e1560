# The CSV schema (docs/csv.md, schema 2): every benchmark's header is the
# doc's column list for it, in order, and every row's schema cell the doc's
# number (tests/csvdoc.py parses the doc); the readers (efab_plot,
# tests/csvcheck.py) take schema 1 and 2 and refuse another with one line.
#
# What runs: put_lat, get_lat, atomic_lat, put_bw, get_bw, atomic_bw and
# connect on shm (mpirun -np 2, one size, few iterations), mr_reg alone. The
# NVSHMEM benchmarks (shmem_reg, shmem_lat, shmem_bw) are not built without
# NVSHMEM and need a GPU: t_csv_doc_matches_source compares the doc with the
# arrays their columns come from in the source instead (bench/engine/rows.c,
# bench/ops/mr_reg.c, bench/ops/shmem_reg.cc), which shows the names and
# their order, not a run's header.

CSV_RUNNABLE="put_lat get_lat atomic_lat put_bw get_bw atomic_bw connect mr_reg"

csv_run() { # BENCH OUT.csv: one short run on shm writing OUT.csv
	case $1 in
	mr_reg) expect_rc 0 "$BIN/efab_mr_reg" -p shm -m 4K -n 3 --regime fresh --csv "$2" ;;
	connect) expect_rc 0 mpi 2 "$BIN/efab_connect" -p shm -n 2 --csv "$2" ;;
	*) expect_rc 0 mpi 2 "$BIN/efab_$1" -p shm -m 8 -n 10 -w 2 --csv "$2" ;;
	esac
}

csvdoc() { python3 tests/csvdoc.py "$@"; }

t_csv_doc_matches_headers() {
	local b n=0
	[ "$(csvdoc benches)" = "$CSV_RUNNABLE shmem_reg shmem_lat shmem_bw" ] ||
		die "docs/csv.md documents other benchmarks: $(csvdoc benches)"
	for b in $CSV_RUNNABLE; do
		csv_run $b "$WORK/$b.csv"
		csvdoc header $b "$WORK/$b.csv" || die "$b: its CSV is not docs/csv.md's (above)"
		csvcheck "$WORK/$b.csv" --bench $b
		n=$((n + 1))
	done
	[ $n = 8 ] || die "ran $n benchmarks"
	# the check fails where the CSV is schema 1 or a column is missing
	sed '2,$s/^2,/1,/' "$WORK/put_lat.csv" >"$WORK/one.csv"
	csvdoc header put_lat "$WORK/one.csv" 2>"$WORK/e" && die "a schema-1 row passed"
	grep -q "one.csv:2: schema 1, the doc's is 2" "$WORK/e" || die "schema 1 not named: $(cat "$WORK/e")"
	cut -d, -f1-40,42- "$WORK/put_lat.csv" >"$WORK/cut.csv"
	csvdoc header put_lat "$WORK/cut.csv" 2>"$WORK/e" && die "a header without column 41 passed"
	grep -q "put_lat: column 41: 'hw_note' where the doc has 'hw_nics'" "$WORK/e" ||
		die "the first differing column not named: $(cat "$WORK/e")"
	true
}

t_csv_doc_matches_source() {
	local out
	out=$(csvdoc source) || die "docs/csv.md and the source differ (above)"
	echo "$out"
	for b in "(common): 32" "shmem_lat: 52" "shmem_bw: 55" "shmem_reg: 59"; do
		grep -qF "csvdoc: $b columns in the source as documented" <<<"$out" || die "$b not compared"
	done
	# it fails where the source's order is not the doc's
	mkdir -p "$WORK/src/bench/cli" "$WORK/src/bench/engine" "$WORK/src/bench/ops"
	cp bench/cli/result.c "$WORK/src/bench/cli/"
	cp bench/engine/rows.c "$WORK/src/bench/engine/"
	cp bench/ops/mr_reg.c bench/ops/shmem_reg.cc bench/ops/shmem_put.cc "$WORK/src/bench/ops/"
	sed -i 's/"sync_us_p50", "sync_us_p99"/"sync_us_p99", "sync_us_p50"/' "$WORK/src/bench/engine/rows.c"
	csvdoc source --root "$WORK/src" 2>"$WORK/e" && die "a swapped source passed"
	grep -q "shmem_lat: the source's column 51: 'sync_us_p99' where the doc has 'sync_us_p50'" "$WORK/e" ||
		die "swap not named: $(cat "$WORK/e")"
	true
}

# The doc itself fails the check where a column is missing, misordered, or
# the schema number is not the code's (each mutation of a copy of it).
t_csv_doc_mutations() {
	local d=$WORK/csv.md
	csv_run put_lat "$WORK/p.csv"
	csv_run mr_reg "$WORK/m.csv"
	cp docs/csv.md "$d"
	csvdoc --doc "$d" header put_lat "$WORK/p.csv" || die "the copy fails unchanged"
	# a row deleted: put_lat's late_msgs
	grep -q '^| `late_msgs` |' "$d" || die "no late_msgs row"
	sed -i '/^| `late_msgs` |/d' "$d"
	csvdoc --doc "$d" header put_lat "$WORK/p.csv" 2>"$WORK/e" && die "a missing doc row passed"
	grep -q "column 93: 'late_msgs' where the doc has 'late_bytes'" "$WORK/e" || die "missing: $(cat "$WORK/e")"
	# two rows swapped: group reg's fit_r2 and fit_us_per_MiB
	cp docs/csv.md "$d"
	python3 - "$d" <<'PY' || die "swap"
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("| `fit_us_per_MiB` |"))
assert lines[i + 1].startswith("| `fit_r2` |")
lines[i], lines[i + 1] = lines[i + 1], lines[i]
open(p, "w").write("\n".join(lines))
PY
	csvdoc --doc "$d" header mr_reg "$WORK/m.csv" 2>"$WORK/e" && die "a misordered doc passed"
	grep -q "column 42: 'fit_us_per_MiB' where the doc has 'fit_r2'" "$WORK/e" || die "order: $(cat "$WORK/e")"
	# a group reference misspelt, a row that is no column
	cp docs/csv.md "$d"
	sed -i 's/^| \[group `peak`\](#group-peak) |/| [group `peaks`](#group-peaks) |/' "$d"
	csvdoc --doc "$d" columns put_bw 2>"$WORK/e" && die "an undocumented group passed"
	grep -q "group peaks is not documented" "$WORK/e" || die "group: $(cat "$WORK/e")"
	cp docs/csv.md "$d"
	sed -i 's/^| `eps` |/| eps |/' "$d"
	csvdoc --doc "$d" columns put_bw 2>"$WORK/e" && die "an unquoted column name passed"
	grep -q "'eps' is neither" "$WORK/e" || die "row: $(cat "$WORK/e")"
	# the doc's number is not the rows'
	cp docs/csv.md "$d"
	sed -i '1s/schema 2/schema 3/' "$d"
	csvdoc --doc "$d" header put_lat "$WORK/p.csv" 2>"$WORK/e" && die "schema 3 in the doc passed"
	grep -q "schema 2, the doc's is 3" "$WORK/e" || die "number: $(cat "$WORK/e")"
	true
}

# Schema-1 and schema-2 files, as efab_plot and csvcheck read them: a
# schema-1 file with a leading part of today's columns, a schema-2 file with
# exactly the doc's; a schema-2 file with a column less, and a schema 3,
# refused with one line.
t_csv_readers_both_schemas() {
	local b
	mkdir -p "$WORK/two" "$WORK/one" "$WORK/short" "$WORK/three"
	for b in put_lat put_bw; do
		csv_run $b "$WORK/two/$b.csv"
		# schema 1: the same rows, the last six columns not yet there
		sed '2,$s/^2,/1,/' "$WORK/two/$b.csv" | rev | cut -d, -f7- | rev >"$WORK/one/$b.csv"
	done
	csv_run mr_reg "$WORK/two/mr_reg.csv"
	expect_rc 0 python3 plot/efab_plot "$WORK/two" -o "$WORK/p2"
	grep -q "^efab_plot: 3 figures" "$WORK/last.out" || die "schema 2: not 3 figures"
	expect_rc 0 python3 plot/efab_plot "$WORK/one" -o "$WORK/p1"
	grep -q "^efab_plot: 2 figures" "$WORK/last.out" || die "schema 1: not 2 figures"
	csvcheck "$WORK/two/put_lat.csv" --bench put_lat --rows 1 --lat --extra inject
	csvcheck "$WORK/one/put_lat.csv" --bench put_lat --rows 1 --lat --extra inject
	csvcheck "$WORK/one/put_bw.csv" --bench put_bw --rows 1 --bw
	# schema 2 with a column less
	rev "$WORK/two/put_lat.csv" | cut -d, -f2- | rev >"$WORK/short/put_lat.csv"
	expect_rc 2 python3 plot/efab_plot "$WORK/short" -o "$WORK/ps"
	[ "$(wc -l <"$WORK/last.err")" = 1 ] || die "efab_plot: not one line"
	grep -q "put_lat.csv: schema 2: 93 columns, schema 2's put_lat has 94" "$WORK/last.err" ||
		die "efab_plot: short schema 2"
	expect_rc 1 python3 tests/csvcheck.py "$WORK/short/put_lat.csv" --bench put_lat
	grep -q "schema-2 header differs from docs/csv.md's put_lat: column 94: the doc's 'late_bytes' is missing" \
		"$WORK/last.err" || die "csvcheck: short schema 2"
	# schema 3
	sed '2,$s/^2,/3,/' "$WORK/two/put_lat.csv" >"$WORK/three/put_lat.csv"
	expect_rc 2 python3 plot/efab_plot "$WORK/three" -o "$WORK/p3"
	[ "$(wc -l <"$WORK/last.err")" = 1 ] || die "efab_plot: not one line"
	grep -q "put_lat.csv:2: schema 3, this efab_plot reads 1 and 2" "$WORK/last.err" || die "efab_plot: schema 3"
	expect_rc 1 python3 tests/csvcheck.py "$WORK/three/put_lat.csv" --bench put_lat
	[ "$(wc -l <"$WORK/last.err")" = 1 ] || die "csvcheck: not one line"
	grep -q "csvcheck: schema 3: csvcheck reads schemas 1 and 2" "$WORK/last.err" || die "csvcheck: schema 3"
	grep -l Traceback "$WORK"/*.err 2>/dev/null && die "traceback"
	true
}

# A benchmark appends only to a file of its own schema: schema 1's header is
# schema 2's, so the first row's schema cell decides.
t_csv_append_refuses_schema_1() {
	csv_run get_lat "$WORK/g.csv"
	sed -i '2,$s/^2,/1,/' "$WORK/g.csv"
	expect_rc 2 mpi 2 "$BIN/efab_get_lat" -p shm -m 8 -n 10 -w 2 --csv "$WORK/g.csv"
	expect_msg "holds schema-1 rows, this efabench writes schema 2 \(docs/csv.md\); use a new file"
	[ "$(wc -l <"$WORK/g.csv")" = 2 ] || die "appended to a schema-1 file"
	sed -i '2,$s/^1,/2,/' "$WORK/g.csv"
	csv_run get_lat "$WORK/g.csv"
	[ "$(wc -l <"$WORK/g.csv")" = 3 ] || die "did not append to its own schema's file"
}

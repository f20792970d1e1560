# Issue 25, proof of path: efab_plot's "What the NIC did" and "Software cost
# per operation" from the constructed CSVs of tests/data/path (gen.py there
# writes them: the benches' header with the issue's columns appended).

PATHDATA=tests/data/path

# Lines of section $2 of report $1 (from its heading to the next "## ").
report_section() { # REPORT HEADING
	awk -v h="## $2" '$0 == h { on = 1; print; next } on && /^## / { exit } on { print }' "$1"
}

no_traceback() {
	grep -l Traceback "$WORK"/*.err 2>/dev/null && die "python traceback"
	true
}

# The fixtures' header is the benches' own, with the new columns after them:
# once the benches write the columns, the headers must be equal.
t_plot_path_fixture_header() {
	local b fix real
	for b in put_bw put_lat; do
		expect_rc 0 mpi 2 "$BIN/efab_$b" -p shm -m 8:16 -n 5 --csv "$WORK/$b.csv"
		real=$(head -n 1 "$WORK/$b.csv")
		fix=$(head -n 1 "$PATHDATA/two-fabric/$b.csv")
		case ",$real," in
		*,path,*) [ "$real" = "$fix" ] || die "$b: fixture header differs from the bench's:
bench:   $real
fixture: $fix (regenerate: tests/data/path/gen.py)" ;;
		*) [ "${fix%%,path,*}" = "$real" ] || die "$b: fixture header before path differs:
bench:   $real
fixture: ${fix%%,path,*}" ;;
		esac
	done
}

# (a) efa-direct writes through the device, efa emulates with sends up to
# 64 KiB and reads at 4 MiB, shm has no counters: both sections, the paths,
# ratios, and the post/poll ratio efa ÷ efa-direct side by side, grouped by
# provider (efa and efa-direct in one group) and by fabric.
t_plot_path_two_fabric() {
	local g out nic cost
	for g in provider fabric; do
		out="$WORK/$g"
		expect_rc 0 python3 plot/efab_plot "$PATHDATA/two-fabric" --group-by $g -o "$out"
		report_section "$out/report.md" "What the NIC did" >"$out/nic.md"
		report_section "$out/report.md" "Software cost per operation" >"$out/cost.md"
		nic="$out/nic.md" cost="$out/cost.md"
		[ -s "$nic" ] || die "$g: no NIC section"
		[ -s "$cost" ] || die "$g: no software cost section"
		grep -q "put_bw write host:host 1p | efa-direct | 4M | device-write | 1 | 26.84 G | 1.000000 | 26.84 G | 0 | 0 |" "$nic" ||
			die "$g: put_bw efa-direct 4M not device-write 1.000000"
		grep -q "put_bw write host:host 1p | efa-direct | 8 | device-write | 1 | 51200 | 1.000000 | 51200 |" "$nic" ||
			die "$g: put_bw efa-direct 8 B"
		grep -q "put_bw write host:host 1p | efa | 8 | emulated-send | 1 | 51200 | 9.000000 | 0 | 0 | 460.8 k |" "$nic" ||
			die "$g: put_bw efa 8 B not emulated-send 9.000000"
		grep -q "put_bw write host:host 1p | efa | 64K | emulated-send | 1 | 419.4 M | 1.007812 |" "$nic" ||
			die "$g: put_bw efa 64K"
		grep -q "put_bw write host:host 1p | efa | 4M | device-read | 1 | 26.84 G | 1.000000 | 0 | 26.84 G | 409.6 k |" "$nic" ||
			die "$g: put_bw efa 4M not device-read"
		# the ping-pong: both legs, both sides' bytes
		grep -q "put_lat write host:host | efa-direct | 4K | device-write | 1 | 819.2 k | 1.000000 | 819.2 k |" "$nic" ||
			die "$g: put_lat efa-direct 4K"
		grep -q "put_lat write host:host | efa | 64K | emulated-send | 1 | 13.11 M | 1.007812 |" "$nic" ||
			die "$g: put_lat efa 64K"
		# shm: one line, no table rows
		grep -q "^No NIC counters .*: shm: put_bw \[put_bw write host:host 1p\], put_lat \[put_lat write host:host\]\.$" "$nic" ||
			die "$g: shm not listed as without NIC counters"
		grep -q "| shm |" "$nic" && die "$g: shm in the NIC table"
		[ "$(grep -c '^### ' "$nic")" = 2 ] || die "$g: expected a table for put_bw and put_lat"
		grep -q "Finding" "$nic" && die "$g: a finding without cause"
		# software cost: efa beside efa-direct, the ratio efa ÷ efa-direct
		grep -q "| post efa (ns) | post efa-direct (ns) | post efa ÷ efa-direct | poll efa (ns) |" "$cost" ||
			die "$g: no efa / efa-direct header"
		grep -q "put_bw write host:host 1p | 8 | 750.0 | 300.0 | 2.50 | 180.0 | 100.0 | 1.80 |$" "$cost" ||
			die "$g: put_bw 8 B post/poll efa ÷ efa-direct"
		grep -q "put_bw write host:host 1p | 4M | 2100 | 420.0 | 5.00 | 400.0 | 130.0 | 3.08 |$" "$cost" ||
			die "$g: put_bw 4M"
		grep -q "put_lat write host:host | 8 | 600.0 | 250.0 | 2.40 | 150.0 | 90.0 | 1.67 |$" "$cost" ||
			die "$g: put_lat 8 B"
		grep -q "put_bw write host:host 1p | shm | 4M | 150.0 | 60.0 |$" "$cost" || die "$g: shm cost"
		grep -q "fi_cq_read calls that returned at least one completion" "$cost" || die "$g: definition"
		grep -q "SIMULATED" "$cost" && die "$g: real rows called simulated"
		# the sections sit before the verdicts
		awk '/^## Software cost/ { c = NR } /^## Verdicts/ { v = NR } END { exit !(c && v > c) }' \
			"$out/report.md" || die "$g: section order"
	done
	# the same rows from the simulated device: labelled as the rest of the
	# report labels them, and the post's meaning on each efasim data path
	cp -r "$PATHDATA/two-fabric" "$WORK/sim"
	python3 - "$WORK/sim/meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["simulated"] = "efasim (simulated EFA device: figures measure the simulator, not EFA)"
json.dump(m, open(sys.argv[1], "w"))
PY
	expect_rc 0 python3 plot/efab_plot "$WORK/sim" -o "$WORK/simp"
	report_section "$WORK/simp/report.md" "Software cost per operation" >"$WORK/simcost.md"
	grep -q "^\*\*SIMULATED device:\*\* .*verbs data path .*post_ns. includes the simulator's work" \
		"$WORK/simcost.md" || die "simulated: no verbs-path note"
	grep -q "Here: libfabric 2.6 (simulated): the direct data path" "$WORK/simcost.md" ||
		die "simulated: install's data path"
	grep -q "^| efa (simulated) · put_bw write host:host 1p | 8 | 750.0 | 300.0 | 2.50 |" \
		"$WORK/simcost.md" || die "simulated: series not labelled (simulated)"
	report_section "$WORK/simp/report.md" "What the NIC did" | grep -q "counters are efasim's" ||
		die "simulated: NIC section does not say whose counters"
	no_traceback
}

# (b) CSVs without the new columns: no section, no error, and otherwise the
# very report the columns' CSVs give.
t_plot_path_old_csv() {
	local r
	r=$(ls -d results/*-loopback-ref | head -1)
	[ -n "$r" ] || die "no committed reference run under results/"
	expect_rc 0 python3 plot/efab_plot "$r" -o "$WORK/ref"
	grep -q "^## Headline sizes" "$WORK/ref/report.md" || die "reference: no headline"
	grep -q "^## What the NIC did\|^## Software cost" "$WORK/ref/report.md" && die "reference: new sections"
	mkdir -p "$WORK/old" "$WORK/new"
	cp -r "$PATHDATA/two-fabric" "$WORK/new/"
	cp -r "$PATHDATA/two-fabric" "$WORK/old/"
	python3 - "$WORK"/old/two-fabric/*.csv <<'PY'
import csv, sys
for p in sys.argv[1:]:
    rows = list(csv.reader(open(p)))
    n = rows[0].index("path")
    csv.writer(open(p, "w", newline=""), lineterminator="\n").writerows(r[:n] for r in rows)
PY
	expect_rc 0 python3 plot/efab_plot "$WORK/old/two-fabric" -o "$WORK/po"
	expect_rc 0 python3 plot/efab_plot "$WORK/new/two-fabric" -o "$WORK/pn"
	grep -q "^## What the NIC did\|^## Software cost" "$WORK/po/report.md" && die "old CSV: new sections"
	grep -q "^## What the NIC did" "$WORK/pn/report.md" || die "new CSV: no NIC section"
	python3 - "$WORK/po/report.md" "$WORK/pn/report.md" <<'PY' || die "old CSV's report is not the new one without the sections"
import sys
old, new = (open(p).read() for p in sys.argv[1:])
head, rest = new.split("\n## What the NIC did\n", 1)
stripped = head + "\n## Verdicts" + rest.split("\n## Verdicts", 1)[1]
if stripped != old:
    import difflib
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), stripped.splitlines(True)))
    sys.exit(1)
PY
	no_traceback
}

# (c) Three repeats of which one took another path: the line says both, a
# finding says how many of each; the ratio is the repeats' median.
t_plot_path_repeats_disagree() {
	expect_rc 0 python3 plot/efab_plot "$PATHDATA/repeats" -o "$WORK/p"
	report_section "$WORK/p/report.md" "What the NIC did" >"$WORK/nic.md"
	grep -q "| efa-direct | 64K | device-write / mixed | 3 | 419.4 M | 1.000010 |" "$WORK/nic.md" ||
		die "64K: the disagreement or the median ratio is not shown"
	grep -q "^\*\*Finding:\*\* put_bw .* efa-direct at 64 KiB: the repeats disagree on the path (device-write ×2, mixed ×1)\.$" \
		"$WORK/nic.md" || die "no finding for the disagreement"
	grep -q "| efa-direct | 4K | device-write | 3 | 26.21 M | 1.000000 |" "$WORK/nic.md" ||
		die "4K: the repeats that agree"
	[ "$(grep -c Finding "$WORK/nic.md")" = 1 ] || die "one finding expected"
	no_traceback
}

# (d) A retransmit and rx_drops in one of two repeats are named, with side and
# count, in the table and as a finding; a hw_note is shown; path none.
t_plot_path_errors_named() {
	expect_rc 0 python3 plot/efab_plot "$PATHDATA/errors" -o "$WORK/p"
	report_section "$WORK/p/report.md" "What the NIC did" >"$WORK/nic.md"
	grep -q "| efa | 64K | emulated-send | 2 | .* | rx_drops 3 (initiator; 1 of 2 repeats); retrans_bytes 98304 (target; 1 of 2 repeats); retrans_pkts 12 (target; 1 of 2 repeats) |$" \
		"$WORK/nic.md" || die "64K: error counters not named in the table"
	grep -q "^\*\*Finding:\*\* put_bw .* efa at 64 KiB: error counters, or retransmits/drops above 1 % of the side's traffic: rx_drops 3 (initiator; 1 of 2 repeats; 0 rx_pkts); .*retrans_pkts 12 (target; 1 of 2 repeats; 0 tx_pkts)\.$" \
		"$WORK/nic.md" || die "no finding naming the counters"
	grep -q "| efa | 4K | emulated-send | 2 | .* | note: \`tx_bytes went backwards: reset or wrap\` |$" \
		"$WORK/nic.md" || die "4K: hw_note not shown"
	grep -q "| efa | 8 | none | 2 | 51200 | 0.001250 | 0 | 0 | 64 | 64 | 64 | 1 | - |$" "$WORK/nic.md" ||
		die "8 B: path none, one NIC counted once"
	[ "$(grep -c Finding "$WORK/nic.md")" = 1 ] || die "one finding expected"
	no_traceback
}

# A version sweep: efa against efa-direct per libfabric install.
t_plot_path_version_sweep() {
	cp -r "$PATHDATA/two-fabric" "$WORK/sw"
	python3 - "$WORK/sw/put_bw.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
more = []
for r in rows:
    if r["provider"] == "efa":
        r = dict(r, libfabric_path="/opt/lf-2.4/lib/libfabric.so.1.28.0",
                 libfabric_version="2.4", libfabric_built="2.4")
        r["post_ns"] = f"{float(r['post_ns']) * 2:.1f}"
        more.append(r)
w = csv.DictWriter(open(sys.argv[1], "w", newline=""), fieldnames=list(rows[0]),
                   lineterminator="\n")
w.writeheader()
w.writerows(rows + more)
PY
	expect_rc 0 python3 plot/efab_plot "$WORK/sw" -o "$WORK/p"
	grep -q "^Grouped by \`libfabric\`" "$WORK/p/report.md" || die "not grouped by install"
	report_section "$WORK/p/report.md" "Software cost per operation" >"$WORK/cost.md"
	grep -q "^| libfabric 2.4 · put_bw write host:host -p efa 1p | 8 | 1500 | 600.0 | 2.50 | 180.0 |" \
		"$WORK/cost.md" || die "libfabric 2.4 pair"
	grep -q "^| libfabric 2.6 · put_bw write host:host -p efa 1p | 8 | 750.0 | 300.0 | 2.50 | 180.0 |" \
		"$WORK/cost.md" || die "libfabric 2.6 pair"
	no_traceback
}

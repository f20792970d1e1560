# efab_plot: every figure type from the committed reference run, the report's
# numbers against the CSV, comparisons, the baseline gate, bad input.

ref_run() { ls -d results/*-loopback-ref | head -1; }

t_plot_reference_run() {
	local r
	r=$(ref_run)
	[ -n "$r" ] || die "no committed reference run under results/"
	expect_rc 0 python3 plot/efab_plot "$r" -o "$WORK/p"
	python3 tests/plotcheck.py "$WORK/p" "$r" put_lat get_lat put_bw get_bw atomic_lat atomic_bw \
		mr_reg || die "plotcheck"
	grep -q "^## Registration fits" "$WORK/p/report.md" || die "no registration fits"
	grep -q "^- put_lat \[put_lat write host:host\]: tcp;ofi_rxm p50 latency is" "$WORK/p/report.md" ||
		die "no put_lat verdict"
}

t_plot_compare_labels_and_baseline() {
	local r
	r=$(ref_run)
	cp -r "$r" "$WORK/same"
	python3 - "$WORK/same/meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["label"] = "copy"; json.dump(m, open(sys.argv[1], "w"))
PY
	expect_rc 0 python3 plot/efab_plot "$r" "$WORK/same" --group-by label -o "$WORK/c"
	grep -q "groups: \`loopback-ref\`, \`copy\`" "$WORK/c/report.md" || die "groups"
	# identical data: no verdict may claim a difference
	grep "^- " "$WORK/c/report.md" | grep -v "no significant difference" && die "invented a difference"
	# the gate: the same data passes, slower latency fails
	expect_rc 0 python3 plot/efab_plot "$WORK/same" --baseline "$r" -o "$WORK/g1"
	grep -q "No (benchmark, size) point got significantly worse" "$WORK/g1/report.md" || die "g1"
	cp -r "$r" "$WORK/slow"
	python3 - "$WORK/slow/put_lat.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = [c for c in rows[0] if c.startswith("lat_us_")]
for r in rows:
    for c in cols:
        r[c] = f"{float(r[c]) * 3:.3f}"
w = csv.DictWriter(open(sys.argv[1], "w", newline=""), fieldnames=list(rows[0]), lineterminator="\n")
w.writeheader(); w.writerows(rows)
PY
	expect_rc 1 python3 plot/efab_plot "$WORK/slow" --baseline "$r" -o "$WORK/g2"
	grep -q "got significantly worse:" "$WORK/g2/report.md" || die "g2 lists nothing"
	grep -q "^- put_lat \[put_lat write host:host" "$WORK/g2/report.md" || die "g2 lacks put_lat"
	grep "^- get_lat" "$WORK/g2/report.md" | grep -q "significantly worse" && die "get_lat flagged"
	true
}

t_plot_bad_input() {
	mkdir -p "$WORK/empty"
	expect_rc 2 python3 plot/efab_plot "$WORK/empty"
	grep -q "^efab_plot: .*no efabench CSV" "$WORK/last.err" || die "message"
	mkdir -p "$WORK/other"
	printf 'schema,run_id\n2,x\n' >"$WORK/other/a.csv"
	expect_rc 2 python3 plot/efab_plot "$WORK/other"
	grep -q "not efabench CSV schema 1 or 2" "$WORK/last.err" || die "schema message"
	local r
	r=$(ref_run)
	mkdir -p "$WORK/mixed"
	sed '3,$s/,put_lat,/,get_lat,/' "$r/put_lat.csv" >"$WORK/mixed/x.csv"
	expect_rc 2 python3 plot/efab_plot "$WORK/mixed"
	grep -q "mixes benchmarks" "$WORK/last.err" || die "mixed message"
	expect_rc 2 python3 plot/efab_plot "$WORK/nonexistent"
	expect_rc 2 python3 plot/efab_plot
	expect_rc 2 python3 plot/efab_plot "$r" --group-by colour
	grep -l Traceback "$WORK"/*.err 2>/dev/null && die "traceback"
	true
}

# Issue 17: mr_reg as small multiples (a panel per regime and memory kind),
# first calls and the fan-out rows plotted, every figure's caption in the
# code that draws it; a CSV without the new columns still plots.
t_plot_issue17_figures() {
	mkdir -p "$WORK/r"
	expect_rc 0 "$BIN/efab_mr_reg" -p shm -m 4K:256K:x4 -n 5 --csv "$WORK/r/mr_reg.csv"
	expect_rc 0 mpi 2 "$BIN/efab_put_lat" -p shm -m 8:1K:x4 -n 200 --csv "$WORK/r/put_lat.csv"
	expect_rc 0 mpi 3 "$BIN/efab_connect" -p shm -n 2 --csv "$WORK/r/connect.csv"
	expect_rc 0 python3 plot/efab_plot "$WORK/r" -o "$WORK/p"
	python3 tests/plotcheck.py "$WORK/p" "$WORK/r" mr_reg connect 2>/dev/null ||
		python3 - "$WORK/p" <<'PY' || die "figures"
import struct, sys, os
for b in ("mr_reg", "put_lat", "connect"):
    f = os.path.join(sys.argv[1], b + ".png")
    head = open(f, "rb").read(24)
    w, h = struct.unpack(">II", head[16:24])
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and w >= 740 and h >= 396, (f, w, h)
# three regimes of one memory kind: the mr_reg figure is taller than wide
w, h = struct.unpack(">II", open(os.path.join(sys.argv[1], "mr_reg.png"), "rb").read(24)[16:24])
assert h > w, (w, h)
PY
	python3 - <<'PY' || die "captions"
import importlib.machinery, importlib.util
loader = importlib.machinery.SourceFileLoader("efab_plot", "plot/efab_plot")
spec = importlib.util.spec_from_loader("efab_plot", loader)
m = importlib.util.module_from_spec(spec)
loader.exec_module(m)
assert "½ RTT" in m.caption_text("put_lat") and "full RTT" in m.caption_text("get_lat")
assert "10^6 B/s" in m.caption_text("put_bw") and "first call" in m.caption_text("mr_reg")
assert "p99" in m.caption_text("atomic_lat") and "1/y²" in m.caption_text("mr_reg")
PY
}

# Issue 26: every drawn point in its axis' units. A bandwidth run with its
# first windows: the figures pass plotcheck's units check, and the same
# figures with the old first-window marker (first_us, microseconds, drawn on
# the MB/s axis) fail it.
t_plot_units_first_window() {
	mkdir -p "$WORK/r"
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p shm -m 8:2M:x16 -n 10 --csv "$WORK/r/put_bw.csv"
	expect_rc 0 mpi 2 "$BIN/efab_put_lat" -p shm -m 8:4K:x8 -n 100 --csv "$WORK/r/put_lat.csv"
	python3 tests/plotcheck.py --units "$WORK/r" >"$WORK/u.out" 2>&1 || { cat "$WORK/u.out"; die "units check"; }
	cat >"$WORK/old_marker" <<'PY'
# efab_plot as it was before issue 26: the first window's first_us on every panel
import importlib.machinery, importlib.util, os
_l = importlib.machinery.SourceFileLoader("efab_plot_real", os.path.join(os.getcwd(), "plot/efab_plot"))
_m = importlib.util.module_from_spec(importlib.util.spec_from_loader("efab_plot_real", _l))
_l.exec_module(_m)
_m.first_value = lambda pt, pcol: pt.median("first_us")
main = _m.main
PY
	if python3 tests/plotcheck.py --units --plotter "$WORK/old_marker" "$WORK/r" >"$WORK/u2.out" 2>&1; then
		die "the units check passed first_us drawn on the MB/s axis"
	fi
	grep -q "plotcheck: put_bw: .* on the axis 'bandwidth (MB/s" "$WORK/u2.out" || { cat "$WORK/u2.out"; die "message"; }
}

# Issue 28: new CSVs' bw_MBps is over the loop's elapsed time, older CSVs'
# over the sum of window times. Alone a new run is shown in the headline
# definition; beside an older CSV every run is shown over the window sum.
t_plot_bw_definition() {
	mkdir -p "$WORK/new"
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p shm -m 8:4K:x512 -n 20 --csv "$WORK/new/put_bw.csv"
	expect_rc 0 python3 plot/efab_plot "$WORK/new" -o "$WORK/p1"
	expect_rc 0 python3 plot/efab_plot "$WORK/new" results/20261130-094047-vm-issue17-figures -o "$WORK/p2"
	python3 - "$WORK/new/put_bw.csv" "$WORK/p1/report.md" "$WORK/p2/report.md" <<'PY' || die "bandwidth definition in the report"
import csv, sys
rows = {r["size_bytes"]: r for r in csv.DictReader(open(sys.argv[1]))}
def cell(report, size):
    sec = report.split("### put_bw", 1)[1]
    for line in sec.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) > 3 and f[2] == size:  # | series | size | this run | ...
            return float(f[3])
    raise AssertionError(f"no {size} row")
alone, mixed = open(sys.argv[2]).read(), open(sys.argv[3]).read()
assert "over the elapsed time of the timed loop" in alone.split("### put_bw", 1)[1], "alone"
assert "over the sum of window times" in mixed.split("### put_bw", 1)[1], "mixed"
for size in ("8", "4096"):
    r = rows[size]
    assert abs(cell(alone, "4K" if size == "4096" else "8") - float(r["bw_MBps"])) < 0.01, size
    assert abs(cell(mixed, "4K" if size == "4096" else "8") - float(r["bw_MBps_windows"])) < 0.01, size
PY
}

# efab_plot's noise rule against outliers: a latency 3x slower must be called
# slower even when a few preempted samples made the recorded per-iteration
# stdev enormous (seen on loopback with the machine busy: stdev 236 us around
# a 0.3 us median hid a 5x difference). The stdev alone would put the noise
# above the difference; (p99 - p50) / 2.326 does not.

t_plot_noise_outlier_stdev() {
	local r
	r=$(ls -d results/*-loopback-ref | head -1)
	[ -n "$r" ] || die "no committed reference run under results/"
	cp -r "$r" "$WORK/base"
	cp -r "$r" "$WORK/slow"
	python3 - "$WORK/base/put_lat.csv" "$WORK/slow/put_lat.csv" <<'PY'
import csv, sys
for path, factor in ((sys.argv[1], 1.0), (sys.argv[2], 3.0)):
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        for c in ("lat_us_min", "lat_us_p50", "lat_us_mean", "lat_us_p99", "lat_us_p999"):
            r[c] = f"{float(r[c]) * factor:.3f}"
        # a few samples of milliseconds: the stdev explodes, the quantiles do not
        r["lat_us_max"] = "70000.000"
        r["lat_us_stdev"] = "5000.000"
    w = csv.DictWriter(open(path, "w", newline=""), fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader(); w.writerows(rows)
PY
	expect_rc 1 python3 plot/efab_plot "$WORK/slow" --baseline "$WORK/base" -o "$WORK/g"
	grep -q "^- put_lat \[put_lat write host:host" "$WORK/g/report.md" ||
		die "3x slower put_lat not called significantly worse under an outlier stdev"
	# and the same data against itself is still no difference
	expect_rc 0 python3 plot/efab_plot "$WORK/base" --baseline "$WORK/base" -o "$WORK/g0"
}

# Three repeats per side: the comparison is of ln(median) with each side's
# noise from its own repeats. A latency 7-20x worse whose slowest repeat is an
# outlier (10x, 11x, 30x the base) must fail the gate: the run-to-run
# half-range in microseconds (10x the base) would have hidden it, and so
# would p99s inflated by load on every repeat.
t_plot_noise_repeats_log_scale() {
	local r
	r=$(ls -d results/*-loopback-ref | head -1)
	[ -n "$r" ] || die "no committed reference run under results/"
	mkdir -p "$WORK/base" "$WORK/slow"
	cp "$r/meta.json" "$WORK/base/"
	cp "$r/meta.json" "$WORK/slow/"
	python3 - "$r/put_lat.csv" "$WORK/base/put_lat.csv" "$WORK/slow/put_lat.csv" <<'PY'
import csv, sys
src = [r for r in csv.DictReader(open(sys.argv[1]))]
first = src[0]["run_id"]
src = [r for r in src if r["run_id"] == first]  # one repeat of every series and size
for path, factors in ((sys.argv[2], (1.0, 1.4, 1.6)), (sys.argv[3], (10.0, 11.0, 30.0))):
    out = []
    for k, f in enumerate(factors):
        for r in src:
            r = dict(r)
            r["run_id"] = f"{r['run_id']}-rep{k}"
            for c in ("lat_us_min", "lat_us_p50", "lat_us_mean"):
                r[c] = f"{float(r[c]) * f:.3f}"
            p50 = float(r["lat_us_p50"])
            r["lat_us_p99"] = f"{p50 * 1000:.3f}"  # load on every repeat
            r["lat_us_p999"] = r["lat_us_max"] = f"{p50 * 2000:.3f}"
            r["lat_us_stdev"] = f"{p50 * 300:.3f}"
            out.append(r)
    w = csv.DictWriter(open(path, "w", newline=""), fieldnames=list(src[0]), lineterminator="\n")
    w.writeheader(); w.writerows(out)
PY
	expect_rc 1 python3 plot/efab_plot "$WORK/slow" --baseline "$WORK/base" -o "$WORK/g"
	grep -q "^- put_lat \[put_lat write host:host" "$WORK/g/report.md" ||
		die "put_lat 7-20x slower in 3 repeats not called significantly worse"
	expect_rc 0 python3 plot/efab_plot "$WORK/base" --baseline "$WORK/base" -o "$WORK/g0"
}

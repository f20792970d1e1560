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

# Issue 26: the demo's loaded-machine case. atomic_lat cswap, 2 repeats a side,
# shm ~0.89 us against tcp ~13.19 us (14.8x), with p99 and stdev inflated by
# load. With the quartiles recorded the difference is called (tcp slower);
# from rows without them (the old columns only) it may be inconclusive, but
# never "no significant difference": the repeat ranges do not overlap.
plot_case() { # DIR QUARTILES(0|1) then "provider p50 p25 p75" lines on stdin
	local data
	data=$(cat)
	python3 - "$1" "$2" "$data" <<'PY'
import csv, os, sys
out, quart = sys.argv[1], sys.argv[2] == "1"
base = ("schema,run_id,timestamp,bench,op,provider,fabric,domain,libfabric_version,"
        "provider_version,mem_local,mem_remote,ranks,pairs,window,size_bytes,iters,lat_us_min,"
        "lat_us_p50,lat_us_mean,lat_us_p99,lat_us_p999,lat_us_max,lat_us_stdev,bw_MBps,"
        "msg_rate_Mops,errors").split(",")
cols = base + (["first_us", "lat_us_batch", "lat_us_p25", "lat_us_p75"] if quart else [])
os.makedirs(out, exist_ok=True)
rows, rep = [], {}
for line in sys.argv[3].split("\n"):
    if not line.strip():
        continue
    prov, p50, q1, q3 = line.split()
    k = rep[prov] = rep.get(prov, 0) + 1
    p50, q1, q3 = float(p50), float(q1), float(q3)
    r = dict.fromkeys(cols, "")
    r.update(schema="1", run_id=f"x:atomic_lat[provider={prov},aop=cswap]#{k}",
             timestamp="2026-11-30T00:00:00Z", bench="atomic_lat", op="cswap_u64",
             provider={"tcp": "tcp;ofi_rxm"}.get(prov, prov), fabric=prov, domain=prov,
             libfabric_version="1.17", provider_version="117.0", mem_local="host",
             mem_remote="host", ranks="2", pairs="1", window="0", size_bytes="8", iters="300",
             lat_us_min=f"{q1 * 0.9:.3f}", lat_us_p50=f"{p50:.3f}", lat_us_mean=f"{p50 * 30:.3f}",
             lat_us_p99=f"{p50 * 3000:.3f}", lat_us_p999=f"{p50 * 5000:.3f}",
             lat_us_max=f"{p50 * 9000:.3f}", lat_us_stdev=f"{p50 * 900:.3f}", errors="0")
    if quart:
        r.update(first_us="50.000", lat_us_batch=f"{p50:.3f}", lat_us_p25=f"{q1:.3f}",
                 lat_us_p75=f"{q3:.3f}")
    rows.append(r)
w = csv.DictWriter(open(os.path.join(out, "atomic_lat.csv"), "w", newline=""), fieldnames=cols,
                   lineterminator="\n")
w.writeheader()
w.writerows(rows)
PY
}

t_plot_noise_demo_15x_not_insignificant() {
	local q
	for q in 1 0; do
		plot_case "$WORK/d$q" $q <<'EOF2'
shm 0.88 0.84 0.97
tcp 13.00 12.40 14.20
shm 0.90 0.85 0.99
tcp 13.38 12.70 14.60
EOF2
		expect_rc 0 python3 plot/efab_plot "$WORK/d$q" --group-by provider -o "$WORK/pd$q"
		local v
		v=$(grep "^- atomic_lat \[atomic_lat cswap_u64 host:host\]: tcp;ofi_rxm p50 latency is 14.8" \
			"$WORK/pd$q/report.md") || die "no 14.8x verdict (quartiles $q)"
		case "$v" in *"no significant difference"*) die "14.8x called no significant difference: $v" ;; esac
		grep -q "| atomic_lat | atomic_lat cswap_u64 host:host | 8 | 0.890 | 13.190 | 14.820 | no sig" \
			"$WORK/pd$q/report.md" && die "answer table: 14.8x no significant difference"
		if [ $q = 1 ]; then
			case "$v" in *"(significant)"*) ;; *) die "with quartiles, 14.8x not significant: $v" ;; esac
			grep -q "| 14.820 | slower |" "$WORK/pd$q/report.md" || die "answer table: not slower"
		fi
	done
	# the same data against itself: no significant difference, also at 2 repeats
	cp -r "$WORK/d1" "$WORK/d1b"
	sed -i 's/^1,x:/1,y:/' "$WORK/d1b/atomic_lat.csv"
	python3 - "$WORK/d1" "$WORK/d1b" <<'PY'
import json, sys
for d, lab in zip(sys.argv[1:], ("one", "two")):
    json.dump({"label": lab}, open(d + "/meta.json", "w"))
PY
	expect_rc 0 python3 plot/efab_plot "$WORK/d1" "$WORK/d1b" --group-by label -o "$WORK/same"
	grep -q "^- atomic_lat .*: two p50 latency is 1.00× one at 8 B (no significant difference)" \
		"$WORK/same/report.md" || die "same data not 'no significant difference'"
}

# Three repeats a side whose ranges do not overlap but whose spread is too
# large for the log rule to call: inconclusive, never "no significant difference".
t_plot_noise_disjoint_repeats_inconclusive() {
	plot_case "$WORK/r3" 1 <<'EOF2'
shm 1.0 0.99 1.01
tcp 2.1 2.09 2.11
shm 1.5 1.49 1.51
tcp 2.5 2.49 2.51
shm 2.0 1.99 2.01
tcp 3.0 2.99 3.01
EOF2
	expect_rc 0 python3 plot/efab_plot "$WORK/r3" --group-by provider -o "$WORK/p3"
	grep -q "^- atomic_lat .*: tcp;ofi_rxm p50 latency is 1.67× shm at 8 B (inconclusive (3 repeats))" \
		"$WORK/p3/report.md" || { grep "^- atomic" "$WORK/p3/report.md" >&2; die "not inconclusive"; }
}

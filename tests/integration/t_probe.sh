# efab_probe: the matrix agrees with fi_getinfo (via libfabric's fi_info tool),
# --live on shm and tcp, filters, output formats, and the exit-77 atomic path
# found through the probe's own query rather than hard-coded.

t_probe_matrix_matches_fi_info() {
	expect_rc 0 "$BIN/efab_probe" --json
	python3 tests/probecheck.py "$WORK/last.out" || die "probe disagrees with fi_info"
	expect_rc 0 "$BIN/efab_probe"
	# a verdict for every RDM provider libfabric's own fi_info lists (1.17: shm,
	# tcp;ofi_rxm, sockets, udp;ofi_rxd; 2.6 also names plain tcp)
	local p n=0
	while read -r p; do
		grep -qF "verdict (provider $p," "$WORK/last.out" || die "no verdict for $p"
		n=$((n + 1))
	done < <(fi_info -t FI_EP_RDM | sed -n 's/^provider: //p' | sort -u)
	[ "$n" -ge 2 ] || die "fi_info lists only $n RDM providers"
	# the table fits 120 columns
	awk 'length > 120 && !/^(verdict|live_)/ { exit 1 }' "$WORK/last.out" || die "line over 120"
}

t_probe_filters_and_formats() {
	expect_rc 0 "$BIN/efab_probe" -p shm --csv "$WORK/p.csv"
	grep -q "^shm,shm,shm,mr_FI_MR_LOCAL,no$" "$WORK/p.csv" || die "csv lacks mr_FI_MR_LOCAL"
	[ "$(cut -d, -f1 "$WORK/p.csv" | sort -u | grep -vc provider)" = 1 ] || die "-p shm not filtered"
	expect_rc 0 "$BIN/efab_probe" -p tcp -f 127.0.0.1/32 --json
	python3 - "$WORK/last.out" <<'PY' || die "json filter"
import json, sys
f = json.load(open(sys.argv[1]))["fabrics"]
# libfabric 1.17 answers -p tcp with tcp;ofi_rxm only, 2.x with tcp and tcp;ofi_rxm
assert f and all(c["provider"] in ("tcp", "tcp;ofi_rxm") and c["fabric"] == "127.0.0.1/32" for c in f), f
assert len({(c["provider"], c["domain"]) for c in f}) == len(f), f
PY
	expect_rc 2 "$BIN/efab_probe" -p efa
	expect_msg "no RDM fabric matches provider 'efa'.*available here: .*shm/shm/shm"
	expect_rc 2 "$BIN/efab_probe" -p shm -f efa-direct
	expect_msg "available here"
	expect_rc 2 "$BIN/efab_probe" --domain nonexistent0
	expect_rc 2 "$BIN/efab_probe" -m 8
	expect_msg "unknown option"
}

t_probe_live() {
	for p in shm tcp; do
		expect_rc 0 mpi 2 "$BIN/efab_probe" --live -p $p --json
		python3 - "$WORK/last.out" <<'PY' || die "live results on $p"
import json, sys
for f in json.load(open(sys.argv[1]))["fabrics"]:
    for k in ("live_put_registered", "live_put_unregistered", "live_writedata", "live_read",
              "live_atomic_fadd_u64"):
        assert f[k] == "OK", (f["provider"], k, f[k])
PY
	done
	expect_rc 2 mpi 3 "$BIN/efab_probe" --live -p shm
	expect_msg "exactly 2 ranks"
}

# --live's put matrix (bench/tools/probe_put.c): on shm every host case, with
# and without FI_MR_LOCAL in the hints, from a registered and an unregistered
# source, runs in its own pair of child processes and its data are checked at
# rank 1; cuda cases skip with the reason where there is no GPU. The same in
# JSON, CSV and the table's section; no child outlives the probe.
t_probe_live_put_matrix() {
	expect_rc 0 mpi 2 "$BIN/efab_probe" --live -p shm --json --csv "$WORK/p.csv"
	python3 tests/probeput.py shm "$WORK/last.out" || die "put matrix on shm"
	cp "$WORK/last.out" "$WORK/p.json"
	grep -q '^shm,shm,shm,live_put_host_nomrlocal_unreg,shm: ok (data verified)$' "$WORK/p.csv" ||
		die "csv lacks the put matrix"
	grep -q '^shm,shm,shm,live_first_fabric_mrlocal,shm$' "$WORK/p.csv" || die "csv lacks the first fabric"
	expect_rc 0 mpi 2 "$BIN/efab_probe" --live -p shm
	python3 tests/probeput.py table "$WORK/last.out" "$WORK/p.json" || die "table section"
	! pgrep -f -- "^$(cd "$BIN" && pwd -P)/efab_probe --live-child" >/dev/null || die "a live child outlived the probe"
	# a probe of the same installation: --diff finds nothing (no addresses, no pids)
	expect_rc 0 "$BIN/efab_probe" --diff "$WORK/p.json" "$WORK/p.csv"
}

# A crash, an abort, an exit without a verdict and a hang inside a case are
# its verdicts (EFAB_PROBE_LIVE_HOOK makes rank 0's child do each where it
# would post the put): the fault named with its signal and library (libc:
# strlen of NULL), the hang killed with its process group after 2 x 2 s + 5 s
# of silence; the cases around them still run, nothing is left behind, and
# the probe exits 0.
t_probe_live_put_crash_and_hang() {
	local hooks="segv:shm/shm/live_put_host_mrlocal_reg,abort:shm/shm/live_put_host_mrlocal_unreg"
	hooks="$hooks,hang:shm/shm/live_put_host_nomrlocal_unreg,exit:shm/shm/live_put_cuda_*"
	local t0=$SECONDS
	expect_rc 0 mpi 2 -x EFAB_PROBE_LIVE_HOOK="$hooks" "$BIN/efab_probe" --live -p shm -t 2 --json
	[ $((SECONDS - t0)) -lt 60 ] || die "took $((SECONDS - t0)) s"
	python3 tests/probeput.py hooks "$WORK/last.out" shm shm 2 || die "hook verdicts"
	python3 - "$WORK/last.out" <<'PY' || die "old live rows or the exit verdict"
import json, subprocess, sys
f = json.load(open(sys.argv[1]))["fabrics"][0]
for k in ("live_put_registered", "live_put_unregistered", "live_writedata", "live_read", "live_atomic_fadd_u64"):
    assert f[k] == "OK", (k, f[k])
gpu = subprocess.run(["sh", "-c", "nvidia-smi -L"], capture_output=True).returncode == 0
for k in ("live_put_cuda_mrlocal_reg", "live_put_cuda_nomrlocal_unreg"):
    # no GPU: the case ends before the put (skipped); with one it runs on (to the
    # hook's exit where shm offers cuda memory)
    assert f[k].startswith("skipped: ") != gpu, (k, f[k])
PY
	! pgrep -f -- "^$(cd "$BIN" && pwd -P)/efab_probe --live-child" >/dev/null || die "a live child outlived the probe"
}

t_atomic_unsupported_exit_77() {
	expect_rc 0 "$BIN/efab_probe" -p shm --json
	# an op/dtype pair the provider refuses, as the provider reports it
	local pair
	pair=$(python3 - "$WORK/last.out" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["fabrics"][0]
for op in ("add", "fadd", "cswap", "swap", "min", "max", "bor", "band", "bxor"):
    have = f["atomic_" + op].split()
    for dt in ("u64", "u32", "i64", "i32", "f64", "f32"):
        if dt not in have:
            print(op, dt)
            sys.exit(0)
PY
)
	[ -n "$pair" ] || die "shm supports every op x dtype: nothing to refuse"
	set -- $pair
	expect_rc 77 mpi 2 "$BIN/efab_atomic_lat" -p shm --aop "$1" --dtype "$2"
	expect_msg "does not support --aop $1 .* on $2"
	expect_rc 77 mpi 2 "$BIN/efab_atomic_bw" -p shm --aop "$1" --dtype "$2"
}

# ---- efab_probe --diff: two probe outputs compared (no MPI, no libfabric) ----

# A real probe: every fabric here (--json and --csv of one run), with the shm
# column taken from a --live run so that live rows take part.
probe_diff_inputs() {
	expect_rc 0 mpi 2 "$BIN/efab_probe" --live -p shm --json --csv "$WORK/live.csv"
	cp "$WORK/last.out" "$WORK/live.json"
	expect_rc 0 "$BIN/efab_probe" --json --csv "$WORK/all.csv"
	cp "$WORK/last.out" "$WORK/all.json"
	python3 - "$WORK/all.json" "$WORK/live.json" "$WORK/a.json" <<'PY' || die "merge"
import json, sys
a, live = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
shm = live["fabrics"][0]
a["fabrics"] = [shm if c["provider"] == "shm" else c for c in a["fabrics"]]
a["fabrics"].append(a["fabrics"].pop(0))  # shm not last: the last column is removed in B
assert sum(1 for c in a["fabrics"] if c["provider"] == "shm") == 1 and len(a["fabrics"]) > 2
json.dump(a, open(sys.argv[3], "w"))
PY
}

t_probe_diff_identical() {
	probe_diff_inputs
	expect_rc 0 "$BIN/efab_probe" --diff "$WORK/a.json" "$WORK/a.json"
	[ "$(tail -1 "$WORK/last.out")" = "no differences" ] || die "no 'no differences'"
	[ "$(wc -l <"$WORK/last.out")" = 2 ] || die "more than the header and 'no differences'"
	expect_rc 0 "$BIN/efab_probe" --diff "$WORK/a.json" "$WORK/a.json" --json
	python3 - "$WORK/last.out" <<'PY' || die "json of an identical diff"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["identical"] is True and d["differences"] == 0 and d["changes"] == [], d
assert d["a"]["format"] == "JSON" and d["a"]["columns"] > 2, d
PY
	[ -s "$WORK/last.err" ] && die "stderr not empty"
	# the CSV long format of the same probe, both ways round, live rows included
	expect_rc 0 "$BIN/efab_probe" --diff "$WORK/all.csv" "$WORK/all.json"
	grep -q "^efab_probe --diff: A = .*all.csv (CSV, [0-9]* columns), B = .*all.json (JSON," \
		"$WORK/last.out" || die "header does not name the formats"
	expect_rc 0 "$BIN/efab_probe" --diff "$WORK/live.json" "$WORK/live.csv"
	grep -q "^no differences$" "$WORK/last.out" || die "live csv vs json"
	# a pretty-printed, re-ordered copy (python's json) is the same probe
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['fabrics'].reverse(); \
json.dump(d, open(sys.argv[2], 'w'), indent=2, ensure_ascii=True)" "$WORK/a.json" "$WORK/pretty.json"
	expect_rc 0 "$BIN/efab_probe" --diff "$WORK/a.json" "$WORK/pretty.json"
}

t_probe_diff_constructed_changes() {
	probe_diff_inputs
	python3 tests/probediff.py construct "$WORK/a.json" "$WORK/b.json" "$WORK/exp.json" ||
		die "construct B"
	expect_rc 1 "$BIN/efab_probe" --diff "$WORK/a.json" "$WORK/b.json"
	cp "$WORK/last.out" "$WORK/table.txt"
	[ -s "$WORK/last.err" ] && die "stderr not empty"
	expect_rc 1 "$BIN/efab_probe" --diff "$WORK/a.json" "$WORK/b.json" --json
	python3 tests/probediff.py check "$WORK/exp.json" "$WORK/last.out" "$WORK/table.txt" ||
		die "the changes are not listed exactly"
	grep -q "atomic_fadd .* (vanished: f32)$" "$WORK/table.txt" || die "datatype not named"
	# the same B as CSV (the diff detects the format of each file by content)
	python3 - "$WORK/b.json" "$WORK/b.csv" <<'PY' || die "b.csv"
import csv, json, sys
w = csv.writer(open(sys.argv[2], "w", newline=""), lineterminator="\n")
w.writerow(["provider", "fabric", "domain", "property", "value"])
for c in json.load(open(sys.argv[1]))["fabrics"]:
    for k, v in c.items():
        w.writerow([c["provider"], c["fabric"], c["domain"], k, v])
PY
	expect_rc 1 "$BIN/efab_probe" --diff "$WORK/a.json" "$WORK/b.csv" --json
	python3 tests/probediff.py check "$WORK/exp.json" "$WORK/last.out" "$WORK/table.txt" ||
		die "B as CSV"
	# B against A: the fabric appears, the datatype appears
	expect_rc 1 "$BIN/efab_probe" --diff "$WORK/b.json" "$WORK/a.json"
	grep -q "(column) *absent -> present (appeared in B)$" "$WORK/last.out" || die "no appeared column"
	grep -q "atomic_fadd .* (appeared: f32)$" "$WORK/last.out" || die "no appeared datatype"
	# the verdict is not compared (made of the rows that are); versions are
	python3 - "$WORK/a.json" "$WORK/v.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
a["fabrics"][0]["verdict"] = "something else"
json.dump(a, open(sys.argv[2], "w"))
PY
	expect_rc 0 "$BIN/efab_probe" --diff "$WORK/a.json" "$WORK/v.json"
	sed 's/"api_version": "[0-9.]*"/"api_version": "9.9"/g' "$WORK/a.json" >"$WORK/api.json"
	expect_rc 1 "$BIN/efab_probe" --diff "$WORK/a.json" "$WORK/api.json"
	[ "$(grep -c " api_version .* -> 9.9$" "$WORK/last.out")" = "$(python3 -c "import json,sys; \
print(len(json.load(open(sys.argv[1]))['fabrics']))" "$WORK/a.json")" ] || die "api_version per column"
}

t_probe_diff_nic_names_by_position() {
	expect_rc 0 "$BIN/efab_probe" -p shm --json
	python3 tests/probediff.py nics "$WORK/last.out" "$WORK/a2.json" "$WORK/b2.json" "$WORK/exp.json" ||
		die "nics"
	expect_rc 1 "$BIN/efab_probe" --diff "$WORK/a2.json" "$WORK/b2.json"
	cp "$WORK/last.out" "$WORK/table.txt"
	grep -q "^note: efa/efa: domain rdmap16s0-rdm of A matched to rdmap79s0-rdm of B by position" \
		"$WORK/table.txt" || die "no note on the first NIC"
	grep -q "^note: efa/efa: domain rdmap32s0-rdm of A matched to rdmap85s0-rdm of B by position" \
		"$WORK/table.txt" || die "no note on the second NIC"
	expect_rc 1 "$BIN/efab_probe" --diff "$WORK/a2.json" "$WORK/b2.json" --json
	python3 tests/probediff.py check "$WORK/exp.json" "$WORK/last.out" "$WORK/table.txt" ||
		die "changes of a positional match"
	python3 - "$WORK/last.out" <<'PY' || die "matched_by_position"
import json, sys
m = json.load(open(sys.argv[1]))["matched_by_position"]
assert [(x["a_domain"], x["b_domain"], x["a_nic"], x["b_nic"]) for x in m] == [
    ("rdmap16s0-rdm", "rdmap79s0-rdm", "rdmap16s0", "rdmap79s0"),
    ("rdmap32s0-rdm", "rdmap85s0-rdm", "rdmap32s0", "rdmap85s0")], m
PY
	# a domain renamed other than by its NIC name is another column; the
	# second NIC still pairs with the second by position
	sed 's/"domain": "rdmap79s0-rdm"/"domain": "rdmap79s0-dgrm"/' "$WORK/b2.json" >"$WORK/b3.json"
	expect_rc 1 "$BIN/efab_probe" --diff "$WORK/a2.json" "$WORK/b3.json"
	grep -q "^note: efa/efa: domain rdmap32s0-rdm of A matched to rdmap85s0-rdm of B by position" \
		"$WORK/last.out" || die "second NIC not paired"
	[ "$(grep -c "^note:" "$WORK/last.out")" = 1 ] || die "first NIC paired with another name"
	grep -q "^efa/efa/rdmap16s0-rdm *(column) *present -> absent" "$WORK/last.out" || die "not vanished"
	grep -q "^efa/efa/rdmap79s0-dgrm *(column) *absent -> present" "$WORK/last.out" || die "not appeared"
}

t_probe_diff_bad_input() {
	expect_rc 0 "$BIN/efab_probe" -p shm --json
	cp "$WORK/last.out" "$WORK/ok.json"
	expect_rc 0 "$BIN/efab_probe" -p shm
	cp "$WORK/last.out" "$WORK/table.txt"
	: >"$WORK/empty"
	head -c 300 "$WORK/ok.json" >"$WORK/trunc.json"
	printf 'provider,fabric,domain,property,value\nshm,shm,shm,inject_size\n' >"$WORK/short.csv"
	printf 'provider,fabric,domain,property,value\nshm,shm,shm,a,1\nshm,shm,shm,a,2\n' >"$WORK/dup.csv"
	printf 'provider,fabric,domain,property,value\nshm,shm,shm,a,"1\n' >"$WORK/quote.csv"
	printf '{"fabrics": [{"provider": "shm", "fabric": "shm"}]}\n' >"$WORK/nodomain.json"
	printf '{"efabench": "0.1.0"}\n' >"$WORK/nofabrics.json"
	printf 'a,b\n1,2\n' >"$WORK/other.csv"
	local f re
	while IFS='|' read -r f re; do
		expect_rc 2 "$BIN/efab_probe" --diff "$WORK/ok.json" "$WORK/$f"
		[ ! -s "$WORK/last.out" ] || die "$f: output on stdout"
		[ "$(wc -l <"$WORK/last.err")" = 1 ] || die "$f: not one line"
		grep -qE "^efab_probe: $WORK/$f(:[0-9]+)?: $re" "$WORK/last.err" || die "$f: message"
		# either side
		expect_rc 2 "$BIN/efab_probe" --diff "$WORK/$f" "$WORK/ok.json" --json
		grep -qE "^efab_probe: $WORK/$f(:[0-9]+)?: $re" "$WORK/last.err" || die "$f: message as A"
	done <<'EOF2'
missing.json|cannot open: No such file or directory
empty|empty
table.txt|efab_probe's table, not its --json output or --csv file
trunc.json|not valid JSON: the file ends early
short.csv|4 fields, expected 5
dup.csv|property 'a' of shm/shm/shm appears twice
quote.csv|unterminated quoted field
nodomain.json|entry 1 of "fabrics" has no "domain"
nofabrics.json|JSON without a "fabrics" array
other.csv|neither efab_probe --json output nor its --csv long format
EOF2
	expect_rc 2 "$BIN/efab_probe" --diff "$WORK/ok.json"
	expect_msg "--diff needs two files, got 1"
	expect_rc 2 "$BIN/efab_probe" --diff "$WORK/ok.json" "$WORK/ok.json" --live
	expect_msg "'--live' is not an option of --diff"
	expect_rc 0 "$BIN/efab_probe" --diff --help
	grep -q "^Usage: efab_probe --diff A B \[--json\]" "$WORK/last.out" || die "help"
	grep -qiE "sanitizer|segmentation|core dumped" "$WORK"/*.err 2>/dev/null && die "crashed"
	true
}

# efab_sweep records the probe of its install (probe.json, meta.json "probe"),
# so that two sweeps can be diffed; a failed or slow probe is recorded, not fatal.
t_probe_diff_sweep_records_probe() {
	printf '# one quick job\n[reg]\nbench = mr_reg\nprovider = shm\nsizes = 4K\nregime = fresh\n' \
		>"$WORK/s.conf"
	expect_rc 0 "$BIN/efab_sweep" "$WORK/s.conf" -o "$WORK/res" --label ok
	local d
	d=$(ls -d "$WORK"/res/*-ok)
	[ -s "$d/probe.json" ] || die "no probe.json"
	[ -e "$d/probe.json.tmp" ] && die "probe.json.tmp left behind"
	python3 - "$d/meta.json" "$ABIN" <<'PY' || die "meta.json probe"
import json, sys
p = json.load(open(sys.argv[1]))["probe"]
assert p["status"] == "ok" and p["file"] == "probe.json", p
assert p["command"] == sys.argv[2] + "/efab_probe --json" and p["timeout_s"] == 120, p
PY
	expect_rc 0 "$BIN/efab_probe" --json
	cp "$WORK/last.out" "$WORK/now.json"
	expect_rc 0 "$BIN/efab_probe" --diff "$d/probe.json" "$WORK/now.json"
	# a resumed run keeps its probe.json
	expect_rc 0 "$BIN/efab_sweep" "$WORK/s.conf" --resume "$d"
	grep -q '"probe": {"status": "kept"' "$d/meta.json" || die "resume did not keep the probe"
	expect_rc 0 "$BIN/efab_sweep" --dry-run "$WORK/s.conf"
	grep -q "^# probe: .*/efab_probe --json > RUNDIR/probe.json (at most 120 s)$" "$WORK/last.out" ||
		die "dry run does not show the probe"
	# no efab_probe beside efab_sweep: recorded, the sweep goes on
	mkdir -p "$WORK/bin"
	cp "$BIN/efab_sweep" "$BIN/efab_mr_reg" "$WORK/bin/"
	expect_rc 0 "$WORK/bin/efab_sweep" "$WORK/s.conf" -o "$WORK/res" --label noprobe
	expect_msg "no probe.json \(efab_probe --json exit 127: .*cannot run.*\); the sweep goes on"
	d=$(ls -d "$WORK"/res/*-noprobe)
	[ -e "$d/probe.json" ] && die "probe.json without a probe"
	grep -q '"probe": {"status": "fail", "file": ""' "$d/meta.json" || die "failure not in meta.json"
	grep -q "^1	reg	ok" "$d/jobs.tsv" || die "the job did not run"
	# a probe over its time limit is stopped
	expect_rc 0 env EFAB_SWEEP_PROBE_TIMEOUT=0.001 "$BIN/efab_sweep" "$WORK/s.conf" -o "$WORK/res" \
		--label slow
	expect_msg "ran over 0.001 s \(EFAB_SWEEP_PROBE_TIMEOUT\) and was stopped"
	d=$(ls -d "$WORK"/res/*-slow)
	[ -e "$d/probe.json" ] && die "probe.json from a stopped probe"
	grep -q '"probe": {"status": "timeout"' "$d/meta.json" || die "timeout not in meta.json"
	true
}

# efab_plot opens its report with the capability diff (efab_probe --diff) when
# every result directory has a probe.json.
t_probe_diff_plot_report() {
	local r
	r=$(ls -d results/*-loopback-ref | head -1)
	[ -n "$r" ] || die "no committed reference run"
	expect_rc 0 "$BIN/efab_probe" -p shm --json
	local x
	for x in one two three; do
		cp -r "$r" "$WORK/$x"
		cp "$WORK/last.out" "$WORK/$x/probe.json"
		python3 - "$WORK/$x/meta.json" "$x" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["label"] = sys.argv[2]; json.dump(m, open(sys.argv[1], "w"))
PY
	done
	python3 - "$WORK/three/probe.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["fabrics"][0]["mr_FI_MR_LOCAL"] = "yes"
d["fabrics"][0]["atomic_fadd"] = "u64 u32"
json.dump(d, open(sys.argv[1], "w"))
PY
	export EFAB_PROBE=$ABIN/efab_probe
	expect_rc 0 python3 plot/efab_plot "$WORK/one" "$WORK/two" "$WORK/three" -o "$WORK/p"
	local rep=$WORK/p/report.md
	# the report opens with it: before the runs
	[ "$(grep -n "^## " "$rep" | head -1)" = "3:## Capability diff (efab_probe --diff)" ] ||
		die "the report does not open with the capability diff"
	grep -q "^### one → two$" "$rep" && grep -q "^### one → three$" "$rep" || die "pairs"
	sed -n '/^### one → two$/,/^###/p' "$rep" | grep -q "^No capability differences (1 column)\.$" ||
		die "identical probes"
	grep -q '^| shm/shm/shm | mr_FI_MR_LOCAL | `no` | `yes` |$' "$rep" || die "mr_FI_MR_LOCAL row"
	grep -q '^| shm/shm/shm | atomic_fadd | `u64 u32 i64 i32 f64 f32` | `u64 u32` (vanished: i64 i32 f64 f32) |$' \
		"$rep" || die "atomic_fadd row"
	# the verdicts are untouched: identical data, no invented difference
	grep "^- " "$rep" | grep -v "no significant difference" && die "invented a difference"
	# one directory without probe.json: said, not compared
	rm "$WORK/two/probe.json"
	expect_rc 0 python3 plot/efab_plot "$WORK/one" "$WORK/two" -o "$WORK/p2"
	grep -q "^Not compared: no probe.json in \`$WORK/two\`" "$WORK/p2/report.md" || die "missing probe.json"
	# a broken probe.json: its one line, the report still written
	echo '{"fabrics": [' >"$WORK/three/probe.json"
	expect_rc 0 python3 plot/efab_plot "$WORK/one" "$WORK/three" -o "$WORK/p3"
	grep -q "^Not compared: .*three/probe.json:.*: not valid JSON" "$WORK/p3/report.md" || die "broken probe.json"
	# none has one: no section (the committed reports stay as they are)
	expect_rc 0 python3 plot/efab_plot "$r" "$WORK/two" -o "$WORK/p4"
	grep -q "Capability diff" "$WORK/p4/report.md" && die "section without probe.json"
	true
}

# The committed diff of two probes on the simulated EFA device (libfabric 2.4.0
# and 2.6.0) is what efab_probe --diff says of its two files today.
t_probe_diff_committed_efasim() {
	local d=results/20261130-075640-vm-efasim-probe-diff-2.4.0-vs-2.6.0
	[ -f "$d/diff.txt" ] || die "no $d/diff.txt"
	grep -q "SIMULATED" "$d/README.md" || die "README does not say SIMULATED"
	( cd "$d" && "$ABIN/efab_probe" --diff probe-2.4.0.json probe-2.6.0.json ) >"$WORK/diff.txt"
	[ $? = 1 ] || die "the two probes no longer differ"
	diff -u "$d/diff.txt" "$WORK/diff.txt" || die "diff.txt is not what --diff says now"
	python3 - "$d" <<'PY' || die "not simulated columns"
import json, sys
for v in ("2.4.0", "2.6.0"):
    cols = json.load(open(f"{sys.argv[1]}/probe-{v}.json"))["fabrics"]
    assert cols and all(c["simulated"].startswith("yes (efasim") for c in cols), v
    assert all(c["api_version"] == v.rsplit(".", 1)[0] for c in cols), v
PY
}

# Completion counters (issue 46): what rdma-core, the device and libfabric
# offer, per efa column (bench/tools/probe.c describe_comp_counters). On
# libfabric 2.7.0a1 (pre-release snapshot) built against rdma-core main
# (pre-release snapshot) on sim-main: all three yes on efa-direct, hardware
# counters being 2.7's default (FI_EFA_USE_HW_CNTR=1); the efa fabric's
# counters are software; FI_EFA_USE_HW_CNTR=0 and a device without them
# (EFASIM_COMP_CNTR=0) say so. On 2.6.0 (rdma-core 64.0): none of it, each
# with its reason. --diff of the two probes names the rows.
probe_cc_json() { # OUT VAR=VALUE...: efab_probe --json -p efa on 2.7.0a1 or 2.6.0
	local out=$1 v=$2
	shift 2
	# each version's own build: one built against 2.7.0a1 needs FABRIC_1.10, which 2.6.0 lacks
	expect_rc 0 efa_run "$v" env "$@" "$EFASIM_BUILD_DIR/lf-$v/efab/bin/efab_probe" -p efa --json
	cp "$WORK/last.out" "$out"
}
probe_cc_check() { # JSON FABRIC ROW PREFIX
	python3 - "$@" <<'PY' || die "$1: $2 $3 does not start with '$4'"
import json, sys
all_cols = json.load(open(sys.argv[1]))["fabrics"]
cols = {c["provider"]: c for c in reversed(all_cols)}
cols.update({c["fabric"]: c for c in reversed(all_cols)})
v = cols[sys.argv[2]][sys.argv[3]]
assert v.startswith(sys.argv[4]), v
print(sys.argv[2], sys.argv[3], "=", v)
PY
}
t_efa270_probe_comp_counters() {
	efasim_need 2.7.0a1
	export EFASIM_HOST=probehost
	probe_cc_json "$WORK/p27.json" 2.7.0a1 X=1
	probe_cc_check "$WORK/p27.json" efa-direct comp_cntr_rdma_core "yes (efadv_create_comp_cntr)"
	probe_cc_check "$WORK/p27.json" efa-direct comp_cntr_device "yes (256 counters, max value 2147483647"
	probe_cc_check "$WORK/p27.json" efa-direct comp_cntr_libfabric \
		"yes (efa-direct's fi_cntr is a device counter: FI_EFA_USE_HW_CNTR=1, libfabric 2.7's default)"
	probe_cc_check "$WORK/p27.json" efa comp_cntr_libfabric "no (the efa fabric's fi_cntr is software"
	probe_cc_check "$WORK/p27.json" efa comp_cntr_device "yes (256 counters"
	probe_cc_json "$WORK/off.json" 2.7.0a1 FI_EFA_USE_HW_CNTR=0
	probe_cc_check "$WORK/off.json" efa-direct comp_cntr_libfabric "no (FI_EFA_USE_HW_CNTR=0 in the environment)"
	probe_cc_json "$WORK/nodev.json" 2.7.0a1 EFASIM_COMP_CNTR=0
	probe_cc_check "$WORK/nodev.json" efa-direct comp_cntr_device "no (ibv_query_comp_cntr_caps: Operation not supported)"
	probe_cc_check "$WORK/nodev.json" efa-direct comp_cntr_libfabric "no (FI_EFA_USE_HW_CNTR=1, but the device offers none"
	probe_cc_check "$WORK/nodev.json" efa-direct comp_cntr_rdma_core "yes"
	# 128-byte WQEs: the device's inline_buf_size_ex, read by libfabric 2.7 on efa-direct only
	probe_cc_check "$WORK/p27.json" efa-direct wqe_128 "yes (inline_buf_size_ex 80: efa-direct asked an inject size above 32 B"
	probe_cc_check "$WORK/p27.json" efa wqe_128 "device only (inline_buf_size_ex 80; the efa fabric's QPs keep 64-byte WQEs"
	probe_cc_json "$WORK/narrow.json" 2.7.0a1 EFASIM_WIDE_WQE=0
	probe_cc_check "$WORK/narrow.json" efa-direct wqe_128 "no (the device's inline_buf_size_ex 32 is its inline_buf_size"
	# tcp and shm: no rows of their own
	expect_rc 0 efa_run 2.7.0a1 "$EBIN/efab_probe" -p tcp --json
	probe_cc_check "$WORK/last.out" tcp comp_cntr_libfabric "-"
	# 2.6.0 on rdma-core 64.0, and the diff
	efasim_built 2.6.0 efab/bin/efab_probe
	probe_cc_json "$WORK/p26.json" 2.6.0 X=1
	probe_cc_check "$WORK/p26.json" efa-direct comp_cntr_rdma_core "no (libefa without efadv_create_comp_cntr"
	probe_cc_check "$WORK/p26.json" efa-direct comp_cntr_device "no (rdma-core cannot ask"
	probe_cc_check "$WORK/p26.json" efa-direct comp_cntr_libfabric "no (libfabric 2.6 built without efadv_create_comp_cntr)"
	probe_cc_check "$WORK/p26.json" efa-direct wqe_128 "device only (inline_buf_size_ex 80; libfabric 2.6 does not read it"
	expect_rc 1 "$EBIN/efab_probe" --diff "$WORK/p26.json" "$WORK/p27.json"
	local r
	for r in comp_cntr_rdma_core comp_cntr_device comp_cntr_libfabric wqe_128; do
		grep -q "$r" "$WORK/last.out" || die "--diff does not show $r"
	done
}

# The committed comparison of libfabric 2.6.0 and 2.7.0a1 (a pre-release
# snapshot) on the simulated device (issue 46): diff.txt is what --diff says
# of its two probes today, every column simulated, the release rows say which
# ran, the README and the report say SIMULATED and pre-release.
t_probe_diff_committed_efasim_270() {
	local d=results/20261204-041012-vm-efasim-2.6.0-vs-2.7.0a1-prerelease
	[ -f "$d/diff.txt" ] || die "no $d/diff.txt"
	grep -q "SIMULATED" "$d/README.md" || die "README does not say SIMULATED"
	grep -q "PRE-RELEASE" "$d/README.md" || die "README does not say PRE-RELEASE"
	grep -q "SIMULATED" "$d/plots/report.md" || die "report does not say SIMULATED"
	( cd "$d" && "$ABIN/efab_probe" --diff probe-lf1.json probe-lf2.json ) >"$WORK/diff.txt"
	[ $? = 1 ] || die "the two probes no longer differ"
	diff -u "$d/diff.txt" "$WORK/diff.txt" || die "diff.txt is not what --diff says now"
	grep -q "comp_cntr_libfabric  no (libfabric 2.6 built without efadv_create_comp_cntr) -> yes" "$d/diff.txt" ||
		die "the counters row does not differ"
	python3 - "$d" <<'PY' || die "not simulated columns"
import json, sys
for f, rel in (("probe-lf1.json", "2.6.0"), ("probe-lf2.json", "2.7.0a1")):
    cols = json.load(open(f"{sys.argv[1]}/{f}"))["fabrics"]
    efa = [c for c in cols if c["provider"] == "efa"]
    assert efa and all(c["simulated"].startswith("yes (efasim") for c in efa), f
    assert all(c["libfabric_release"] == rel for c in cols), f
PY
}

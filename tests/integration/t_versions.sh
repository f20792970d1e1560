# Version A/B (issue 18): one efabench build, compiled against Debian's
# libfabric 1.17 (the default `make`), run against 2.1.0, 2.4.0 and 2.6.0
# (build-efasim/lf-<v>/prefix, `make efasim V=<v>`), on shm and tcp and on the
# simulated EFA device; then one interleaved sweep against two libfabric
# installs and the report that compares them. A version not built skips (77).
# Every efasim figure is SIMULATED.

VERSIONS_LF=${EFASIM_VERSIONS:-"2.1.0 2.4.0 2.6.0 2.7.0a1"}
VERSIONS_BUILD=$EFASIM_BUILD_DIR

versions_need() { # V: the prefix of libfabric V, and a binary built against 1.x
	if [ "${EFAB_SAN:-0}" = 1 ]; then
		echo "version tests run in the plain make check (SAN builds link their own runtime)"
		exit 77
	fi
	efasim_built "$1" prefix/lib/libfabric.so.1
	"$BIN/efab_put_lat" --version | grep -q "built against libfabric 1\." || {
		echo "this build is not against libfabric 1.x ($("$BIN/efab_put_lat" --version)); the test runs a 1.x build on 2.x"
		exit 77
	}
}

# The API (fi_version()) of libfabric V: its major.minor, except the snapshot
# 2.7.0a1 (pre-release: libfabric main at af8ddbe), whose include/rdma/fabric.h
# still says 2.6 (FI_MINOR_VERSION 6; configure.ac says 2.7.0a1)
versions_api() { # V
	case $1 in
	2.7.0a1) echo 2.6 ;;
	*) echo "${1%.*}" ;;
	esac
}

# The header names the running library, the headers and the API asked for:
# the running version, not the 1.17 of the headers.
versions_header() { # V OUT
	local mm
	mm=$(versions_api "$1")
	grep -q "^# libfabric running $mm (.*lf-$1/prefix/lib/libfabric.so.*), built against 1.17 headers, API $mm asked" "$2" ||
		die "header does not say running $mm from lf-$1, built against 1.17, API $mm: $(grep '^# libfabric' "$2")"
}

versions_rows() { # V CSV: every row says which library ran and what was asked
	python3 - "$1" "$2" "$(versions_api "$1")" <<'EOF' || die "rows of $2 do not record the library"
import csv, sys
v, path, api = sys.argv[1], sys.argv[2], sys.argv[3]
rows = list(csv.DictReader(open(path)))
assert rows, "no rows"
for r in rows:
    assert r["libfabric_version"] == api, r["libfabric_version"]
    assert r["libfabric_built"] == "1.17", r["libfabric_built"]
    assert f"lf-{v}/prefix/lib/libfabric.so" in r["libfabric_path"], r["libfabric_path"]
    assert r["provider_req"] in ("shm", "tcp", "efa"), r["provider_req"]
EOF
}

# The newest version built (the last of VERSIONS_LF) gets every benchmark; the
# older ones one of each operation family (put, get, atomics, registration):
# the question there is whether the one 1.17 build runs on them at all, and
# the full sets take CI minutes without covering more of efabench.
versions_newest() { # V
	local last
	for last in $VERSIONS_LF; do :; done
	[ "$1" = "$last" ]
}

# Benchmarks with -c on shm and tcp, the 1.17 build on libfabric V.
versions_shm_tcp() { # V
	versions_need "$1"
	efasim_need "$1"
	local v=$1 p c all=pl
	for p in shm tcp; do
		rm -f "$WORK"/*.csv
		expect_rc 0 efa_mpi "$v" 2 "$BIN/efab_put_lat" -v -p $p -m 8:64K:x8 -n 50 -c --csv "$WORK/pl.csv"
		versions_header "$v" "$WORK/last.out"
		grep -q "^# asked for provider $p, fabric (any)" "$WORK/last.out" || die "header lacks the request"
		expect_rc 0 efa_mpi "$v" 2 "$BIN/efab_put_lat" -p $p -o writedata -m 8:4K:x8 -n 50 -c --csv "$WORK/pl.csv"
		expect_rc 0 efa_mpi "$v" 2 "$BIN/efab_get_bw" -p $p -m 8:1M:x8 -n 10 -c --csv "$WORK/gb.csv"
		expect_rc 0 efa_mpi "$v" 2 "$BIN/efab_atomic_lat" -p $p --aop fadd -n 30 -c --csv "$WORK/al.csv"
		expect_rc 0 efa_run "$v" "$BIN/efab_mr_reg" -p $p -m 4K:1M:x16 -n 5 --csv "$WORK/mr.csv" -v
		all="pl gb al mr"
		if versions_newest "$v"; then
			expect_rc 0 efa_mpi "$v" 2 "$BIN/efab_get_lat" -p $p -m 8:64K:x8 -n 50 -c --csv "$WORK/gl.csv"
			expect_rc 0 efa_mpi "$v" 2 "$BIN/efab_put_bw" -p $p -m 8:1M:x8 -n 10 -c --csv "$WORK/pb.csv"
			expect_rc 0 efa_mpi "$v" 2 "$BIN/efab_atomic_bw" -v -p $p -n 10 -c --csv "$WORK/ab.csv"
			all="$all gl pb ab"
		fi
		versions_header "$v" "$WORK/last.out"
		csvcheck "$WORK/pl.csv" --bench put_lat --rows 9 --lat --errors 0 --extra inject
		for c in $all; do versions_rows "$v" "$WORK/$c.csv"; done
		# --dmabuf is decided by the running library (>= 1.20), not the 1.17 headers;
		# without a GPU it ends at the memory (77), never at FI_MR_DMABUF (the
		# registration itself runs only on a GPU host: make gpu-check)
		expect_rc 77 efa_run "$v" "$BIN/efab_mr_reg" -p $p --mem cuda --dmabuf -m 4K -n 2
		grep -qi "FI_MR_DMABUF" "$WORK/last.err" && die "--dmabuf refused as if the library had no FI_MR_DMABUF"
	done
	# the probe asks the endpoint for its RMA limits (FI_OPT_*_RMA_SIZE, 2.x
	# options the 1.17 headers lack) and records the running API
	expect_rc 0 efa_run "$v" "$BIN/efab_probe" -p shm --json
	python3 - "$WORK/last.out" "$(versions_api "$v")" <<'EOF' || die "probe on $v"
import json, sys
c = json.load(open(sys.argv[1]))["fabrics"][0]
assert c["api_version"] == sys.argv[2], c["api_version"]
assert c["inject_rma_size"] and c["max_rma_size"], c
EOF
}

# The efasim tests of t_efasim.sh with the 1.17 build: every benchmark with -c
# on efa and efa-direct and unregistered sources (the newest version), writedata
# under FI_RX_CQ_DATA, probe --live, the endpoint's limits (every version); efa-direct's endpoint RMA limits come from FI_OPT_*_RMA_SIZE
# (a 1.17-only build would take tx_attr->inject_size and inject where
# efa-direct cannot).
versions_efasim() { # V
	versions_need "$1"
	local v=$1
	export EFAB_EBIN=$ABIN
	if versions_newest "$v"; then # the older versions: the checks below
		efa_benchmarks "$v"
		efa_src_unregistered "$v"
	fi
	efa_probe_live "$v"
	if [ "$v" = 2.1.0 ]; then
		efa_no_rma_before_24 "$v"
	else
		efa_writedata_rx_cq_data "$v"
	fi
	unset EFASIM_PROFILE
	efasim_need "$v"
	expect_rc 0 efa_mpi "$v" 2 "$BIN/efab_put_bw" -v -p efa -f efa-direct -m 8:64K:x64 -n 10 -c
	versions_header "$v" "$WORK/last.out"
	grep -q "RMA inject size 0 (FI_OPT_INJECT_RMA_SIZE); max RMA size [0-9]* (FI_OPT_MAX_RMA_SIZE)" "$WORK/last.out" ||
		die "efa-direct's RMA limits do not come from the endpoint: $(grep 'RMA inject' "$WORK/last.out")"
	grep -q "progress auto" "$WORK/last.out" || die "efa-direct's progress is not auto"
	expect_rc 0 efa_mpi "$v" 2 "$BIN/efab_put_lat" -v -p efa -f efa -m 8:4K:x8 -n 20 -c
	grep -q "RMA inject size [1-9][0-9]* (FI_OPT_INJECT_RMA_SIZE)" "$WORK/last.out" || die "efa's inject limit"
	grep -q "progress manual" "$WORK/last.out" || die "efa's progress is not manual"
}

for _v in $VERSIONS_LF; do
	_n=${_v//./}
	_n=${_n%%a*} # 2.7.0a1 (pre-release snapshot) -> 270
	eval "t_versions_117_build_on_${_n}_shm_tcp() { versions_shm_tcp $_v; }"
	eval "t_versions_117_build_on_${_n}_efasim() { versions_efasim $_v; }"
done

# ---- one sweep, two installs, interleaved; the report answers the question ----

versions_sweep_conf() { # FILE LAUNCHER-EXTRA INSTALLS PROVIDER-LINES
	cat >"$1" <<EOF
# Version A/B test: a small config swept against two libfabric installs, interleaved.
[global]
launcher = mpirun -np {np} --oversubscribe $2
env = FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
libfabric = $3
$4
timeout = 30
job_timeout = 120
repeat = 2

[put_lat]
bench = put_lat
sizes = 8:64K:x8
iters = 200

[get_bw]
bench = get_bw
sizes = 8:64K:x8
iters = 10

[mr_reg]
bench = mr_reg
sizes = 4K:1M:x16
iters = 20
EOF
}

# The report of a two-install sweep: both installs probed and diffed, no
# half-empty series, a verdict per benchmark/series/headline size, the
# returned names per group.
versions_check_report() { # RUNDIR REPORT A B
	python3 - "$@" <<'EOF' || die "report of $1"
import csv, glob, json, os, re, sys
d, rep, A, B = sys.argv[1:5]
m = json.load(open(os.path.join(d, "meta.json")))
inst = m["libfabric_installs"]
assert [i["version"] for i in inst] == [A, B], inst
for i in inst:
    assert i["probe"]["status"] == "ok" and os.path.isfile(os.path.join(d, i["probe"]["file"])), i
# interleaved: the installs of a job back to back, A B A B
libs = [j["libfabric"] for j in m["jobs"]]
assert all(libs[k] != libs[k + 1] for k in range(len(libs) - 1)), libs
assert all(j["status"] == "ok" for j in m["jobs"]), [(j["name"], j["status"]) for j in m["jobs"]]
# every row ran against the install its job named
lib_of = {i["libfabric"]: i for i in inst}
for f in glob.glob(os.path.join(d, "*.csv")):
    for r in csv.DictReader(open(f)):
        job = re.search(r"libfabric=([^,\]]*)", r["run_id"]).group(1)
        assert r["libfabric_path"] == lib_of[job]["library"], (r["run_id"], r["libfabric_path"])
        assert lib_of[job]["version"].startswith(r["libfabric_version"] + "."), r
t = open(rep).read()
ga, gb = f"libfabric {A}", f"libfabric {B}"
assert f"### {ga}" in t and f"→ {gb}" in t, "no capability diff between the installs"
assert "## Series not in every group\n\nNone: every series has every group." in t, "half-empty series"
sec = t.split(f"## Answer: {gb} against {ga}")[1].split("\n## ")[0]
rows = [l for l in sec.splitlines() if l.startswith("| ") and not l.startswith("| benchmark")]
assert len(rows) >= 6, rows
benches = set()
for l in rows:
    c = [x.strip() for x in l.strip("|").split("|")]
    assert c[6] in ("faster", "slower", "no significant difference") or \
        re.fullmatch(r"inconclusive \(\d+ repeats\)", c[6]), l
    assert c[3] != "-" and c[4] != "-", f"half-empty: {l}"
    benches.add(c[0])
assert benches >= {"put_lat", "get_bw", "mr_reg"}, benches
# headline tables: no empty cell in any group column
for blk in t.split("## Headline sizes")[1].split("## Registration")[0].split("### ")[1:]:
    for l in blk.splitlines():
        if l.startswith("| ") and not l.startswith("| series"):
            c = [x.strip() for x in l.strip("|").split("|")]
            assert "-" not in c[2:4], f"half-empty headline row: {l}"
assert "## What was asked and what each group got" in t
print("report ok:", len(rows), "verdicts")
EOF
}

# Done when: Debian's 1.17 (/usr) and 2.6.0 in one interleaved sweep; 1.17
# answers -p tcp with tcp;ofi_rxm and 2.6 with tcp, which the report states as
# a finding while the series stay whole. The gate judges series in both.
t_versions_sweep_117_vs_260() {
	versions_need 2.6.0
	[ -e /usr/lib/x86_64-linux-gnu/libfabric.so.1 ] || [ -e /usr/lib64/libfabric.so.1 ] ||
		[ -e /usr/lib/libfabric.so.1 ] || { echo "no libfabric under /usr"; exit 77; }
	versions_sweep_conf "$WORK/ab.conf" "" "/usr, $VERSIONS_BUILD/lf-2.6.0/prefix" \
		"provider = shm, tcp
matrix = provider"
	expect_rc 0 "$BIN/efab_sweep" "$WORK/ab.conf" -o "$WORK/res" --label ab
	local d
	d=$(ls -d "$WORK"/res/*-ab)
	grep -q "mpirun -x LD_LIBRARY_PATH -np 2" "$d/jobs.tsv" || die "LD_LIBRARY_PATH not forwarded to the ranks"
	expect_rc 0 python3 plot/efab_plot "$d" -o "$WORK/plots"
	versions_check_report "$d" "$WORK/plots/report.md" 1.17.0 2.6.0
	grep -q "^\*\*Finding:\*\* asked \`-p tcp\`: libfabric 1.17.0 returned provider \`tcp;ofi_rxm\`.*libfabric 2.6.0 returned provider \`tcp\`" \
		"$WORK/plots/report.md" || die "no finding for the re-layered tcp provider"
	grep -q "^| put_lat | put_lat write host:host -p tcp | 8 |" "$WORK/plots/report.md" || die "no -p tcp series"
	# the gate: a series only one side has is listed, not judged; a slowed one fails
	python3 - "$d" "$WORK" <<'EOF' || die "split"
import csv, glob, json, os, shutil, sys
d, w = sys.argv[1:3]
for name, keep, slow in (("base", "/usr", 1), ("cand", "/usr", 3)):
    o = os.path.join(w, name)
    shutil.rmtree(o, ignore_errors=True)
    os.makedirs(o)
    m = json.load(open(os.path.join(d, "meta.json")))
    m["label"] = name
    m["libfabric_installs"] = []
    json.dump(m, open(os.path.join(o, "meta.json"), "w"))
    for f in glob.glob(os.path.join(d, "*.csv")):
        rows = list(csv.DictReader(open(f)))
        rows = [r for r in rows if f"libfabric={keep}," in r["run_id"]]
        if name == "cand":  # the tcp series vanished; shm put_lat 3x slower
            rows = [r for r in rows if r["provider_req"] != "tcp"]
            for r in rows:
                if r["bench"] == "put_lat":
                    for c in [c for c in r if c.startswith("lat_us_")]:
                        r[c] = f"{float(r[c]) * slow:.3f}"
        with open(os.path.join(o, os.path.basename(f)), "w", newline="") as fo:
            wr = csv.DictWriter(fo, fieldnames=list(csv.DictReader(open(f)).fieldnames), lineterminator="\n")
            wr.writeheader()
            wr.writerows(rows)
EOF
	expect_rc 1 python3 plot/efab_plot "$WORK/cand" --baseline "$WORK/base" -o "$WORK/gate"
	grep -q "^- put_lat \[put_lat write host:host -p shm\] at " "$WORK/gate/report.md" || die "slowed series not flagged"
	grep -q "^- put_lat \[put_lat write host:host -p tcp\]: only in baseline" "$WORK/gate/report.md" ||
		die "one-sided series not listed"
	grep "^- .* at .*ratio" "$WORK/gate/report.md" | grep -q -- "-p tcp" && die "a one-sided series was judged"
	# CSVs from before the request columns (schema 1) still load (series by
	# returned names)
	mkdir -p "$WORK/old"
	cp "$WORK/base/meta.json" "$WORK/old/"
	python3 - "$WORK/base/put_lat.csv" "$WORK/old/put_lat.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
new = ("provider_req", "fabric_req", "libfabric_built", "libfabric_path", "efa_installer")
cols = [c for c in rows[0] if c not in new]
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=cols, extrasaction="ignore",
                   lineterminator="\n")
w.writeheader()
for r in rows:
    r["schema"] = "1"
w.writerows(rows)
EOF
	head -1 "$WORK/old/put_lat.csv" | grep -q "provider_req" && die "columns not removed"
	expect_rc 0 python3 plot/efab_plot "$WORK/old" -o "$WORK/oldp" --group-by label
	grep -q "^| put_lat write host:host tcp;ofi_rxm 127.0.0.1/32 | 8 |" "$WORK/oldp/report.md" ||
		die "old CSV series not keyed by the returned names"
	true
}

# On the simulated device: libfabric 2.4.0 and 2.6.0 in one sweep, efa and
# efa-direct, the 1.17 build; the report labelled simulated, no half-empty series.
t_versions_sweep_efasim_240_vs_260() {
	versions_need 2.4.0
	versions_need 2.6.0
	efasim_need 2.6.0
	versions_sweep_conf "$WORK/sim.conf" \
		"-x EFASIM_HOST=%r -x EFASIM_DIR -x EFASIM_PROFILE -x EFASIM_REORDER" \
		"$VERSIONS_BUILD/lf-2.4.0/prefix, $VERSIONS_BUILD/lf-2.6.0/prefix" \
		"provider = efa
fabric = efa, efa-direct
matrix = fabric"
	expect_rc 0 efa_run 2.6.0 "$BIN/efab_sweep" "$WORK/sim.conf" -o "$WORK/res" --label sim
	local d
	d=$(ls -d "$WORK"/res/*-sim)
	expect_rc 0 python3 plot/efab_plot "$d" -o "$WORK/plots"
	grep -q "SIMULATED" "$WORK/plots/report.md" || die "no simulated banner"
	python3 - "$WORK/plots/report.md" <<'EOF' || die "simulated groups"
t = open(__import__("sys").argv[1]).read()
assert "groups: `libfabric 2.4.0 (simulated)`, `libfabric 2.6.0 (simulated)`" in t, t[:2000]
EOF
	sed -i 's/ (simulated)//g' "$WORK/plots/report.md"
	versions_check_report "$d" "$WORK/plots/report.md" 2.4.0 2.6.0
	grep -q "^| put_lat | put_lat write host:host -p efa -f efa-direct | 8 |" "$WORK/plots/report.md" ||
		die "no efa-direct series"
}

# Issue 59: ranks on two libfabric builds (a half-done installer roll-out, an
# LD_LIBRARY_PATH given to some ranks only) are named at start-up. On tcp,
# 1.17 answers -p tcp with tcp;ofi_rxm and 2.6 with tcp: they cannot talk, and
# the run used to time out after its -t with nothing about the mismatch; now
# it ends at once (exit 1) naming both. --strict-versions makes any difference
# a usage error (exit 2, one line).
t_versions_ranks_differ() {
	versions_need 2.6.0
	local lf t0 t1
	lf="$(cd "$VERSIONS_BUILD/lf-2.6.0/prefix/lib" && pwd)"
	t0=$(date +%s)
	expect_rc 1 mpi 1 -x LD_LIBRARY_PATH="$lf" "$BIN/efab_put_lat" -p tcp -m 8 -n 10 -t 20 \
		: -np 1 "$BIN/efab_put_lat" -p tcp -m 8 -n 10 -t 20
	t1=$(date +%s)
	[ $((t1 - t0)) -lt 15 ] || die "took $((t1 - t0)) s: the mismatch was not caught before the exchange"
	expect_msg "warning: the ranks differ: libfabric 2\.6 \(rank 0 on [^)]*\); 1\.17 \(rank 1 on "
	expect_msg "libfabric library .*lf-2\.6\.0/prefix/lib/libfabric\.so[.0-9]* \(rank 0 on "
	expect_msg "the ranks selected different providers or fabrics, which cannot talk to each other: provider tcp \(rank 0 on [^)]*\); tcp;ofi_rxm \(rank 1 on "
	expect_rc 2 mpi 1 -x LD_LIBRARY_PATH="$lf" "$BIN/efab_put_lat" -p tcp -m 8 --strict-versions \
		: -np 1 "$BIN/efab_put_lat" -p tcp -m 8 --strict-versions
	[ "$(grep -c '^efab_put_lat' "$WORK/last.err")" = 1 ] || die "not one line: $(cat "$WORK/last.err")"
	expect_msg "the ranks differ \(--strict-versions\): libfabric 2\.6 \(rank 0 on "
	# ranks that agree: no word, and the row runs
	expect_rc 0 mpi 2 -x LD_LIBRARY_PATH="$lf" "$BIN/efab_put_lat" -p tcp -m 8 -n 10 --strict-versions
	grep -q "ranks differ" "$WORK/last.err" "$WORK/last.out" && die "a difference where the ranks agree"
	true
}

# bench/tools/efab_sidebyside: efabench against fabtests on one libfabric
# build (issue 28). Needs fabtests, from the efasim build of libfabric 2.6.0
# ($EFASIM_BUILD, default ./build-efasim; skipped without it).

t_sidebyside_table_and_counts() {
	efasim_built 2.6.0 .fabtests-done
	local lf=$EFASIM_BUILD_DIR/lf-2.6.0 o=$WORK/sbs
	expect_rc 0 timeout -k 5 300 bench/tools/efab_sidebyside --efab "$BIN" \
		--fabtests "$lf/fabtests/bin" --lib "$lf/prefix/lib" --providers shm \
		--cases lat,ratedata --reps 2 -o "$o"
	python3 - "$o" <<'PY' || die "table or runs"
import csv, math, sys
o = sys.argv[1]
runs = list(csv.DictReader(open(f"{o}/runs.csv")))
# 2 cases x 2 tools x 2 repeats, every figure a positive number
assert len(runs) == 8, len(runs)
assert all(float(r["value"]) > 0 for r in runs), runs
# alternating: repeat 0 runs efabench first, repeat 1 fabtests first
lines = [l for l in open(f"{o}/commands.log") if "efab_put_lat" in l or "fi_rma_pingpong" in l]
first = ["efab" in lines[0], "efab" in lines[3]]
assert first == [True, False], lines[:4]
t, spread = open(f"{o}/table.md").read().split("## Spread")  # 2 repeats: the spread follows
assert "8 B writedata message rate, one direction |" in spread and "Geometric mean" in spread, spread
for fig in ("8 B write latency, batch", "8 B writedata message rate, one direction"):
    row = [l for l in t.splitlines() if fig in l]
    assert len(row) == 1, fig
    cells = [c.strip() for c in row[0].split("|")]
    e, f, ratio = float(cells[4]), float(cells[5]), float(cells[6])
    # the table rounds the ratio to 3 decimals: a loaded machine made fabtests' latency
    # 123 us against efabench's 0.8 (ratio 0.0065, printed 0.007) in a CI rehearsal
    assert math.isclose(ratio, e / f, rel_tol=0.01, abs_tol=0.0005), (ratio, e, f)
PY
	expect_rc 2 bench/tools/efab_sidebyside --efab "$BIN" --fabtests "$lf/fabtests/bin" \
		--cases nosuch -o "$o"
	expect_rc 2 bench/tools/efab_sidebyside --efab "$WORK/none" --fabtests "$lf/fabtests/bin" \
		-o "$o"
}

# Issue 48: fi_efa_rma_bw against efab_put_bw --pipeline on the simulated
# device: a case with --post-list and --high-pps gives both tools the same
# options and FI_EFA_ENABLE_HIGH_PPS=1, and its row says SIMULATED.
t_sidebyside_efa_rma_bw() {
	efasim_built 2.6.0 .fabtests-done efab/bin/efab_put_bw
	local lf=$EFASIM_BUILD_DIR/lf-2.6.0 o=$WORK/sbs
	EFASIM_DIR="$WORK/efasim" expect_rc 0 timeout -k 5 300 bench/tools/efab_sidebyside \
		--efab "$lf/efab/bin" --fabtests "$lf/fabtests/bin" --lib "$lf/prefix/lib" --providers "" \
		--efasim "$ROOT/tests/efasim/run:2.6.0" --efasim-fabrics efa-direct \
		--cases erma-writedata-8+pl8+hp --reps 1 -o "$o"
	python3 - "$o" <<'PY' || die "erma case"
import csv, sys
o = sys.argv[1]
runs = list(csv.DictReader(open(f"{o}/runs.csv")))
assert len(runs) == 2 and all(float(r["value"]) > 0 for r in runs), runs
log = open(f"{o}/commands.log").read().splitlines()
ft = [l for l in log if "fi_efa_rma_bw" in l]
ef = [l for l in log if "efab_put_bw" in l]
assert ft and ef, log
for l in ft + ef:
    assert "--post-list 8" in l and "--high-pps" in l and "writedata" in l, l
assert all("--pipeline" in l and "--footprint window" in l for l in ef), ef
assert sum(l == "env: FI_EFA_ENABLE_HIGH_PPS=1" for l in log) == 2, log  # efab; fabtests
row = [l for l in open(f"{o}/table.md").read().split("## Spread")[0].splitlines()
       if "8 B writedata message rate" in l]
assert len(row) == 1 and "efa-direct (SIMULATED)" in row[0], row
PY
	expect_rc 2 bench/tools/efab_sidebyside --efab "$lf/efab/bin" --fabtests "$lf/fabtests/bin" \
		--cases erma-write-8X -o "$o"
}

# Python on stdin with bench/tools/efab_sidebyside loaded as m (it has no .py
# name to import); arguments become sys.argv[1:].
sbs_py() {
	{
		cat <<'PY'
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
loader = SourceFileLoader("sbs", "bench/tools/efab_sidebyside")
m = module_from_spec(spec_from_loader("sbs", loader))
loader.exec_module(m)
PY
		cat
	} | python3 - "$@"
}

# --callgrind's operation counts for the fi_efa_rma_bw cases: the short run
# moves about 64 MiB at most (a 4 MiB case once asked for 64000 operations,
# 268 GB under valgrind), never less than one window of 64, the long one 10x.
t_sidebyside_callgrind_counts() {
	sbs_py <<'PY' || die "callgrind counts"
for case in ["erma-write-8", "erma-read-8+pl8", "erma-write-4K", "erma-writedata-64K+hp",
             "erma-write-1M", "erma-write-4M+pl8", "erma-read-16M"]:
    size = int(m.ERMA.fullmatch(case).group(2)) << {"": 0, "K": 10, "M": 20}[m.ERMA.fullmatch(case).group(3)]
    n, d = m.cg_counts_erma(case)
    assert n % 64 == 0 and 64 <= n <= 6400 and d == 10 * n, (case, n, d)
    assert n * size <= (1 << 26) or n == 64, (case, n, size)
    assert n == 6400 or n * size > (1 << 26) - 64 * size, (case, n)  # as many as the cap allows
PY
}

# --callgrind: efabench's waits get the command's limit (--timeout), not their
# default 30 s, which a rank under valgrind outlasts at a barrier; a run
# without callgrind, or one that names its own -t, keeps what it had.
t_sidebyside_callgrind_timeout() {
	sbs_py "$WORK" <<'PY' || die "callgrind timeout"
import argparse, sys
a = argparse.Namespace(lib=None, out=sys.argv[1] + "/sbs-cg", taskset=None, efab="/nowhere",
                       efab_bind="none", timeout=1200, efasim="run:2.6.0")
r = m.Runner(a)
seen = []
class Rc:
    returncode, stdout, stderr = 1, "", ""
def sh(cmd, timeout, env=None):
    seen.append(cmd)
    return Rc()
r.sh = sh
def args_of(argv, cg):
    try:
        r.efab("efa-direct", argv, cg=cg, n_override=100 if cg else None)
    except m.Failed:
        pass
    cmd = seen[-1]
    return cmd[cmd.index("/nowhere/" + argv[0]) + 1:]
bw = ["efab_get_bw", "-o", "read", "-m", "8", "-W", "64", "-n", "10", "--bidir"]
got = args_of(bw, "/tmp/x")
assert "valgrind" in seen[-1][seen[-1].index("mpirun"):], seen[-1]
assert got[got.index("-t") + 1] == "1200", got
assert "-t" not in args_of(bw, None), "a timed run changed"
own = args_of(bw + ["-t", "77"], "/tmp/x")
assert own.count("-t") == 1 and own[own.index("-t") + 1] == "77", own
PY
}

# --callgrind's "own outside the polling loops" figure leaves out POLLERS: every
# lib/ops.c function that waits (WAIT_LOOP, or a barrier's spin) must be one,
# or its spins (as many as the peer is slow) read as work per operation.
t_sidebyside_pollers() {
	sbs_py <<'PY' || die "pollers"
import re
src = open("lib/ops.c").read()
waiting = set()
for f in re.finditer(r"^(?:static )?(?:inline )?int (\w+)\([^)]*\)\n\{\n(.*?)^\}", src, re.M | re.S):
    if re.search(r"\bWAIT_LOOP(_FROM)?\(|for \(unsigned spins", f.group(2)):
        waiting.add(f.group(1))
assert len(waiting) >= 8, waiting  # the parse still finds them
missing = waiting - m.POLLERS
assert not missing, f"lib/ops.c waits in {sorted(missing)}, not in POLLERS"
PY
}

# Issue 62's sitting options on a stub pair (no efasim, no fabric: a stub
# tests/efasim/run, fi_efa_rma_bw and efab_put_bw/efab_get_bw that print
# figures and record their CPU set): --ops-scale reaches both tools' counts
# alike, --taskset goes outermost and the processes (the ranks under mpirun
# too) see only that set, repeats run whole and outermost, --deadline stops
# after the first repeat and table.md says fewer than 2 ran.
sbs_stubs() { # DIR: stub run, fabtests and efabench under DIR
	local d=$1
	mkdir -p "$d/ft" "$d/ef"
	cat >"$d/run" <<'SH'
#!/bin/sh
# the stub of efasim's run script (V CMD...): exports what the real one does
export EFASIM_SIMULATED=1 EFASIM_LIBFABRIC=$1
shift
exec "$@"
SH
	cat >"$d/ft/fi_efa_rma_bw" <<'SH'
#!/bin/sh
# stub fi_efa_rma_bw: the client (last argument an address) prints a result line
grep Cpus_allowed_list /proc/self/status >>"$SBS_STUB_LOG"
case "$*" in *127.0.0.1) ;; *) exit 0 ;; esac
echo "bytes iters total time MB/sec usec/xfer Mxfers/sec"
echo "8 1000 8k 0.01s 0.80 2.00 0.50"
SH
	cat >"$d/ef/efab_put_bw" <<'SH'
#!/bin/sh
# stub efabench: rank 0 writes the CSV row that --csv FILE asks for
grep Cpus_allowed_list /proc/self/status >>"$SBS_STUB_LOG"
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
while [ $# -gt 1 ]; do [ "$1" = --csv ] && printf 'msg_rate_Mops,bw_MBps\n0.55,1100\n' >"$2"; shift; done
SH
	cp "$d/ef/efab_put_bw" "$d/ef/efab_get_bw"
	chmod +x "$d/run" "$d/ft/fi_efa_rma_bw" "$d/ef/efab_put_bw" "$d/ef/efab_get_bw"
}

t_sidebyside_sitting_options() {
	local s=$WORK/stub o=$WORK/sbs62 cpu
	sbs_stubs "$s"
	cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
	SBS_STUB_LOG=$WORK/cpus.log expect_rc 0 timeout -k 5 120 bench/tools/efab_sidebyside \
		--efab "$s/ef" --fabtests "$s/ft" --efasim "$s/run:9.9.9" --providers "" \
		--efasim-fabrics efa-direct --cases erma-write-8+pl8,erma-writedata-64K+hp,erma-read-4M \
		--reps 2 --ops-scale 10,64K=5,4M=1.5 --taskset "$cpu" -o "$o"
	grep -q '^efab_sidebyside: repeat 0 took [0-9.]* s (6 runs)$' "$WORK/last.out" ||
		die "no 'repeat 0 took' line"
	# every process (fabtests' server and client, both ranks) saw the one CPU
	[ "$(sort -u "$WORK/cpus.log")" = "Cpus_allowed_list:	$cpu" ] ||
		die "processes outside --taskset $cpu: $(sort -u "$WORK/cpus.log" | tr '\n' ' ')"
	[ "$(wc -l <"$WORK/cpus.log")" = 24 ] || die "want 24 processes (12 runs x 2 each)"
	python3 - "$o" "$cpu" "$s" <<'PY' || die "sitting options"
import csv, re, sys
o, cpu, s = sys.argv[1:]
runs = list(csv.DictReader(open(f"{o}/runs.csv")))
assert len(runs) == 12 and all(float(r["seconds"]) > 0 for r in runs), runs
# repeats outermost: repeat 0's six runs, then repeat 1's, its tools in the other order
assert [r["rep"] for r in runs] == ["0"] * 6 + ["1"] * 6, runs
assert [r["tool"] for r in runs[:2]] == ["efabench", "fabtests"], runs
assert [r["tool"] for r in runs[6:8]] == ["fabtests", "efabench"], runs
log = [l for l in open(f"{o}/commands.log").read().splitlines() if not l.startswith("env:")]
assert log and all(re.sub("^server: ", "", l).startswith(f"taskset -c {cpu} {s}/run 9.9.9 ")
                   for l in log), log
# the same count for both tools: fi_efa_rma_bw -I = efabench -n x 64, scaled per size
want = {"8": 19968 * 10, "65536": 4096 * 5, "4194304": 384}
for l in log:
    size = re.search(r" -[Sm] (\d+)", l).group(1)
    n = int(re.search(r" -I (\d+)", l).group(1)) if "fi_efa_rma_bw" in l else \
        64 * int(re.search(r" -n (\d+)", l).group(1))
    assert n == want[size], (l, n, want[size])
    assert re.search(r" -w (640|10|128|2) ", l), l  # warmup as without --ops-scale
t = open(f"{o}/table.md").read()
assert "medians of 2 alternating runs" in t and "Sitting: 2 of 2 repeats ran" in t, t
assert "--ops-scale 10,64K=5,4M=1.5" in t and f"`taskset -c {cpu}`" in t, t
assert "fewer than 2" not in t, t
# the spread section: the stubs print one figure each, so every interval is a point; 8 B
# write (--bidir, halved: 0.275 against 0.50) is behind in all 4 run pairs, 64 KiB
# writedata (0.55 against 0.50) ahead in all 4
spread = t.split("## Spread", 1)[1]
rows = {l.split("|")[2].strip(): [c.strip() for c in l.split("|")[3:7]]
        for l in spread.splitlines() if l.startswith("| efa-direct")}
w = [k for k in rows if "8 B write" in k and "post-list" in k][0]
d = [k for k in rows if "64K B writedata" in k][0]
assert rows[w] == ["0.550", "[0.550, 0.550]", "0 of 4", "efabench behind"], rows[w]
assert rows[d] == ["1.100", "[1.100, 1.100]", "4 of 4", "efabench ahead"], rows[d]
assert len(rows) == 3 and "Geometric mean of efabench's lead over 3 cases" in spread, spread
PY
	# --deadline 1: repeat 0 runs whole (fabtests' server alone waits 0.5 s a run),
	# repeat 1 does not start
	SBS_STUB_LOG=$WORK/cpus2.log expect_rc 0 timeout -k 5 120 bench/tools/efab_sidebyside \
		--efab "$s/ef" --fabtests "$s/ft" --efasim "$s/run:9.9.9" --providers "" \
		--efasim-fabrics efa-direct --cases erma-write-8,erma-read-8 --reps 5 --deadline 1 \
		-o "$WORK/sbs62d"
	python3 - "$WORK/sbs62d" <<'PY' || die "--deadline"
import csv, sys
o = sys.argv[1]
runs = list(csv.DictReader(open(f"{o}/runs.csv")))
assert len(runs) == 4 and {r["rep"] for r in runs} == {"0"}, runs
t = open(f"{o}/table.md").read()
assert "Sitting: 1 of 5 repeats ran" in t and "--deadline 1 s passed" in t, t
assert "Only 1 repeat completed (fewer than 2)" in t, t
assert "no --taskset" in t and "--ops-scale 1 " in t, t
assert "No spread section: fewer than 2 repeats." in t and "## Spread" not in t, t
PY
	expect_rc 2 bench/tools/efab_sidebyside --efab "$s/ef" --fabtests "$s/ft" --cases erma-write-8 \
		--ops-scale 0 -o "$o"
	expect_rc 2 bench/tools/efab_sidebyside --efab "$s/ef" --fabtests "$s/ft" --cases lat \
		--ops-scale 2 -o "$o"
	expect_rc 2 bench/tools/efab_sidebyside --efab "$s/ef" --fabtests "$s/ft" --cases erma-write-8 \
		--taskset 0-x -o "$o"
	expect_rc 2 bench/tools/efab_sidebyside --efab "$s/ef" --fabtests "$s/ft" --cases erma-write-8 \
		--taskset 100000 -o "$o"
}

# --cases erma24: the 24 cases of issue 62 in their fixed order; the deadline's
# rule (a repeat that the longest so far says would end late does not start)
t_sidebyside_erma24_deadline_rule() {
	sbs_py <<'PY' || die "erma24 or deadline rule"
want = [f"erma-{op}-{size}{mod}" for op in ("write", "writedata", "read")
        for size in ("8", "64K", "4M") for mod in ("", "+pl8", "+hp")]
want = [c for c in want if not c.startswith("erma-read") or not c.endswith("+hp")]
assert m.ERMA24 == want and len(want) == 24, m.ERMA24
assert all(m.erma_case(c) for c in m.ERMA24)
assert m.erma_ops(8) == 19968 and m.erma_ops(65536) == 4096 and m.erma_ops(4 << 20) == 256
sc = m.parse_ops_scale("10,64K=5,4M=1")
assert (m.erma_ops(8, sc), m.erma_ops(65536, sc), m.erma_ops(4 << 20, sc)) == (199680, 20480, 256)
assert m.erma_ops(4 << 20, m.parse_ops_scale("0.01")) == 64  # one window at least
for bad in ("0", "-1", "x", "nan", "inf", "2,3", "8=2,10", "64Q=2", "4M="):
    assert m.parse_ops_scale(bad) is None, bad
assert m.parse_cpus("0,2,4-7,8-12:2") == {0, 2, 4, 5, 6, 7, 8, 10, 12}
assert m.parse_cpus("3-1") is None and m.parse_cpus("") is None and m.parse_cpus("1,,2") is None
assert m.deadline_stop(None, 1e9, [5]) == ""
assert m.deadline_stop(100, 0, []) == ""             # the first repeat starts
assert m.deadline_stop(100, 100, [50]).startswith("--deadline 100 s passed")
assert m.deadline_stop(100, 60, [50]) != ""          # 60 + 50 > 100: not started
assert m.deadline_stop(100, 40, [30, 20]) == ""      # 40 + 30 <= 100
assert m.deadline_stop(0, 0, []) != ""               # --deadline 0: no repeat at all
PY
}

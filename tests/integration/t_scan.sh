# efab_scan over test nodes (tests/cluster: a network + UTS + mount namespace
# each, Open MPI's real multi-node launch through tests/cluster/scan): the
# round-robin covers every node pair once, a node whose link is rate-limited
# (tc tbf in its namespace) is flagged and no other, and scans without a fault
# flag nothing. The nodes share this machine's 2 cores, so scans here measure
# one node pair at a time (--concurrent 1) and take the median of 3 passes
# (single tcp figures between them vary by up to 2x from run to run), and flag
# below 0.5x the median instead of 0.8x: a node's figures there can sit at
# 0.67x of the others' for a whole scan (its process shares a busy core), which
# the default would flag (seen in make check; on a cluster every node has its
# own cores). The slow node sits at 0.01-0.02x. The default concurrency (all
# pairs of a round at once) is checked for coverage only. Needs root and ip/unshare/tc
# (cluster_need in t_cluster.sh says why it skips otherwise).

SCAN_ARGS=(-p tcp --bw-size 64K -W 16 --time 0.2 --concurrent 1 --passes 3 --threshold 0.5)

scan_run() { # RC [tests/cluster/scan args...] -- [efab_scan args...]
	local want=$1; shift
	expect_rc "$want" timeout -k 5 "${EFAB_TEST_TIMEOUT:-300}" "$ROOT/tests/cluster/scan" "$@"
	scan_joined
}

# last.joined: last.out with the verdict's folded lines joined (a line of at
# most 120 characters continues on lines indented by 4): a finding per line.
scan_joined() {
	awk 'NR > 1 && /^    [^ ]/ { sub(/^    /, " "); printf "%s", $0; next }
		{ if (NR > 1) printf "\n"; printf "%s", $0 } END { print "" }' "$WORK/last.out" >"$WORK/last.joined"
}

said() { # PATTERN: in the last command's stdout or stderr
	cat "$WORK/last.out" "$WORK/last.err" 2>/dev/null | grep -q -- "$1"
}

# Nodes the verdict names (whole nodes and nodes of flagged NICs), sorted, one line.
scan_flagged() {
	sed -n 's/^  node \([^ :]*\)[ :].*/\1/p' "$WORK/last.out" | sort -u | tr '\n' ' '
}

# The verdict of the last scan, text and --verdict-json JSON: every finding's
# "SUBJECT: KIND" is one of WANT, each WANT exactly once (order free); the
# JSON has one record per text line, in the same order, with the same text,
# and its subject, names and kind are the line's. LAT_ARTIFACT=1: also
# accept, and print, findings "pair ...: slow latency" of at least 900 us
# between nodes no WANT names: on these nodes, which share 2 cores with each
# other and with whatever else runs on the machine, a single pass's
# ping-pong between two spinning ranks waits for a CPU time slice now and
# then (1, 4 or 6 ms half round trips: seen on 6 of 6 one-pass clean scans,
# on one pair or on every pair of a round); that is a real finding of the
# pair there, not of the fault a test puts in.
scan_verdict_is() { # JSON WANT...
	LAT_ARTIFACT=${LAT_ARTIFACT:-0} python3 - "$WORK/last.out" "$@" <<'EOF' || die "verdict: see above"
import json, os, re, sys
out, jpath, want = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(out).read().split("\n")
i = next(k for k, l in enumerate(text) if l.startswith("verdict: "))
lines, notes = [], []
for l in text[i + 1:]:
    if l.startswith("    ") and (lines or notes):  # a folded line's continuation
        (notes if last_note else lines)[-1] += " " + l[4:]
        continue
    if not l.startswith("  ") or l.startswith("  ("):
        break
    last_note = l.startswith("  note: ")
    (notes if last_note else lines).append(l[2:])
doc = json.load(open(jpath))
recs = doc["findings"]
# a whole round off (the note): the same words in the JSON's round_note
assert (doc.get("round_note") or "") == (notes[0][len("note: "):] if notes else ""), (doc.get("round_note"), notes)
for n in notes:
    print("  " + n)
print("verdict:", *lines, sep="\n  ")
assert text[i] == ("verdict: FLAGGED" if lines else "verdict: no node or NIC flagged"), text[i]
assert doc["verdict"] == ("flagged" if lines else "clean"), doc["verdict"]
assert len(recs) == len(lines), (len(recs), len(lines))
got = []
for line, r in zip(lines, recs):
    assert r["text"] == line, ("JSON text differs", r["text"], line)
    if r["subject"] == "index":
        assert r["node"] is None and r["nic"] is None, r
        subj = f"NIC index {r['nic_index']}"
    elif r["subject"] == "node":
        subj = f"node {r['node']}"
    elif r["subject"] == "nic":
        subj = f"node {r['node']} NIC {r['nic']}"
    else:
        arrow = "->" if r["direction"] == "node->peer" else "-"
        subj = f"pair {r['node']} NIC {r['nic']} {arrow} {r['peer_node']} NIC {r['peer_nic']}"
    assert line.startswith(f"{subj}: {r['kind']}: "), ("subject or kind differs", subj, r["kind"], line)
    assert r["evidence"], ("no evidence pairs", line)
    got.append((f"{subj}: {r['kind']}", r))
left = list(want)
extra = []
named = {w.split()[1] for w in want if not w.startswith("NIC index ")}
for g, r in got:
    if g in left:
        left.remove(g)
        continue
    if (os.environ["LAT_ARTIFACT"] == "1" and r["subject"] == "pair" and r["kind"] == "slow latency"
            and r["value"] >= 900 and not {r["node"], r["peer_node"]} & named):
        print(f"accepted (shared cores, see scan_verdict_is): {g} at {r['value']:.0f} us")
        continue
    extra.append(g)
assert not left and not extra, ("expected", want, "missing", left, "unexpected", extra)
EOF
}

# Every unordered node pair exactly once per NIC index, with figures.
scan_csv_complete() { # CSV NODES NICS
	python3 - "$@" <<'EOF' || die "scan CSV incomplete"
import csv, itertools, sys
path, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = list(csv.DictReader(open(path)))
last = rows[-1]["run_id"]
rows = [r for r in rows if r["run_id"] == last]
seen = {}
for r in rows:
    key = (frozenset((r["node_a"], r["node_b"])), int(r["nic_index"]), int(r["pass"]))
    assert key not in seen, f"pair measured twice: {key}"
    seen[key] = r
    assert r["node_a"] != r["node_b"], r
    for c in ("lat_us_p50", "bw_MBps", "bw_rev_MBps"):
        assert float(r[c]) > 0, (c, r)
    assert r["errors"] == "0", r
    assert r.get("status", "ok") == "ok" and not r.get("error"), r
nodes = [f"node{i}" for i in range(n)]
passes = max(int(r["pass"]) for r in rows)
want = {(frozenset(p), i, q) for p in itertools.combinations(nodes, 2) for i in range(k)
        for q in range(1, passes + 1)}
assert set(seen) == want, (sorted(map(str, set(seen) ^ want)))
rounds = {r["round"] for r in rows}
assert len(rounds) == (n if n % 2 else n - 1), rounds
print(f"{len(rows)} pair rows, {len(rounds)} rounds")
EOF
}

# 4 nodes: three scans without a fault flag nothing (with the 3 clean scans of
# t_scan_defaults_slow_node_and_clean: 6 per make check); with node2's egress
# rate-limited to 200 Mbit/s the scan exits 1 naming node2 alone (its send
# bandwidth), and the heatmap is drawn from the CSV.
t_scan_four_nodes_slow_node() {
	cluster_need 4
	local k fp=0
	for k in 1 2 3; do
		timeout -k 5 "${EFAB_TEST_TIMEOUT:-300}" "$ROOT/tests/cluster/scan" -- "${SCAN_ARGS[@]}" \
			--csv "$WORK/clean.csv" --verdict-json "$WORK/clean.json" >"$WORK/last.out" 2>&1
		local rc=$?
		[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$WORK/last.out"; die "scan $k: exit $rc"; }
		if [ "$rc" = 1 ]; then
			fp=$((fp + 1))
			sed -n '/^verdict/,$p' "$WORK/last.out"
		else
			scan_verdict_is "$WORK/clean.json" # clean, in the JSON too
		fi
	done
	echo "no-fault scans flagging something: $fp of 3"
	[ "$fp" = 0 ] || die "$fp of 3 scans without a fault flagged a node"
	scan_csv_complete "$WORK/clean.csv" 4 1
	scan_run 1 --slow node2:200mbit -- "${SCAN_ARGS[@]}" --csv "$WORK/slow.csv" \
		--verdict-json "$WORK/slow.json"
	scan_verdict_is "$WORK/slow.json" "node node2: slow bandwidth"
	grep -q "^  node node2: slow bandwidth: 1 of 1 NICs: eth0 .* over 3 peers; send bandwidth median" \
		"$WORK/last.joined" || die "node2 not flagged for its send bandwidth"
	grep -q "^# efabench .*: scan, 4 nodes x 1 NIC, 3 rounds of node pairs (2 groups each: --concurrent 1), 3 passes (medians)$" \
		"$WORK/last.out" || die "the header does not say what the scan runs"
	grep -q "^# estimate: about [0-9]* s, at most [0-9]* s; more: -v" "$WORK/last.out" || die "no estimate before the scan"
	python3 tests/tablecheck.py "$WORK/last.out" --notes 8 --width 120 --columns node,nic,send_MBps,x,recv_MBps,x,lat_us,x \
		--table-from '^per NIC' || die "the scan's header or per-NIC table"
	said "pass 3/3 round 3/3 done" || die "no progress lines"
	scan_csv_complete "$WORK/slow.csv" 4 1
	if python3 -c 'import matplotlib' 2>/dev/null; then
		"$ROOT/plot/efab_scan_heatmap" "$WORK/slow.csv" -o "$WORK/heat.png" || die "heatmap"
		[ -s "$WORK/heat.png" ] || die "no heatmap"
	fi
}

# 8 nodes (7 rounds of 4 pairs): node5 rate-limited is flagged and no other
# node, NIC or pair (scan_verdict_is compares the whole finding list: the 21
# pairs without node5 are a clean scan's worth of pairs; the clean scans of 4
# nodes are t_scan_four_nodes_slow_node's and t_scan_defaults_slow_node_and_clean's).
t_scan_eight_nodes_slow_node() {
	cluster_need 8
	scan_run 1 --slow node5:200mbit -- "${SCAN_ARGS[@]}" --csv "$WORK/slow.csv" --verdict-json "$WORK/slow.json"
	scan_csv_complete "$WORK/slow.csv" 8 1
	scan_verdict_is "$WORK/slow.json" "node node5: slow bandwidth"
	grep -q "^scan wall time" "$WORK/last.out" || die "no wall time"
}

# Odd node count: 3 nodes, 3 rounds, one node sits out each, every pair once;
# and the default concurrency (every pair of a round at once) on 4 nodes
# covers every pair too (its figures are not judged: 4 nodes share 2 cores).
t_scan_odd_and_concurrent() {
	cluster_need 3
	timeout -k 5 200 "$ROOT/tests/cluster/scan" -- "${SCAN_ARGS[@]}" --csv "$WORK/odd.csv" \
		>"$WORK/last.out" 2>&1 || [ $? = 1 ] || { cat "$WORK/last.out"; die "3-node scan failed"; }
	grep -q "3 rounds of node pairs" "$WORK/last.out" || die "not 3 rounds"
	scan_csv_complete "$WORK/odd.csv" 3 1
	timeout 60 "$ROOT/tests/cluster/down" >/dev/null 2>&1
	cluster_need 4
	timeout -k 5 200 "$ROOT/tests/cluster/scan" -- -p tcp --bw-size 64K -W 16 --time 0.1 \
		--csv "$WORK/conc.csv" >"$WORK/last.out" 2>&1 || [ $? = 1 ] ||
		{ cat "$WORK/last.out"; die "concurrent scan failed"; }
	grep -q "groups each: --concurrent" "$WORK/last.out" && die "default should run every pair of a round at once"
	scan_csv_complete "$WORK/conc.csv" 4 1
}

# Launch mistakes are usage errors (exit 2) that say what to run instead.
t_scan_usage() {
	cluster_need 2
	scan_run 2 --ppn 2 -- -p tcp --time 0.1
	said "1 NIC per node to scan but 2 ranks per node: run one rank per NIC (mpirun --map-by ppr:1:node" ||
		die "ranks-per-NIC message"
	scan_run 2 -- -p tcp --nics 3
	said "--nics 3: node[01] lists only 1 NIC" || die "--nics message"
	expect_rc 2 timeout 60 "$ROOT/tests/cluster/mpirun" -H node0:2 -np 2 "$ABIN/efab_scan" -p tcp
	said "all 2 ranks run on node0: a scan needs at least 2 nodes" || die "one-node message"
	expect_rc 2 "$ABIN/efab_scan" --threshold 2
	expect_rc 0 "$ABIN/efab_scan" --help
	grep -q -- "--concurrent P" "$WORK/last.out" || die "--help lacks --concurrent"
}

# A node that dies mid-scan (its orted killed): the job ends, bounded, and the
# output names the node.
t_scan_node_dies() {
	cluster_need 4
	local pid t0 rc
	timeout -k 5 120 "$ROOT/tests/cluster/scan" -- -p tcp --bw-size 64K -W 16 --time 2 \
		--concurrent 1 -t 10 >"$WORK/last.out" 2>&1 &
	pid=$!
	sleep 6
	t0=$(date +%s)
	local victim
	for victim in $(ip netns pids node2); do
		[ "$(cat "/proc/$victim/comm" 2>/dev/null)" = orted ] && kill -9 "$victim"
	done
	wait "$pid"
	rc=$?
	cat "$WORK/last.out"
	echo "ended $(($(date +%s) - t0)) s after the kill, exit $rc"
	[ "$rc" != 0 ] || die "the scan succeeded although node2 died"
	[ "$rc" != 124 ] && [ "$rc" != 137 ] || die "the scan hung after node2 died"
	[ $(($(date +%s) - t0)) -le 20 ] || die "took more than --timeout + 10 s to end"
	grep -q "node2" "$WORK/last.out" || die "the output does not name node2"
}

# Simulated EFA (efasim, libfabric 2.6.0's efa provider): 4 nodes with two
# simulated NICs each, one rank per NIC; node1's NIC 1 is slowed by the
# simulator (EFASIM_SLOW=1:30:300: 30 MB/s and 300 us per operation): exactly
# that NIC is flagged (send, receive and latency), neither node1 as a whole
# nor another node or NIC. --threshold 0.2, between what the fault and what
# load do: the slow NIC sits at 0.03-0.04x bandwidth and 3-6x latency; 8 ranks
# on 2 cores put healthy NICs anywhere from 0.41x to 1.6x (a CI rehearsal of
# 0c98540, 2026-12-04: node0's NIC 1 at 0.41x send with 2 peers left, every
# NIC 1 below every NIC 0 — flagged at the old 0.5), and the simulated direct
# path's latencies (engine threads sleeping between work) a healthy NIC at
# 1.5x. 0.2 is 5x above the fault and 2x below the slowest healthy NIC seen.
# Three passes (every figure the median over them): one pass let a healthy
# NIC's receive figure fall to 0.16x with two of its peers once (CI on the
# fresh root, 2026-12-02).
t_scan_efasim_slow_nic() {
	local v=2.6.0 d=$EFASIM_BUILD_DIR
	efasim_built $v efab/bin/efab_scan
	[ "$(id -u)" = 0 ] || { echo "multi-node tests need root"; exit 77; }
	timeout 60 "$ROOT/tests/cluster/up" 4 --env 'EFASIM_NICS=2' --env 'node1:EFASIM_SLOW=1:30:300' \
		>"$WORK/up.log" 2>&1 || { cat "$WORK/up.log"; die "cluster up"; }
	trap 'timeout 60 "$ROOT/tests/cluster/down" >/dev/null 2>&1' EXIT
	export EFASIM_DIR="$WORK/efasim" LD_LIBRARY_PATH="$d/sim/lib:$d/lf-$v/prefix/lib" EFASIM_NICS=2
	EFAB_SCAN_MPIRUN_ARGS="-x EFASIM_DIR -x LD_LIBRARY_PATH" \
		scan_run 1 --ppn 2 --bin "$d/lf-$v/efab/bin/efab_scan" -- -p efa -f efa-direct \
		--bw-size 64K -W 16 --time 0.2 --concurrent 1 --passes 3 --threshold 0.2 --csv "$WORK/sim.csv"
	grep -q "SIMULATED EFA device" "$WORK/last.out" || die "not labelled simulated"
	grep -q "4 nodes x 2 NICs" "$WORK/last.out" || die "not 2 NICs per node"
	local lines nic1
	nic1=$(python3 -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["nic_index"] == "1" and "node1" in (r["node_a"], r["node_b"]):
        print(r["nic_a"] if r["node_a"] == "node1" else r["nic_b"]); break' "$WORK/sim.csv")
	[ -n "$nic1" ] || die "no NIC 1 of node1 in the CSV"
	lines=$(sed -n 's/^  node \([^ :]*\) NIC \([^:]*\):.*/\1 \2/p' "$WORK/last.out" | sort -u)
	[ "$lines" = "node1 $nic1" ] || die "flagged '$lines', expected node1 $nic1 alone"
	grep -q "^  node node1:" "$WORK/last.joined" && die "node1 flagged as a whole for one slow NIC of two"
	scan_csv_complete "$WORK/sim.csv" 4 2
}

# Issue 25: the NIC counters as evidence. node2's NIC is on a lossy link
# (efasim EFASIM_LOSS=0:20: every 20th packet through it lost once and
# resent by the device, counted in retrans_pkts at the sender, as SRD does):
# its bandwidth and latency pass, yet the verdict names node2's NIC alone
# ("in its round with every peer"), exit 1; its peers' retransmits (only in
# their rounds with node2) are explained by it, not named; the CSV has the
# counters of both ends of node2's pairs, and nothing for the others.
t_scan_efasim_lossy_nic() {
	local v=2.6.0 d=$EFASIM_BUILD_DIR
	efasim_built $v efab/bin/efab_scan
	[ "$(id -u)" = 0 ] || { echo "multi-node tests need root"; exit 77; }
	timeout 60 "$ROOT/tests/cluster/up" 4 --env 'EFASIM_NICS=1' --env 'node2:EFASIM_LOSS=0:20' \
		>"$WORK/up.log" 2>&1 || { cat "$WORK/up.log"; die "cluster up"; }
	trap 'timeout 60 "$ROOT/tests/cluster/down" >/dev/null 2>&1' EXIT
	export EFASIM_DIR="$WORK/efasim" LD_LIBRARY_PATH="$d/sim/lib:$d/lf-$v/prefix/lib" EFASIM_NICS=1
	EFAB_SCAN_MPIRUN_ARGS="-x EFASIM_DIR -x LD_LIBRARY_PATH" \
		scan_run 1 --ppn 1 --bin "$d/lf-$v/efab/bin/efab_scan" -- -p efa -f efa-direct \
		--bw-size 64K -W 16 --time 0.2 --concurrent 1 --threshold 0.5 --csv "$WORK/loss.csv" -v
	said "NIC counters: every rank's NIC hw_counters are read" || die "header does not say the counters are read"
	local lines
	lines=$(grep '^  node ' "$WORK/last.out")
	[ "$(echo "$lines" | wc -l)" = 1 ] || die "expected one finding, got: $lines"
	echo "$lines" | grep -q '^  node node2 NIC [^:]*: counters: NIC counters rose in its round with every peer (its bandwidth and latency passed): with node0: here retrans_bytes=[1-9][0-9]*;retrans_pkts=[1-9]' ||
		die "node2's NIC not named as the common end: $lines"
	python3 - "$WORK/loss.csv" <<'EOF' || die "counters in the CSV"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    a, b = r["nic_a_counters"], r["nic_b_counters"]
    if "node2" in (r["node_a"], r["node_b"]):
        assert "retrans_pkts=" in a and "retrans_pkts=" in b, (r["node_a"], r["node_b"], a, b)
    else:
        assert a == "" and b == "", (r["node_a"], r["node_b"], a, b)
    assert r["status"] == "ok", r
EOF
	scan_csv_complete "$WORK/loss.csv" 4 1
}

# Issue 27: the scan survives what it exists to find. With the default
# measurement parameters (sizes, window, --time as a deadline; --threshold
# 0.5 as everywhere on these shared-core nodes, see the top), node2 at
# 200 Mbit/s is flagged alone, exit 1 and no abort, within the estimate's
# "at most" printed before the first round (plus what round trips above its
# 1 ms assumption add: some rounds' tcp ping-pongs here take 4 ms, old and
# new builds alike; docs/scan.md, Time). Three clean scans with the same
# parameters flag nothing; they take the median of 3 passes (--passes 3):
# a single pass's tcp figure here can sit at 0.46x for one pair under load
# (seen while other builds ran), which is these nodes' shared cores, not a
# NIC.
t_scan_defaults_slow_node_and_clean() {
	cluster_need 4
	local k most wall
	for k in 1 2 3; do
		scan_run 0 -- -p tcp --threshold 0.5 --passes 3 --csv "$WORK/clean$k.csv" \
			--verdict-json "$WORK/clean$k.json"
		scan_verdict_is "$WORK/clean$k.json"
		scan_csv_complete "$WORK/clean$k.csv" 4 1
	done
	scan_run 1 --slow node2:200mbit -- -p tcp --threshold 0.5 --csv "$WORK/slow.csv" \
		--verdict-json "$WORK/slow.json"
	said "MPI_ABORT" && die "the scan aborted"
	# one pass, every pair of a round at once: 4 spinning ranks on 2 cores
	LAT_ARTIFACT=1 scan_verdict_is "$WORK/slow.json" "node node2: slow bandwidth"
	grep -q "^  node node2: slow bandwidth: 1 of 1 NICs: eth0 .* send bandwidth median" "$WORK/last.joined" ||
		die "node2 not flagged for its send bandwidth"
	scan_csv_complete "$WORK/slow.csv" 4 1
	most=$(sed -n 's/^# estimate: .*at most \([0-9]*\) s[ ;].*/\1/p' "$WORK/last.out")
	wall=$(sed -n 's/^scan wall time \([0-9.]*\).*/\1/p' "$WORK/last.out")
	[ -n "$most" ] && [ -n "$wall" ] || die "no estimate or no wall time"
	# the bound holds while a round trip takes at most 1 ms: a round whose
	# ping-pongs were slower adds (50 + 2 x lat_iters) x the excess of its
	# slowest pair (docs/scan.md's rule; rounds run one after the other)
	extra=$(python3 - "$WORK/slow.csv" <<'PY'
import csv, sys
worst = {}
for r in csv.DictReader(open(sys.argv[1])):
    try:
        rt = 2e-6 * float(r["lat_us_p50"])
        pp = 50 + 2 * int(r["lat_iters"])
    except ValueError:
        continue
    k = (r["pass"], r["round"])
    worst[k] = max(worst.get(k, 0.0), pp * max(0.0, rt - 1e-3))
print(f"{sum(worst.values()):.1f}")
PY
)
	echo "slow-node scan: wall time $wall s, estimate at most $most s, slow round trips add $extra s"
	python3 -c "import sys; sys.exit(0 if $wall <= $most + $extra else 1)" ||
		die "scan wall time $wall s beyond its estimate's $most s (+ $extra s of slow round trips)"
}

# A node whose fabric (eth0) goes down mid-scan, no process dying: every pair
# with it fails after --timeout (5 s here, to keep make check short; the
# default is 30 s), the verdict names it unreachable with the failed pairs as
# evidence, the other nodes' pairs are all measured, the CSV says which rows
# failed and why, and the scan ends, bounded, with exit 1 and no abort. Two
# passes (--passes 2), as every clean-verdict scan here takes 3: a pair finding
# must be off in every pass, and one pass's tcp figure between these shared-core
# nodes can sit at 0.24x (node3 -> node1, measured alone, in a CI rehearsal of
# 4bac08b: a healthy pair named slow beside node2). node2's pairs fail in the
# second pass too (5 s each), hence the time bound of 2 passes.
t_scan_fabric_down_unreachable() {
	cluster_need 4
	local t0 secs rc
	# 1 s after efab_scan's start line (every rank has listed its NICs: a
	# link down before that is another case, "no NIC of tcp offers RMA",
	# which a fixed delay after the launch hit on a loaded machine)
	t0=$(date +%s)
	timeout -k 5 "${EFAB_TEST_TIMEOUT:-300}" "$ROOT/tests/cluster/scan" --down-after node2:0+1 -- -p tcp \
		--threshold 0.5 --passes 2 -t 5 --csv "$WORK/down.csv" --verdict-json "$WORK/down.json" \
		>"$WORK/last.out" 2>"$WORK/last.err"
	rc=$?
	secs=$(($(date +%s) - t0))
	scan_joined
	cat "$WORK/last.out" "$WORK/last.err"
	[ $rc = 1 ] || die "exit $rc, expected 1"
	echo "scan with node2's eth0 down: $secs s"
	said "node2's eth0 taken down 1 s after efab_scan's start line" || die "link not taken down after the start line"
	said "MPI_ABORT" && die "the scan aborted"
	# its first round may pass before the link goes down (1 s): either way node2
	grep -Eq "^  node node2: failed: (all 3 of its pairs failed \(no progress with any peer\)|2 of its 3 pairs failed, each failure involves it); the failures began in round [12]: with node" \
		"$WORK/last.joined" || die "node2 not named as the failures' common end"
	LAT_ARTIFACT=1 scan_verdict_is "$WORK/down.json" "node node2: failed"
	[ "$secs" -le 75 ] || die "took $secs s (2 passes x 3 rounds x --timeout 5 s and the rest)"
	python3 - "$WORK/down.csv" <<'EOF' || die "CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
others = [r for r in rows if "node2" not in (r["node_a"], r["node_b"])]
assert len(others) == 6, others  # node0-node1, node0-node3, node1-node3, in each of 2 passes
assert sorted(r["pass"] for r in others) == ["1", "1", "1", "2", "2", "2"], others
for r in others:
    assert r["status"] == "ok" and float(r["bw_MBps"]) > 0 and float(r["lat_us_p50"]) > 0, r
failed = [r for r in rows if r["status"] == "failed"]
assert failed and all("node2" in (r["node_a"], r["node_b"]) for r in failed), failed
assert all(r["error"] for r in failed), failed
print(f"{len(others)} pairs without node2 complete, {len(failed)} with it failed")
EOF
}

# Issue 35: the verdict names the failures' common end. node3's fabric goes
# down 0.3 s after round 1's progress line (round 1: node0-node3 passed),
# during round 2, no process dying, as in the issue (there 3 s after the
# start): its pairs with node2 (round 2) and node1 (round 3) fail, node1 and
# node2 pass with others. The verdict: node3 alone, failed, the failures
# from round 2, its round-1 pair passed before them; the JSON says the same.
# (The old verdict named node1 and node2, each for its pair with node3.)
# One pass, so that round 1's pass stays (a pair failed in any pass is
# failed); so the figures are judged at --threshold 0.01 only: these tests
# are about the failures, and one pass's figures on these shared cores put a
# healthy pair at 0.02x bandwidth now and then (seen: 15.6 MB/s against a
# median of 992, with a 50-300x latency: LAT_ARTIFACT, scan_verdict_is);
# the figures' rules are t_scan_outlier_pair's, the slow-node and clean
# scans' (3 passes) and test_scan's.
SCAN_FAIL_ARGS=(-p tcp --bw-size 64K -W 16 --time 0.2 --concurrent 1 --threshold 0.01 -t 5)
t_scan_link_down_after_first_round() {
	cluster_need 4
	scan_run 1 --down-after node3:1+0.3 -- "${SCAN_FAIL_ARGS[@]}" \
		--csv "$WORK/down.csv" --verdict-json "$WORK/down.json"
	said "MPI_ABORT" && die "the scan aborted"
	LAT_ARTIFACT=1 scan_verdict_is "$WORK/down.json" "node node3: failed"
	grep -q "^  node node3: failed: 2 of its 3 pairs failed, each failure involves it; the failures began in round 2: with node2 NIC eth0 in round 2 (.*); with node1 NIC eth0 in round 3 (.*); each of those peers passed with another node; passed: with node0 NIC eth0 in round 1 (before the failures)$" \
		"$WORK/last.joined" || die "node3's finding does not say which pairs failed when"
	python3 - "$WORK/down.json" <<'EOF' || die "JSON evidence"
import json, sys
f = json.load(open(sys.argv[1]))["findings"][0]
assert f["first_failed_round"] == 2 and f["peers"] == 3, f
ev = [(e["node_b"], e["round"], e["status"]) for e in f["evidence"]]
assert ev == [("node0", 1, "ok"), ("node2", 2, "failed"), ("node1", 3, "failed")], ev
assert all(e["error"] for e in f["evidence"] if e["status"] == "failed"), f
EOF
}

# A node whose fabric dies between rounds (its eth0 down at round 2's
# progress line: its processes live, so the scan concludes; a node whose
# processes die ends the job, t_scan_node_dies): 6 nodes, node4 passes
# rounds 1-2 and fails its 3 pairs of rounds 3-5; every other node passes
# with the others. The verdict: node4 alone, failed from round 3.
t_scan_fabric_dies_between_rounds() {
	cluster_need 6
	scan_run 1 --down-after node4:2 -- "${SCAN_FAIL_ARGS[@]}" \
		--verdict-json "$WORK/dies.json"
	said "MPI_ABORT" && die "the scan aborted"
	LAT_ARTIFACT=1 scan_verdict_is "$WORK/dies.json" "node node4: failed"
	grep -q "^  node node4: failed: 3 of its 5 pairs failed, each failure involves it; the failures began in round 3: " \
		"$WORK/last.joined" || die "node4's finding does not date its failures"
	grep -q "passed: with node[0-9] NIC eth0 in round 1 (before the failures); with node[0-9] NIC eth0 in round 2 (before the failures)$" \
		"$WORK/last.joined" || die "node4's passed rounds not named"
}

# One outlier pair between two healthy nodes: node0 <-> node2 rate-limited
# to 200 Mbit/s both ways (htb, that destination only), every other pair
# and each node's other pairs at full speed. The verdict: that pair, slow
# both ways, neither node (the old verdict flagged nothing: each end's
# median over its 3 peers passed).
t_scan_outlier_pair() {
	cluster_need 4
	scan_run 1 --slow-pair node0:node2:200mbit -- "${SCAN_ARGS[@]}" --verdict-json "$WORK/pair.json"
	scan_verdict_is "$WORK/pair.json" "pair node0 NIC eth0 - node2 NIC eth0: slow bandwidth"
	grep -q "^  pair node0 NIC eth0 - node2 NIC eth0: slow bandwidth: both ways in round 3: .*: one pair, not an end$" \
		"$WORK/last.joined" || die "the pair's finding"
}

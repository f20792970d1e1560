# Slurm for real (issue 29): slurmctld and one slurmd per test node
# (tests/cluster/slurm), and srun launching the benchmarks, a sweep and
# efab_scan across the nodes, through PMIx (srun --mpi=pmix). The command
# lines are the srun recipes of README.md (p5en quick start) and docs/scan.md,
# with the node count as a parameter.
# Needs root and Debian's slurmctld, slurmd, slurm-client, munge and
# slurm-wlm-basic-plugins (make check's set-up installs them as root);
# otherwise the tests skip with the reason.

slurm_need() { # N [up options]
	multinode_possible "Slurm tests"
	local rc=0
	timeout 120 "$ROOT/tests/cluster/slurm" up "$@" >"$WORK/up.log" 2>&1 || rc=$?
	[ $rc = 77 ] && { tail -n 1 "$WORK/up.log"; exit 77; }
	[ $rc = 0 ] || { cat "$WORK/up.log"; die "slurm up $*"; }
	trap 'timeout 60 "$ROOT/tests/cluster/slurm" down >/dev/null 2>&1' EXIT
}

# srun inside node0 (the login node), bounded. The recipe's srun line.
ssrun() {
	timeout -k 5 "${EFAB_TEST_TIMEOUT:-120}" "$ROOT/tests/cluster/slurm" run srun "$@"
}

# Every MPI benchmark across 2 Slurm nodes, one task each (README.md's
# `srun -N 2 --ntasks-per-node 1 --mpi=pmix build/bin/efab_get_lat ...`):
# -c on every size, the CSV whole, and the header's node list naming the
# Slurm nodes; then the same with 2 tasks per node (pairs across nodes).
t_slurm_benchmarks_two_nodes() {
	slurm_need 2
	local b
	for b in put_lat get_lat atomic_lat; do
		expect_rc 0 ssrun -N 2 --ntasks-per-node 1 --mpi=pmix "$ABIN/efab_$b" -p tcp -m 8:512:x8 -n 50 \
			-c --csv "$WORK/$b.csv"
		grep -q "^# 2 nodes: node0, node1" "$WORK/last.out" || die "$b: the header does not name both nodes"
		grep -q "fabric 10.77.0.0/24, domain eth0" "$WORK/last.out" || die "$b: not on the nodes' fabric"
	done
	csvcheck "$WORK/put_lat.csv" --bench put_lat --rows 3 --lat --errors 0 --extra inject
	csvcheck "$WORK/get_lat.csv" --bench get_lat --rows 3 --lat --errors 0
	for b in put_bw get_bw atomic_bw; do
		local m=(-m 64K)
		[ $b = atomic_bw ] && m=() # its own sizes (operands)
		expect_rc 0 ssrun -N 2 --ntasks-per-node 1 --mpi=pmix "$ABIN/efab_$b" -p tcp "${m[@]}" -n 10 -c \
			--csv "$WORK/$b.csv"
		grep -q "^# 2 nodes: node0, node1" "$WORK/last.out" || die "$b: the header does not name both nodes"
	done
	csvcheck "$WORK/put_bw.csv" --bench put_bw --rows 1 --bw --errors 0 \
		--extra pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link
	expect_rc 0 ssrun -N 2 --ntasks-per-node 1 --mpi=pmix "$ABIN/efab_mr_reg" -p tcp -m 4K:64K:x4 -n 5 \
		--csv "$WORK/mr_reg.csv"
	[ "$(grep -c ',mr_reg,' "$WORK/mr_reg.csv")" -ge 6 ] || die "mr_reg: one row per rank and size"
	expect_rc 0 ssrun -N 2 --ntasks-per-node 1 --mpi=pmix "$ABIN/efab_probe" -p tcp
	grep -q "tcp" "$WORK/last.out" || die "probe printed no tcp fabric"
	expect_rc 0 ssrun -N 2 --ntasks-per-node 1 --mpi=pmix "$ABIN/efab_connect" -p tcp -n 2 --csv "$WORK/connect.csv"
	# 4 tasks on 2 nodes: ranks [0,2) pair with [2,4), each pair across the nodes
	expect_rc 0 ssrun -N 2 --ntasks-per-node 2 --distribution=block --mpi=pmix "$ABIN/efab_put_bw" -p tcp \
		-m 64K -n 10 --per-pair -c --csv "$WORK/pairs.csv"
	csvcheck "$WORK/pairs.csv" --bench put_bw --rows 3 --bw --errors 0 --pairs-sum \
		--extra pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link
	expect_rc 0 ssrun -N 2 --ntasks-per-node 2 --distribution=block sh -c 'echo "$SLURM_PROCID $(hostname)"'
	python3 - "$WORK/last.out" <<'EOF' || die "tasks not placed block-wise (0,1 on node0; 2,3 on node1)"
import sys
host = dict(l.split() for l in open(sys.argv[1]) if l.strip())
assert host == {"0": "node0", "1": "node0", "2": "node1", "3": "node1"}, host
EOF
}

# srun --mpi=pmi2: what Open MPI 4.1 (Debian's, built against PMIx) does
# with it, recorded rather than assumed: it must not hang, and either run or
# say why in one line.
t_slurm_pmi2() {
	slurm_need 2
	ssrun -N 2 --ntasks-per-node 1 --mpi=pmi2 "$ABIN/efab_put_lat" -p tcp -m 8 -n 20 \
		>"$WORK/last.out" 2>"$WORK/last.err"
	local rc=$?
	[ $rc != 124 ] && [ $rc != 137 ] || die "srun --mpi=pmi2 hung"
	if [ $rc = 0 ]; then
		echo "pmi2: works"
	else # Open MPI 4.1 built against PMIx only (Debian's, the EFA installer's)
		cat "$WORK/last.out" "$WORK/last.err" | grep -q "OMPI was not built with SLURM's PMI support" ||
			{ cat "$WORK/last.out" "$WORK/last.err"; die "pmi2: exit $rc without Open MPI's reason"; }
		echo "pmi2: exit $rc: Open MPI was not built with Slurm's PMI support (use --mpi=pmix)"
	fi
}

# --domain auto per node on the simulated EFA NICs with the p5 topology, the
# node's variables through the task prolog, as the mpirun sweep test does.
t_slurm_domain_auto_efasim() {
	local v=2.6.0 d=$EFASIM_BUILD_DIR
	efasim_built $v efab/bin/efab_put_bw
	slurm_need 2 --topo "$ROOT/tests/topo/p5.xml" \
		--env 'EFASIM_NICS=2 EFASIM_PROFILE=p5 EFASIM_PCI=0000:13:00.0,0000:23:00.0'
	export EFASIM_DIR="$WORK/efasim" LD_LIBRARY_PATH="$d/sim/lib:$d/lf-$v/prefix/lib"
	expect_rc 0 ssrun -N 2 --ntasks-per-node 2 --distribution=block --mpi=pmix \
		"$d/lf-$v/efab/bin/efab_put_bw" -v -p efa -f efa-direct --domain auto -m 64K -n 10 --per-pair -c \
		--csv "$WORK/auto.csv"
	grep -q "SIMULATED EFA device" "$WORK/last.out" || die "not labelled simulated"
	grep -q "NIC rdmap19s0" "$WORK/last.out" || die "rank 0 did not pick GPU0's NIC rdmap19s0"
	grep -q "^# 2 nodes: node0, node1" "$WORK/last.out" || die "the header does not name both nodes"
	csvcheck "$WORK/auto.csv" --bench put_bw --rows 3 --bw --errors 0 --pairs-sum \
		--extra pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link
}

# A sweep whose launcher is srun (docs/slurm.md's `launcher = srun ...`), its
# meta.json naming the Slurm nodes per job, and its report.
t_slurm_sweep() {
	slurm_need 2
	cat >"$WORK/slurm.conf" <<CONF
# two Slurm test nodes, tcp between them
[global]
launcher = $ROOT/tests/cluster/slurm run srun -N {nodes} --ntasks-per-node {ppn} --mpi=pmix
np = 2
ppn = 1
nodes = 2
provider = tcp
check = true
repeat = 1
job_timeout = 120

[put_lat]
bench = put_lat
sizes = 8:1K:x8
iters = 50

[put_bw]
bench = put_bw
sizes = 64K
iters = 10
CONF
	local run rc=0
	timeout -k 5 300 "$ABIN/efab_sweep" "$WORK/slurm.conf" -o "$WORK/runs" --label slurm || rc=$?
	if [ "$rc" != 0 ]; then # the failed job's own log says why (the sweep's line only names it)
		tail -n 40 "$WORK"/runs/*/logs/* 2>/dev/null
		die "efab_sweep under srun: exit $rc, expected 0"
	fi
	run=$(ls -d "$WORK"/runs/*/ | head -1)
	python3 - "$run" <<'PY' || die "sweep under srun"
import json, os, sys
meta = json.load(open(os.path.join(sys.argv[1], "meta.json")))
jobs = meta["jobs"]
assert len(jobs) == 2 and all(j["status"] == "ok" for j in jobs), jobs
for j in jobs:
    assert "srun" in j["command"], j["command"]
    assert {n["hostname"] for n in j["nodes"]["nodes"]} == {"node0", "node1"}, j["nodes"]
print("ok")
PY
	expect_rc 0 python3 "$ROOT/plot/efab_plot" "$run" -o "$WORK/plots"
	[ -s "$WORK/plots/report.md" ] || die "no report"
}

# efab_scan through srun over 4 Slurm nodes (the pre-job gate of README.md and docs/scan.md,
# `srun -N $N --ntasks-per-node 1 build/bin/efab_scan ...`): clean, nothing
# flagged; node2's fabric rate-limited, node2 alone flagged; node2's slurmd
# killed mid-scan: the job ends within the timeout and the output names node2.
t_slurm_scan() {
	slurm_need 4
	expect_rc 0 ssrun -N 4 --ntasks-per-node 1 --mpi=pmix "$ABIN/efab_scan" -p tcp --threshold 0.5 --passes 3
	grep -q "^verdict: no node or NIC flagged" "$WORK/last.out" || die "clean scan flagged something"
	timeout 10 "$ROOT/tests/cluster/exec" node2 tc qdisc replace dev eth0 root tbf rate 200mbit \
		burst 64kb latency 50ms || die "tc"
	ssrun -N 4 --ntasks-per-node 1 --mpi=pmix "$ABIN/efab_scan" -p tcp --threshold 0.5 \
		>"$WORK/last.out" 2>"$WORK/last.err"
	local rc=$?
	timeout 10 "$ROOT/tests/cluster/exec" node2 tc qdisc del dev eth0 root
	[ $rc = 1 ] || { cat "$WORK/last.out" "$WORK/last.err"; die "slow scan: exit $rc, expected 1"; }
	[ "$(sed -n 's/^  node \([^ :]*\)[ :].*/\1/p' "$WORK/last.out" | sort -u | tr '\n' ' ')" = "node2 " ] ||
		die "flagged other than node2 alone: $(sed -n '/^verdict/,$p' "$WORK/last.out")"
	# slurmd of node2 killed while the scan runs (its tasks live on, as on a real node)
	local t0 pid
	ssrun -N 4 --ntasks-per-node 1 --mpi=pmix "$ABIN/efab_scan" -p tcp --time 6 -t 10 \
		>"$WORK/last.out" 2>"$WORK/last.err" &
	pid=$!
	sleep 4
	t0=$(date +%s)
	kill -9 "$(cat /run/efab-cluster/slurm/slurmd-node2.pid)" || die "no slurmd on node2"
	wait $pid
	rc=$?
	local secs=$(($(date +%s) - t0))
	cat "$WORK/last.err" | tail -n 5
	echo "ended $secs s after the kill, exit $rc"
	[ $rc != 0 ] || die "the scan succeeded although node2's slurmd died"
	[ $rc != 124 ] && [ $rc != 137 ] || die "the scan hung"
	[ $secs -le 60 ] || die "ended $secs s after the kill (SlurmdTimeout 10 s + the scan's 10 s)"
	grep -q "node2" "$WORK/last.out" "$WORK/last.err" || die "the output does not name node2"
}

# A task that fails ends its step (KillOnBadExit=1): the other task, here a
# sleep standing for a rank left waiting in MPI_Init by one that crashed there
# (docs/testing.md "Open MPI's start-up crash"), is killed within seconds; with
# Slurm's default the step waited for it, 100 s, and the test's srun ran into
# its limit. (The logged crash's step printed "forcing job termination" and
# still waited: that this setting ends it too is not shown.)
t_slurm_failed_task_ends_step() {
	slurm_need 2
	local t0=$SECONDS rc=0
	EFAB_TEST_TIMEOUT=60 ssrun -N 2 --ntasks-per-node 1 sh -c \
		'if [ "$SLURM_PROCID" = 0 ]; then sleep 2; exit 3; else sleep 100; fi' >"$WORK/o" 2>&1 || rc=$?
	cat "$WORK/o"
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || die "srun exit $rc: the failed task did not end the step"
	[ $((SECONDS - t0)) -le 30 ] || die "the step took $((SECONDS - t0)) s to end after its task failed"
	grep -q "task 0: Exited with exit code 3" "$WORK/o" || die "srun does not name the failed task"
}

# up then down leaves nothing: no Slurm or munge daemon, no state, no node
# namespaces, no /etc/netns entries; and the machine's own munge key untouched.
t_slurm_leaves_nothing() {
	local key_before=""
	[ -r /etc/munge/munge.key ] && key_before=$(sha256sum </etc/munge/munge.key)
	slurm_need 2
	# ours by their command lines (a machine's own Slurm or munge is left alone)
	local ours='slurmctld -D -i|slurmd -D -N node[0-9]|munged --socket=/run/efab-cluster'
	[ "$(pgrep -fc "$ours")" -ge 4 ] || die "daemons not running while up"
	expect_rc 0 timeout 60 "$ROOT/tests/cluster/slurm" down
	trap - EXIT
	pgrep -fa "$ours" && die "daemons still running after down"
	pgrep -fa 'slurmstepd: \[' | grep -q . && die "job steps still running after down"
	[ -e /run/efab-cluster ] && die "/run/efab-cluster left behind"
	ip netns list 2>/dev/null | grep -Eq '^(node[0-9]+|efabbr)( |$)' && die "namespaces left behind"
	compgen -G '/etc/netns/node[0-9]*' >/dev/null && die "/etc/netns entries left behind"
	if [ -n "$key_before" ]; then
		[ "$(sha256sum </etc/munge/munge.key)" = "$key_before" ] || die "the machine's munge key changed"
	fi
	true
}

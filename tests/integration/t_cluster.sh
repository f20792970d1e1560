# Several nodes: Open MPI's real multi-node launch over test nodes on this
# machine (tests/cluster: a network + UTS + mount namespace each, reached
# through an rsh agent), ranks paired across nodes, tcp between them; and
# libfabric's efa provider between nodes that each carry their own simulated
# EFA NICs (efasim keys its NICs by hostname, so every node is its own host).
# Needs root and `ip netns`; otherwise the tests skip with the reason.

# Skip (77) where test nodes cannot exist: not root, no ip/unshare; and in
# SAN builds (the plain make check runs them). WHAT names the tests.
multinode_possible() { # WHAT
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1 || ! command -v unshare >/dev/null 2>&1; then
		echo "$1 need root, ip (iproute2) and unshare"
		exit 77
	fi
	if [ "${EFAB_SAN:-0}" = 1 ]; then
		echo "$1 run in the plain make check"
		exit 77
	fi
}

cluster_need() {
	multinode_possible "multi-node tests"
	timeout 60 "$ROOT/tests/cluster/up" "$1" >"$WORK/up.log" 2>&1 || { cat "$WORK/up.log"; die "cluster up $1"; }
	trap 'timeout 60 "$ROOT/tests/cluster/down" >/dev/null 2>&1' EXIT
}

cmpi() { # mpirun inside node0 across the test nodes, bounded
	timeout -k 5 "${EFAB_TEST_TIMEOUT:-120}" "$ROOT/tests/cluster/mpirun" "$@"
}

# Two nodes, one rank each: every benchmark crosses the node boundary over tcp
# (the nodes' eth0, 10.77.0.0/24), never shm.
t_cluster_two_nodes_tcp() {
	cluster_need 2
	local b
	expect_rc 0 cmpi -H node0:1,node1:1 -np 2 "$ABIN/efab_atomic_lat" -p tcp -n 20 -c
	grep -q "fabric 10.77.0.0/24, domain eth0" "$WORK/last.out" || die "atomic_lat did not run on the node network"
	for b in put_lat get_lat put_bw get_bw; do
		expect_rc 0 cmpi -H node0:1,node1:1 -np 2 "$ABIN/efab_$b" -p tcp -m 8:64K:x8 -n 20 -c \
			--csv "$WORK/$b.csv"
		grep -q "fabric 10.77.0.0/24, domain eth0" "$WORK/last.out" || die "$b did not run on the node network"
	done
	csvcheck "$WORK/put_lat.csv" --bench put_lat --rows 5 --lat --errors 0 --extra inject
	# the ranks really are on two hosts
	expect_rc 0 cmpi -H node0:1,node1:1 -np 2 hostname
	[ "$(sort -u "$WORK/last.out" | tr '\n' ' ')" = "node0 node1 " ] || die "ranks not on node0 and node1"
}

# Four nodes, two ranks each (--map-by ppr:2:node): ranks [0,4) on node0/node1
# pair with [4,8) on node2/node3, so every pair crosses nodes; the aggregate
# row is the sum of the per-pair rows.
t_cluster_four_nodes_pairs() {
	cluster_need 4
	expect_rc 0 cmpi -H node0:2,node1:2,node2:2,node3:2 -np 8 --map-by ppr:2:node \
		"$ABIN/efab_put_bw" -p tcp -m 64K -n 10 --per-pair -c --csv "$WORK/bw.csv"
	csvcheck "$WORK/bw.csv" --bench put_bw --rows 5 --bw --errors 0 --pairs-sum \
		--extra pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link
	expect_rc 0 cmpi -H node0:2,node1:2,node2:2,node3:2 -np 8 --map-by ppr:2:node \
		sh -c 'echo "$OMPI_COMM_WORLD_RANK $(hostname)"'
	python3 - "$WORK/last.out" <<'EOF' || die "ranks not paired across nodes"
import sys
host = dict(l.split() for l in open(sys.argv[1]) if l.strip())
for r in range(4):
    a, b = host[str(r)], host[str(r + 4)]
    assert a != b, (r, a, b)
assert len(set(host.values())) == 4, host
EOF
}

# libfabric's efa provider across two nodes, each with its own two simulated
# NICs (p5en profile): efa-direct and efa between hosts node0 and node1.
t_cluster_efa_two_nodes() {
	local v=2.6.0 d=$EFASIM_BUILD_DIR
	efasim_built $v efab/bin/efab_put_lat
	cluster_need 2
	export EFASIM_DIR="$WORK/efasim" LD_LIBRARY_PATH="$d/sim/lib:$d/lf-$v/prefix/lib"
	local f
	for f in efa-direct efa; do
		expect_rc 0 cmpi -H node0:1,node1:1 -np 2 -x EFASIM_DIR -x LD_LIBRARY_PATH \
			"$d/lf-$v/efab/bin/efab_put_lat" -p efa -f $f -m 8:64K:x8 -n 20 -c --csv "$WORK/e.csv"
		grep -q "SIMULATED EFA device" "$WORK/last.out" || die "not labelled simulated"
		grep -q "fabric $f, domain rdmap16s0-rdm" "$WORK/last.out" || die "not on $f"
		expect_rc 0 cmpi -H node0:1,node1:1 -np 2 -x EFASIM_DIR -x LD_LIBRARY_PATH \
			"$d/lf-$v/efab/bin/efab_get_bw" -p efa -f $f -m 8:1M:x16 -n 10 -c
	done
	# each node registered its own NICs in the shared registry: two hosts
	grep -qa "node0" "$EFASIM_DIR/registry" && grep -qa "node1" "$EFASIM_DIR/registry" ||
		die "simulated NICs of node0 and node1 not both registered"
}

# Every node's facts in the header and in --nodes-json: node1 runs libfabric
# 2.6.0 (its LD_LIBRARY_PATH, as after a partial upgrade), node0 Debian's
# 1.17: the header warns naming both, the JSON lists both nodes and the
# difference; with the same library everywhere nothing is flagged. (The
# mixed job itself cannot work: 1.17 answers -p tcp with tcp;ofi_rxm, 2.6 with
# tcp, and the two do not talk; it ends after -t with the warning already out.)
t_cluster_node_versions() {
	local d=$EFASIM_BUILD_DIR/lf-2.6.0/prefix/lib
	efasim_built 2.6.0 prefix/lib/libfabric.so.1
	cluster_need 2
	timeout 60 "$ROOT/tests/cluster/up" 2 --env "node1:LD_LIBRARY_PATH=$d" >/dev/null 2>&1 || die "up --env"
	expect_rc 1 cmpi -H node0:1,node1:1 -np 2 "$ABIN/efab_put_lat" -p tcp -m 8 -n 20 -t 3 \
		--nodes-json "$WORK/n.json"
	# 1.17's tcp;ofi_rxm and 2.6's tcp cannot talk: the run ends before any
	# exchange (no header), naming the libfabric of each rank and node
	grep -q "warning: the ranks differ: libfabric 1.17 (rank 0 on node0); 2.6 (rank 1 on node1)" "$WORK/last.err" ||
		die "no libfabric warning naming both nodes"
	expect_msg "the ranks selected different providers or fabrics, which cannot talk to each other: provider tcp;ofi_rxm \(rank 0 on node0\); tcp \(rank 1 on node1\)"
	python3 - "$WORK/n.json" "$d" <<'PY' || die "nodes JSON"
import json, sys
j = json.load(open(sys.argv[1]))
nodes = {n["hostname"]: n for n in j["nodes"]}
assert set(nodes) == {"node0", "node1"}, nodes
assert nodes["node0"]["libfabric_version"] == "1.17", nodes["node0"]
assert nodes["node1"]["libfabric_version"] == "2.6", nodes["node1"]
assert nodes["node1"]["libfabric_path"].startswith(sys.argv[2]), nodes["node1"]
assert nodes["node0"]["ranks"] == [0] and nodes["node1"]["ranks"] == [1], nodes
assert "libfabric 1.17 (rank 0 on node0); 2.6 (rank 1 on node1)" in j["mismatch"], j["mismatch"]
PY
	timeout 60 "$ROOT/tests/cluster/up" 2 >/dev/null 2>&1 || die "up"
	expect_rc 0 cmpi -H node0:1,node1:1 -np 2 "$ABIN/efab_put_lat" -p tcp -m 8 -n 20 \
		--nodes-json "$WORK/n2.json"
	grep -q "^# 2 nodes: node0, node1$" "$WORK/last.out" || die "no node list in the header"
	grep -q "WARNING" "$WORK/last.out" && die "warning although the nodes agree"
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["mismatch"] == "" and len(j["nodes"]) == 2, j' \
		"$WORK/n2.json" || die "nodes JSON without mismatch"
}

# configs/p5en-all-nics.conf scaled down to 2 test nodes: every node a
# p5.48xlarge-shaped topology (tests/topo/p5.xml through HWLOC_XMLFILE) with
# two simulated EFA NICs at the PCI addresses of GPU0's and GPU1's first NIC
# there; 2 ranks per node, --domain auto, both fabrics, per-pair rows. Each
# rank must pick its GPU's NIC on its own node: the aggregate row's line rate
# is that of two distinct NICs. meta.json records both nodes per job.
t_cluster_sweep_all_nics_efasim() {
	local v=2.6.0 d=$EFASIM_BUILD_DIR
	efasim_built $v efab/bin/efab_sweep
	cluster_need 2
	timeout 60 "$ROOT/tests/cluster/up" 2 --topo "$ROOT/tests/topo/p5.xml" \
		--env 'EFASIM_NICS=2 EFASIM_PROFILE=p5 EFASIM_PCI=0000:13:00.0,0000:23:00.0' >/dev/null 2>&1 ||
		die "up --topo"
	export EFASIM_DIR="$WORK/efasim" LD_LIBRARY_PATH="$d/sim/lib:$d/lf-$v/prefix/lib"
	cat >"$WORK/all-nics.conf" <<CONF
# p5en-all-nics.conf shaped, on 2 test nodes with 2 simulated NICs each
[global]
launcher = $ROOT/tests/cluster/mpirun -np {np} --map-by ppr:{ppn}:node -H node0:{ppn},node1:{ppn} -x EFASIM_DIR -x LD_LIBRARY_PATH {env_flags}
np = 4
ppn = 2
nodes = 2
provider = efa
fabric = efa, efa-direct
matrix = fabric
domain = auto
per-pair = true
repeat = 1
job_timeout = 120

[put_bw_all_nics]
bench = put_bw
sizes = 64K:256K:x4
window = 16
iters = 10
# the header's placement note (rank 0's GPU and NIC) is -v's
verbose = 1
CONF
	timeout -k 5 400 "$d/lf-$v/efab/bin/efab_sweep" "$WORK/all-nics.conf" -o "$WORK/runs" --label cluster ||
		{ cat "$WORK"/runs/*/logs/*.log; die "sweep failed"; }
	local run
	run=$(ls -d "$WORK"/runs/*/ | head -1)
	python3 - "$run" <<'PY' || die "all-NIC sweep results"
import csv, json, sys, os
run = sys.argv[1]
meta = json.load(open(os.path.join(run, "meta.json")))
jobs = meta["jobs"]
assert len(jobs) == 2 and all(j["status"] == "ok" for j in jobs), jobs
for j in jobs:
    nodes = {n["hostname"]: n for n in j["nodes"]["nodes"]}
    assert set(nodes) == {"node0", "node1"}, j
    for n in nodes.values():
        assert "8 GPUs; 32 OpenFabrics NICs" in n["topology"], n
        assert n["libfabric_version"] == "2.6", n
    assert j["nodes"]["mismatch"] == "", j["nodes"]
assert meta["node_mismatch_jobs"] == 0
rows = list(csv.DictReader(open(os.path.join(run, "put_bw.csv"))))
fabrics = {r["fabric"] for r in rows}
assert fabrics == {"efa", "efa-direct"}, fabrics
agg = [r for r in rows if r["pair"] == "all"]
pairs = [r for r in rows if r["pair"] != "all"]
assert len(agg) == 4 and len(pairs) == 8, (len(agg), len(pairs))
for r in agg:  # two distinct NICs on the initiating node: twice one NIC's line rate
    one = float(pairs[0]["link_Gbps"])
    assert abs(float(r["link_Gbps"]) - 2 * one) < 1e-6, (r["link_Gbps"], one)
    assert r["errors"] == "0"
print("ok:", len(rows), "rows")
PY
	grep -q "NIC rdmap19s0" "$run"/logs/001-*.log || die "rank 0 did not pick GPU0's NIC rdmap19s0"
}

# Issue 59: efab_sweep started off the job nodes (a ParallelCluster head node
# here: this machine, outside the test nodes) probes, records the host facts
# and runs launcher = none jobs on the first job node through the launcher,
# says so, and takes an install staged on the job nodes only.
t_cluster_sweep_probes_first_job_node() {
	cluster_need 2
	mkdir -p "$WORK/staged"
	cat >"$WORK/head.conf" <<CONF
# a sweep started on a head node: two test nodes, one rank each
[global]
launcher = $ROOT/tests/cluster/mpirun -np {np} --map-by ppr:{ppn}:node -H node0:{ppn},node1:{ppn} {env_flags}
np = 2
ppn = 1
nodes = 2
provider = tcp
repeat = 1
job_timeout = 120

[put_lat]
bench = put_lat
sizes = 8
iters = 20

[mr_reg]
bench = mr_reg
launcher = none
sizes = 4K
iters = 3
CONF
	expect_rc 0 timeout -k 5 300 "$BIN/efab_sweep" --dry-run "$WORK/head.conf"
	grep -q "^# probe, host facts and launcher = none jobs: on the first job node" "$WORK/last.out" ||
		die "the plan does not say where the probe runs"
	grep -q "^# probe: $ROOT/tests/cluster/mpirun -np 1 --map-by ppr:1:node -H node0:1,node1:1 .*efab_probe --json" \
		"$WORK/last.out" || die "the probe does not go through the launcher: $(grep '^# probe:' "$WORK/last.out")"
	expect_rc 0 timeout -k 5 300 "$BIN/efab_sweep" "$WORK/head.conf" -o "$WORK/runs" --label head
	local run
	run=$(ls -d "$WORK"/runs/*-head | head -1)
	python3 - "$run" "$(hostname)" <<'PY' || die "the sweep measured its own host"
import json, os, sys
run, me = sys.argv[1], sys.argv[2]
meta = json.load(open(os.path.join(run, "meta.json")))
assert me not in ("node0", "node1"), me
assert meta["hostname"] == "node0", meta["hostname"]
assert meta["sweep_host"] == me, meta["sweep_host"]
assert meta["facts_from"].startswith("the first job node"), meta["facts_from"]
probe = json.load(open(os.path.join(run, "probe.json")))
assert probe["host"]["hostname"] == "node0", probe["host"]
jobs = {j["name"].split("[")[0].split("#")[0]: j for j in meta["jobs"]}
assert jobs["mr_reg"]["status"] == "ok", jobs["mr_reg"]
assert "tests/cluster/mpirun -np 1 " in jobs["mr_reg"]["command"], jobs["mr_reg"]["command"]
PY
	# an install that exists on the job nodes only: planned, not refused here
	sed -i 's|^repeat = 1|repeat = 1\nlibfabric = /opt/efab-staged-on-nodes-only|' "$WORK/head.conf"
	expect_rc 0 "$BIN/efab_sweep" --dry-run "$WORK/head.conf"
	grep -q "libfabric 1: /opt/efab-staged-on-nodes-only .*not on this host" "$WORK/last.out" ||
		die "an install missing here was not planned for the job nodes"
	# ... and where it is not there either, one line and exit 2 before any job
	expect_rc 2 timeout -k 5 300 "$BIN/efab_sweep" "$WORK/head.conf" -o "$WORK/runs2" --label head2
	expect_msg "libfabric '/opt/efab-staged-on-nodes-only' does not load on the first job node: no libfabric.so.1 under it there"
	[ -e "$(ls -d "$WORK"/runs2/*-head2)/jobs/001.csv" ] && die "a job ran"
	# a libfabric built against a newer rdma-core than the node's: the loader
	# refuses it (here a stand-in: libfabric.so.1 needing DEP_1.7 of a
	# libdep.so.1 that has only DEP_1.0, as 2.7 needs EFA_1.7 of libefa)
	local d="$WORK/newlf"
	mkdir -p "$d/new" "$d/inst/lib"
	printf 'int dep_fn(void) { return 0; }\n' >"$d/dep.c"
	printf 'extern int dep_fn(void);\nint fi_stub(void) { return dep_fn(); }\n' >"$d/lf.c"
	echo 'DEP_1.7 { global: dep_fn; local: *; };' >"$d/17.map"
	echo 'DEP_1.0 { global: dep_fn; local: *; };' >"$d/10.map"
	cc -shared -fPIC -Wl,-soname,libdep.so.1 -Wl,--version-script="$d/17.map" -o "$d/new/libdep.so.1" "$d/dep.c" &&
		cc -shared -fPIC -Wl,-soname,libdep.so.1 -Wl,--version-script="$d/10.map" -o "$d/inst/lib/libdep.so.1" "$d/dep.c" &&
		cc -shared -fPIC -Wl,-soname,libfabric.so.1 -o "$d/inst/lib/libfabric.so.1" "$d/lf.c" -L"$d/new" -l:libdep.so.1 ||
		die "stand-in libfabric not built"
	sed -i "s|^libfabric = .*|libfabric = $d/inst|" "$WORK/head.conf"
	expect_rc 2 timeout -k 5 300 "$BIN/efab_sweep" "$WORK/head.conf" -o "$WORK/runs3" --label head3
	expect_msg "libfabric '$d/inst' does not load on the first job node: .*version .DEP_1\.7' not found \(required by .*libfabric\.so\.1\)"
	[ "$(grep -c '^efab_sweep: ' "$WORK/last.err")" = 1 ] || die "more than the refusal: $(cat "$WORK/last.err")"
}

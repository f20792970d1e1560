# Several nodes: Open MPI's real multi-node launch over test nodes on this
# machine (tests/cluster: a network + UTS + mount namespace each, reached
# through an rsh agent), ranks paired across nodes, tcp between them; and
# libfabric's efa provider between nodes that each carry their own simulated
# EFA NICs (efasim keys its NICs by hostname, so every node is its own host).
# Needs root and `ip netns`; otherwise the tests skip with the reason.

cluster_need() {
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1 || ! command -v unshare >/dev/null 2>&1; then
		echo "multi-node tests need root, ip (iproute2) and unshare"
		exit 77
	fi
	if [ "${EFAB_SAN:-0}" = 1 ]; then
		echo "multi-node tests run in the plain make check"
		exit 77
	fi
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
	local v=2.6.0 d=$ROOT/build-efasim
	for f in "$d/sim/lib/libibverbs.so.1" "$d/lf-$v/.done" "$d/lf-$v/efab/bin/efab_put_lat"; do
		[ -e "$f" ] || { echo "libfabric $v on efasim not built ($f missing): make efasim V=$v"; exit 77; }
	done
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

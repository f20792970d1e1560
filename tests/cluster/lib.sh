# shellcheck shell=bash
# Shared by tests/cluster/{up,down,exec,rsh,mpirun,selftest}; not run by itself.
#
# A cluster of N test "nodes" on this one machine (needs root):
#   node I      network namespace "nodeI" (iface eth0 = 10.77.0.(I+1)/24, lo up), plus
#               a holder process (setsid ... unshare --uts --ipc --mount, argv[0]
#               "efab-cluster-holder-nodeI") that owns the node's hostname (nodeI), its
#               SysV IPC and a mount namespace with a private tmpfs on /dev/shm and
#               /etc/hosts bound from /etc/netns/nodeI/hosts (every node listed).
#   bridge      br0 in its own network namespace "efabbr"; each node's eth0 is a veth
#               whose peer vI sits on br0. Nothing is added to the root namespace.
#   management  eth1 = 10.78.0.(I+1)/24, a veth whose peer mI sits on bridge br1 (same
#               namespace): the network Open MPI's own traffic (oob, btl) uses, as a
#               cluster's management network (ENA) beside its fabric (EFA). eth0 is the
#               fabric the benchmarks measure, so rate-limiting it or taking it down
#               (tests/cluster/scan --slow, --down) leaves the job's control traffic alone.
#   state       /run/efab-cluster: size, nodeI.pid (holder), nodeI.env (per-node env),
#               nodeI.log (holder's stderr), flags for dirs that up created.
# The names node<digits> and efabbr (network namespaces, /etc/netns entries) belong to
# this cluster: down removes any it finds.

CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLUSTER_STATE=/run/efab-cluster
CLUSTER_BRNS=efabbr
# shellcheck disable=SC2034 # used by the scripts that source this
CLUSTER_IFACE=eth0
CLUSTER_NET=10.77.0
# shellcheck disable=SC2034
CLUSTER_MGMT_IFACE=eth1
CLUSTER_MGMT_NET=10.78.0
CLUSTER_MAX=250

cl_die() { echo "cluster: $*" >&2; exit 1; }

# up and down exclude each other (lock on this directory: nothing to clean up).
cl_lock() {
	exec 9<"$CLUSTER_DIR" || cl_die "cannot open $CLUSTER_DIR"
	flock -w 30 9 || cl_die "timed out waiting for another up/down"
}

cl_need_root() { [ "$(id -u)" = 0 ] || cl_die "needs root (network namespaces)"; }

# HOST as Open MPI or a user may spell it -> nodeI on stdout.
# Accepts nodeI, nodeI.<domain>, I, 10.77.0.(I+1).
cl_resolve() {
	local h=$1 i
	case $h in
	"$CLUSTER_NET".*) i=${h##*.}; [[ $i =~ ^[0-9]+$ ]] && i=$((10#$i - 1)) || return 1 ;;
	node*) h=${h%%.*}; i=${h#node} ;;
	*) i=$h ;;
	esac
	[[ $i =~ ^(0|[1-9][0-9]*)$ ]] && [ "$i" -lt "$CLUSTER_MAX" ] || return 1
	echo "node$i"
}

# argv[0] of process PID.
cl_argv0() { tr '\0' '\n' 2>/dev/null <"/proc/$1/cmdline" | head -n1; }

# PID of NODE's holder when it is alive. Checked by its argv[0], not against
# /run/netns/NODE: inside a node (the rsh agent runs in node0) the nsfs mounts of
# nodes made after it are not visible (private mount namespace).
cl_holder_pid() {
	local node=$1 pid
	[ -r "$CLUSTER_STATE/$node.pid" ] || return 1
	read -r pid <"$CLUSTER_STATE/$node.pid" || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[ "$(cl_argv0 "$pid")" = "efab-cluster-holder-$node" ] || return 1
	echo "$pid"
}

# Network namespaces of this cluster that exist now.
cl_list_ns() {
	ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^(node[0-9]+|$CLUSTER_BRNS)\$"
}

# Kill every process in network namespace NS, by pid; TERM, then KILL; bounded.
cl_kill_ns_procs() {
	local ns=$1 pids i
	pids=$(ip netns pids "$ns" 2>/dev/null) || return 0
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	for i in $(seq 30); do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] || return 0
		if [ "$i" = 10 ]; then
			# shellcheck disable=SC2086
			kill -KILL $pids 2>/dev/null
		fi
		sleep 0.1
	done
	[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] || echo "cluster: processes left in $ns: $pids" >&2
}

# Remove everything; safe to call when nothing (or half a cluster) exists.
cl_teardown() {
	local ns node pid f rc=0
	for ns in $(cl_list_ns); do
		[ "$ns" = "$CLUSTER_BRNS" ] && continue
		cl_kill_ns_procs "$ns"
	done
	# A holder whose namespace has gone already (half-made state): its pid file says
	# which process; only kill it if argv[0] says it is that holder.
	for f in "$CLUSTER_STATE"/node*.pid; do
		[ -r "$f" ] || continue
		node=$(basename "$f" .pid)
		read -r pid <"$f" || continue
		[[ $pid =~ ^[0-9]+$ ]] || continue
		if [ "$(cl_argv0 "$pid")" = "efab-cluster-holder-$node" ]; then
			kill -KILL "$pid" 2>/dev/null
		fi
	done
	for ns in $(cl_list_ns); do
		cl_kill_ns_procs "$ns"
		ip netns del "$ns" 2>/dev/null || { echo "cluster: cannot delete netns $ns" >&2; rc=1; }
	done
	for f in /etc/netns/node[0-9]*; do
		[ -d "$f" ] && [[ $(basename "$f") =~ ^node[0-9]+$ ]] && rm -rf "$f"
	done
	if [ -e "$CLUSTER_STATE/made_etc_netns" ]; then rmdir /etc/netns 2>/dev/null; fi
	if [ -e "$CLUSTER_STATE/made_run_netns" ] && [ -d /run/netns ] &&
		[ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
		# ip netns add made /run/netns a (shared) bind mount of itself
		for _ in 1 2 3; do
			grep -q ' /run/netns ' /proc/self/mountinfo || break
			umount /run/netns 2>/dev/null || break
		done
		rmdir /run/netns 2>/dev/null
	fi
	rm -rf "$CLUSTER_STATE"
	return $rc
}

# Does a cluster of exactly N healthy nodes exist?
cl_healthy() {
	local n=$1 i size pid
	[ -r "$CLUSTER_STATE/size" ] && read -r size <"$CLUSTER_STATE/size" && [ "$size" = "$n" ] || return 1
	[ "$(cl_list_ns | grep -c '^node')" = "$n" ] || return 1
	ip netns list | awk '{print $1}' | grep -qx "$CLUSTER_BRNS" || return 1
	for ((i = 0; i < n; i++)); do
		pid=$(cl_holder_pid "node$i") || return 1
		[ "$(stat -L -c %i "/proc/$pid/ns/net")" = "$(stat -L -c %i "/run/netns/node$i")" ] || return 1
		[ -r "/etc/netns/node$i/hosts" ] || return 1
	done
}

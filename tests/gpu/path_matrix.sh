#!/bin/bash
# Proof of path with GPU memory (issue 25) on the SIMULATED EFA device: which
# way the payload of a --mem cuda put or get went (the NIC counters' path:
# device-write, device-read, emulated-send, ...), on efa-direct and the efa
# fabric, with GPUDirect RDMA (EFASIM_P2P=1, as on p5/p5en) and, for the efa
# fabric, without it (EFASIM_P2P=0: the provider bounces through host
# memory). One libfabric release V built by tests/efasim/build V with CUDA.
#   tests/gpu/path_matrix.sh V [OUTDIR]
# Prints one line per (case, size): path, path_ratio, post_ns, poll_ns, and
# writes OUTDIR/path.md (the table) and the CSVs. Exit 77 without a GPU.
# Every figure is the simulator's; the paths are the provider's choices.
set -u
V=${1:?usage: tests/gpu/path_matrix.sh VERSION [OUTDIR]}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${EFASIM_BUILD:-$top/build-efasim}
OUTD=${2:-$(mktemp -d "${TMPDIR:-/tmp}/efasim-path-$V.XXXXXX")}
mkdir -p "$OUTD"
EBIN=$B/lf-$V/efab/bin
RUN=$top/tests/efasim/run
[ -x "$EBIN/efab_put_bw" ] || { echo "path_matrix: $EBIN not built: tests/efasim/build $V"; exit 77; }
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 ||
	{ echo "path_matrix: no GPU here (nvidia-smi -L)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export LD_LIBRARY_PATH="${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
TO=${EFASIM_GPU_TIMEOUT:-120}
S=${PATH_SIZES:-8:4M:x512}
n=0 fail=0
{
	echo "| libfabric | fabric | GPUDirect | case | size | path | path_ratio | payload (B) | rdma_write (B) | rdma_read (B) | send (B) | post_ns | poll_ns |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$OUTD/path.md"

one() { # FABRIC P2P NAME BENCH ARGS...
	local fab=$1 p2p=$2 name=$3 bench=$4
	shift 4
	n=$((n + 1))
	local csv=$OUTD/$(printf '%02d' $n).csv log=$OUTD/$(printf '%02d' $n).log
	EFASIM_DIR=$OUTD/sim-$n EFASIM_P2P=$p2p timeout -k 5 "$TO" "$RUN" "$V" \
		mpirun -np 2 -x EFASIM_HOST=%r -x EFASIM_DIR -x EFASIM_P2P -x LD_LIBRARY_PATH -x PATH \
		"$EBIN/$bench" -p efa -f "$fab" "$@" -m "$S" -c --csv "$csv" >"$log" 2>&1
	local rc=$?
	if [ $rc != 0 ]; then
		fail=$((fail + 1))
		echo "FAIL $V $fab p2p=$p2p $name: exit $rc ($log)"
		tail -n 4 "$log" | sed 's/^/    | /'
		return
	fi
	python3 - "$csv" "$V" "$fab" "$p2p" "$name" >>"$OUTD/path.md" <<'EOF'
import csv, sys
path, V, fab, p2p, name = sys.argv[1:6]
for r in csv.DictReader(open(path)):
    g = lambda k: int(r.get(k) or 0)
    w = g("nic_init_rdma_write_bytes") + g("nic_tgt_rdma_write_bytes")
    rd = g("nic_init_rdma_read_bytes") + g("nic_tgt_rdma_read_bytes")
    s = g("nic_init_send_bytes") + g("nic_tgt_send_bytes")
    assert r["errors"] == "0", r["errors"]
    print(f"| {V} | {fab} | {'yes' if p2p == '1' else 'no'} | {name} | {r['size_bytes']} | {r['path']} | "
          f"{r['path_ratio']} | {r['payload_bytes']} | {w} | {rd} | {s} | {r['post_ns'] or '-'} | {r['poll_ns'] or '-'} |")
    print(f"{V} {fab} p2p={p2p} {name} {r['size_bytes']} B: {r['path']} {r['path_ratio']} "
          f"post {r['post_ns']} poll {r['poll_ns']}", file=sys.stderr)
EOF
}

for F in efa-direct efa; do
	one $F 1 "put_bw writedata --mem cuda" efab_put_bw -o writedata --mem cuda -n 4 -W 8
	one $F 1 "get_bw --mem cuda" efab_get_bw --mem cuda -n 4 -W 8
	one $F 1 "put_lat writedata --mem cuda" efab_put_lat -o writedata --mem cuda -n 20 -w 2
	one $F 1 "put_bw writedata --mem cuda:host" efab_put_bw -o writedata --mem cuda:host -n 4 -W 8
done
# the efa fabric on a device without GPUDirect RDMA (efa-direct refuses GPU memory there)
case $V in 2.[0-3].*) ;; *)
	one efa 0 "put_bw writedata --mem cuda" efab_put_bw -o writedata --mem cuda -n 4 -W 8
	one efa 0 "get_bw --mem cuda" efab_get_bw --mem cuda -n 4 -W 8
	;;
esac
echo "path_matrix $V: $n cases, $fail failed; table in $OUTD/path.md"
[ $fail = 0 ]

# --initiator gpu (issue 37; docs/gda.md) where no GPU is: its usage rules
# (exit 2, the reason), the skip with its reason (exit 77: this build or this
# host lacks a piece), and the initiator column of the CPU rows. The kernels
# themselves run in make gpu-check (tests/gpu/efasim_matrix.sh) on a GPU.

t_gda_usage() {
	expect_rc 2 mpi 2 "$BIN/efab_put_lat" -p shm -m 8 --initiator gpu
	expect_msg "add --mem cuda"
	expect_rc 2 mpi 2 "$BIN/efab_put_lat" -p shm -m 8 --gpu-threads 4
	expect_msg "gpu-threads needs --initiator gpu"
	expect_rc 2 mpi 2 "$BIN/efab_put_lat" -p shm -m 8 --mem cuda --initiator gpu --gpu-threads 4
	expect_msg "one operation in flight"
	expect_rc 2 mpi 4 "$BIN/efab_put_bw" -p shm -m 8 --mem cuda --initiator gpu
	expect_msg "one pair .mpirun -np 2., got 4 ranks"
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm -m 8 --mem cuda --initiator gpu --bidir
	expect_msg "does not take --bidir"
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm -m 8 --mem cuda:host --initiator gpu
	expect_msg "add --mem cuda"
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm -m 8 --mem cuda --initiator gpu --gpu-threads 33
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm -m 8 --gpu-wqe 128
	expect_msg "gpu-wqe needs --initiator gpu"
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm -m 8 --mem cuda --initiator gpu --gpu-wqe 96
	expect_rc 2 mpi 2 "$BIN/efab_put_lat" -p shm -m 8 --mem cuda --initiator fpga
	# only the rows a kernel serves take it
	expect_rc 2 mpi 2 "$BIN/efab_get_bw" -p shm -m 8 --initiator gpu
	expect_rc 2 mpi 2 "$BIN/efab_atomic_lat" -p shm --initiator gpu
	expect_rc 0 "$BIN/efab_put_bw" --help
	grep -q -- "--initiator cpu|gpu" "$WORK/last.out" && grep -q -- "--gpu-threads N" "$WORK/last.out" &&
		grep -q -- "--gpu-wqe 64|128" "$WORK/last.out" || die "put_bw --help lacks --initiator/--gpu-threads/--gpu-wqe"
}

# No GPU here: exit 77 with the reason, before any timing; the CPU path's rows
# say initiator cpu and leave the GPU columns empty.
t_gda_skip_and_cpu_rows() {
	expect_rc 77 mpi 2 "$BIN/efab_put_lat" -p shm -m 8 --mem cuda --initiator gpu
	expect_msg "cuda memory kinds unavailable"
	for b in put_lat get_lat put_bw; do
		expect_rc 0 mpi 2 "$BIN/efab_$b" -p shm -m 64 -n 5 --csv "$WORK/$b.csv"
		case $b in
		put_lat) x=inject ;;
		put_bw) x=pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link ;;
		*) x="" ;;
		esac
		csvcheck "$WORK/$b.csv" --bench "$b" --extra "$x"
		python3 - "$WORK/$b.csv" <<'PY' || die "$b: initiator columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["initiator"] == "cpu" for r in rows), [r.get("initiator") for r in rows]
assert all(r["gpu_post_ns"] == "" and r["gpu_threads"] == "" for r in rows)
PY
	done
}

# libfabric 2.6.0 on the simulated device, no GPU: the GDA path is compiled
# in (FI_EFA_GDA_OPS) and stops at the first missing piece with its reason.
t_efa260_gda_skip() {
	efasim_need 2.6.0
	expect_rc 77 efa_mpi 2.6.0 2 "$EBIN/efab_put_lat" -p efa -f efa-direct -m 8 --mem cuda --initiator gpu
	grep -q "cuda memory kinds unavailable\|no FI_HMEM" "$WORK/last.err" || die "no reason given"
}

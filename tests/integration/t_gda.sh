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

# tests/gpu/mps.sh: the private MPS daemon make gpu-check starts for the GDA lap
# pair (which needs both ranks' kernels running at once), against a stub control
# program that behaves as nvidia-cuda-mps-control does for start and quit (-d:
# a daemon serving "quit" on CUDA_MPS_PIPE_DIRECTORY/control): started, found by
# its variable, quit and gone; a failed start said in one line and cleaned up; a
# daemon deaf to quit killed (exit 1); another folder refused; no program: exit 1
t_gpu_mps_script() {
	local m=$ROOT/tests/gpu/mps.sh stub=$WORK/stubctl d r
	cat >"$stub" <<'STUB'
#!/bin/bash
P=$CUDA_MPS_PIPE_DIRECTORY
if [ "${1:-}" = -d ]; then
	[ -n "${STUB_FAIL:-}" ] && { echo "stub: cannot start"; exit 1; }
	setsid bash -c 'mkfifo "$0/control"; trap "" TERM; while [ -p "$0/control" ]; do read -r l <"$0/control"; [ "$l" = quit ] && [ -z "${STUB_DEAF:-}" ] && break; done; rm -f "$0/control"' "$P" </dev/null >/dev/null 2>&1 &
	exit 0
fi
read -r l
echo "$l" >"$P/control"
STUB
	chmod +x "$stub"
	export NVIDIA_MPS_CONTROL=$stub TMPDIR=$WORK
	d=$("$m" start) || die "mps.sh start: exit $?: $d"
	[ -p "$d/pipe/control" ] || die "mps.sh start: no control pipe in $d/pipe"
	pids() { grep -lsxzF "CUDA_MPS_PIPE_DIRECTORY=$1/pipe" /proc/[0-9]*/environ 2>/dev/null | wc -l; }
	[ "$(pids "$d")" -ge 1 ] || die "mps.sh start: no process with CUDA_MPS_PIPE_DIRECTORY=$d/pipe"
	"$m" stop "$d" || die "mps.sh stop: exit $? for a daemon that quits"
	[ ! -e "$d" ] || die "mps.sh stop left $d"
	[ "$(pids "$d")" = 0 ] || die "mps.sh stop: the daemon is still there"
	# a failed start: one line, no folder left
	r=$(STUB_FAIL=1 "$m" start) && die "mps.sh start succeeded with a control program that fails"
	echo "$r" | grep -q "failed: stub: cannot start" || die "mps.sh start's failure line: $r"
	ls -d "$WORK"/efab-mps.* >/dev/null 2>&1 && die "a failed start left its folder"
	# deaf to quit: killed after MPS_STOP_S, exit 1
	d=$(STUB_DEAF=1 "$m" start) || die "mps.sh start (deaf stub): $d"
	r=$(MPS_STOP_S=1 "$m" stop "$d") && die "mps.sh stop said 0 for a daemon it had to kill"
	echo "$r" | grep -q "did not leave within 1 s of quit: killed" || die "mps.sh stop's line: $r"
	[ "$(pids "$d")" = 0 ] || die "the deaf daemon is still running"
	expect_rc 2 "$m" stop /tmp
	NVIDIA_MPS_CONTROL=$WORK/none expect_rc 1 "$m" start
	grep -q "no $WORK/none (CUDA MPS) in PATH" "$WORK/last.out" || die "no control program: reason not said"
	unset NVIDIA_MPS_CONTROL
}

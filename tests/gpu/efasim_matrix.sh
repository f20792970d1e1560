#!/bin/bash
# Every GPU path of efabench through libfabric's efa provider on the SIMULATED
# EFA device (tests/efasim; its GPU memory: memkind.c), for one libfabric
# release V built by tests/efasim/build V (with CUDA). Run by `make gpu-check`
# where a GPU is; without one it exits 77 with the reason.
#   tests/gpu/efasim_matrix.sh V [OUTDIR]
# Two ranks, each its own simulated host (so the efa fabric cannot use shm),
# on the one GPU. Cases (each with -c: every payload of every size checked):
#   put/get latency and bandwidth with --mem cuda, cuda:host, host:cuda,
#   cuda-host, with and without --dmabuf (where a side is cuda); atomics;
#   efab_mr_reg on cuda memory (all regimes, --domains all); efab_probe and
#   --live; --src-unregistered --mem cuda; the same with EFASIM_P2P=0 (a device
#   without GPUDirect RDMA): efa-direct must then refuse GPU memory (exit 77);
#   CUDA VMM memory (--mem cuda-vmm; the cases named "vmm ...", EFAB_MATRIX_ONLY=vmm),
#   and its refusal where the allocation is not RDMA-capable (EFAB_VMM_NO_RDMA_FLAG=1).
# One line per case: PASS|FAIL V fabric p2p #N case (rc, expected), the latency
# rows' p50 and lat_us_batch; last "efasim-gpu V: N pass, N fail". Exit 1 when
# any case did not end as expected. Every figure is the simulator's.
# EFAB_MATRIX_ONLY=REGEX runs only the cases whose name matches (a rerun of one
# part inside a short device call); the checks of the cases left out are left out too.
# EFAB_MATRIX_FROM=N runs only cases N and after (the number of a case's log file).
set -u
V=${1:?usage: tests/gpu/efasim_matrix.sh VERSION [OUTDIR]}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${EFASIM_BUILD:-$top/build-efasim}
OUTD=${2:-$(mktemp -d "${TMPDIR:-/tmp}/efasim-gpu-$V.XXXXXX")}
mkdir -p "$OUTD"
EBIN=$B/lf-$V/efab/bin
RUN=$top/tests/efasim/run
[ -x "$EBIN/efab_put_lat" ] || { echo "efasim-gpu: $EBIN not built: tests/efasim/build $V"; exit 77; }
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 ||
	{ echo "efasim-gpu: no GPU here (nvidia-smi -L): the GPU paths need one"; exit 77; }
grep -q -- '--with-cuda=/' "$B/lf-$V/.config" 2>/dev/null ||
	{ echo "efasim-gpu: libfabric $V was built without CUDA ($B/lf-$V/.config)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export FI_LOG_LEVEL=${FI_LOG_LEVEL:-warn}
CUDA_LIB=${CUDA_HOME:-/usr/local/cuda}/lib64
export LD_LIBRARY_PATH="$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
TO=${EFASIM_GPU_TIMEOUT:-90}
pass=0 fail=0 n=0 nskip=0

# case_wanted NAME N: whether case N runs. EFAB_MATRIX_ONLY=REGEX: only the cases
# whose name matches (a rerun of one part); EFAB_MATRIX_FROM=N: none numbered
# below N (a run cut by its device call's timeout goes on from its first case
# without a PASS/FAIL line)
case_wanted() {
	[ -z "${EFAB_MATRIX_ONLY:-}" ] || [[ $1 =~ $EFAB_MATRIX_ONLY ]] || return 1
	[ "$2" -ge "${EFAB_MATRIX_FROM:-1}" ]
}

# case EXPECT P2P FABRIC NAME CMD...   (EXPECT: 0, 77, or 0/77)
case_run() {
	local expect=$1 p2p=$2 fab=$3 name=$4
	shift 4
	n=$((n + 1))
	case_wanted "$name" $n || { skipped_last=1; return 0; }
	skipped_last=0
	local log=$OUTD/$(printf '%03d' $n).log csv=$OUTD/$(printf '%03d' $n).csv rc
	local csvarg=(--csv "$csv")
	[[ $1 == *efab_probe ]] && csvarg=()
	# the engine's benchmarks print their notes (the words MUST_SAY looks for)
	# only with -v: their default header is a few short lines
	[[ " $* " =~ /efab_(put|get|atomic|mr|shmem)_[a-z]+\  ]] && csvarg+=(-v)
	echo "$*" >"$log"
	EFASIM_DIR=$OUTD/sim-$n EFASIM_P2P=$p2p timeout -k 5 "$TO" "$RUN" "$V" \
		mpirun -np 2 -x EFASIM_HOST=%r -x EFASIM_DIR -x EFASIM_P2P -x LD_LIBRARY_PATH -x PATH -x FI_LOG_LEVEL \
		"$@" "${csvarg[@]}" >>"$log" 2>&1
	rc=$?
	local ok=0 e
	for e in ${expect//\// }; do [ "$rc" = "$e" ] && ok=1; done
	# -c: the errors column must be 0 on every row
	if [ $ok = 1 ] && [ "$rc" = 0 ] && [ -s "$csv" ]; then
		python3 - "$csv" <<'EOF' || ok=0
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r for r in rows if r.get("errors") not in ("0", "")]
sys.exit(1 if bad or not rows else 0)
EOF
	fi
	local fig=""
	[ -s "$csv" ] && fig=$(python3 - "$csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
out = []
for r in rows:
    if r.get("lat_us_p50") and r.get("lat_us_batch"):
        out.append("%sB p50 %s batch %s" % (r["size_bytes"], r["lat_us_p50"], r["lat_us_batch"]))
    elif r.get("bw_MBps"):
        out.append("%sB %s MB/s" % (r["size_bytes"], r["bw_MBps"]))
print("; ".join(out[:4] + (["..."] if len(out) > 8 else []) + out[-2:] if len(out) > 6 else out))
EOF
)
	# what the benchmark said (its own line, not mpirun's)
	local why=""
	[ "$rc" != 0 ] && why=$(grep -m1 -E '^efab_[a-z_]+(\[rank [0-9]+\])?: ' "$log" | cut -c1-240)
	if [ $ok = 1 ] && [ -n "${MUST_SAY:-}" ] && ! grep -q -- "$MUST_SAY" "$log"; then
		ok=0
		why="expected the words '$MUST_SAY'; $why"
	fi
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
		echo "PASS $V $fab p2p=$p2p #$n $name (rc $rc) ${why:+[$why] }${fig:+{$fig}}"
	else
		fail=$((fail + 1))
		echo "FAIL $V $fab p2p=$p2p #$n $name (rc $rc, expected $expect) ${why:+[$why] }see $log"
		tail -n 6 "$log" | sed 's/^/    | /'
	fi
}

S=${EFASIM_GPU_SIZES:-1:1M:x8}
LAT="-m $S -n 30 -w 3 -c"
BW="-m $S -n 4 -W 8 -c"
# EFASIM_GPU_ONLY=gda: only the --initiator gpu cases below; =efa-direct or
# =efa: only that fabric's cases (and the GDA ones)
for F in efa-direct efa; do
	[ "${EFASIM_GPU_ONLY:-}" = gda ] && break
	[ -n "${EFASIM_GPU_ONLY:-}" ] && [ "$EFASIM_GPU_ONLY" != $F ] && continue
	for mem in cuda cuda:host host:cuda cuda-host; do
		dms=("")
		[[ $mem == *cuda:* || $mem == *:cuda || $mem == cuda ]] && dms=("" "--dmabuf")
		for dm in "${dms[@]}"; do
			exp=0
			# efa: a host-memory side's RDMA into the other side's CUDA buffer
			# (only ever a question without P2P; here P2P is on)
			case_run $exp 1 $F "put_lat writedata --mem $mem $dm" "$EBIN/efab_put_lat" -p efa -f $F -o writedata --mem $mem $dm $LAT
			# -o write times its last byte, which the CPU cannot poll in GPU
			# memory: asked for on a cuda side it is refused (exit 2; the
			# default there is writedata), on cuda-host memory it runs
			wexp=$exp
			[[ $mem == cuda || $mem == cuda:* || $mem == *:cuda ]] && wexp=2
			case_run $wexp 1 $F "put_lat write --mem $mem $dm" "$EBIN/efab_put_lat" -p efa -f $F -o write --mem $mem $dm $LAT
			case_run $exp 1 $F "get_lat --mem $mem $dm" "$EBIN/efab_get_lat" -p efa -f $F --mem $mem $dm $LAT
			case_run $exp 1 $F "put_bw writedata --mem $mem $dm" "$EBIN/efab_put_bw" -p efa -f $F -o writedata --mem $mem $dm $BW
			case_run $exp 1 $F "get_bw --mem $mem $dm" "$EBIN/efab_get_bw" -p efa -f $F --mem $mem $dm $BW
		done
		aexp=0
		[ $F = efa-direct ] && aexp=77 # no FI_ATOMIC on efa-direct (fi_efa.7)
		case_run $aexp 1 $F "atomic_lat --mem $mem" "$EBIN/efab_atomic_lat" -p efa -f $F --mem $mem -n 20 -w 2 -c
		case_run $aexp 1 $F "atomic_bw --mem $mem" "$EBIN/efab_atomic_bw" -p efa -f $F --mem $mem -n 4 -W 8 -c
	done
	case_run 0 1 $F "mr_reg --mem cuda (all regimes)" "$EBIN/efab_mr_reg" -p efa -f $F --mem cuda -m 4K:4M:x16 -n 5
	case_run 0 1 $F "mr_reg --mem cuda --dmabuf" "$EBIN/efab_mr_reg" -p efa -f $F --mem cuda --dmabuf -m 4K:4M:x16 -n 5
	case_run 0 1 $F "mr_reg --mem cuda --domains all" "$EBIN/efab_mr_reg" -p efa -f $F --mem cuda --domains all -m 4K:1M:x16 -n 5
	uexp=0
	[ $F = efa-direct ] && uexp=77 # FI_MR_LOCAL: the provider's own words, exit 77
	case_run $uexp 1 $F "put_lat --src-unregistered --mem cuda" "$EBIN/efab_put_lat" -p efa -f $F --src-unregistered --mem cuda $LAT
	case_run 0 1 $F "probe --live" "$EBIN/efab_probe" --live -p efa -f $F --json
	# no GPUDirect RDMA: efa-direct refuses GPU memory, efa bounces through host memory.
	# libfabric 2.1 builds efa-direct's fi_info before its P2P probe (efa_device.c
	# efa_prov_info_alloc runs before efa_prov.c efa_hmem_info_initialize), so it offers
	# FI_HMEM on a device without P2P too and then fails (efa_rma_post_write segfaults on
	# a CUDA buffer the NIC never registered; host:cuda RDMA gets RKEY errors): nothing
	# can tell the two devices apart there, so the no-P2P cases start at 2.4.
	case $V in 2.[0-3].*)
		nskip=$((nskip + 1))
		echo "SKIP $V $F p2p=0 (libfabric $V offers FI_HMEM on efa-direct without P2P: efa_prov_info_alloc before efa_hmem_info_initialize)"
		continue ;;
	esac
	nexp=0
	[ $F = efa-direct ] && nexp=77
	case_run $nexp 0 $F "put_lat writedata --mem cuda (no P2P)" "$EBIN/efab_put_lat" -p efa -f $F -o writedata --mem cuda $LAT
	case_run $nexp 0 $F "get_bw --mem cuda (no P2P)" "$EBIN/efab_get_bw" -p efa -f $F --mem cuda $BW
	# efa without P2P: RDMA from a host buffer into the peer's CUDA buffer is refused up
	# front (exit 77, efabench's efa_mixed_gpu_refused: the provider keys such a CUDA
	# buffer itself); the directions that post only from CUDA memory run
	for c in "put_lat writedata:cuda:host:77" "get_lat:cuda:host:0" "put_bw writedata:cuda:host:0" \
		"put_lat writedata:host:cuda:77" "get_lat:host:cuda:77" "put_bw writedata:host:cuda:77"; do
		IFS=: read -r b l r e <<<"$c"
		[ $F = efa-direct ] && e=77
		bn=${b%% *} op=""
		[ "$bn" != "$b" ] && op="-o ${b#* }"
		args=$LAT
		[[ $bn == *bw ]] && args=$BW
		say=""
		[ $F = efa ] && [ $e = 77 ] && say="needs GPU peer-to-peer"
		MUST_SAY=$say case_run $e 0 $F "$b --mem $l:$r (no P2P)" "$EBIN/efab_$bn" -p efa -f $F $op --mem $l:$r $args
	done
	# lat_us_batch vs p50: the same rows without -c (no per-iteration GPU fill/verify)
	case_run 0 1 $F "put_lat writedata --mem cuda:host, no -c" "$EBIN/efab_put_lat" -p efa -f $F -o writedata --mem cuda:host -m $S -n 30 -w 3
	case_run $nexp 0 $F "put_lat writedata --mem cuda (no P2P), no -c" "$EBIN/efab_put_lat" -p efa -f $F -o writedata --mem cuda -m $S -n 30 -w 3
done
# efasim's copies of GPU memory waited for by polling cuStreamQuery (EFASIM_CUDA_WAIT=query,
# the diagnostic for issue 47's blocking on-stream hang): the same data, every byte checked
if [ "${EFASIM_GPU_ONLY:-}" != gda ]; then
	case_run 0 1 efa-direct "put_lat writedata --mem cuda:host, EFASIM_CUDA_WAIT=query" env EFASIM_CUDA_WAIT=query \
		"$EBIN/efab_put_lat" -p efa -f efa-direct -o writedata --mem cuda:host $LAT
	case_run 0 1 efa-direct "get_bw --mem cuda, EFASIM_CUDA_WAIT=query" env EFASIM_CUDA_WAIT=query \
		"$EBIN/efab_get_bw" -p efa -f efa-direct --mem cuda $BW
fi
# --initiator gpu (issue 37): a CUDA kernel posts the WQEs, rings the doorbell and
# polls its CQs in GPU memory through libfabric's GDA ops (efa-direct, >= 2.3);
# every case with -c (the kernel fills and checks each payload on the GPU)
GEXP=0
case $V in 2.[0-2].*) GEXP=77 ;; esac # FI_EFA_GDA_OPS: libfabric 2.3
G="-p efa -f efa-direct --mem cuda --initiator gpu"
MUST_SAY=$([ $GEXP = 77 ] && echo "FI_EFA_GDA_OPS") case_run $GEXP 1 efa-direct "gda put_lat write" "$EBIN/efab_put_lat" $G -o write $LAT
case_run $GEXP 1 efa-direct "gda put_lat writedata" "$EBIN/efab_put_lat" $G -o writedata $LAT
case_run $GEXP 1 efa-direct "gda get_lat" "$EBIN/efab_get_lat" $G $LAT
case_run $GEXP 1 efa-direct "gda put_bw write" "$EBIN/efab_put_bw" $G -o write $BW
case_run $GEXP 1 efa-direct "gda put_bw write --gpu-threads 32 --footprint window" "$EBIN/efab_put_bw" $G -o write --gpu-threads 32 --footprint window $BW
case_run $GEXP 1 efa-direct "gda put_bw writedata --gpu-threads 8" "$EBIN/efab_put_bw" $G -o writedata --gpu-threads 8 $BW
# the simulated device placing a write's bytes in any order: the last byte may come first
case_run $GEXP 1 efa-direct "gda put_lat write, EFASIM_REORDER=1" env EFASIM_REORDER=1 "$EBIN/efab_put_lat" $G -o write $LAT
# 2.7.0a1 (a pre-release snapshot) on sim-main: the device's 64-bit request ids are on
# by default (every case above ran with them: the kernels write req_id_ex and check the
# whole id of each send completion); EFASIM_REQ_ID_64=0 the 16-bit queue. --gpu-wqe 128:
# the GPU's endpoint asks for an inject size of 80 B, its QP takes 128-byte WQEs (libfabric
# >= 2.7 on a device with inline_buf_size_ex 80); elsewhere, or with EFASIM_WIDE_WQE=0, 77.
WEXP=77
case $V in 2.7.*) [ $GEXP = 0 ] && WEXP=0 ;; esac
if [ $WEXP = 0 ]; then
	case_run 0 1 efa-direct "gda put_bw write, 16-bit request ids (EFASIM_REQ_ID_64=0)" env EFASIM_REQ_ID_64=0 "$EBIN/efab_put_bw" $G -o write $BW
	MUST_SAY="128-byte WQEs need" case_run 77 1 efa-direct "gda put_lat --gpu-wqe 128, EFASIM_WIDE_WQE=0 (77)" env EFASIM_WIDE_WQE=0 "$EBIN/efab_put_lat" $G -o write --gpu-wqe 128 $LAT
fi
MUST_SAY=$([ $WEXP = 77 ] && [ $GEXP = 0 ] && echo "128-byte WQEs need") case_run $WEXP 1 efa-direct "gda put_lat writedata --gpu-wqe 128" "$EBIN/efab_put_lat" $G -o writedata --gpu-wqe 128 $LAT
case_run $WEXP 1 efa-direct "gda put_bw write --gpu-wqe 128 --gpu-threads 32" "$EBIN/efab_put_bw" $G -o write --gpu-wqe 128 --gpu-threads 32 $BW
case_run $WEXP 1 efa-direct "gda get_lat --gpu-wqe 128" "$EBIN/efab_get_lat" $G --gpu-wqe 128 $LAT
# the check must be able to fail: every 5th message counted as damaged
MUST_SAY=$([ $GEXP = 0 ] && echo "validation failed") case_run $([ $GEXP = 0 ] && echo 1 || echo 77) 1 efa-direct "gda put_lat write, EFAB_FAULT_CORRUPT=5 (must fail)" env EFAB_FAULT_CORRUPT=5 "$EBIN/efab_put_lat" $G -o write $LAT
# the receive ring of a writedata stream (an external-memory CQ: the NIC has no consumer
# index): a target kernel 200 us slower per completion than the device, 40 windows of 512
# (20480 writes, the ring holds 8192): with the launch cut to the ring it passes; without the
# cut (EFAB_FAULT_GDA_NO_RX_BOUND=1, efabench before 2026-12-04) the device laps the ring and
# the target waits on a wrong phase until --timeout (must fail). Both ranks' kernels must run
# at once, so only under MPS: without it the two contexts are time-sliced and one writedata
# takes ~0.2 s (results/20261202-132302-vm-h200-efasim-gda/README.md). Where no MPS daemon runs, the
# matrix starts one of its own for these two cases (tests/gpu/mps.sh: private pipe and log
# folders, so only these cases' processes are its clients; quit after them); it says SKIP
# only where none can be started (EFAB_MATRIX_MPS=0 forbids starting one).
LAP="-o writedata -m 8 -W 512 -n 30 -w 10 -t 15"
MPSENV=()
LAP1="gda put_bw writedata, slow target, cut to the ring"
LAP2="gda put_bw writedata, slow target, not cut: lapped (must fail)"
# (the pair's cases are the next two: n + 1 and n + 2)
if [ $GEXP = 0 ] && { case_wanted "$LAP1" $((n + 1)) || case_wanted "$LAP2" $((n + 2)); } &&
	! pgrep -f nvidia-cuda-mps >/dev/null 2>&1; then
	if [ "${EFAB_MATRIX_MPS:-1}" = 1 ] && mpsdir=$("$here/mps.sh" start); then
		trap '"$here/mps.sh" stop "$mpsdir" >/dev/null 2>&1' EXIT
		echo "MPS: a private MPS daemon for the lap pair ($mpsdir)"
		MPSENV=(CUDA_MPS_PIPE_DIRECTORY="$mpsdir/pipe" CUDA_MPS_LOG_DIRECTORY="$mpsdir/log")
	else
		echo "SKIP $V efa-direct gda put_bw writedata lap pair: needs MPS for both ranks' kernels to run at once, and none could be started${mpsdir:+: $mpsdir} (EFAB_MATRIX_MPS=${EFAB_MATRIX_MPS:-1})"
		LAP=
	fi
fi
if [ -n "$LAP" ]; then
	MUST_SAY=$([ $GEXP = 0 ] && echo "of the windows asked for") case_run $GEXP 1 efa-direct "$LAP1" env "${MPSENV[@]}" EFAB_FAULT_GDA_RX_SLOW_NS=200000 "$EBIN/efab_put_bw" $G $LAP
	MUST_SAY=$([ $GEXP = 0 ] && echo "kernel waited\|remote CQ data") case_run $([ $GEXP = 0 ] && echo 1 || echo 77) 1 efa-direct "$LAP2" env "${MPSENV[@]}" EFAB_FAULT_GDA_RX_SLOW_NS=200000 EFAB_FAULT_GDA_NO_RX_BOUND=1 "$EBIN/efab_put_bw" $G $LAP
	if [ ${#MPSENV[@]} -gt 0 ]; then
		"$here/mps.sh" stop "$mpsdir" || echo "MPS: $mpsdir: quit did not end the daemon cleanly"
		trap - EXIT
	fi
fi
# the device's max_cq_depth below the receive ring's 8192 entries (issue 45 item 6,
# EFASIM_MAX_CQE=4096): the ring is halved until the device takes it (bench/engine/gda_host.c) and
# the header says so; efabench's own CQ (tx queue + its 256 receives) fits
MUST_SAY=$([ $GEXP = 0 ] && echo "receive CQ ring has 4096 entries") case_run $GEXP 1 efa-direct "gda put_bw writedata, device max_cq_depth 4096 (EFASIM_MAX_CQE=4096)" env EFASIM_MAX_CQE=4096 "$EBIN/efab_put_bw" $G -o writedata -m 8:4K:x8 -n 4 -W 8 -c
# reg_path (issue 45): the path libfabric reported in its own log for a CUDA
# registration (bench/cli/reglog.c). 2.6 and later: dma-buf first, decided when the
# provider loads (efa_hmem.c efa_hmem_info_check_p2p_support_cuda; efasim takes
# ibv_reg_dmabuf_mr of CUDA memory), each registration logs "Registering dmabuf
# MR"; with FI_HMEM_CUDA_USE_DMABUF=0 it goes to ibv_reg_mr (peermem, only
# "Registered memory" said). 2.1 and 2.4 register CUDA memory with ibv_reg_mr.
# --dmabuf: efabench's own FI_MR_DMABUF. put_lat's header names each rank's.
reg_path_rows() { # WANT: every registration row of the last case's CSV says it
	[ "${skipped_last:-0}" = 1 ] && return 0 # its case was left out (EFAB_MATRIX_ONLY)
	python3 - "$OUTD/$(printf '%03d' $n).csv" "$1" <<'EOF' && echo "PASS $V efa-direct reg_path of case $n: $1" || { fail=$((fail + 1)); echo "FAIL $V efa-direct reg_path of case $n, expected $1 (see $OUTD/$(printf '%03d' $n).log)"; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
got = sorted({r["reg_path"] for r in rows if r["op"] in ("fresh", "same", "accumulate", "fresh_dmabuf")})
print("    reg_path:", got)
sys.exit(0 if rows and got == [sys.argv[2]] else 1)
EOF
}
case_run 0 1 efa-direct "mr_reg --mem cuda: reg_path" "$EBIN/efab_mr_reg" -p efa -f efa-direct --mem cuda -m 4K:64K:x4 -n 3 --max-total 1M
case $V in 2.[0-5].*) reg_path_rows peermem ;; *) reg_path_rows dmabuf ;; esac
case_run 0 1 efa-direct "mr_reg --mem cuda, FI_HMEM_CUDA_USE_DMABUF=0: reg_path" env FI_HMEM_CUDA_USE_DMABUF=0 "$EBIN/efab_mr_reg" -p efa -f efa-direct --mem cuda -m 4K:64K:x4 -n 3 --regime fresh
reg_path_rows peermem
case_run 0 1 efa-direct "mr_reg --mem cuda --dmabuf: reg_path" "$EBIN/efab_mr_reg" -p efa -f efa-direct --mem cuda --dmabuf -m 4K:64K:x4 -n 3 --regime fresh
reg_path_rows efabench-dmabuf
want=dmabuf
case $V in 2.[0-5].*) want=peermem ;; esac
MUST_SAY="reg_path (the path libfabric reported in its log for each rank's registration of its buffer, by rank): 0 $want, 1 $want" \
	case_run 0 1 efa-direct "put_lat --mem cuda: reg_path in the header" "$EBIN/efab_put_lat" -p efa -f efa-direct --mem cuda $LAT
# CUDA VMM memory (issue 47 item 4; --mem cuda-vmm: cuMemCreate + cuMemMap, gpuDirectRDMACapable,
# POSIX fd handles): registered as the real stack does (2.6: a dma-buf of the VMM range from
# cuMemGetHandleForAddressRange; FI_HMEM_CUDA_USE_DMABUF=0: ibv_reg_mr, the peer-memory pin),
# its bytes moved by efasim through the allocation's POSIX fd (pidfd_getfd + cuMemImport-
# FromShareableHandle + cuMemMap in the initiator, memkind.c). All with -c where a payload moves.
for F in efa-direct efa; do
	[ -n "${EFASIM_GPU_ONLY:-}" ] && [ "$EFASIM_GPU_ONLY" != $F ] && continue
	case_run 0 1 $F "vmm mr_reg --mem cuda-vmm (all regimes)" "$EBIN/efab_mr_reg" -p efa -f $F --mem cuda-vmm -m 4K:4M:x16 -n 5
	[ $F = efa-direct ] && { case $V in 2.[0-5].*) reg_path_rows peermem ;; *) reg_path_rows dmabuf ;; esac; }
	# the efa fabric sets CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on each CUDA buffer it
	# moves, which CUDA refuses for VMM memory: the operation fails with
	# -FI_EINVAL (libfabric issue 12853; the refusal is the real CUDA's), and
	# efabench's error line says why
	e=0 say=
	[ $F = efa ] && e=1 say="libfabric issue 12853"
	MUST_SAY=$say case_run $e 1 $F "vmm put_lat writedata --mem cuda-vmm" "$EBIN/efab_put_lat" -p efa -f $F -o writedata --mem cuda-vmm $LAT
	MUST_SAY=$say case_run $e 1 $F "vmm get_lat --mem cuda-vmm" "$EBIN/efab_get_lat" -p efa -f $F --mem cuda-vmm $LAT
	# --no-cuda-api (FI_OPT_CUDA_API_PERMITTED = false, aws-ofi-nccl's setting):
	# the efa fabric makes no CUDA call, so VMM memory moves (GPU peer-to-peer on)
	[ $F = efa ] || continue
	MUST_SAY="FI_OPT_CUDA_API_PERMITTED = false" case_run 0 1 $F "vmm put_lat writedata --mem cuda-vmm --no-cuda-api" \
		"$EBIN/efab_put_lat" -p efa -f $F -o writedata --mem cuda-vmm --no-cuda-api $LAT
	MUST_SAY="FI_OPT_CUDA_API_PERMITTED = false" case_run 0 1 $F "vmm get_lat --mem cuda-vmm --no-cuda-api" \
		"$EBIN/efab_get_lat" -p efa -f $F --mem cuda-vmm --no-cuda-api $LAT
done
if [ -z "${EFASIM_GPU_ONLY:-}" ] || [ "$EFASIM_GPU_ONLY" = efa-direct ]; then
	case_run 0 1 efa-direct "vmm put_bw writedata --mem cuda-vmm" "$EBIN/efab_put_bw" -p efa -f efa-direct -o writedata --mem cuda-vmm $BW
	case_run 0 1 efa-direct "vmm get_bw --mem cuda-vmm" "$EBIN/efab_get_bw" -p efa -f efa-direct --mem cuda-vmm $BW
	case_run 0 1 efa-direct "vmm put_lat writedata --mem cuda-vmm:host" "$EBIN/efab_put_lat" -p efa -f efa-direct -o writedata --mem cuda-vmm:host $LAT
	case_run 0 1 efa-direct "vmm put_bw writedata --mem cuda-vmm --dmabuf" "$EBIN/efab_put_bw" -p efa -f efa-direct -o writedata --mem cuda-vmm --dmabuf $BW
	case_run 0 1 efa-direct "vmm mr_reg --mem cuda-vmm --dmabuf" "$EBIN/efab_mr_reg" -p efa -f efa-direct --mem cuda-vmm --dmabuf -m 4K:4M:x16 -n 5 --regime fresh
	reg_path_rows efabench-dmabuf
	case_run 0 1 efa-direct "vmm mr_reg --mem cuda-vmm, FI_HMEM_CUDA_USE_DMABUF=0: reg_path" env FI_HMEM_CUDA_USE_DMABUF=0 "$EBIN/efab_mr_reg" -p efa -f efa-direct --mem cuda-vmm -m 4K:64K:x4 -n 3 --regime fresh
	reg_path_rows peermem
	# an allocation without allocFlags.gpuDirectRDMACapable (EFAB_VMM_NO_RDMA_FLAG=1) must be
	# refused: by CUDA's export (cuMemGetHandleForAddressRange, libfabric's warning) where the
	# real driver refuses it there, else by efasim's registration (EFAULT, its log line); with
	# dma-buf off only the peer-memory pin is asked (efasim: EFAULT). The log says which.
	MUST_SAY="cuMemGetHandleForAddressRange\|allocFlags.gpuDirectRDMACapable" \
		case_run 1/77 1 efa-direct "vmm mr_reg --mem cuda-vmm, EFAB_VMM_NO_RDMA_FLAG=1 (refused)" env EFAB_VMM_NO_RDMA_FLAG=1 EFASIM_LOG=1 "$EBIN/efab_mr_reg" -p efa -f efa-direct --mem cuda-vmm -m 64K -n 3 --regime fresh
	grep -h -m2 -E "cuMemGetHandleForAddressRange|gpuDirectRDMACapable|fi_mr_regattr" "$OUTD/$(printf '%03d' $n).log" 2>/dev/null | sed 's/^/    said: /'
	MUST_SAY="allocFlags.gpuDirectRDMACapable" \
		case_run 1/77 1 efa-direct "vmm mr_reg --mem cuda-vmm, EFAB_VMM_NO_RDMA_FLAG=1, FI_HMEM_CUDA_USE_DMABUF=0 (refused: EFAULT)" env EFAB_VMM_NO_RDMA_FLAG=1 EFASIM_LOG=1 FI_HMEM_CUDA_USE_DMABUF=0 "$EBIN/efab_mr_reg" -p efa -f efa-direct --mem cuda-vmm -m 64K -n 3 --regime fresh
	MUST_SAY="cuMemGetHandleForAddressRange\|allocFlags.gpuDirectRDMACapable" \
		case_run 1/77 1 efa-direct "vmm put_lat writedata --mem cuda-vmm, EFAB_VMM_NO_RDMA_FLAG=1 (refused)" env EFAB_VMM_NO_RDMA_FLAG=1 EFASIM_LOG=1 "$EBIN/efab_put_lat" -p efa -f efa-direct -o writedata --mem cuda-vmm $LAT
fi
# where the pieces are missing: the efa fabric has no GDA ops; a driver without CQs in external memory
MUST_SAY=$([ $GEXP = 0 ] && echo "efa-direct") case_run 77 1 efa "gda put_lat on efa (no GDA ops: 77)" "$EBIN/efab_put_lat" -p efa -f efa --mem cuda --initiator gpu $LAT
MUST_SAY=$([ $GEXP = 0 ] && echo "external memory") case_run 77 1 efa-direct "gda put_lat, EFASIM_EXT_CQ=0 (77)" env EFASIM_EXT_CQ=0 "$EBIN/efab_put_lat" $G $LAT
# efab_probe (single process): FI_HMEM and FI_MR_HMEM per fabric, P2P on and off
for p2p in 1 0; do
	[ -n "${EFASIM_GPU_ONLY:-}" ] && break
	case $V:$p2p in 2.[0-3].*:0) echo "SKIP probe p2p=0 (libfabric $V: see above)"; continue ;; esac
	EFASIM_DIR=$OUTD/probe-$p2p EFASIM_P2P=$p2p timeout 60 "$RUN" "$V" "$EBIN/efab_probe" -p efa --json >"$OUTD/probe-p2p$p2p.json" 2>"$OUTD/probe-p2p$p2p.err"
	python3 - "$OUTD/probe-p2p$p2p.json" "$p2p" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); p2p = sys.argv[2] == "1"
seen = {}
for f in d["fabrics"]:
    seen.setdefault(f["fabric"], (f.get("hmem"), f.get("hmem_mr_FI_MR_HMEM"), f.get("gpu_p2p", "?")))
want = "yes" if p2p else "no"
ok = (seen.get("efa-direct", ("?",))[0] == want and seen.get("efa", ("?",))[0] == "yes" and
      all(v[2].startswith(want) for v in seen.values()))
print("%s probe p2p=%d: %s" % ("PASS" if ok else "FAIL", p2p, "; ".join("%s FI_HMEM %s, FI_MR_HMEM %s, gpu_p2p %s" % (k, v[0], v[1], v[2]) for k, v in seen.items())))
sys.exit(0 if ok else 1)
EOF
	if [ $? = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
sk=""
[ $nskip = 0 ] || sk=", $nskip groups skipped"
echo "efasim-gpu $V: $pass pass, $fail fail$sk (logs: $OUTD)"
[ $fail = 0 ]

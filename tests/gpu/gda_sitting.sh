#!/bin/bash
# The GPU-initiated vs CPU-initiated side by side (issue 37), in one sitting on
# a GPU machine, on the SIMULATED EFA device (efasim) under libfabric V (>= 2.3):
# efa-direct with the CPU posting (libfabric calls), efa-direct with a CUDA
# kernel posting (--initiator gpu), and the efa fabric with the CPU posting, in
# alternating rounds: round r runs every case once, in that order, before
# round r+1 starts. Every run has -c (every payload checked) unless
# GDA_SITTING_CHECK=0, and reads the NIC counters (the path column). Put
# latency is compared as writedata on both (the CPU cannot poll GPU memory
# for a write's last byte: efabench times writedata there); putw_lat is the
# kernel's plain write, arrival polled in GPU memory, with no CPU counterpart.
#   tests/gpu/gda_sitting.sh V OUTDIR [ROUNDS]
# Writes OUTDIR/<round>-<case>.csv and .log, OUTDIR/runs.txt (the order the
# runs happened in, with their exit codes and wall times), and
# OUTDIR/summary.txt (tests/gpu/gda_summary.py: GPU / CPU ratios per size,
# the medians over rounds). Every figure is the simulator's: the kernel's
# code and its GPU-side costs (gpu_post_ns) are real, the device's timings
# are efasim's.
set -u
V=${1:?usage: tests/gpu/gda_sitting.sh VERSION OUTDIR [ROUNDS]}
OUTD=${2:?usage: tests/gpu/gda_sitting.sh VERSION OUTDIR [ROUNDS]}
ROUNDS=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${EFASIM_BUILD:-$top/build-efasim}
EBIN=$B/lf-$V/efab/bin
RUN=$top/tests/efasim/run
mkdir -p "$OUTD"
[ -x "$EBIN/efab_put_lat" ] || { echo "gda-sitting: $EBIN not built (tests/efasim/build $V)"; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || { echo "gda-sitting: no GPU here"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export LD_LIBRARY_PATH="${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
TO=${GDA_SITTING_TIMEOUT:-90}
CHK=-c
[ "${GDA_SITTING_CHECK:-1}" = 0 ] && CHK=""
LAT=${GDA_SITTING_LAT:-"-m 8:4M -n 100 -w 10"}
BW=${GDA_SITTING_BW:-"-m 8:4M -n 10 -W 64"}
# the bandwidth cases' op and check: writedata with -c (the CPU path checks
# GPU memory only through remote CQ data); GDA_SITTING_BWOP=write with
# GDA_SITTING_BWCHK=0 where the target's drain kernel cannot run beside the
# initiator's (two processes time-sliced on one GPU without MPS)
BWOP=${GDA_SITTING_BWOP:-writedata}
BWCHK=$CHK
[ "${GDA_SITTING_BWCHK:-1}" = 0 ] && BWCHK=""
ngpu=$(nvidia-smi -L | wc -l)
{
	echo "# gda sitting: libfabric $V on efasim (SIMULATED EFA device), $(date -u +%FT%TZ), $(hostname)"
	echo "# GPUs: $ngpu ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)); ranks: 2, --gpu auto (rank r on GPU r mod $ngpu)"
	echo "# lat: $LAT $CHK; bw: -o $BWOP $BW $BWCHK; rounds: $ROUNDS"
	echo "# MPS: $(pgrep -f nvidia-cuda-mps >/dev/null && echo "on (nvidia-cuda-mps-control -d: both ranks' work in one GPU context, concurrent)" || echo "off (two CUDA contexts on one GPU: the driver time-slices them)")"
} >"$OUTD/runs.txt"
cat "$OUTD/runs.txt"

# name  fabric  bench  args
CASES=(
	"putd_lat-cpu-direct|efa-direct|efab_put_lat|-o writedata $LAT"
	"putd_lat-gpu-direct|efa-direct|efab_put_lat|-o writedata --initiator gpu $LAT"
	"putd_lat-cpu-efa|efa|efab_put_lat|-o writedata $LAT"
	"putw_lat-gpu-direct|efa-direct|efab_put_lat|-o write --initiator gpu $LAT"
	"get_lat-cpu-direct|efa-direct|efab_get_lat|$LAT"
	"get_lat-gpu-direct|efa-direct|efab_get_lat|--initiator gpu $LAT"
	"get_lat-cpu-efa|efa|efab_get_lat|$LAT"
	"put_bw-cpu-direct|efa-direct|efab_put_bw|-o $BWOP $BW|bw"
	"put_bw-gpu1-direct|efa-direct|efab_put_bw|-o $BWOP --initiator gpu --gpu-threads 1 $BW|bw"
	"put_bw-gpu32-direct|efa-direct|efab_put_bw|-o $BWOP --initiator gpu --gpu-threads 32 $BW|bw"
	"put_bw-cpu-efa|efa|efab_put_bw|-o $BWOP $BW|bw"
)
fails=0
for r in $(seq 1 "$ROUNDS"); do
	for c in "${CASES[@]}"; do
		IFS='|' read -r name fab bench args kind <<<"$c"
		# GDA_SITTING_ONLY=WORD: only the cases whose name contains it
		[[ $name == *"${GDA_SITTING_ONLY:-}"* ]] || continue
		chk=$CHK
		[ "${kind:-}" = bw ] && chk=$BWCHK
		base=$OUTD/$r-$name
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086
		EFASIM_DIR=$OUTD/sim-$r-$name timeout -k 5 "$TO" "$RUN" "$V" \
			mpirun -np 2 -x EFASIM_HOST=%r -x EFASIM_DIR -x LD_LIBRARY_PATH -x PATH \
			"$EBIN/$bench" -p efa -f "$fab" --mem cuda $args $chk --csv "$base.csv" >"$base.log" 2>&1
		rc=$?
		t1=$(date +%s.%N)
		line=$(printf '%s round %d %-22s rc %d %6.1f s  %s -p efa -f %s --mem cuda %s %s' \
			"$(date -u +%T)" "$r" "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$bench" "$fab" "$args" "$chk")
		echo "$line" | tee -a "$OUTD/runs.txt"
		[ $rc = 0 ] || { fails=$((fails + 1)); tail -n 5 "$base.log" | sed 's/^/    | /'; }
	done
done
python3 "$here/gda_summary.py" "$OUTD" | tee "$OUTD/summary.txt"
echo "gda-sitting: $fails runs failed"
[ $fails = 0 ]

#!/bin/bash
# A private CUDA MPS daemon for tests that need two processes' kernels to run
# at once on one GPU (tests/gpu/efasim_matrix.sh's GDA lap pair):
#   tests/gpu/mps.sh start        prints the daemon's folder D (exit 0), or one
#                                 line saying why not (exit 1); clients use it with
#                                 CUDA_MPS_PIPE_DIRECTORY=D/pipe CUDA_MPS_LOG_DIRECTORY=D/log
#   tests/gpu/mps.sh stop D       quits that daemon (echo quit to its control
#                                 pipe), waits for it and its server to leave (at
#                                 most MPS_STOP_S, 20 s), kills what is left
#                                 (then exit 1), removes D
# Its own pipe and log folders: processes without those variables are not its
# clients, and a daemon the user runs (default /tmp/nvidia-mps) is not touched.
# Its processes are found by that variable in /proc/PID/environ, not by name.
# NVIDIA_MPS_CONTROL names the control program (default nvidia-cuda-mps-control).
set -u
ctl=${NVIDIA_MPS_CONTROL:-nvidia-cuda-mps-control}
# the processes started with CUDA_MPS_PIPE_DIRECTORY=$1/pipe (the daemon, its server)
pids_of() {
	local p
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = $$ ] && continue
		{ tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF "CUDA_MPS_PIPE_DIRECTORY=$1/pipe" && echo "${p#/proc/}"
	done
}
kill_all() { local p; for p in $(pids_of "$1"); do kill -9 "$p" 2>/dev/null; done; }
case ${1:-} in
start)
	command -v "$ctl" >/dev/null 2>&1 || { echo "no $ctl (CUDA MPS) in PATH"; exit 1; }
	d=$(mktemp -d "${TMPDIR:-/tmp}/efab-mps.XXXXXX") || exit 1
	mkdir -p "$d/pipe" "$d/log"
	if ! CUDA_MPS_PIPE_DIRECTORY=$d/pipe CUDA_MPS_LOG_DIRECTORY=$d/log timeout 20 "$ctl" -d >"$d/start.out" 2>&1 </dev/null; then
		echo "$ctl -d failed: $(head -c 200 "$d/start.out" | tr '\n' ' ')"
		kill_all "$d"
		rm -rf "$d"
		exit 1
	fi
	# up once its control pipe exists
	for _ in $(seq 50); do
		[ -e "$d/pipe/control" ] && { echo "$d"; exit 0; }
		sleep 0.1
	done
	echo "$ctl -d made no control pipe in $d/pipe within 5 s"
	kill_all "$d"
	rm -rf "$d"
	exit 1
	;;
stop)
	d=${2:?usage: tests/gpu/mps.sh stop DIR}
	case $d in */efab-mps.*) ;; *) echo "mps.sh: $d is not a folder mps.sh start made"; exit 2 ;; esac
	[ -d "$d" ] || { echo "mps.sh: no $d"; exit 2; }
	rc=0
	[ -e "$d/pipe/control" ] && echo quit | CUDA_MPS_PIPE_DIRECTORY=$d/pipe timeout 20 "$ctl" >/dev/null 2>&1
	end=$(($(date +%s) + ${MPS_STOP_S:-20}))
	while [ -n "$(pids_of "$d")" ]; do
		if [ "$(date +%s)" -ge "$end" ]; then
			echo "mps.sh: the daemon of $d did not leave within ${MPS_STOP_S:-20} s of quit: killed"
			kill_all "$d"
			rc=1
			break
		fi
		sleep 0.2
	done
	rm -rf "$d"
	exit $rc
	;;
*)
	echo "usage: tests/gpu/mps.sh start | stop DIR" >&2
	exit 2
	;;
esac

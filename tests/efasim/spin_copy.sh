#!/bin/bash
# Runs tests/efasim/spin_copy (built by tests/efasim/build beside
# gpu_selftest where cuda.h is found) for every case, plain and with the CUDA
# knobs that change how streams reach the GPU, on a GPU machine:
#   tests/efasim/spin_copy.sh SPIN_COPY_BINARY [OUTFILE]
# One line per run (spin_copy's own), into OUTFILE too when given; each run
# is bounded by the kernel's own limit (3 s) and by timeout 30. A diagnostic
# for issue 47's blocking on-stream hang (docs/nvshmem.md): which of the
# copies efasim's simulated NIC makes can finish while a kernel spins
# waiting for it. Exit 0 when every run ended (whatever its verdict), 1
# when one errored or hung, 77 without a GPU.
set -u
bin=${1:?usage: tests/efasim/spin_copy.sh SPIN_COPY_BINARY [OUTFILE]}
out=${2:-/dev/null}
rc=0
for knobs in "" "CUDA_DEVICE_MAX_CONNECTIONS=1" "CUDA_DEVICE_MAX_CONNECTIONS=32" "CUDA_MODULE_LOADING=EAGER"; do
	for c in alone queued cold h2d streams onecpu prio query ipcproc twoproc; do
		# shellcheck disable=SC2086
		line=$(env $knobs timeout -k 5 30 "$bin" "$c" 3 2>&1)
		r=$?
		case $r in
		0 | 3) ;;
		77) echo "$line" | tee -a "$out"; exit 77 ;;
		124 | 137) line="$c: HUNG past 30 s (${knobs:-no knobs}): $line"; rc=1 ;;
		*) line="$c: exit $r (${knobs:-no knobs}): $line"; rc=1 ;;
		esac
		echo "$line" | tee -a "$out"
	done
done
exit $rc

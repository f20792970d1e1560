#!/bin/bash
# Every thread's stack of the processes of one run, while it hangs:
#   tests/nvshmem/stacks.sh EFASIM_DIR [OUTFILE]
# The processes are those whose environment has EFASIM_DIR=<that dir> (each
# run of tests/nvshmem/sitting.sh has its own) and that are not a shell,
# mpirun or orted. For each: its threads' names, states, kernel wait channels
# and kernel stacks (/proc; root), then the user stacks of all threads from a
# debugger attached in batch mode (gdb, else cuda-gdb: the H200 machine has
# only cuda-gdb), bounded by a timeout so that a debugger that cannot attach
# never holds the run. Writes to OUTFILE (default stdout).
set -u
D=${1:?usage: tests/nvshmem/stacks.sh EFASIM_DIR [OUTFILE]}
[ $# -ge 2 ] && exec >"$2" 2>&1
DBG=$(command -v gdb || command -v cuda-gdb || true)
echo "stacks of the processes with EFASIM_DIR=$D at $(date +%T) (debugger: ${DBG:-none})"
for p in /proc/[0-9]*; do
	pid=${p#/proc/}
	{ tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qx "EFASIM_DIR=$D" || continue
	comm=$(cat "$p/comm" 2>/dev/null) || continue
	case $comm in bash | sh | dash | mpirun | orted | prterun | prted | timeout | unshare | stacks.sh) continue ;; esac
	echo
	echo "=== pid $pid ($comm): $(tr '\0' ' ' <"$p/cmdline" | cut -c1-200)"
	for t in "$p"/task/*; do
		tid=${t##*/}
		st=$(awk '{print $3}' "$t/stat" 2>/dev/null)
		echo "--- tid $tid $(cat "$t/comm" 2>/dev/null) state $st wchan $(cat "$t/wchan" 2>/dev/null) cpu $(awk '{print $39}' "$t/stat" 2>/dev/null)"
		sed 's/^/    k: /' "$t/stack" 2>/dev/null | head -12
	done
	if [ -n "$DBG" ]; then
		echo "--- user stacks ($DBG)"
		timeout -k 5 "${EFAB_STACKS_TIMEOUT:-60}" "$DBG" -q -batch -nx -p "$pid" -ex "set pagination off" \
			-ex "info threads" -ex "thread apply all bt 30" </dev/null 2>&1 |
			grep -v "^\[New LWP\|^warning: \(Unable\|Could not\)" | head -600
		echo "--- debugger exit $?"
	fi
done

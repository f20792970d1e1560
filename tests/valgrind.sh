#!/usr/bin/env bash
# valgrind memcheck of one benchmark per family on shm (make valgrind). Fails
# when a "definitely lost" block was allocated from our code (lib/, bench/);
# third-party leaks (Open MPI, libfabric) are counted and shown, not judged.
set -u
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin
export FI_TCP_IFACE=lo OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
VG="valgrind --leak-check=full --show-leak-kinds=definite --num-callers=30 --log-file=$out/%p.vg"
fail=0
run() { # name cmd...
	local name=$1; shift
	rm -f "$out"/*.vg
	timeout 600 "$@" >"$out/$name.out" 2>&1
	local rc=$? ours=0 theirs=0 f
	for f in "$out"/*.vg; do
		[ -f "$f" ] || continue
		# each "definitely lost" record up to the next blank line
		# ours: walking from the allocation outwards, one of our functions comes
		# before any library entry point (MPI_Init, fi_*, hwloc_*, ...)
		ours=$((ours + $(awk '
			/definitely lost in loss record/ {rec=1; lib=0; hit=0; next}
			rec && /^==[0-9]+== +(at|by) 0x[0-9A-F]+: / {
				f = $0; sub(/^==[0-9]+== +(at|by) 0x[0-9A-F]+: /, "", f); sub(/ .*/, "", f)
				if (f ~ /^(P?MPI_|ompi_|opal_|orte_|mca_|fi_|ofi_|hwloc_|_dl_|dlopen|__libc_start)/) lib = 1
				else if (!lib && f ~ /^(efab_|main$)/) hit = 1
			}
			rec && /^==[0-9]+== $/ {if (hit) n++; rec=0}
			END {print n+0}' "$f")))
		theirs=$((theirs + $(grep -c "definitely lost in loss record" "$f")))
		grep -q "ERROR SUMMARY: [1-9]" "$f" && grep -B2 -A12 "Invalid \(read\|write\)\|uninitialised" "$f" | grep -E "\((atomic_model|cuda|config|fabric|log|mem|opts|result|stats|topo|harness|context|rma_lat|rma_bw|atomic|probe|mr_reg|sweep)\.c:" | head -3
	done
	theirs=$((theirs - ours))
	printf '%-12s exit %d, definite leaks from our code: %d, from libraries: %d\n' "$name" $rc $ours $theirs
	[ $rc = 0 ] && [ $ours = 0 ] || fail=1
}
run put_lat mpirun -np 2 $VG "$BIN/efab_put_lat" -p shm -m 8:4K:x8 -n 20 -w 2 -c
run put_bw mpirun -np 2 $VG "$BIN/efab_put_bw" -p shm -m 4K -n 5 -c
run atomic_lat mpirun -np 2 $VG "$BIN/efab_atomic_lat" -p shm --aop cswap -n 20 -c
run mr_reg $VG "$BIN/efab_mr_reg" -p shm -m 4K:64K:x4 -n 5
run probe $VG "$BIN/efab_probe" -p shm
run sweep $VG "$BIN/efab_sweep" --dry-run configs/local.conf
rm -rf "$out"
exit $fail

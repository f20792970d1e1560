#!/bin/sh
# Issue 26 item 5: shm put_lat at 64 KiB and 1 MiB against tcp, with and without -c, and shm
# without CMA (FI_SHM_DISABLE_CMA=1: its SAR protocol through bounce buffers), 5 alternating reps.
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FI_TCP_IFACE=lo OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
run() { # LABEL NAME=VALUE ARGS...
	lab=$1 e=$2; shift 2
	out=$(timeout 120 env "$e" mpirun -np 2 --oversubscribe -x FI_SHM_DISABLE_CMA build/bin/efab_put_lat -m 64K:1M:x16 -n 300 "$@" 2>&1 |
		awk '/^(64K|1M) /{printf "%s p50 %s p99 %s batch %s; ", $1, $5, $7, $13}')
	echo "$lab: $out"
}
for rep in 1 2 3 4 5; do
	echo "== rep $rep $(uptime | sed 's/.*load/load/')"
	run "shm      " FI_SHM_DISABLE_CMA=0 -p shm
	run "shm -c   " FI_SHM_DISABLE_CMA=0 -p shm -c
	run "shm noCMA" FI_SHM_DISABLE_CMA=1 -p shm
	run "tcp      " FI_SHM_DISABLE_CMA=0 -p tcp
	run "tcp -c   " FI_SHM_DISABLE_CMA=0 -p tcp -c
done

#!/bin/bash
# NVSHMEM's libfabric transport on the SIMULATED EFA device, on a GPU machine
# (the H200 device machine), one NVSHMEM version per call:
#   tests/nvshmem/sitting.sh NVSHMEM_HOME LIBFABRIC_VERSION OUTDIR [PART...]
# NVSHMEM_HOME: an NVSHMEM install or unpacked wheel (include/, lib/ with
# libnvshmem_host.so.3, nvshmem_transport_libfabric.so.N, nvshmem_bootstrap_uid.so.3).
# Builds efasim + libfabric V with CUDA (tests/efasim/build V) and efabench
# against them with NVSHMEM_HOME, then runs two PEs, each its own simulated
# host seen in /sys/class/infiniband (tests/nvshmem/pe: root), on the one GPU:
#   smoke    efab_shmem_reg 4 KiB, NVSHMEM_DEBUG=INFO: does the transport start,
#            which fabric, which mr_mode (the interposer's columns)
#   vidmem   the same with the default GPU heap (NVSHMEM_HEAP_KIND=VIDMEM)
#   reg      efab_shmem_reg 4 KiB .. 4 GiB (x16), transport none (one PE) and
#            libfabric (two PEs) alternating (REPS, default 2), SYSMEM heap
#   reglf    the libfabric half of reg alone
#   nics     4 simulated NICs per host, NVSHMEM_LIBFABRIC_MAX_NIC_PER_PE 1, 2, 4
#   fabrics  transport none (1 PE), libfabric on the fabric NVSHMEM picks, and
#            libfabric on the efa fabric (EFAB_FITRACE_FABRIC=efa: the
#            interposer hides efa-direct), alternating (REPS), cuda and host
#   seed     efab_shmem_seed: nvshmem_putmem and nvshmemx_putmem_nbi_on_stream
#            from cuMemAlloc memory, unregistered and registered, one run each
#   seedlocal the seed's runs with both PEs on one simulated host
#            (tests/nvshmem/pe EFAB_PE_SAME_HOST=1, NVSHMEM_DISABLE_P2P=1 so
#            NVSHMEM takes its remote transport to the peer on its node): on
#            the efa fabric libfabric's shm provider carries them (SEEDLOCAL_FABRICS,
#            default "efa"); the heap NVSHMEM_HEAP_KIND as for the rest; then the
#            registered putmem with FI_EFA_ENABLE_SHM_TRANSFER=0, and per run
#            the simulated NIC's work requests (EFASIM_QP_STATS): which path
#            carried the payload
#   put      efab_shmem_lat / efab_shmem_bw (NVSHMEM's own put and get): on the
#            fabric NVSHMEM picks (default: efa-direct) and on efa (forced),
#            --initiator host and stream (PUT_INITIATORS; the kernel
#            initiators: PUT_INITIATORS="host stream thread warp block", built
#            where NVSHMEM_HOME has libnvshmem_device.a and nvcc is found:
#            the part says whether they were), -o put and get, 8 B .. 16 MiB, -c,
#            latency in both forms (PUT_LAT_FORMS "blocking nbi": the blocking call,
#            and --nbi; the blocking on-stream form only with PUT_STREAM_BLOCKING=1),
#            a registered cuMemAlloc buffer; then, between the same two
#            simulated hosts, the raw fabric's efab_put_lat, efab_get_lat,
#            efab_put_bw, efab_get_bw (--mem cuda:<the heap's kind>, -c,
#            --footprint window) on efa-direct and efa. One CSV per executable
#            and fabric (put_<fabric>_<bench>.csv), a table of p50 / MB/s per
#            size in put_table.txt; two runs with EFAB_FAULT_CORRUPT=5 that must
#            exit 1 (PUT_CORRUPT=0 skips them). Then -o put-signal (stream and
#            thread initiators, -c, the signal fault; PUT_SIGNAL=0 skips it) and
#            its raw partner efab_put_bw -o writedata --signal-send. PUT_PLAIN=0
#            skips NVSHMEM's put/get rows (put-signal and the raw rows only:
#            the H200 sitting of 2026-12-07 ran it so). Not in the default parts
#   blockdiag the blocking on-stream put and get (efab_shmem_lat --initiator
#            stream, 8 B, -c) as they hung, then with CUDA_DEVICE_MAX_CONNECTIONS=32,
#            CUDA_MODULE_LOADING=EAGER, NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA=1 +
#            NVSHMEM_BYPASS_FLUSH=1, mpirun --bind-to none, efasim's copies waited for
#            by polling (EFASIM_CUDA_WAIT=query, logged) (BLOCK_VARIANTS); stacks
#            of a run still going at 20 s. Not in the default parts (never run)
#   knobs    efab_shmem_bw put, host and stream, with NVSHMEM's batching knobs
#            (KNOB_SETTINGS, default: NVSHMEM's defaults; --nv-batch-rma off;
#            --nv-batch-ops 1) alternating, REPS rounds; knobs_table.txt
#            (tests/nvshmem/knob_table.py). Not in the default parts (never run)
# (default: all but put; SEED_FABRICS "default efa", SEED_APIS, SEED_REGS '"" --register' and
# EFAB_SEED_TIMEOUT (45 s) narrow the seed part; EFAB_NV_STACKS=S dumps every thread's stack
# of a run still going after S s into NAME.stacks: tests/nvshmem/stacks.sh). One line per run in OUTDIR/summary.txt: name, exit status,
# what it says; logs and CSVs beside it. Every NIC figure is the simulator's;
# NVSHMEM's and libfabric's code and the CPU it runs on are real.
set -u
NV=${1:?usage: tests/nvshmem/sitting.sh NVSHMEM_HOME LIBFABRIC_VERSION OUTDIR [PART...]}
V=${2:?libfabric version}
OUTD=${3:?outdir}
shift 3
PARTS=${*:-smoke vidmem seed reg nics fabrics}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${EFASIM_BUILD:-$top/build-efasim}
mkdir -p "$OUTD"
SUM=$OUTD/summary.txt
say() { echo "$*" | tee -a "$SUM"; }
[ -f "$NV/include/nvshmem.h" ] || { say "no NVSHMEM at $NV"; exit 77; }
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || { say "no GPU here"; exit 77; }
[ "$(id -u)" = 0 ] || { say "needs root (tests/nvshmem/pe: mount and UTS namespaces)"; exit 77; }
t0=$(date +%s)
# efabench against libfabric V and this NVSHMEM, in a build folder of its own
# per NVSHMEM (its headers differ; make's dependencies would not see it)
NVTAG=$(basename "$(cd "$NV" && pwd)")
EB=$B/lf-$V/efab-$NVTAG
tests_build() {
	(cd "$top" && tests/efasim/build "$V" sim && tests/efasim/build "$V" libfabric &&
		make -s BUILD="$EB" LIBFABRIC_HOME="$B/lf-$V/prefix" NVSHMEM_HOME="$NV" \
			LDFLAGS="-Wl,-rpath-link,$B/rdma-core-64.0/prefix/lib" all) >"$OUTD/build.log" 2>&1
}
tests_build || { say "build failed (build.log)"; tail -20 "$OUTD/build.log"; exit 1; }
EBIN=$EB/bin
[ -x "$EBIN/efab_shmem_reg" ] || { say "efab_shmem_reg not built against $NV (build.log)"; exit 1; }
say "built in $(($(date +%s) - t0)) s: libfabric $V ($(grep -o -- '--with-cuda=[^ ]*' "$B/lf-$V/.config" || echo 'no CUDA')), NVSHMEM $NV"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# each PE has its own /dev/shm (tests/nvshmem/pe): MPI between them over tcp
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export LD_LIBRARY_PATH="${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_LIBFABRIC_PROVIDER=efa FI_PROVIDER=efa
export NVSHMEM_HEAP_KIND=${NVSHMEM_HEAP_KIND:-SYSMEM}
# NVSHMEM 3.4.5's transport gives fi_getinfo@FABRIC_1.3 an all-zero hints->nic,
# which libfabric >= 1.20 dereferences (bench/tools/fitrace.c): the
# interposer clears it; later versions never call that entry
export EFAB_FITRACE_CLEAR_NIC=${EFAB_FITRACE_CLEAR_NIC:-1}
TO=${EFAB_NV_TIMEOUT:-240}
# 4 KiB .. 4 GiB: one 2 GiB chunk and beyond (nvshmemx_buffer_register splits at 2 GiB)
REGSZ=${REGSZ:--m 4K:4G:x16 -n 50 --max-total 8G}
FWD="-x EFASIM_DIR -x EFASIM_NICS -x EFASIM_P2P -x LD_LIBRARY_PATH -x PATH -x NVSHMEM_REMOTE_TRANSPORT -x NVSHMEM_LIBFABRIC_PROVIDER -x NVSHMEM_LIBFABRIC_MAX_NIC_PER_PE -x NVSHMEM_HEAP_KIND -x NVSHMEM_DEBUG -x NVSHMEM_DEBUG_SUBSYS -x EFASIM_QP_STATS -x NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME -x FI_PROVIDER -x FI_LOG_LEVEL -x EFASIM_LOG -x EFAB_FITRACE_CLEAR_NIC -x EFAB_FITRACE_FABRIC"
# run NAME CMD...: two PEs under mpirun, each its own simulated host
run() {
	local name=$1 rc s
	shift
	export EFASIM_DIR=${TMPDIR:-/tmp}/efab-nvsim-$name # the simulator's files stay out of OUTDIR
	rm -rf "$EFASIM_DIR"
	local t=$(date +%s)
	# shellcheck disable=SC2086
	# EFAB_NV_STACKS=S: a run still going after S s gets every thread's stack
	# dumped (tests/nvshmem/stacks.sh) into NAME.stacks, once
	local watch=
	if [ -n "${EFAB_NV_STACKS:-}" ]; then
		(sleep "$EFAB_NV_STACKS" && "$top/tests/nvshmem/stacks.sh" "$EFASIM_DIR" "$OUTD/$name.stacks") \
			</dev/null >/dev/null 2>&1 &
		watch=$!
	fi
	timeout -k 5 "$TO" "$top/tests/efasim/run" "$V" mpirun -np "${NP:-2}" $FWD "$top/tests/nvshmem/pe" "$@" \
		>"$OUTD/$name.log" 2>&1 </dev/null
	rc=$?
	if [ -n "$watch" ]; then # the dump, if it started, finishes; a sleeping watcher goes
		if [ -e "$OUTD/$name.stacks" ]; then wait "$watch"; else pkill -P "$watch" sleep; kill "$watch" 2>/dev/null; wait "$watch" 2>/dev/null; fi
	fi
	# the outcome line: the seed's own, else the provider's or NVSHMEM's first
	# error (libfabric's lnx warning on every start is not one; nor an
	# efabench table's header block and column titles), and for a case killed
	# by the limit the seed's last stage
	s=$(grep -h -m1 '^seed: ' "$OUTD/$name.log" ||
		grep -v 'lnx_init_env' "$OUTD/$name.log" | grep -v '^# \|^ *size ' |
		grep -h -m1 -i 'requires FI_MR_LOCAL\|error\|fail\|signal\|timeout' || true)
	[ "$rc" != 124 ] || s="hang: killed after $TO s, last stage: $(grep -h '^seed-stage: ' "$OUTD/$name.log" | tail -1 | cut -c13-)${s:+; $s}"
	say "$name: exit $rc in $(($(date +%s) - t)) s${s:+: $s}"
	rm -rf "$EFASIM_DIR"
	return 0
}
# The seed's runs: PREFIX_<fabric>_<api>[_registered] for each fabric given,
# SEED_APIS x SEED_REGS (the environment of the call reaches every run)
seed_matrix() { # PREFIX FABRIC...
	local prefix=$1 fab ff api r
	shift
	for fab in "$@"; do
		ff=; [ "$fab" = default ] || ff=$fab
		for api in ${SEED_APIS:-putmem putmem_nbi_on_stream}; do
			for r in ${SEED_REGS:-"" --register}; do
				EFAB_FITRACE_FABRIC=$ff NVSHMEM_REMOTE_TRANSPORT=libfabric FI_LOG_LEVEL=warn \
					run "${prefix}_${fab}_${api}${r:+_registered}" "$EBIN/efab_shmem_seed" --api $api $r -m 65536
			done
		done
	done
}
for part in $PARTS; do
	case $part in
	smoke)
		NVSHMEM_REMOTE_TRANSPORT=libfabric NVSHMEM_DEBUG=INFO FI_LOG_LEVEL=info \
			run smoke "$EBIN/efab_shmem_reg" -m 4K -n 20 --csv "$OUTD/smoke.csv"
		;;
	vidmem)
		NVSHMEM_REMOTE_TRANSPORT=libfabric NVSHMEM_DEBUG=INFO NVSHMEM_HEAP_KIND=VIDMEM FI_LOG_LEVEL=warn EFASIM_LOG=1 \
			run smoke_vidmem "$EBIN/efab_shmem_reg" -m 4K -n 20 --csv "$OUTD/smoke_vidmem.csv"
		;;
	reg)
		# transport none: one PE (two PEs on two hosts without a remote
		# transport cannot start: "nvshmem common init failed")
		for rep in $(seq "${REPS:-2}"); do
			NP=1 NVSHMEM_REMOTE_TRANSPORT=none run "reg_none_$rep" "$EBIN/efab_shmem_reg" $REGSZ \
				--csv "$OUTD/reg_none.csv"
			NVSHMEM_REMOTE_TRANSPORT=libfabric run "reg_libfabric_$rep" "$EBIN/efab_shmem_reg" $REGSZ \
				--csv "$OUTD/reg_libfabric.csv"
		done
		;;
	fabrics)
		FABSZ=${FABSZ:--m 4K:1G:x16 -n 20}
		for rep in $(seq "${REPS:-2}"); do
			NP=1 NVSHMEM_REMOTE_TRANSPORT=none run "fab_none_$rep" "$EBIN/efab_shmem_reg" $FABSZ \
				--csv "$OUTD/fab_none.csv"
			NVSHMEM_REMOTE_TRANSPORT=libfabric run "fab_default_$rep" "$EBIN/efab_shmem_reg" $FABSZ \
				--csv "$OUTD/fab_default.csv"
			EFAB_FITRACE_FABRIC=efa NVSHMEM_REMOTE_TRANSPORT=libfabric run "fab_efa_$rep" \
				"$EBIN/efab_shmem_reg" $FABSZ --csv "$OUTD/fab_efa.csv"
		done
		;;
	reglf) # the libfabric half of reg alone
		NVSHMEM_REMOTE_TRANSPORT=libfabric run reg_libfabric_1 "$EBIN/efab_shmem_reg" $REGSZ --csv "$OUTD/reg_libfabric.csv"
		;;
	nics)
		for k in 1 2 4; do
			EFASIM_NICS=4 NVSHMEM_REMOTE_TRANSPORT=libfabric NVSHMEM_LIBFABRIC_MAX_NIC_PER_PE=$k \
				run "nics_$k" "$EBIN/efab_shmem_reg" -m 4K:16M:x64 -n 30 --csv "$OUTD/nics.csv"
		done
		;;
	seed)
		TO=${EFAB_SEED_TIMEOUT:-45} # a put that hangs is an outcome too
		# SEED_FABRICS: "default" (the fabric NVSHMEM picks) and "efa" (the
		# interposer hides efa-direct: EFAB_FITRACE_FABRIC=efa)
		seed_matrix seed ${SEED_FABRICS:-default efa}
		TO=${EFAB_NV_TIMEOUT:-240}
		;;
	seedlocal)
		TO=${EFAB_SEED_TIMEOUT:-45}
		EFAB_PE_SAME_HOST=1 NVSHMEM_DISABLE_P2P=1 FWD="$FWD -x EFAB_PE_SAME_HOST -x NVSHMEM_DISABLE_P2P" \
			EFASIM_QP_STATS=1 seed_matrix seedlocal ${SEEDLOCAL_FABRICS:-efa}
		# which path carried it: the same put with libfabric's shm off
		# (FI_EFA_ENABLE_SHM_TRANSFER=0); each log's efasim qp lines (EFASIM_QP_STATS)
		# count the work requests the simulated NIC saw, so the two runs' counts differ
		# by the payload's WRs where shm carried it
		EFAB_PE_SAME_HOST=1 NVSHMEM_DISABLE_P2P=1 FI_EFA_ENABLE_SHM_TRANSFER=0 \
			FWD="$FWD -x EFAB_PE_SAME_HOST -x NVSHMEM_DISABLE_P2P -x FI_EFA_ENABLE_SHM_TRANSFER" \
			EFASIM_QP_STATS=1 EFAB_FITRACE_FABRIC=efa NVSHMEM_REMOTE_TRANSPORT=libfabric FI_LOG_LEVEL=warn \
			run "seedlocal_efa_putmem_registered_noshm" "$EBIN/efab_shmem_seed" --api putmem --register -m 65536
		for f in "$OUTD"/seedlocal_*.log; do
			say "$(basename "$f" .log): simulated NIC work requests $(grep -o 'verbs [0-9]* WRs' "$f" | awk '{ n += $2 } END { print n + 0 }'), direct WQEs $(grep -o 'direct [0-9]* WQEs' "$f" | awk '{ n += $2 } END { print n + 0 }')"
		done
		TO=${EFAB_NV_TIMEOUT:-240}
		;;
	put)
		# PUT_FABRICS: "default" (the fabric NVSHMEM picks; efa-direct with 3.5+)
		# and "efa" (forced by the interposer); the raw rows run on the fabric
		# of the same name (default: efa-direct)
		TO=${EFAB_PUT_TIMEOUT:-150}
		PUTSZ=${PUTSZ:--m 8:16M}
		# latency rows with -c (the check is outside each iteration's time);
		# bandwidth rows without it (a checked window adds two
		# nvshmem_barrier_all and a copy to the loop's time), each bandwidth
		# benchmark then checked at every 8th size (-c, put_<fabric>_checked_*.csv)
		PLAT="$PUTSZ -n ${PUT_LAT_N:-50} -w 5 -c"
		PBW="$PUTSZ -n ${PUT_BW_N:-5} -w 1 -W ${PUT_W:-8}"
		PBWC="${PUTSZ_CHECK:--m 8:16M:x8} -n 2 -w 1 -W ${PUT_W:-8} -c"
		hk=host; [ "$NVSHMEM_HEAP_KIND" = SYSMEM ] || hk=cuda
		# the kernel initiators (--initiator thread|warp|block): in the
		# executables only where make found nvcc and $NV/lib/libnvshmem_device.a
		case " ${PUT_INITIATORS:-host stream} " in *" thread "* | *" warp "* | *" block "*)
			if nm "$EBIN/efab_shmem_lat" 2>/dev/null | grep -q " T .*nvshmemi_init_thread"; then
				say "put: kernel initiators built (nvcc -rdc=true, device-linked with $NV/lib/libnvshmem_device.a)"
			else
				say "put: kernel initiators NOT built (no nvcc or no $NV/lib/libnvshmem_device.a): their runs exit 77"
			fi ;;
		esac
		for fab in ${PUT_FABRICS:-default efa}; do
			ff=; [ "$fab" = default ] || ff=$fab
			lf=$fab; [ "$fab" = default ] && lf=efa-direct
			modes=${PUT_MODES:-lat bw}; [ "${PUT_PLAIN:-1}" = 1 ] || modes=
			for mode in $modes; do
				for ini in ${PUT_INITIATORS:-host stream}; do
					for op in ${PUT_OPS:-put get}; do
						opts=$PLAT; [ "$mode" = bw ] && opts=$PBW
						# latency: each form (PUT_LAT_FORMS), the blocking call and --nbi (the
						# _nbi form + the quiet); the blocking on-stream form never completed on
						# efasim (part blockdiag): run only with PUT_STREAM_BLOCKING=1
						forms=nbi; [ "$mode" = lat ] && forms=${PUT_LAT_FORMS:-blocking nbi}
						for form in $forms; do
						fo=; tag=; [ "$mode" = lat ] && [ "$form" = nbi ] && fo=--nbi && tag=_nbi
						if [ "$mode" = lat ] && [ "$form" = blocking ] && [ "$ini" = stream ] &&
							[ "${PUT_STREAM_BLOCKING:-0}" != 1 ]; then
							say "put_${fab}_shmem_lat_stream_${op}: not run (the blocking on-stream form hangs on efasim: part blockdiag; PUT_STREAM_BLOCKING=1 runs it)"
							continue
						fi
						# the watchdog: -t PUT_T (default 20 s) without a returned operation ends the run
						# shellcheck disable=SC2086
						EFAB_FITRACE_FABRIC=$ff NVSHMEM_REMOTE_TRANSPORT=libfabric FI_LOG_LEVEL=warn \
							run "put_${fab}_shmem_${mode}_${ini}_${op}$tag" "$EBIN/efab_shmem_$mode" \
							-o $op --initiator $ini --src cuda --register $opts $fo -t ${PUT_T:-20} \
							--csv "$OUTD/put_${fab}_shmem_${mode}.csv"
						done
						[ "$mode" = bw ] || continue
						# shellcheck disable=SC2086
						EFAB_FITRACE_FABRIC=$ff NVSHMEM_REMOTE_TRANSPORT=libfabric FI_LOG_LEVEL=warn \
							run "put_${fab}_checked_bw_${ini}_${op}" "$EBIN/efab_shmem_bw" \
							-o $op --initiator $ini --src cuda --register $PBWC -t ${PUT_T:-20} \
							--csv "$OUTD/put_${fab}_checked_shmem_bw.csv"
					done
				done
			done
			# -c must be able to fail: EFAB_FAULT_CORRUPT=5 damages every 5th
			# checked message (PE 1's copy of a put, PE 0's of a get): exit 1,
			# errors > 0 expected (once, on the first fabric)
			if [ "${PUT_CORRUPT:-1}" = 1 ] && [ "$fab" = "$(echo ${PUT_FABRICS:-default efa} | cut -d' ' -f1)" ]; then
				for op in put get; do
					EFAB_FAULT_CORRUPT=5 FWD="$FWD -x EFAB_FAULT_CORRUPT" EFAB_FITRACE_FABRIC=$ff \
						NVSHMEM_REMOTE_TRANSPORT=libfabric FI_LOG_LEVEL=warn \
						run "put_${fab}_corrupt_${op}_expect_exit1" "$EBIN/efab_shmem_lat" -o $op \
						--initiator host --src cuda --register -m 4K:64K:x4 -n 20 -w 2 -c
				done
			fi
			# -o put-signal (issue 62 item 3): the stream (--nbi: the blocking
			# on-stream form hangs on efasim) and kernel initiators, checked: PE 1 waits
			# for the signal word's count, then checks the payload; EFAB_FAULT_SIGNAL=4
			# makes every 4th put-signal add 2: -c must count it (exit 1 expected)
			if [ "${PUT_SIGNAL:-1}" = 1 ]; then
				for ini in stream ${PUT_SIGNAL_KERNEL:-thread}; do
					for mode in lat bw; do
						fo=; [ "$ini" = stream ] && [ "$mode" = lat ] && fo=--nbi
						# shellcheck disable=SC2086
						EFAB_FITRACE_FABRIC=$ff NVSHMEM_REMOTE_TRANSPORT=libfabric FI_LOG_LEVEL=warn \
							run "put_${fab}_signal_${mode}_${ini}" "$EBIN/efab_shmem_$mode" -o put-signal \
							--initiator $ini $fo --src cuda --register -m 8:64K:x8 -n 20 -w 2 -c \
							-t ${PUT_T:-20} --csv "$OUTD/put_${fab}_signal_shmem_${mode}.csv"
					done
				done
				EFAB_FAULT_SIGNAL=4 FWD="$FWD -x EFAB_FAULT_SIGNAL" EFAB_FITRACE_FABRIC=$ff \
					NVSHMEM_REMOTE_TRANSPORT=libfabric FI_LOG_LEVEL=warn \
					run "put_${fab}_signal_fault_expect_exit1" "$EBIN/efab_shmem_lat" -o put-signal \
					--initiator stream --nbi --src cuda --register -m 4K -n 20 -w 2 -c -t ${PUT_T:-20}
			fi
			[ "${PUT_RAW:-1}" = 1 ] || continue
			# the raw fabric: latency -c; bandwidth unchecked as NVSHMEM's (efab_put_bw
			# refuses -c for a write from GPU memory: its end flag would land there),
			# efab_get_bw checked at the same sizes as NVSHMEM's checked runs
			for b in put_lat get_lat put_bw get_bw; do
				opts=$PLAT; case $b in *_bw) opts="$PBW --footprint window" ;; esac
				# shellcheck disable=SC2086
				run "put_${fab}_raw_$b" "$EBIN/efab_$b" -p efa -f "$lf" --mem "cuda:$hk" $opts \
					--csv "$OUTD/put_${fab}_$b.csv"
			done
			# the put + quiet latency's like-for-like partner: one write and its
			# completion per window (put_table.py: window_us_p50), at the latency sizes
			# and counts, unchecked (efab_put_bw refuses -c from GPU memory, above)
			# shellcheck disable=SC2086
			run "put_${fab}_raw_put_bw_w1" "$EBIN/efab_put_bw" -p efa -f "$lf" --mem "cuda:$hk" $PUTSZ \
				-n "${PUT_LAT_N:-50}" -w 5 -W 1 --footprint window --csv "$OUTD/put_${fab}_put_bw_w1.csv"
			# shellcheck disable=SC2086
			run "put_${fab}_raw_checked_get_bw" "$EBIN/efab_get_bw" -p efa -f "$lf" --mem "cuda:$hk" \
				$PBWC --footprint window --csv "$OUTD/put_${fab}_checked_get_bw.csv"
			# put-signal's raw partner (issue 62 item 3): NVSHMEM on EFA posts a writedata
			# per chunk and a 32-byte fi_send (docs/nvshmem-put-signal.md): efab_put_bw
			# -o writedata --signal-send at the put-signal rows' sizes, as a stream (beside
			# efab_shmem_bw) and one pair per window (-W 1: beside efab_shmem_lat's
			# put-signal + quiet), checked once
			if [ "${PUT_SIGNAL:-1}" = 1 ]; then
				SIGSZ="-m 8:64K:x8"
				# shellcheck disable=SC2086
				run "put_${fab}_raw_signal_bw" "$EBIN/efab_put_bw" -p efa -f "$lf" --mem "cuda:$hk" \
					-o writedata --signal-send $SIGSZ -n "${PUT_BW_N:-5}" -w 1 -W "${PUT_W:-8}" \
					--footprint window --csv "$OUTD/put_${fab}_signal_bw.csv"
				# shellcheck disable=SC2086
				run "put_${fab}_raw_signal_bw_w1" "$EBIN/efab_put_bw" -p efa -f "$lf" --mem "cuda:$hk" \
					-o writedata --signal-send $SIGSZ -n "${PUT_LAT_N:-50}" -w 5 -W 1 \
					--footprint window --csv "$OUTD/put_${fab}_signal_bw_w1.csv"
				# shellcheck disable=SC2086
				run "put_${fab}_raw_signal_checked" "$EBIN/efab_put_bw" -p efa -f "$lf" \
					--mem "cuda:$hk" -o writedata --signal-send $SIGSZ -n 2 -w 1 -W "${PUT_W:-8}" -c \
					--footprint window --csv "$OUTD/put_${fab}_checked_signal_bw.csv"
			fi
		done
		# NVSHMEM's rows beside the raw fabric's, per fabric, op and size:
		# tests/nvshmem/put_table.py (its header says which raw figure each sits beside)
		python3 "$here/put_table.py" "$OUTD" >"$OUTD/put_table.txt" 2>&1 || true
		say "put: $(grep -c . "$OUTD/put_table.txt") lines in put_table.txt"
		TO=${EFAB_NV_TIMEOUT:-240}
		;;
	blockdiag)
		# issue 47: NVSHMEM's blocking nvshmemx_putmem_on_stream / getmem_on_stream,
		# which never completed on efasim (stop of 2026-12-04), run as it hung and
		# then with one thing changed at a time (BLOCK_VARIANTS, "name:VAR=V ..."
		# with +bind-to-none for mpirun's binding); each bounded by
		# EFAB_BLOCK_TIMEOUT (75 s; efabench's own watchdog -t 50), its stacks
		# taken at EFAB_NV_STACKS (default 20 s: start-up takes about 7 s) when
		# still going. A variant that completes names the cause.
		TO=${EFAB_BLOCK_TIMEOUT:-75}
		for v in ${BLOCK_VARIANTS:-as-hung: connections32:CUDA_DEVICE_MAX_CONNECTIONS=32 eager:CUDA_MODULE_LOADING=EAGER nobatch:NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA=1,NVSHMEM_BYPASS_FLUSH=1 unbound:+bind-to-none query:EFASIM_CUDA_WAIT=query,EFASIM_LOG=1}; do
			name=${v%%:*}
			envs=${v#*:}
			for op in ${BLOCK_OPS:-put get}; do
				(
					fw=$FWD
					for e in ${envs//,/ }; do
						case $e in
						+bind-to-none) fw="$fw --bind-to none" ;;
						*=*) export "${e?}"; fw="$fw -x ${e%%=*}" ;;
						esac
					done
					# shellcheck disable=SC2030
					FWD=$fw EFAB_NV_STACKS=${EFAB_NV_STACKS:-20} NVSHMEM_REMOTE_TRANSPORT=libfabric FI_LOG_LEVEL=warn \
						run "block_${name}_${op}" "$EBIN/efab_shmem_lat" -o "$op" --initiator stream --src cuda \
						--register -m 8 -n 3 -w 2 -c -t 50 --csv "$OUTD/block_shmem_lat.csv"
				)
			done
		done
		TO=${EFAB_NV_TIMEOUT:-240}
		;;
	knobs)
		# NVSHMEM >= 3.7's batching knobs on its own put bandwidth: per REPS
		# round, each setting in turn (KNOB_SETTINGS, ";"-separated option sets;
		# "" = NVSHMEM's defaults), --initiator host and stream, registered
		# cuMemAlloc source, unchecked (as part put's bandwidth rows). Rows in
		# knobs_shmem_bw.csv name the settings NVSHMEM started with (nv_*);
		# tests/nvshmem/knob_table.py lists each setting's runs, median and ratio
		# to the defaults in knobs_table.txt. An NVSHMEM without a knob exits 77.
		TO=${EFAB_PUT_TIMEOUT:-150}
		# ";"-separated, an empty field (first, middle or last) = the defaults
		ksets=()
		while IFS= read -r -d ';' k; do ksets+=("$k"); done <<<"${KNOB_SETTINGS-;--nv-batch-rma off;--nv-batch-ops 1};"
		for r in $(seq 1 "${REPS:-2}"); do
			for ini in ${KNOB_INITIATORS:-host stream}; do
				for i in "${!ksets[@]}"; do
					# shellcheck disable=SC2086
					EFAB_FITRACE_FABRIC=${KNOB_FABRIC:-} NVSHMEM_REMOTE_TRANSPORT=libfabric FI_LOG_LEVEL=warn \
						run "knobs_${r}_${ini}_set$i" "$EBIN/efab_shmem_bw" -o put --initiator "$ini" \
						--src cuda --register ${KNOBSZ:--m 8:64K:x8} -n "${KNOB_N:-20}" -w 2 \
						-W "${KNOB_W:-64}" -t "${PUT_T:-20}" ${ksets[$i]} --csv "$OUTD/knobs_shmem_bw.csv"
				done
			done
		done
		python3 "$here/knob_table.py" "$OUTD/knobs_shmem_bw.csv" >"$OUTD/knobs_table.txt" 2>&1 || true
		say "knobs: $(grep -vc '^#' "$OUTD/knobs_table.txt") lines in knobs_table.txt"
		TO=${EFAB_NV_TIMEOUT:-240}
		;;
	*) say "unknown part $part" ;;
	esac
done
say "sitting done in $(($(date +%s) - t0)) s"

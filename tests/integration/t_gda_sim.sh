# The simulated device's side of GPU Direct Async (issue 37;
# tests/efasim/README.md, "GPU Direct Async (GDA)" and "Completion counters"):
# the driver's rules for CQs in external memory and GPU-mappable queues,
# completion counters, and libfabric 2.6.0's GDA ops on it.

# efadv_create_cq with external memory, refused as rdma-core 64 and the EFA
# driver refuse it (objrules.c gda: 20 rows, each errno, the 2 MiB contiguity pair among them; a dma-buf faked with
# a memfd, EFASIM_TEST_FAKE_DMABUF, for the checks after the fd's), the
# capability with and without EFASIM_EXT_CQ=0, and the send queues and
# doorbells of two QPs on pages of their own.
t_efasim_gda_rules() {
	efasim_built 2.6.0
	local b=$EFASIM_BUILD_DIR/sim/bin/objrules
	[ -x "$b" ] || die "$b not built (tests/efasim/build 2.6.0 sim)"
	export EFASIM_DIR="$WORK/efasim"
	expect_rc 0 efa_run 2.6.0 "$b" gda
	[ "$(grep -c '^ok ' "$WORK/last.out")" = 20 ] || die "20 rows expected"
}

# rdma-core main's completion counters (compcntr.c) through its own API
# (compcntr_test.c): caps, refusals, set/inc/read, attach and destroy rules,
# and exact counter values at both ends of verbs-path and direct-path
# traffic between two processes, and counters in a CUDA dma-buf where there
# is a GPU; then a device without the cap (EFASIM_COMP_CNTR=0). Needs the simulator built against rdma-core main
# (no release has the API): make check builds it from the snapshot
# rdma-core-main-20260820.tar.gz (EFAB_DEPS) for libfabric 2.7.0a1; skips without it.
t_efasim_comp_counters() {
	efasim_defer
	local b=$EFASIM_BUILD_DIR/sim-main/bin/compcntr_test
	if [ ! -x "$b" ]; then
		echo "no rdma-core main build here ($b missing): completion counters are only in rdma-core's main branch" \
			"(a pre-release snapshot in \$EFAB_DEPS); build it with tests/efasim/build 2.7.0a1 sim (or make efasim V=2.7.0a1)"
		exit 77
	fi
	export EFASIM_DIR="$WORK/efasim"
	unset EFASIM_EBUSY_LOG # its refusals (destroying attached counters) are what it checks
	expect_rc 0 env LD_LIBRARY_PATH="$EFASIM_BUILD_DIR/sim-main/lib" timeout 120 "$b"
	grep -q '^compcntr_test: all checks passed' "$WORK/last.out" || die "no summary line"
	[ "$(grep -v 'GPU:' "$WORK/last.out" | grep -c 'ok   ')" = 86 ] || die "86 ok rows expected (81 initiator, 5 target)"
	# on a machine with a GPU, 12 more: counters in a CUDA dma-buf
	grep -q '^skip GPU' "$WORK/last.out" || [ "$(grep -c '^ok   GPU:' "$WORK/last.out")" = 12 ] ||
		die "12 GPU rows expected where there is a GPU"
	expect_rc 0 env EFASIM_COMP_CNTR=0 LD_LIBRARY_PATH="$EFASIM_BUILD_DIR/sim-main/lib" timeout 60 "$b"
	[ "$(grep -c '^ok   EFASIM_COMP_CNTR=0' "$WORK/last.out")" = 4 ] || die "4 rows expected without the cap"
}

# libfabric 2.6.0's GDA ops with rdma-core 64.0 (gda_ops_test.c): cntr_open_ext
# reports the absence of completion counters (-FI_ENOSYS), query_qp_wqs /
# query_cq / query_addr / get_mr_lkey answer on enabled endpoints, and
# cq_open_ext refuses a wait object and a missing ext-mem flag.
# gda_ops_run V: libfabric V's gda_ops_test on the simulated p5en device, its
# output in last.out; the binary's path stays in GDA_OPS for more runs
gda_ops_run() { # V
	efasim_built "$1"
	GDA_OPS=$EFASIM_BUILD_DIR/gda-$1/gda_ops_test
	[ -x "$GDA_OPS" ] || { echo "$GDA_OPS not built: tests/efasim/build $1 gda (part of make efasim V=$1)"; exit 77; }
	export EFASIM_DIR="$WORK/efasim" EFASIM_PROFILE=p5en
	expect_rc 0 efa_run "$1" "$GDA_OPS"
}
t_efa260_gda_ops() {
	gda_ops_run 2.6.0
	grep -q '^ok   cntr_open_ext (rdma-core without efadv_create_comp_cntr) *want -38 ' "$WORK/last.out" ||
		die "cntr_open_ext did not answer -FI_ENOSYS"
	[ "$(grep -c '^ok ' "$WORK/last.out")" = 25 ] || die "25 ok rows expected"
}

# libfabric 2.7.0a1's GDA ops on rdma-core main (both pre-release snapshots)
# and sim-main: cntr_open_ext opens a device counter (rdma-core main has
# efadv_create_comp_cntr; with EFASIM_COMP_CNTR=0 the device has none and it
# fails), and query_qp_wqs passes the SQ's 64-bit request-id capability on
# (fi_efa_wq_attr.caps) exactly as the device has it (EFASIM_REQ_ID_64).
t_efa270_gda_ops() {
	gda_ops_run 2.7.0a1
	grep -q '^ok   cntr_open_ext (rdma-core with efadv_create_comp_cntr, external memory) *want 0 ' "$WORK/last.out" ||
		die "cntr_open_ext did not open a device counter"
	grep -q '^ok   SQ caps FI_EFA_WQ_CAPS_64_BIT_REQ_ID as the device has them *want 1 ' "$WORK/last.out" ||
		die "the SQ does not say 64-bit request ids"
	expect_rc 0 env EFASIM_REQ_ID_64=0 EFASIM_COMP_CNTR=0 "$ROOT/tests/efasim/run" 2.7.0a1 "$GDA_OPS"
	grep -q '^ok   SQ caps FI_EFA_WQ_CAPS_64_BIT_REQ_ID as the device has them *want 0 ' "$WORK/last.out" ||
		die "EFASIM_REQ_ID_64=0: the SQ still says 64-bit request ids"
	grep -q '^ok   cntr_open_ext (a device without completion counters)' "$WORK/last.out" ||
		die "EFASIM_COMP_CNTR=0: cntr_open_ext row missing"
}

# libefab_fitrace.so (bench/tools/fitrace.c): the interposer that counts
# memory registrations below NVSHMEM's libfabric transport (efab_shmem_reg's
# fi_mr_regattr columns), on constructed calls whose counts are known, and
# libfabric's 1.3 compatibility entry with the hints NVSHMEM 3.4.5 gives it.

fitrace_need() {
	if [ "${EFAB_SAN:-0}" = 1 ]; then # an ASan library cannot be preloaded before the ASan runtime
		echo "the interposer is preloaded: not under SAN (the plain make check runs it)"
		exit 77
	fi
}

# shm and tcp;ofi_rxm (libfabric 1.17 here): fi_mr_reg, fi_mr_regv and
# fi_mr_regattr counted per domain, rxm's core tcp domain marked inner;
# without the preload the check says so and skips. The libfabric user is a
# library the check dlopens RTLD_LOCAL, as NVSHMEM loads its transport (the
# interposer must then find libfabric outside the global scope: it returned
# -FI_ENOSYS from fi_fabric there before), and RTLD_GLOBAL (--global).
t_fitrace_counts() {
	fitrace_need
	local pre="LD_PRELOAD=$ROOT/$BUILD/lib/libefab_fitrace.so" g
	expect_rc 77 "$BUILD/tests/fitrace_check" count shm
	grep -q "not preloaded" "$WORK/last.out" || die "no word on the missing preload"
	for g in "" --global; do
		expect_rc 0 env "$pre" "$BUILD/tests/fitrace_check" $g count shm
		[ "$(grep -c '^domain' "$WORK/last.out")" = 2 ] || die "shm $g: 2 domains expected"
		! grep -q '(simulated)' "$WORK/last.out" || die "shm is not a simulated NIC"
		expect_rc 0 env "$pre" "$BUILD/tests/fitrace_check" $g count tcp
		[ "$(grep -c '(inner)' "$WORK/last.out")" = 2 ] || die "tcp;ofi_rxm $g: its 2 core domains should be inner"
	done
}

# libfabric 2.6.0 (efasim's build): fi_getinfo@FABRIC_1.3 with an all-zero
# hints->nic dies (NVSHMEM 3.4.5's transport crash: fi_dupinfo_1_3 keeps the
# nic, fi_dupinfo calls fi_control through its NULL ops, src/abi_1_0.c:714 ->
# src/fabric.c:1541); with the interposer and EFAB_FITRACE_CLEAR_NIC=1 it
# returns. On efa and efa-direct the counts are exact, the efa fabric's shm
# peer domains inner.
t_efa260_fitrace_nic13_and_efa() {
	fitrace_need
	efasim_need 2.6.0
	local B=$EFASIM_BUILD_DIR/lf-2.6.0/efab
	efa_run 2.6.0 "$B/tests/fitrace_check" nic13 >"$WORK/n13.out" 2>&1
	local rc=$?
	cat "$WORK/n13.out"
	[ "$rc" = 139 ] || [ "$rc" = $((128 + 11)) ] || die "fi_getinfo@FABRIC_1.3 with a zero nic: exit $rc, expected SIGSEGV (139)"
	expect_rc 0 efa_run 2.6.0 env LD_PRELOAD="$B/lib/libefab_fitrace.so" EFAB_FITRACE_CLEAR_NIC=1 \
		"$B/tests/fitrace_check" nic13
	grep -q "returned 0 (ok)" "$WORK/last.out" || die "the cleared hints should find a provider"
	expect_rc 0 efa_run 2.6.0 env LD_PRELOAD="$B/lib/libefab_fitrace.so" "$B/tests/fitrace_check" count efa
	grep -q '^domain [0-9]*: efa efa-direct\|^domain [0-9]*: efa efa ' "$WORK/last.out" || die "no efa domain"
	grep -q '^domain [0-9]*: efa .*(simulated)' "$WORK/last.out" || die "efasim's NIC not seen as simulated"
}

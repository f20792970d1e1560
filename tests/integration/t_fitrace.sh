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

# EFAB_FITRACE_FABRIC=NAME: fi_getinfo returns only fabric NAME's entries
# (how efab_shmem_reg puts NVSHMEM >= 3.5 on the efa fabric of the NIC whose
# efa-direct it would take). tcp (libfabric 1.17, the 1.3 entry): each
# address is a fabric; keeping one keeps exactly its entries, in order; a
# name no entry has gives -FI_ENODATA.
t_fitrace_fabric_filter() {
	fitrace_need
	local pre="LD_PRELOAD=$ROOT/$BUILD/lib/libefab_fitrace.so" all one n1 n
	expect_rc 0 env "$pre" "$BUILD/tests/fitrace_check" fabric 1.3 "tcp;ofi_rxm"
	all=$(sed -n 's/.*returned 0 (ok); fabrics: //p' "$WORK/last.out")
	[ -n "$all" ] || die "no tcp fabric listed"
	one=$(echo "$all" | tr ' ' '\n' | tail -1)
	n1=$(echo "$all" | tr ' ' '\n' | grep -cxF "$one")
	expect_rc 0 env "$pre" EFAB_FITRACE_FABRIC="$one" "$BUILD/tests/fitrace_check" fabric 1.3 "tcp;ofi_rxm"
	n=$(sed -n 's/.*returned 0 (ok); fabrics: //p' "$WORK/last.out" | tr ' ' '\n' | grep -c .)
	[ "$n" = "$n1" ] || die "kept $n entries, $n1 are of fabric $one"
	! sed -n 's/.*fabrics: //p' "$WORK/last.out" | tr ' ' '\n' | grep -v -xF "$one" | grep -q . ||
		die "an entry of another fabric was kept"
	expect_rc 0 env "$pre" EFAB_FITRACE_FABRIC=nonesuch "$BUILD/tests/fitrace_check" fabric 1.3 "tcp;ofi_rxm"
	grep -q "returned -61" "$WORK/last.out" || die "no fabric of that name: -FI_ENODATA expected"
}

# The same through the 1.8 entry (what NVSHMEM 3.6.5 and 3.8.0's transports
# link) on the simulated NIC: with FI_MR_LOCAL asked, efa-direct comes first
# and efa after it; the filter keeps either alone.
t_efa_fitrace_fabric_filter() {
	fitrace_need
	local v B
	efasim_need 2.6.0
	for v in 2.6.0 2.4.0; do
		[ -e "$EFASIM_BUILD_DIR/lf-$v/efab/tests/fitrace_check" ] || { echo "($v not built: not checked)"; continue; }
		B=$EFASIM_BUILD_DIR/lf-$v/efab
		expect_rc 0 efa_run "$v" env LD_PRELOAD="$B/lib/libefab_fitrace.so" "$B/tests/fitrace_check" fabric 1.8 efa
		grep -q "returned 0 (ok); fabrics: efa-direct .*efa" "$WORK/last.out" || die "$v: efa-direct then efa expected"
		expect_rc 0 efa_run "$v" env LD_PRELOAD="$B/lib/libefab_fitrace.so" EFAB_FITRACE_FABRIC=efa \
			"$B/tests/fitrace_check" fabric 1.8 efa
		grep -q "returned 0 (ok); fabrics: efa\( efa\)*$" "$WORK/last.out" || die "$v: only efa expected"
		expect_rc 0 efa_run "$v" env LD_PRELOAD="$B/lib/libefab_fitrace.so" EFAB_FITRACE_FABRIC=efa-direct \
			"$B/tests/fitrace_check" fabric 1.8 efa
		grep -q "returned 0 (ok); fabrics: efa-direct\( efa-direct\)*$" "$WORK/last.out" || die "$v: only efa-direct expected"
	done
}

# libefab_fitrace.so (bench/tools/fitrace.c): the interposer that counts
# memory registrations below NVSHMEM's libfabric transport (efab_shmem_reg's
# fi_mr_regattr columns), on constructed calls whose counts are known,
# libfabric's 1.3 compatibility entry with the hints NVSHMEM 3.4.5 gives it,
# and EFAB_FITRACE_FABRIC at every fi_getinfo version from 1.3 to 1.10
# (t_fitrace_getinfo_*: one program linked to each, and what a run may claim).

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

# One program per fi_getinfo version libfabric 1.17-2.7.0a1 export from 1.3
# (fitrace_gi_1_M: linked to fi_getinfo@FABRIC_1.M of a stand-in
# libfabric.so.1, tests/fitrace/stubfab.c, whose entries name the version
# that made them): the interposer forwards each to the real entry of the
# same version and applies EFAB_FITRACE_FABRIC to it, and its report lets a
# run claim the filter (efab_fitrace_claim). Before, 1.7, 1.9 and 1.10 went
# past it unfiltered, and a run said it had filtered anyway.
t_fitrace_getinfo_versions() {
	fitrace_need
	local pre="LD_PRELOAD=$ROOT/$BUILD/lib/libefab_fitrace.so" m p unfiltered="" unreported=""
	for m in 3 7 8 9 10; do
		p=$BUILD/tests/fitrace_gi_1_$m
		[ -x "$p" ] || die "$p not built (make all builds it with fitrace_check)"
		expect_rc 77 env EFAB_FITRACE_FABRIC=beta "$p"
		grep -qx "fi_getinfo@FABRIC_1.$m returned 0 (ok); fabrics: alpha(FABRIC_1.$m) beta(FABRIC_1.$m) alpha(FABRIC_1.$m)" \
			"$WORK/last.out" || die "1.$m: the stand-in's three entries, unfiltered, expected without the preload"
		grep -q "^claim: no: .*not preloaded" "$WORK/last.out" || die "1.$m: claimed a filter with no interposer"
		expect_rc 0 env "$pre" "$p"
		grep -q "fabrics: alpha(FABRIC_1.$m) beta(FABRIC_1.$m) alpha(FABRIC_1.$m)$" "$WORK/last.out" ||
			die "1.$m: without EFAB_FITRACE_FABRIC the list must be the real entry's, whole"
		grep -qx "claim: none" "$WORK/last.out" || die "1.$m: nothing to claim without EFAB_FITRACE_FABRIC"
		# filtered by the interposer, from the real entry of the same version;
		# the report counts it, and the run may claim it
		expect_rc 0 env "$pre" EFAB_FITRACE_FABRIC=beta "$p"
		grep -qx "fi_getinfo@FABRIC_1.$m returned 0 (ok); fabrics: beta(FABRIC_1.$m)" "$WORK/last.out" ||
			unfiltered="$unfiltered 1.$m"
		grep -qx "filter: calls 1 applied 1 refused 0 versions 1.$m uncovered FABRIC_1.11" "$WORK/last.out" &&
			grep -qx "claim: yes" "$WORK/last.out" || unreported="$unreported 1.$m"
		expect_rc 0 env "$pre" EFAB_FITRACE_FABRIC=nonesuch "$p"
		grep -q "returned -61 (error)" "$WORK/last.out" || unfiltered="$unfiltered 1.$m(nonesuch)"
	done
	[ -z "$unfiltered$unreported" ] ||
		die "not filtered (only beta's entry, from the same version, expected):${unfiltered:- none};" \
			"filter not reported or not claimable:${unreported:- none}"
}

# A caller of a version the interposer does not interpose -- 1.2 (older
# than any it covers) and 1.11 (newer than 2.7.0a1: the stand-in's default)
# -- is not filtered, and the run must not claim it was: the report counts
# no call, names the newer version the loaded libfabric exports, and the
# interposer says so on stderr at the first call it sees.
t_fitrace_getinfo_uncovered() {
	fitrace_need
	local pre="LD_PRELOAD=$ROOT/$BUILD/lib/libefab_fitrace.so" m
	for m in 2 11; do
		expect_rc 0 env "$pre" EFAB_FITRACE_FABRIC=beta "$BUILD/tests/fitrace_gi_1_$m"
		grep -q "fabrics: alpha(FABRIC_1.$m) beta(FABRIC_1.$m) alpha(FABRIC_1.$m)$" "$WORK/last.out" ||
			die "1.$m is not interposed: the list passes whole"
		grep -qx "filter: calls 0 applied 0 refused 0 versions uncovered FABRIC_1.11" "$WORK/last.out" ||
			die "1.$m: the report should count no call and name FABRIC_1.11"
		grep -q "^claim: no: EFAB_FITRACE_FABRIC=beta: no fi_getinfo call went through the interposer .*FABRIC_1.11" \
			"$WORK/last.out" || die "1.$m: claimed a filter it did not apply"
	done
	# a covered call in a process whose libfabric has a newer entry: said once
	expect_rc 0 env "$pre" EFAB_FITRACE_FABRIC=beta "$BUILD/tests/fitrace_gi_1_9"
	grep -q "^libefab_fitrace.so: this libfabric exports fi_getinfo@FABRIC_1.11, which the interposer does not interpose" \
		"$WORK/last.err" || die "no word on stderr of the newer fi_getinfo it does not cover"
}

# An interposed version the loaded libfabric lacks (1.7-1.10 on Debian's
# 1.17, which exports fi_getinfo up to 1.3; reached through dlvsym) is
# refused with -FI_ENOSYS and said on stderr, counted as refused; before,
# -FI_ENOSYS came back without a word.
t_fitrace_getinfo_refused() {
	fitrace_need
	local pre="LD_PRELOAD=$ROOT/$BUILD/lib/libefab_fitrace.so" m rc bad=""
	for m in 7 8 9 10; do
		expect_rc 77 "$BUILD/tests/fitrace_check" fabric "1.$m" "tcp;ofi_rxm"
		grep -q "has no fi_getinfo@FABRIC_1.$m" "$WORK/last.out" ||
			{ echo "(this libfabric exports fi_getinfo@FABRIC_1.$m: not checked)"; continue; }
		env "$pre" EFAB_FITRACE_FABRIC=tcp "$BUILD/tests/fitrace_check" fabric "1.$m" "tcp;ofi_rxm" \
			>"$WORK/last.out" 2>"$WORK/last.err"
		rc=$?
		cat "$WORK/last.out" "$WORK/last.err"
		[ "$rc" = 0 ] && grep -q "returned -38 " "$WORK/last.out" &&
			grep -qx "libefab_fitrace.so: fi_getinfo@FABRIC_1.$m called, but the loaded libfabric has no such version: -FI_ENOSYS" \
				"$WORK/last.err" || bad="$bad 1.$m"
	done
	[ -z "$bad" ] || die "not refused with -FI_ENOSYS and a line on stderr:$bad"
}

# The same on the real libfabrics of the matrix built here (efasim's
# prefixes, build-efasim/lf-V/prefix; tcp on loopback, no simulator): every
# fi_getinfo version from 1.3 that libfabric exports (2.6.0: 1.3, 1.7, 1.8,
# 1.9) keeps only the fabric asked for. Before, 1.7 and 1.9 (2.6.0's
# default) came back whole.
t_fitrace_getinfo_real_libfabric() {
	fitrace_need
	efasim_defer # the libfabric builds it uses are efasim's (make efasim V=...)
	local pre="LD_PRELOAD=$ROOT/$BUILD/lib/libefab_fitrace.so" d v m lib all one n1 n seen="" bad=""
	for d in "$EFASIM_BUILD_DIR"/lf-*/prefix/lib; do
		[ -e "$d/libfabric.so.1" ] || continue
		v=${d%/prefix/lib}
		v=${v##*/lf-}
		for m in 3 7 8 9 10; do
			lib="LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
			env "$lib" timeout 60 "$BUILD/tests/fitrace_check" fabric "1.$m" "tcp;ofi_rxm" >"$WORK/last.out" 2>&1
			case $? in
			0) ;;
			77) continue ;;
			*) cat "$WORK/last.out"; echo "($v does not load here: not checked)"; continue 2 ;;
			esac
			all=$(sed -n 's/.*returned 0 (ok); fabrics: //p' "$WORK/last.out")
			[ -n "$all" ] || die "$v 1.$m: no tcp fabric listed"
			one=$(echo "$all" | tr ' ' '\n' | tail -1)
			n1=$(echo "$all" | tr ' ' '\n' | grep -cxF "$one")
			expect_rc 0 env "$lib" "$pre" EFAB_FITRACE_FABRIC="$one" timeout 60 \
				"$BUILD/tests/fitrace_check" fabric "1.$m" "tcp;ofi_rxm"
			n=$(sed -n 's/.*returned 0 (ok); fabrics: //p' "$WORK/last.out" | tr ' ' '\n' | grep -c .)
			if [ "$n" != "$n1" ] || sed -n 's/.*fabrics: //p' "$WORK/last.out" | tr ' ' '\n' | grep -v -xF "$one" | grep -q .; then
				bad="$bad $v:1.$m"
			fi
			seen="$seen $v:1.$m"
		done
	done
	[ -n "$seen" ] || { echo "no libfabric of the matrix built here (make efasim V=2.6.0)"; exit 77; }
	echo "checked:$seen"
	[ -z "$bad" ] || die "not filtered to one fabric:$bad"
}

# tests/run itself: make check builds efasim beside the tests that do not need
# it (EFAB_EFASIM_BG); a test that needs efasim while the build runs is
# deferred (efasim_built exits 78) and run once the build has ended, and a
# failed build fails the run. A nested tests/run on one quick efasim test
# with a stand-in build (a log, and an exit status written 3 s later).
t_run_defers_efasim_tests() {
	[ "${EFAB_SAN:-0}" = 1 ] && { echo "the nested efasim test skips under SAN=1; the plain make check runs this"; exit 77; }
	efasim_built 2.4.0 efab/bin/efab_put_lat # deferred itself while make check builds efasim
	local t=t_efa240_path_direct_write
	rm -f "$WORK/bg.rc"
	echo "the stand-in build's output" >"$WORK/bg.log"
	( sleep 3; echo 0 >"$WORK/bg.rc" ) &
	expect_rc 0 env EFAB_EFASIM_BG="$WORK/bg" EFAB_AFTER_EFASIM= timeout 200 "$ROOT/tests/run" "$t"
	wait
	grep -q "^DEFER $t " "$WORK/last.out" || die "$t not deferred while the build ran"
	grep -q "^  | the stand-in build's output" "$WORK/last.out" || die "the build's log not shown"
	grep -q "^PASS $t " "$WORK/last.out" || die "$t not run after the build"
	grep -q "^1 passed, 0 failed" "$WORK/last.out" || die "summary"
	# the build failed: the run fails, and the deferred test still runs
	echo 2 >"$WORK/bg.rc"
	expect_rc 1 env EFAB_EFASIM_BG="$WORK/bg" EFAB_AFTER_EFASIM= timeout 200 "$ROOT/tests/run" "$t"
	grep -q "^FAIL efasim build (make efasim-all)" "$WORK/last.out" || die "a failed build did not fail the run"
	grep -q "^PASS $t " "$WORK/last.out" || die "$t not run after a failed build"
	# without a build beside the tests, exit 78 is a failure, never a silent skip
	expect_rc 1 env EFAB_EFASIM_BG= EFAB_RUN_PROBE=1 "$ROOT/tests/run" t_run_exit78_probe
	grep -q "^FAIL t_run_exit78_probe" "$WORK/last.out" || die "exit 78 outside a build beside the tests did not fail"
}
# exits 78 as a deferred test does, for t_run_defers_efasim_tests (which sets
# EFAB_RUN_PROBE); in the suite itself it skips
t_run_exit78_probe() {
	[ -n "${EFAB_RUN_PROBE:-}" ] || { echo "only t_run_defers_efasim_tests runs this"; exit 77; }
	exit 78
}

# tests/run itself: make check EFASIM_BESIDE=1 builds efasim beside the tests
# that do not need it (EFAB_EFASIM_BG); a test that needs efasim while the build runs is
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

# Every test that looks at efasim's build (EFASIM_BUILD_DIR, efa_run, the
# simulator's run script) reaches efasim_defer through the functions it calls
# (efasim_built, efasim_need, versions_need...): one that does not would see a
# half-built build-efasim while make check EFASIM_BESIDE=1 builds it, and
# skip or fail. Checked over the call graph of the defined shell functions.
t_run_efasim_tests_defer() {
	declare -f >"$WORK/fns.sh"
	python3 - "$WORK/fns.sh" <<'PY' || die "a test looks at efasim's build without reaching efasim_defer"
import re, sys
src = open(sys.argv[1]).read()
# declare -f prints each function as "name () \n{ ... \n}"
bodies = dict(re.findall(r'^(\w+) \(\) \n(\{.*?\n\})$', src, re.S | re.M))
names = set(bodies)
calls = {f: {g for g in re.findall(r'[A-Za-z_]\w*', b) if g in names and g != f} for f, b in bodies.items()}
def closure(f):
    seen, todo = set(), [f]
    while todo:
        for g in calls.get(todo.pop(), ()):
            if g not in seen:
                seen.add(g); todo.append(g)
    return seen
look = re.compile(r'EFASIM_BUILD_DIR|VERSIONS_BUILD|tests/efasim/(run|fabtests|unit-test)')
looks = {f for f, b in bodies.items() if look.search(b)}
tests = sorted(f for f in names if f.startswith('t_'))
n, bad = 0, []
for t in tests:
    c = closure(t) | {t}
    if not (c & looks):
        continue
    n += 1
    if 'efasim_defer' not in c:
        bad.append(t)
print(n, "tests look at efasim's build")
if n < 90:
    print("only", n, "found: the pattern no longer matches them"); sys.exit(1)
if bad:
    print("without efasim_defer:", " ".join(bad)); sys.exit(1)
PY
}

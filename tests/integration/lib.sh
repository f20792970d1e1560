# Helpers for integration tests. Each test is a function t_NAME that returns
# non-zero (or calls die) on failure; it runs in a subshell with its output
# captured, shown only when it fails.

die() { echo "ASSERT: $*"; exit 1; }

# mpirun with a hard limit: a hung two-rank run must never eat the session.
mpi() { # NP CMD...
	local np=$1; shift
	timeout -k 5 "${EFAB_TEST_TIMEOUT:-120}" mpirun -np "$np" --oversubscribe "$@"
}

# mpi with Open MPI's own grace between SIGTERM and SIGKILL (tests/run sets
# it to 0 for speed): for tests of what ranks do when mpirun ends the job
mpi_grace() { # NP CMD...
	OMPI_MCA_odls_base_sigkill_timeout=1 mpi "$@"
}

# Open MPI 4.1.4's start-up race (docs/testing.md "Open MPI's start-up
# crash"): under load, btl/tcp can hand a peer's first ob1 fragment (tag 0x41,
# MATCH) to its callback before MPI_Init has registered it, a call to address
# 0 inside MPI_Init (core: PMPI_Init -> ompi_mpi_init -> opal_progress ->
# mca_btl_tcp.so+0x9994, `call *(%rax)`; the class of open-mpi/ompi#11438 and
# #12495). Debian's libinfinipath, loaded with Open MPI, reports it as
# "terminated with signal 11 at PC=0". True only for that line in a run that
# printed no efabench header (rank 0 prints its "# efabench" line after
# MPI_Init and the fabric set-up): a crash after the header, or at another
# PC, never matches. A NULL call in efabench's own set-up would match once;
# if it is repeatable the retry fails too, and the RETRY line stays in the log.
ompi_init_race() { # OUT ERR
	grep -q 'terminated with signal 11 at PC=0 ' "$1" "$2" 2>/dev/null || return 1
	! grep -q '^# efabench ' "$1" 2>/dev/null
}

# Run a command, require its exit status, keep its stderr in $WORK/last.err.
# An MPI launch (mpi, ssrun) that fails with ompi_init_race's signature alone
# runs once more, saying so ("RETRY"); any other failure, or the race twice,
# fails the test. EFAB_TEST_NO_RETRY=1 turns the retry off.
expect_rc() { # RC CMD...
	local want=$1; shift
	"$@" >"$WORK/last.out" 2>"$WORK/last.err"
	local rc=$?
	if [ "$rc" != "$want" ] && [ -z "${EFAB_TEST_NO_RETRY:-}" ] && [[ $1 = mpi || $1 = ssrun ]] &&
		ompi_init_race "$WORK/last.out" "$WORK/last.err"; then
		cat "$WORK/last.out" "$WORK/last.err"
		echo "RETRY (once): exit $rc with Open MPI's start-up crash (signal 11 at PC=0 inside MPI_Init, no efabench header): $*"
		"$@" >"$WORK/last.out" 2>"$WORK/last.err"
		rc=$?
	fi
	cat "$WORK/last.out" "$WORK/last.err"
	[ "$rc" = "$want" ] || die "exit $rc, expected $want: $*"
}

# The first line of stderr from our tools (mpirun adds its own banner).
expect_msg() { # PATTERN
	grep -E "^efab[a-z_]*(\[rank [0-9]+\])?: .*$1" "$WORK/last.err" >/dev/null ||
		die "no message matching '$1' on stderr"
}

csvcheck() { python3 tests/csvcheck.py "$@" || die "csvcheck $*"; }

ABIN=$(cd "$BIN" && pwd)
ROOT=$PWD
export ABIN ROOT

# libfabric's efa provider on the simulated EFA device is built by
# `make efasim V=...` (tests/efasim/build) into build-efasim/ of this
# checkout, or where EFASIM_BUILD says.
EFASIM_BUILD_DIR=${EFASIM_BUILD:-$ROOT/build-efasim}

# Skip the test (exit 77, the reason on its last line) unless libfabric V on
# efasim is built: the simulator's libraries, libfabric V, and lf-V/WHAT for
# each WHAT (efab/bin/efab_scan: efabench built against it; .fabtests-done).
# make check EFASIM_BESIDE=1 builds efasim beside the tests that do not need
# it (nice 19, EFAB_EFASIM_BG: its log and, when it ended, its .rc): a test that needs it
# while it is still building is deferred (78) and tests/run runs it again
# once the build has ended, whatever it had built by then. Every test that
# looks at build-efasim calls this first (efasim_built does).
efasim_defer() {
	if [ -n "${EFAB_EFASIM_BG:-}" ] && [ ! -e "$EFAB_EFASIM_BG.rc" ]; then
		echo "deferred: efasim is still being built beside the tests; tests/run runs this after the build"
		exit 78
	fi
}
efasim_built() { # V [WHAT...]
	local v=$1 f s=sim
	shift
	efasim_defer
	# 2.7.0a1 (pre-release snapshot) runs on the simulator built against
	# rdma-core main (pre-release snapshot), as tests/efasim/run picks it
	[ "$v" = 2.7.0a1 ] && s=sim-main
	for f in $s/lib/libibverbs.so.1 "lf-$v/.done" "${@/#/lf-$v/}"; do
		[ -e "$EFASIM_BUILD_DIR/$f" ] && continue
		echo "libfabric $v on efasim not built ($EFASIM_BUILD_DIR/$f missing): make efasim V=$v" \
			"(needs the release tarballs in \$EFAB_DEPS, default ../shared/deps)"
		exit 77
	done
}

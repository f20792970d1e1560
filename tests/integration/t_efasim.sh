# libfabric's own efa provider (fabrics efa and efa-direct) on the simulated
# EFA device (tests/efasim), for each libfabric release that `make efasim V=..`
# built. Every figure these runs print is SIMULATED: the tests check behaviour
# (what runs, what is refused and why, data validation), never speed.
# A version that is not built, or a SAN build, skips with the reason.

EFASIM_VERSIONS=${EFASIM_VERSIONS:-"2.1.0 2.4.0 2.6.0 2.7.0a1"}
# 2.7.0a1 is a pre-release snapshot (libfabric main at af8ddbe, on rdma-core
# main at 691953d, also a snapshot): its tests are t_efa270_*, never "2.7.0"

efasim_need() { # V
	if [ "${EFAB_SAN:-0}" = 1 ]; then
		echo "efasim tests run in the plain make check (their binaries are built against libfabric $1, not with SAN)"
		exit 77
	fi
	efasim_built "$1" efab/bin/efab_put_lat
	# EFAB_EBIN: run other binaries on this libfabric (t_versions.sh runs the
	# default build, compiled against Debian's 1.17, here)
	EBIN=${EFAB_EBIN:-$EFASIM_BUILD_DIR/lf-$1/efab/bin}
	# EFASIM_REORDER empty: efasim's default (multi-packet writes out of order)
	export EFASIM_DIR="$WORK/efasim" EFASIM_PROFILE=${EFASIM_PROFILE:-p5en} EFASIM_REORDER=${EFASIM_REORDER:-}
}

# NP ranks, each its own simulated host (so the efa fabric cannot use shm
# between them: traffic goes through the simulated device).
efa_mpi() { # V NP CMD...
	local v=$1 np=$2
	shift 2
	timeout -k 5 "${EFAB_TEST_TIMEOUT:-120}" "$ROOT/tests/efasim/run" "$v" mpirun -np "$np" \
		--oversubscribe -x EFASIM_HOST=%r -x EFASIM_DIR -x EFASIM_PROFILE -x EFASIM_REORDER \
		-x LD_LIBRARY_PATH -x PATH "$@"
}
efa_run() { # V CMD...
	local v=$1
	shift
	timeout -k 5 "${EFAB_TEST_TIMEOUT:-120}" "$ROOT/tests/efasim/run" "$v" "$@"
}

simulated_csv() { # CSV: every row says simulated in provider_version
	python3 - "$1" <<'EOF' || die "rows of $1 are not labelled simulated"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
bad = [r["provider_version"] for r in rows if "simulated" not in r["provider_version"]]
assert not bad, bad
EOF
}

# Discovery: both fabrics on simulated rdmap* NICs; what each requires, decided
# by asking without it (efa-direct: FI_MR_LOCAL and FI_CONTEXT2; efa: neither).
efa_discovery() { # V
	efasim_need "$1"
	expect_rc 0 efa_run "$1" fi_info -p efa
	grep -q "fabric: efa-direct" "$WORK/last.out" || die "no efa-direct fabric"
	grep -q "fabric: efa$" "$WORK/last.out" || die "no efa fabric"
	grep -q "domain: rdmap16s0-rdm" "$WORK/last.out" || die "no simulated rdmap domain"
	expect_rc 0 efa_run "$1" "$EBIN/efab_probe" -p efa --json
	python3 - "$WORK/last.out" <<'EOF' || die "probe requirement rows wrong"
import json, sys
cols = json.load(open(sys.argv[1]))["fabrics"]
by = {}
for c in cols:
    by.setdefault(c["fabric"], c)
d, e = by["efa-direct"], by["efa"]
assert d["mr_FI_MR_LOCAL"] == "yes" and d["mode_FI_CONTEXT2"] == "yes", d
assert e["mr_FI_MR_LOCAL"] == "no" and e["mode_FI_CONTEXT2"] == "no", e
assert d["atomic"] == "no" and e["atomic"] == "yes"
assert d["inject_rma_size"] == "0", d["inject_rma_size"]
assert all(c["simulated"].startswith("yes") for c in cols)
assert "unregistered local buffers accepted" in e["verdict"], e["verdict"]
EOF
}

# Every benchmark with -c on both fabrics; what efa-direct does not offer
# exits 77 with the reason.
efa_benchmarks() { # V
	efasim_need "$1"
	local f
	for f in efa-direct efa; do
		rm -f "$WORK"/*.csv
		expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f $f -m 8:64K:x8 -n 50 -c --csv "$WORK/pl.csv"
		grep -q "SIMULATED EFA device" "$WORK/last.out" || die "header does not say simulated"
		grep -q "fabric $f," "$WORK/last.out" || die "header does not name fabric $f"
		expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f $f -o writedata -m 8:64K:x8 -n 50 -c --csv "$WORK/pl.csv"
		expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_get_lat" -p efa -f $f -m 8:64K:x8 -n 50 -c --csv "$WORK/gl.csv"
		expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_bw" -p efa -f $f -m 8:1M:x8 -n 20 -c --csv "$WORK/pb.csv"
		expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_bw" -p efa -f $f -o writedata -m 8:64K:x8 -n 20 -c --csv "$WORK/pb.csv"
		expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_get_bw" -p efa -f $f -m 8:1M:x8 -n 20 -c --csv "$WORK/gb.csv"
		expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_mr_reg" -p efa -f $f -m 4K:4M:x16 -n 5 --csv "$WORK/mr.csv"
		for c in pl gl pb gb mr; do simulated_csv "$WORK/$c.csv"; done
		csvcheck "$WORK/pl.csv" --bench put_lat --rows 10 --lat --errors 0 --extra inject
		if [ $f = efa ]; then
			for a in fadd cswap min; do
				expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_atomic_lat" -p efa -f efa --aop $a -n 30 -c --csv "$WORK/al.csv"
			done
			expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_atomic_bw" -p efa -f efa -n 10 -c --csv "$WORK/ab.csv"
			simulated_csv "$WORK/al.csv"
		else
			expect_rc 77 efa_mpi "$1" 2 "$EBIN/efab_atomic_lat" -p efa -f efa-direct -n 10
			expect_msg "efa-direct provides no FI_ATOMIC"
		fi
	done
}

# EFA contract 1: writedata with FI_RX_CQ_DATA in force (efa-direct >= 2.4 on a
# device without unsolicited write receive, the p5 profile) and FI_MR_LOCAL
# required: receives on a registered buffer, every consumed one reposted.
# 20 windows x 64 x 4 sizes = 5120 ops over 256 receive slots (20x).
efa_writedata_rx_cq_data() { # V
	efasim_need "$1"
	export EFASIM_PROFILE=p5
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_bw" -v -p efa -f efa-direct -o writedata -m 8:512:x8 -n 20 -W 64 -c \
		--csv "$WORK/w.csv"
	grep -q "mode FI_RX_CQ_DATA" "$WORK/last.out" || die "FI_RX_CQ_DATA is not in force"
	grep -q "mr_mode FI_MR_LOCAL" "$WORK/last.out" || die "FI_MR_LOCAL is not in force"
	csvcheck "$WORK/w.csv" --bench put_bw --rows 3 --bw --errors 0 \
		--extra pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f efa-direct -o writedata -m 8 -n 2000 -c
}

# EFA contract 5 on 2.1: without unsolicited write receive efa-direct offers no
# RMA there; the run says so and names the fabric.
efa_no_rma_before_24() { # V
	efasim_need "$1"
	export EFASIM_PROFILE=p5
	expect_rc 77 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f efa-direct -n 10
	expect_msg "efa-direct .*FI_RMA"
}

# EFA contract 3: an unregistered source runs on efa (its MR-cache/bounce path),
# and efa-direct drops out naming FI_MR_LOCAL.
efa_src_unregistered() { # V
	efasim_need "$1"
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -v -p efa -f efa --src-unregistered -m 8:64K:x8 -n 50 -c
	grep -q "mr_mode FI_MR_VIRT_ADDR" "$WORK/last.out" || die "efa kept FI_MR_LOCAL for an unregistered source"
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_bw" -p efa -f efa --src-unregistered -m 8:64K:x8 -n 10 -c
	expect_rc 77 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f efa-direct --src-unregistered -n 10
	expect_msg "efa-direct .*requires FI_MR_LOCAL"
}

# EFA contract 4: the user's error, reproduced by libfabric's own code.
efa_probe_live() { # V
	efasim_need "$1"
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_probe" --live -p efa -f efa-direct --domain rdmap16s0-rdm --json
	python3 - "$WORK/last.out" "$1" <<'EOF' || die "live results wrong"
import json, sys
c = json.load(open(sys.argv[1]))["fabrics"][0]
v = tuple(int(x) for x in sys.argv[2].split(".")[:2])
assert c["mr_FI_MR_LOCAL"] == "yes"
assert c["live_put_registered"] == "OK" and c["live_read"] == "OK", c
assert c["live_writedata"] == "OK", c["live_writedata"]
u = c["live_put_unregistered"]
if v >= (2, 4):
    assert "EFA direct requires FI_MR_LOCAL but application does not provide a valid desc" in u, u
else:
    assert u.startswith("skipped: libfabric"), u
EOF
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_probe" --live -p efa -f efa --domain rdmap16s0-rdm --json
	python3 - "$WORK/last.out" <<'EOF' || die "live results on efa wrong"
import json, sys
c = json.load(open(sys.argv[1]))["fabrics"][0]
for k in ("live_put_registered", "live_put_unregistered", "live_writedata", "live_read", "live_atomic_fadd_u64"):
    assert c[k] == "OK", (k, c[k])
EOF
}

# --live's put matrix (bench/tools/probe_put.c) on both fabrics of one simulated
# NIC, each case in its own pair of processes: hints naming no fabric get
# efa-direct with FI_MR_LOCAL and efa without it; efa-direct: a registered source
# is ok, an unregistered one refused in the provider's words (2.4, 2.6) or the
# crash named (2.1 dereferences the NULL descriptor in libfabric.so.1), and it
# is not offered without FI_MR_LOCAL; efa: every host case ok (under
# FI_MR_LOCAL with the provider's warning). The table's section and the CSV
# of one run say the same; cuda cases skip with the reason without a GPU.
efa_probe_live_put() { # V
	efasim_need "$1"
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_probe" --live -p efa --domain rdmap16s0-rdm --csv "$WORK/p.csv"
	python3 tests/probeput.py efa "$WORK/p.csv" "$1" || die "put matrix on efasim $1"
	python3 tests/probeput.py table "$WORK/last.out" "$WORK/p.csv" || die "the table's section"
}

# Constructed ends on the efa fabric of the simulated NIC (EFAB_PROBE_LIVE_HOOK:
# rank 0's child faults in libc, aborts, or hangs where it would post the put):
# each is its case's verdict, the next case runs, nothing is left behind.
t_efa260_probe_live_put_crash_and_hang() {
	efasim_need 2.6.0
	local hooks="segv:efa/efa/live_put_host_mrlocal_reg,abort:efa/efa/live_put_host_mrlocal_unreg"
	hooks="$hooks,hang:efa/efa/live_put_host_nomrlocal_unreg"
	expect_rc 0 efa_mpi 2.6.0 2 -x EFAB_PROBE_LIVE_HOOK="$hooks" "$EBIN/efab_probe" --live -p efa -f efa \
		--domain rdmap16s0-rdm -t 2 --json
	python3 tests/probeput.py hooks "$WORK/last.out" efa efa 2 || die "hook verdicts"
	! pgrep -f -- "^$(cd "$EBIN" && pwd -P)/efab_probe --live-child" >/dev/null || die "a live child outlived the probe"
}

# A put whose completion never comes at rank 0 (EFAB_PROBE_LIVE_HOOK nocomp,
# -t 2): the case's verdict is rank 0's timeout, and the next cases run.
# Before issue 45 rank 0 then skipped the barrier after the put
# (efab_barrier_progress waits for its own operations first), met rank 1's
# barrier with its next collective, the parents stopped both children, and
# the verdict read "rank 1: stopped: the other rank's process ended first":
# the line t_efa210_probe_live_put printed in make check beside a build.
t_efa260_probe_live_put_no_completion() {
	efasim_need 2.6.0
	expect_rc 0 efa_mpi 2.6.0 2 -x EFAB_PROBE_LIVE_HOOK="nocomp:efa/efa/live_put_host_mrlocal_reg" \
		"$EBIN/efab_probe" --live -p efa -f efa --domain rdmap16s0-rdm -t 2
	grep -q "^  host  in hints     registered    efa (FI_MR_LOCAL): error: timeout after 2.0 s waiting for put completion (op fi_write" \
		"$WORK/last.out" || die "the case's verdict is not rank 0's timeout"
	grep -q "^  host  not in hints registered    efa: ok (data verified)" "$WORK/last.out" ||
		die "the cases after it did not run"
}

# EFA contract 7: efa's MR cache never serves fi_mr_regattr (no cache under
# FI_MR_LOCAL; from 2.4 only its internal registrations), so mr_reg records
# the cache column n/a there; the cache is exercised through the unregistered
# path of put_lat, with --mr-cache on and off.
efa_mr_cache() { # V
	efasim_need "$1"
	local f
	for f in efa efa-direct; do
		rm -f "$WORK/mr.csv"
		expect_rc 0 efa_run "$1" "$EBIN/efab_mr_reg" -p efa -f $f --mr-cache on -m 4K:64K:x4 -n 5 \
			--regime same --csv "$WORK/mr.csv" -v
		grep -q "mr_cache column n/a" "$WORK/last.out" || die "header does not say why the cache column is n/a"
		python3 - "$WORK/mr.csv" <<'EOF2' || die "mr_cache column is not n/a on $f"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["mr_cache"] == "n/a" for r in rows), [r["mr_cache"] for r in rows]
EOF2
	done
	for m in on off; do
		expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f efa --src-unregistered --mr-cache $m \
			-m 8:256K:x8 -n 30 -c
	done
}

# SRD may place a multi-packet write's bytes in any order, and efasim does so
# by default (last packet first): put_lat -o write -c still validates (late
# bytes settle before they count), the header says the figure is a lower
# bound, and so does every row above the MTU (p5en: 8928 B, the port's
# max_msg_sz through fi_info's link_attr) in lat_lower_bound; late_msgs and
# late_bytes count the late messages of the row (some at every multi-packet
# size: the poller sees the last packet first). EFASIM_REORDER=0 still runs.
# Without -c nothing is checked (n/a); writedata times the completion (no).
# A device whose max_cq_depth (EFASIM_MAX_CQE) is below the tx queue + the
# device's receive queue depth (2048 + 8192 on efasim): efabench's CQ asks for what
# it keeps in flight (tx queue + its 256 receives) and runs on efa-direct; the efa
# fabric's own CQ is the provider's (efa_rdm_cq_open raises the size to tx + rx),
# so there libfabric itself needs the deeper CQ, and the error says whose size it was.
efa_cq_depth() { # V
	efasim_need "$1"
	export EFASIM_MAX_CQE=4096
	expect_rc 0 efa_mpi "$1" 2 -x EFASIM_MAX_CQE "$EBIN/efab_put_bw" -p efa -f efa-direct -o writedata -m 8:64K:x8 -n 20 -c
	expect_rc 0 efa_mpi "$1" 2 -x EFASIM_MAX_CQE "$EBIN/efab_put_lat" -p efa -f efa-direct -m 8:4K:x8 -n 20 -c
	expect_rc 1 efa_mpi "$1" 2 -x EFASIM_MAX_CQE "$EBIN/efab_put_bw" -p efa -f efa -o writedata -m 8 -n 5
	expect_msg "fi_cq_open .2304 entries asked: tx queue 2048 . 256 receives; the provider made it 10240.: Invalid argument"
	unset EFASIM_MAX_CQE
}

# Writedata's credits (rma.c): a target that stops reading its CQ for 600 ms
# halfway through the size (EFAB_FAULT_RX_PAUSE_MS, a descheduled reader)
# while the initiator's pipeline goes on. Without credits (the old code:
# EFAB_FAULT_NO_CREDITS=1) the 4096-entry direct CQ is lapped by the ~10000
# remote CQ data posted meanwhile and the target never counts them all (the
# CI failure of 2026-12-06, about one run in two of the 8 B pipelined case on
# 2 cores without any fault); with them the initiator waits, so its rate is
# at most the operations over the pause (an upper bound: load cannot fake it).
efa_writedata_credits() { # V
	efasim_need "$1"
	local v=$1
	export EFAB_FAULT_RX_PAUSE_MS=600
	EFAB_FAULT_NO_CREDITS=1 expect_rc 1 efa_mpi "$v" 2 -x EFAB_FAULT_RX_PAUSE_MS -x EFAB_FAULT_NO_CREDITS \
		"$EBIN/efab_put_bw" -p efa -f efa-direct -o writedata -m 8 -W 64 -n 312 -w 10 --pipeline -t 3
	# (the target's own timeout line comes only if it outlives the initiator's abort)
	expect_msg "timeout after 3.0 s waiting for (the remote CQ data of every operation of the size|the peer's acknowledgement of the last window)"
	rm -f "$WORK"/cr-*.csv
	expect_rc 0 efa_mpi "$v" 2 -x EFAB_FAULT_RX_PAUSE_MS "$EBIN/efab_put_bw" -p efa -f efa-direct \
		-o writedata -m 8 -W 64 -n 312 -w 10 --pipeline --post-list 8 -t 10 -v --csv "$WORK/cr-1.csv"
	# (2.6.0 on the p5en profile: tx queue 2048 + 256 receives asked)
	local fig="2304 entries asked, 64 kept for the target's own completions: at most 1960 remote CQ data unread, returned every 280"
	[ "$v" = 2.6.0 ] || fig="[0-9]+ entries asked, 64 kept for the target's own completions: at most [0-9]+ remote CQ data unread, returned every [0-9]+"
	grep -Eq "^# credits: CQ $fig\$" "$WORK/last.err" || die "$v: no credits line"
	# window mode, both directions (each rank pauses as a target: its row is
	# the sum of two); and the p5 profile (no unsolicited write receive:
	# FI_RX_CQ_DATA receives, RNR), checked
	expect_rc 0 efa_mpi "$v" 2 -x EFAB_FAULT_RX_PAUSE_MS "$EBIN/efab_put_bw" -p efa -f efa-direct \
		-o writedata -m 8 -W 64 -n 312 -w 10 --bidir -t 10 --csv "$WORK/cr-2.csv"
	EFASIM_PROFILE=p5 expect_rc 0 efa_mpi "$v" 2 -x EFAB_FAULT_RX_PAUSE_MS "$EBIN/efab_put_bw" -p efa \
		-f efa-direct -o writedata -m 8 -W 64 -n 312 -w 10 --pipeline -c -t 10 --csv "$WORK/cr-1p5.csv"
	unset EFAB_FAULT_RX_PAUSE_MS
	python3 - "$WORK" <<'PY' || die "$v: credits rows"
import csv, sys
for name, directions in (("cr-1", 1), ("cr-2", 2), ("cr-1p5", 1)):
    rows = list(csv.DictReader(open(f"{sys.argv[1]}/{name}.csv")))
    assert len(rows) == 1, (name, len(rows))
    r = rows[0]
    assert r["errors"] == "0", (name, r["errors"])
    # each initiator waited out the 600 ms pause in its timed loop: at most
    # its 312 x 64 measured operations over 0.6 s (an upper bound: load can
    # only lower the rate)
    assert 0 < float(r["msg_rate_Mops"]) <= directions * 312 * 64 / 0.6 / 1e6, (name, r["msg_rate_Mops"])
PY
}

# The simulator's threads (device engine, RNR retry, hw_counters cache) stop
# when its library is unloaded: tests/efasim/unload_test.c dlopens libfabric,
# runs one write on efa-direct, dlcloses it and lives on 300 ms. Before, the
# threads ran on in unmapped code: SIGSEGV, as NVSHMEM 3.6.5's finalize met.
efa_unload() { # V
	efasim_need "$1"
	cc -Wall -Werror -I"$EFASIM_BUILD_DIR/lf-$1/prefix/include" "$ROOT/tests/efasim/unload_test.c" -ldl \
		-o "$WORK/unload_test" || die "unload_test does not build"
	export EFASIM_DIR="$WORK/efasim"
	expect_rc 0 efa_run "$1" "$WORK/unload_test"
	grep -q '^unload_test: ok' "$WORK/last.out" || die "no ok line"
}

efa_reordered_writes() { # V
	efasim_need "$1"
	rm -f "$WORK/ro.csv"
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -v -p efa -f efa-direct -o write -m 4K:256K:x4 -n 100 -c \
		--csv "$WORK/ro.csv"
	grep -q "lower bound for multi-packet sizes (above the MTU 8928 B" "$WORK/last.out" ||
		die "header does not say lower bound above the MTU"
	csvcheck "$WORK/ro.csv" --bench put_lat --rows 4 --lat --errors 0 --extra inject
	python3 - "$WORK/ro.csv" <<'EOF2' || die "lower bound / late columns wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    want = "yes" if int(r["size_bytes"]) > 8928 else "no"
    assert r["lat_lower_bound"] == want, (r["size_bytes"], r["lat_lower_bound"])
    assert int(r["late_msgs"]) >= 0 and int(r["late_bytes"]) >= int(r["late_msgs"])
    if want == "yes":  # the last packet lands first on every message
        assert int(r["late_msgs"]) > 0, ("no late message with reordered packets", r["size_bytes"])
        assert int(r["late_bytes"]) < int(r["late_msgs"]) * int(r["size_bytes"])
print("lower bound:", [(r["size_bytes"], r["lat_lower_bound"], r["late_msgs"]) for r in rows])
EOF2
	# the verbs path reorders as the direct path does
	rm -f "$WORK/ro.csv"
	expect_rc 0 efa_mpi "$1" 2 -x FI_EFA_USE_DATA_PATH_DIRECT=0 "$EBIN/efab_put_lat" -p efa -f efa-direct \
		-o write -m 256K -n 50 -c --csv "$WORK/ro.csv"
	python3 -c 'import csv, sys; r = next(csv.DictReader(open(sys.argv[1]))); assert int(r["late_msgs"]) > 0, r["late_msgs"]' \
		"$WORK/ro.csv" || die "no late message on the verbs path"
	rm -f "$WORK/ro.csv"
	EFASIM_REORDER=0 expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f efa-direct -o write -m 64K -n 20 -c
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f efa-direct -o write -m 64K -n 20 --csv "$WORK/ro.csv"
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f efa-direct -o writedata -m 64K -n 20 -c \
		--csv "$WORK/ro.csv"
	python3 - "$WORK/ro.csv" <<'EOF2' || die "unchecked or writedata rows wrong"
import csv, sys
w, wd = list(csv.DictReader(open(sys.argv[1])))
assert (w["op"], w["lat_lower_bound"], w["late_msgs"], w["late_bytes"]) == ("write", "yes", "n/a", "n/a"), w
assert (wd["op"], wd["lat_lower_bound"], wd["late_msgs"]) == ("writedata", "no", "0"), wd
EOF2
}

# RLIMIT_MEMLOCK, as ib_umem_get charges it (host memory; CAP_IPC_LOCK
# exempts): efab_mr_reg checks what it would pin at once before the first
# registration and exits 2 with the limit, the amount and the fix; within the
# limit it runs; with CAP_IPC_LOCK the limit does not apply. efasim refuses a
# registration past the limit with ENOMEM, as the kernel does: efab_put_lat's
# 4 x 1 MiB region under a 1 MiB limit fails with the libfabric error.
efa_memlock() { # V
	efasim_need "$1"
	grep -q "^CapEff:.*" /proc/self/status || { echo "no /proc/self/status"; exit 77; }
	local nocap=""
	if (( 0x$(awk '/^CapEff/ {print $2}' /proc/self/status) >> 14 & 1 )); then
		setpriv --bounding-set=-ipc_lock true 2>/dev/null ||
			{ echo "cannot drop CAP_IPC_LOCK (setpriv --bounding-set)"; exit 77; }
		nocap="setpriv --bounding-set=-ipc_lock"
	fi
	local lim=$((4 << 20)) # below the hard limit (raising it needs CAP_SYS_RESOURCE)
	expect_rc 2 efa_run "$1" prlimit --memlock=$lim $nocap "$EBIN/efab_mr_reg" -p efa -f efa-direct \
		-m 1M -n 8 --regime accumulate --max-total 64M
	expect_msg "RLIMIT_MEMLOCK 4.0 MiB \(.* pinned already\) is below the 8.0 MiB of host memory this run pins at once \(accumulate at 1048576 B, --max-total 64.0 MiB\): raise it \(ulimit -l unlimited"
	[ "$(grep -c . "$WORK/last.err")" = 1 ] || die "not one line"
	expect_rc 2 efa_run "$1" prlimit --memlock=$lim $nocap "$EBIN/efab_mr_reg" -p efa -f efa-direct \
		-m 4K:16M:x16 -n 2 --regime fresh --max-total 1M
	expect_msg "below the 16.0 MiB of host memory this run pins at once \(fresh at 16777216 B"
	expect_rc 0 efa_run "$1" prlimit --memlock=$lim $nocap "$EBIN/efab_mr_reg" -p efa -f efa-direct \
		-m 1M -n 2 --regime accumulate --max-total 2M
	grep -q "^ *1M  *accumulate" "$WORK/last.out" || die "no accumulate row within the limit"
	if [ -n "$nocap" ]; then # root: CAP_IPC_LOCK exempts (kernel and efasim)
		expect_rc 0 efa_run "$1" prlimit --memlock=$lim "$EBIN/efab_mr_reg" -p efa -f efa-direct \
			-m 1M -n 8 --regime accumulate --max-total 64M
	fi
	# tcp pins nothing: no check
	expect_rc 0 timeout 60 prlimit --memlock=$lim $nocap "$EBIN/efab_mr_reg" -p tcp -m 1M -n 4 \
		--regime accumulate --max-total 64M
	# efasim: past the limit the registration itself fails (ENOMEM)
	expect_rc 1 efa_mpi "$1" 2 prlimit --memlock=$((1 << 20)) $nocap "$EBIN/efab_put_lat" -p efa -f efa-direct \
		-m 1M -n 2
	grep -q "failed: Cannot allocate memory (-12); host memory is pinned against RLIMIT_MEMLOCK: check ulimit -l" \
		"$WORK/last.err" || die "no ENOMEM from the registration, or no hint"
}

# reg_path (issue 45): which path libfabric took for a registration, read
# from its own log (bench/cli/reglog.c) around one untimed registration per size,
# the log given back before the timed calls. No GPU here: host memory says
# host, and the line libfabric logged (efa_mr.c "Registered memory at") is what
# the capture caught; with FI_LOG_LEVEL=info libfabric's own printing goes on,
# during the capture (re-printed) and after it (its own logger again): one
# line per registration, probe included. CUDA rows: tests/gpu/efasim_matrix.sh.
efa_mr_reg_path() { # V
	efasim_need "$1"
	rm -f "$WORK/p.csv"
	expect_rc 0 efa_run "$1" "$EBIN/efab_mr_reg" -p efa -f efa-direct -m 4K:64K:x4 -n 3 \
		--max-total 1M --csv "$WORK/p.csv" -v
	csvcheck "$WORK/p.csv" --bench mr_reg --rows 9 --lat --reg-path host \
		--extra $MRCOLS,domains,first_us,lat_us_p25,lat_us_p75,reg_path
	for g in fresh same accumulate; do
		grep -q "^# reg_path $g 4096 B: host (libfabric said 1 MR line; deciding: Registered memory at " \
			"$WORK/last.err" || die "no libfabric line captured for $g"
	done
	grep -q "^# reg_path = how libfabric registered a buffer of the size, from its own MR log (fi_import_log" "$WORK/last.out" || die "no header note"
	# libfabric's log is libfabric's again outside the capture
	expect_rc 0 efa_run "$1" "$EBIN/efab_mr_reg" -p efa -f efa-direct -m 4K -n 3 --regime fresh
	! grep -q "Registered memory" "$WORK/last.err" || die "a line printed without FI_LOG_LEVEL"
	expect_rc 0 env FI_LOG_LEVEL=info FI_LOG_SUBSYS=mr "$ROOT/tests/efasim/run" "$1" \
		"$EBIN/efab_mr_reg" -p efa -f efa-direct -m 4K -n 3 --regime fresh
	# the probe (re-printed during the capture) + 4 timed calls (libfabric's own)
	# + efabench's 4 KiB receive buffer
	[ "$(grep -c '^libfabric:[0-9]*:[0-9]*::efa:mr:.*<info> Registered memory at' "$WORK/last.err")" = 6 ] ||
		die "not one libfabric line per registration: $(grep -c 'Registered memory at' "$WORK/last.err")"
	# put_lat: each rank's registration of its buffer, in the header with -v
	expect_rc 0 efa_mpi "$1" 2 "$EBIN/efab_put_lat" -p efa -f efa-direct -m 8 -n 10 -v
	grep -q "^# reg_path (the path libfabric reported in its log for each rank's registration of its buffer, by rank): 0 host, 1 host" \
		"$WORK/last.out" || die "put_lat header has no reg_path"
	# shm and tcp register nothing on a NIC
	rm -f "$WORK/p.csv"
	expect_rc 0 timeout 60 "$EBIN/efab_mr_reg" -p tcp -m 4K -n 3 --regime fresh --csv "$WORK/p.csv"
	csvcheck "$WORK/p.csv" --bench mr_reg --rows 1 --reg-path - \
		--extra $MRCOLS,domains,first_us,lat_us_p25,lat_us_p75,reg_path
}
t_efa260_mr_reg_path() { efa_mr_reg_path 2.6.0; }

# configs/p5en-efa-vs-efa-direct.conf, scaled down to this machine (host memory,
# small sizes, one repeat, mpirun on loopback with each rank its own simulated
# host), through efab_sweep on two simulated NICs: every job ok or skipped,
# the run labelled simulated, and efab_plot keeping it apart from a real run.
efa_sweep_p5en() { # V
	efasim_need "$1"
	sed -e "s|^launcher = /opt.*|launcher = mpirun -np {np} --oversubscribe -x EFASIM_HOST=%r -x EFASIM_DIR -x EFASIM_PROFILE -x EFASIM_REORDER -x LD_LIBRARY_PATH -x PATH {env_flags}|" \
		-e 's|^mem = host, cuda|mem = host|' -e 's|^repeat = 3|repeat = 1|' \
		-e 's|^sizes = 4K:1G|sizes = 4K:1M:x16\niters = 5|' -e 's|^sizes = .*:16M.*|sizes = 8:64K:x64\niters = 5|' \
		-e 's|^sizes = 1:4M|sizes = 8:4K:x8\niters = 20|' -e 's|^components = true|components = false|' \
		-e 's|^job_timeout = .*|job_timeout = 120|' configs/p5en-efa-vs-efa-direct.conf >"$WORK/p5en-sim.conf"
	grep -q "EFASIM_HOST" "$WORK/p5en-sim.conf" || die "launcher not replaced"
	expect_rc 0 efa_run "$1" "$EBIN/efab_sweep" "$WORK/p5en-sim.conf" -o "$WORK/res" --label p5en-sim
	local dir
	dir=$(ls -d "$WORK"/res/*-p5en-sim)
	[ ! -e "$dir/INCOMPLETE" ] || die "sweep incomplete"
	grep -q '"simulated": "efasim' "$dir/meta.json" || die "meta.json does not say simulated"
	python3 - "$dir" <<'EOF2' || die "sweep jobs wrong"
import csv, glob, os, sys
d = sys.argv[1]
jobs = list(csv.DictReader(open(os.path.join(d, "jobs.tsv")), delimiter="\t"))
status = {}
for j in jobs:
    status.setdefault(j["status"], []).append(j["job"])
assert set(status) <= {"ok", "skip"}, status
assert all("atomic" in j for j in status.get("skip", [])), status
assert all("efa-direct" in j for j in status.get("skip", [])), status
fabrics = {r["fabric"] for f in glob.glob(os.path.join(d, "*.csv")) for r in csv.DictReader(open(f))}
assert fabrics == {"efa", "efa-direct"}, fabrics
EOF2
	expect_rc 0 python3 plot/efab_plot "$dir" -o "$WORK/plots" --group-by fabric
	grep -q "efa-direct (simulated)" "$WORK/plots/report.md" || die "report does not label simulated groups"
	grep -q "SIMULATED" "$WORK/plots/report.md" || die "report lacks the simulated banner"
	# issue 25: the two-fabric sweep's report reads the proof of path
	grep -q "What the NIC did" "$WORK/plots/report.md" || die "no 'What the NIC did' section"
	grep -q "Software cost per operation" "$WORK/plots/report.md" || die "no software-cost section"
	grep -Eq '\| efa-direct \(simulated\) \| 4K \| device-write \|' "$WORK/plots/report.md" || die "efa-direct 4K put not device-write in the report"
	grep -q "post efa (ns) | post efa-direct (ns)" "$WORK/plots/report.md" || die "software cost not side by side"
	# beside a real run: refused unless asked, then labelled
	local real
	real=$(ls -d results/*-vm-loopback-ref | head -1)
	expect_rc 2 python3 plot/efab_plot "$dir" "$real" -o "$WORK/mixed"
	grep -q "SIMULATED EFA device" "$WORK/last.err" || die "refusal does not say why"
	expect_rc 0 python3 plot/efab_plot "$dir" "$real" -o "$WORK/mixed" --allow-simulated
	grep -q "p5en-sim (simulated)" "$WORK/mixed/report.md" || die "mixed report does not label the simulated run"
}

# Somebody else's tests: libfabric's own fabtests from the same release, the
# commands the efa provider's pytest suite runs for pingpong, RMA bandwidth and
# pingpong, atomics and fi_efa_info_test (tests/efasim/fabtests; the whole list
# with `tests/efasim/fabtests V`). SKIPs there are documented fabric limits.
efa_fabtests_core() { # V
	efasim_need "$1"
	efasim_built "$1" .fabtests-done
	# the newest release gets the whole core set, the older ones its RMA tests
	# and fi_efa_info_test (CI time; efabench is RMA)
	local sel='fi_rdm_pingpong|fi_rma_bw|fi_rma_pingpong|fi_rdm_atomic|fi_efa_info_test' last
	for last in $EFASIM_VERSIONS; do :; done
	[ "$1" = "$last" ] || sel='fi_rma_bw|fi_rma_pingpong|fi_efa_info_test'
	expect_rc 0 env FT_TIMEOUT=60 "$ROOT/tests/efasim/fabtests" "$1" \
		"^(efa|efa-direct) (FI_HMEM=system )?($sel) "
	grep -q "^fabtests $1: [1-9][0-9]* pass, [0-9]* skip, 0 fail" "$WORK/last.out" || die "fabtests summary"
}

# The direct (MMIO) data path (tests/efasim/direct.c): on 2.4 and 2.6 the
# provider asks efadv_query_qp_wqs / efadv_query_cq and runs every operation
# through the queues they hand out (EFASIM_LOG=1 names each query; the engine's
# exit line counts the WQEs it ran); FI_EFA_USE_DATA_PATH_DIRECT=0 and a
# first-generation device (p4d, 0xefa0: the provider's sub-CQ mode) keep it on
# the verbs path, as does 2.1, which has no direct path. The provider itself
# logs nothing about it at FI_LOG_LEVEL=info, so the simulator's lines are the proof.
efa_direct_path() { # V
	efasim_need "$1"
	local q
	expect_rc 0 efa_mpi "$1" 2 -x EFASIM_LOG=1 -x EFASIM_ENGINE_STATS=1 "$EBIN/efab_put_lat" -p efa -f efa-direct \
		-m 8:64K:x8 -n 50 -c
	q=$(grep -c "direct data path: QP" "$WORK/last.err")
	if [ "$1" = 2.1.0 ]; then
		[ "$q" = 0 ] || die "2.1 has no direct path, yet $q QPs asked for one"
		return 0
	fi
	[ "$q" -ge 2 ] || die "direct path: $q QPs (want one per rank)"
	grep -q "direct data path: CQ" "$WORK/last.err" || die "no CQ on the direct path"
	grep -Eq "direct engine [0-9]+ wakeups, [1-9][0-9]* WQEs" "$WORK/last.err" || die "the engine ran no WQE"
	grep -q "SQ 2048 x 64 B" "$WORK/last.err" || die "p5en SQ is not 2048 entries of 64 B"
	expect_rc 0 efa_mpi "$1" 2 -x EFASIM_LOG=1 -x FI_EFA_USE_DATA_PATH_DIRECT=0 "$EBIN/efab_put_lat" -p efa \
		-f efa-direct -m 8:64K:x8 -n 50 -c
	! grep -q "direct data path" "$WORK/last.err" || die "FI_EFA_USE_DATA_PATH_DIRECT=0 still took the direct path"
	# p4d: the efa fabric (efa-direct offers no RMA without RDMA write)
	expect_rc 0 efa_mpi "$1" 2 -x EFASIM_LOG=1 -x EFASIM_PROFILE=p4d "$EBIN/efab_put_lat" -p efa -f efa \
		-m 8:64K:x8 -n 50 -c
	! grep -q "direct data path" "$WORK/last.err" || die "p4d (0xefa0) took the direct path instead of sub-CQ mode"
}

# The simulated NIC's hw_counters (tests/efasim/counters.c, the driver's names):
# after a 4 MiB put_bw on efa-direct, on each data path, the initiator's
# rdma_write_bytes are its rdma_write_wrs x 4 MiB, at least the measured
# windows' worth, and the responder's rdma_write_recv_bytes are the same bytes.
efa_hw_counters() { # V
	efasim_need "$1"
	local d
	for d in 1 0; do
		rm -rf "$EFASIM_DIR" "$WORK/hw.csv"
		expect_rc 0 efa_mpi "$1" 2 -x FI_EFA_USE_DATA_PATH_DIRECT=$d "$EBIN/efab_put_bw" -p efa -f efa-direct \
			-m 4M -n 5 -c --csv "$WORK/hw.csv"
		python3 - "$EFASIM_DIR" "$WORK/hw.csv" <<'EOF2' || die "hw_counters wrong (FI_EFA_USE_DATA_PATH_DIRECT=$d)"
import csv, os, sys
def hw(host):
    d = os.path.join(sys.argv[1], "sysfs-" + host, "class/infiniband/rdmap16s0/ports/1/hw_counters")
    return {f: int(open(os.path.join(d, f)).read()) for f in os.listdir(d)}
a, b = hw("rank0"), hw("rank1")
names = {"tx_bytes", "tx_pkts", "rx_bytes", "rx_pkts", "rx_drops", "send_bytes", "send_wrs", "recv_bytes", "recv_wrs",
         "rdma_read_wrs", "rdma_read_bytes", "rdma_read_wr_err", "rdma_read_resp_bytes", "rdma_write_wrs",
         "rdma_write_bytes", "rdma_write_wr_err", "rdma_write_recv_bytes", "retrans_bytes", "retrans_pkts",
         "retrans_timeout_events", "unresponsive_remote_events", "impaired_remote_conn_events", "lifespan"}
assert set(a) == names, set(a) ^ names
row = list(csv.DictReader(open(sys.argv[2])))[0]
moved = int(row["iters"]) * int(row["window"]) * 4 << 20
# besides the 4 MiB writes, the stream's confirmed end (end_confirm
# unordered-flag): one 8-byte end flag from rank 0, one 8-byte acknowledgement
# from rank 1
assert row["end_confirm"] == "unordered-flag", row["end_confirm"]
w = a["rdma_write_wrs"] - 1
assert a["rdma_write_bytes"] == w * (4 << 20) + 8, (a["rdma_write_bytes"], w)
assert w * (4 << 20) >= moved, (w, moved)
assert b["rdma_write_recv_bytes"] == a["rdma_write_bytes"], (b["rdma_write_recv_bytes"], a["rdma_write_bytes"])
assert b["rdma_write_wrs"] == 1 and b["rdma_write_bytes"] == 8 and a["rdma_write_recv_bytes"] == 8, (a, b)
assert a["tx_bytes"] >= a["rdma_write_bytes"] and b["rx_bytes"] >= a["rdma_write_bytes"], (a, b)
assert a["rdma_write_wr_err"] == 0 and a["rdma_read_wrs"] == 0, (a, b)
print("rdma_write_bytes", a["rdma_write_bytes"], "=", w, "x 4 MiB + the 8-byte end flag; measured windows", moved)
EOF2
	done
}

# The direct path under faults, each ending in the completion a NIC gives,
# parsed from the device CQE: a dead peer (EFASIM_DROP_HOST: "unresponsive
# remote", counted in unresponsive_remote_events), a slow NIC (EFASIM_SLOW: the
# data still checks, at the rate set), RNR with a full receive queue and the
# provider's RNR resend queue (fabtests fi_efa_rnr_*), reordered multi-packet
# writes (efa_reordered_writes runs on the direct path by default).
efa_direct_faults() { # V
	efasim_need "$1"
	rm -rf "$EFASIM_DIR"
	efa_mpi "$1" 2 -x EFASIM_DROP_HOST=rank1 -x EFASIM_LOG=1 "$EBIN/efab_put_lat" -p efa -f efa-direct -m 8 -n 20 \
		>"$WORK/dead.out" 2>"$WORK/dead.err" && die "a dead peer did not fail the run"
	grep -q "direct data path: QP" "$WORK/dead.err" || die "not on the direct path"
	grep -q "completion error: .*Unresponsive remote" "$WORK/dead.err" || { cat "$WORK/dead.err"; die "no unresponsive-remote completion"; }
	# the ranks were killed (no exit refresh): the files are the kernel's cache,
	# refreshed for a later reader by any efasim process of the host (counters.c)
	efa_run "$1" env EFASIM_HOST=rank0 fi_info -p efa >/dev/null 2>&1
	[ "$(cat "$EFASIM_DIR/sysfs-rank0/class/infiniband/rdmap16s0/ports/1/hw_counters/unresponsive_remote_events")" -ge 1 ] ||
		die "unresponsive_remote_events not counted"
	expect_rc 0 efa_mpi "$1" 2 -x EFASIM_SLOW=0:50:0 "$EBIN/efab_put_bw" -p efa -f efa-direct -m 256K -W 4 -n 3 -c \
		--csv "$WORK/slow.csv"
	# a window is 4 x 256 KiB: at 50 MB/s no faster than 21 ms (slower is the machine's load)
	python3 - "$WORK/slow.csv" <<'EOF2' || die "a 50 MB/s NIC moved data faster"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
w = float(r["window_us_p50"])
assert w >= 0.95 * 4 * 262144 / 50, w
assert r["errors"] == "0", r["errors"]
EOF2
	efasim_built "$1" .fabtests-done
	expect_rc 0 env FT_TIMEOUT=60 "$ROOT/tests/efasim/fabtests" "$1" 'fi_efa_rnr_'
	grep -q "^fabtests $1: [1-9][0-9]* pass, 0 skip, 0 fail" "$WORK/last.out" || die "fabtests RNR summary"
}

# The verbs path (FI_EFA_USE_DATA_PATH_DIRECT=0), kept small for CI: the
# operations of both fabrics with data checks, and the RNR fabtests.
efa_verbs_path() { # V
	efasim_need "$1"
	local f x="-x FI_EFA_USE_DATA_PATH_DIRECT=0"
	for f in efa-direct efa; do
		expect_rc 0 efa_mpi "$1" 2 $x "$EBIN/efab_put_lat" -p efa -f $f -o writedata -m 8:64K:x8 -n 30 -c
		expect_rc 0 efa_mpi "$1" 2 $x "$EBIN/efab_get_bw" -p efa -f $f -m 8:1M:x32 -n 5 -c
	done
	expect_rc 0 env FI_EFA_USE_DATA_PATH_DIRECT=0 FT_TIMEOUT=60 "$ROOT/tests/efasim/fabtests" "$1" \
		'^(efa|efa-direct) (FI_HMEM=system )?(fi_rdm_pingpong -v|fi_rma_bw -e rdm -o (write|read) -v|fi_efa_rnr_read_cq_error)'
	grep -q "^fabtests $1: [1-9][0-9]* pass, [0-9]* skip, 0 fail" "$WORK/last.out" || die "fabtests summary"
}

# Issue 48: what --post-list, --high-pps and --tclass change reaches the
# device (EFASIM_QP_STATS=1: each QP's record at destroy, tests/efasim/qp.c).
# --tclass low-latency: the QP's service level 8 (efa_base_ep.c efa_qp_create);
# --high-pps: the burst-PPS hint on every payload write (2.6.0 only with
# FI_EFA_ENABLE_HIGH_PPS=1; without it 0, as its efa_env.c reads); --post-list
# 8 in windows of 64: FI_MORE holds the WQEs until every 8th post rings the
# doorbell, so no doorbell advance makes 2 to 7 WQEs visible (the end flags
# and acknowledgements are posted alone: advances of 1). Each run -c checked;
# then the pipeline for write, writedata and read.
efa_peak() { # V
	efasim_need "$1"
	local v=$1 qs
	qs="$WORK/qp.txt"
	rm -f "$WORK/p.csv"
	EFASIM_QP_STATS=1 FI_EFA_ENABLE_HIGH_PPS=1 expect_rc 0 efa_mpi "$v" 2 -x EFASIM_QP_STATS \
		-x FI_EFA_ENABLE_HIGH_PPS "$EBIN/efab_put_bw" -p efa -f efa-direct -m 8:4K:x8 -W 64 -n 40 -w 2 \
		-c --post-list 8 --high-pps --tclass low-latency --csv "$WORK/p.csv"
	simulated_csv "$WORK/p.csv"
	csvcheck "$WORK/p.csv" --bench put_bw --rows 4 --bw \
		--extra pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link \
		--where post_list=8 --where high_pps=yes --where tclass=FI_TC_LOW_LATENCY
	grep "^efasim\[" "$WORK/last.err" >"$qs"
	python3 - "$qs" 4 42 <<'PY' || die "$v: the device did not see the flags"
import re, sys
sizes, windows = int(sys.argv[2]), int(sys.argv[3])
qps = []
for l in open(sys.argv[1]):
    m = re.search(r"sl (\d+) hints (\w+): direct (\d+) WQEs in (\d+) doorbell advances "
                  r"\(by WQEs [^:]*: ([\d/]+)\), (\d+) burst-PPS", l)
    assert m, l
    qps.append((int(m.group(3)), int(m.group(1)), m.group(2), [int(x) for x in m.group(5).split("/")],
                int(m.group(6))))
assert len(qps) == 2, qps
init = max(qps)
wqes, sl, hints, hist, pps = init
payload = sizes * windows * 64
assert all(q[1] == 8 for q in qps), ("service level", qps)
assert hints == "on", qps
assert pps == payload, ("burst-PPS WQEs", pps, payload)
assert hist[1] == 0 and hist[2] == 0, ("advances of 2-7 WQEs under --post-list 8", hist)
print("initiator: %d WQEs, doorbell advances by size %s, %d burst-PPS, sl %d" % (wqes, hist, pps, sl))
PY
	# without FI_EFA_ENABLE_HIGH_PPS: 2.6.0 drops the hint, later versions keep it
	EFASIM_QP_STATS=1 expect_rc 0 efa_mpi "$v" 2 -x EFASIM_QP_STATS "$EBIN/efab_put_bw" -v -p efa \
		-f efa-direct -m 64 -W 16 -n 10 -w 1 --high-pps
	local want="[1-9][0-9]*"
	[ "$v" = 2.6.0 ] && want=0
	grep -Eq "direct [0-9]{3,} WQEs.*, $want burst-PPS" "$WORK/last.err" || die "$v: hint without FI_EFA_ENABLE_HIGH_PPS"
	grep -q "^# --high-pps: .*without FI_EFA_ENABLE_HIGH_PPS\|(unset here: the flag is ignored)" \
		"$WORK/last.out" || die "$v: header does not say what the provider does with the flag"
	# the pipelined loop, checked, each operation; --eps 2: two QPs per rank, the
	# payload's WQEs split between them in --post-list batches
	EFASIM_QP_STATS=1 expect_rc 0 efa_mpi "$v" 2 -x EFASIM_QP_STATS "$EBIN/efab_put_bw" -v -p efa \
		-f efa-direct -m 8:64K:x32 -W 32 -n 10 -w 2 -c --pipeline --post-list 8 --eps 2 \
		--footprint window
	grep -q "^# --eps 2: 2 endpoints per rank" "$WORK/last.out" || die "$v: no --eps note"
	python3 - "$WORK/last.err" <<'PY' || die "$v: --eps 2 did not split the work over two QPs"
import re, sys
w = sorted(int(m.group(1)) for m in re.finditer(r"direct (\d+) WQEs", open(sys.argv[1]).read()))
# the initiator's two QPs: 3 sizes x 12 windows x 32 = 1152 payload WQEs, half each
# (plus the end flags on the first); the target posts its acknowledgements
assert len(w) >= 3 and w[-1] - 3 <= 576 <= w[-2] + 3 and w[-1] + w[-2] >= 1152, w
PY
	expect_rc 0 efa_mpi "$v" 2 "$EBIN/efab_put_bw" -p efa -f efa-direct -o writedata -m 8:64K:x32 \
		-W 32 -n 10 -c --pipeline --high-pps
	expect_rc 0 efa_mpi "$v" 2 "$EBIN/efab_get_bw" -p efa -f efa-direct -m 8:64K:x32 -W 32 -n 10 \
		-c --pipeline --post-list 4 --footprint window
}

# --pipeline --post-list N: every doorbell closes a whole list of N work
# requests (issue 62). The provider rings the SQ doorbell once per post
# without FI_MORE; bench/tools/fipost.c (LD_PRELOAD) counts those posts and
# the WQEs each closes. EFASIM_SLOW gives every operation 400 us on the
# simulated wire, so completions come back one or two at a time: a loop that
# posts each freed slot at once (efabench before issue 62, fi_efa_rma_bw)
# closes lists of 1-2 there (1x3 2x23 4x12 in 97 posts when this test was
# written); whole lists only: 4 x 24 and the end flag alone.
efa_post_list_doorbells() { # V
	efasim_need "$1"
	local v=$1 pre=$EBIN/../lib/libefab_fipost.so op
	[ -e "$pre" ] || die "$pre not built (make efasim V=$v builds it with efabench)"
	for op in write writedata read; do
		local bin=efab_put_bw
		[ $op = read ] && bin=efab_get_bw
		EFASIM_SLOW=0:0:200 expect_rc 0 efa_mpi "$v" 2 -x EFASIM_SLOW -x LD_PRELOAD="$pre" \
			"$EBIN/$bin" -p efa -f efa-direct -o $op -m 8 -W 16 -n 4 -w 2 --footprint window \
			--pipeline --post-list 4 -c
		grep "^fipost\[" "$WORK/last.err" >"$WORK/fipost.txt"
		python3 - "$WORK/fipost.txt" "$op" <<'PY' || die "$v $op: a doorbell closed a partial post list"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, lines
runs = []
for l in lines:
    m = re.search(r"rma posts (\d+) .*batches \(WQEs x doorbells\):(.*)", l)
    assert m, l
    runs.append((int(m.group(1)), dict(tuple(int(x) for x in b.split("x"))
                                       for b in m.group(2).split() if b != "none")))
posts, hist = max(runs)
# window 0, a warmup window and 4 measured: 6 x 16 operations, lists of 4
ops = 6 * 16
assert hist.get(4, 0) == ops // 4, (sys.argv[2], "lists of 4", hist)
# the end flag (write, writedata: a write of its own) rings alone
assert posts - ops == hist.get(1, 0) and hist.get(1, 0) <= 1, (sys.argv[2], posts, hist)
assert set(hist) <= {1, 4}, (sys.argv[2], hist)
print("%s: initiator %d posts, doorbells by list size %s" % (sys.argv[2], posts, hist))
PY
	done
}
t_efa260_post_list_doorbells() { efa_post_list_doorbells 2.6.0; }
t_efa270_post_list_doorbells() { efa_post_list_doorbells 2.7.0a1; }

# --signal-send (issue 62 item 3, the raw partner of NVSHMEM's put-with-signal):
# every writedata followed by a 32-byte fi_send that the target counts. The
# latency and the stream run checked; a signal that carries the wrong message
# (EFAB_FAULT_SIGNAL=4: every 4th) must fail both; the stream's credits keep
# the sends within the target's posted receives while it stops reading its CQ
# for 300 ms (EFAB_FAULT_RX_PAUSE_MS): efasim counts the work requests that met
# RNR (EFASIM_QP_STATS), 0 with credits, some without (EFAB_FAULT_NO_CREDITS).
efa_signal_send() { # V
	efasim_need "$1"
	local v=$1
	expect_rc 0 efa_mpi "$v" 2 "$EBIN/efab_put_lat" -p efa -f efa-direct -o writedata --signal-send \
		-m 8:64K:x32 -n 50 -w 5 -c
	grep -q "^# efabench .*: put_lat, op writedata+send" "$WORK/last.out" || die "$v: op not writedata+send"
	grep -q "^# --signal-send: every writedata followed by a 32-byte fi_send" "$WORK/last.out" ||
		die "$v: the short header lacks --signal-send"
	expect_rc 0 efa_mpi "$v" 2 "$EBIN/efab_put_bw" -p efa -f efa-direct -o writedata --signal-send \
		-m 8:64K:x32 -W 32 -n 20 -w 2 -c --csv "$WORK/sig.csv"
	python3 - "$WORK/sig.csv" <<'PY' || die "$v: the stream's rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 3, rows
for r in rows:
    assert r["op"] == "writedata+send" and r["end_confirm"] == "signal-count", r
    assert r["errors"] == "0" and float(r["msg_rate_Mops"]) > 0, r
    # the signals are sends, not the payload: the path is the writes' (at 8 B the 32-byte
    # signals once made it "mixed")
    assert r["path"] == "device-write" and int(r["nic_init_send_wrs"]) > 0, r
PY
	simulated_csv "$WORK/sig.csv"
	EFAB_FAULT_SIGNAL=4 expect_rc 1 efa_mpi "$v" 2 -x EFAB_FAULT_SIGNAL "$EBIN/efab_put_lat" -p efa \
		-f efa-direct -o writedata --signal-send -m 8 -n 20 -w 2 -c
	grep -q "signal message carried 4, the writedata before it 3" "$WORK/last.err" ||
		die "$v: the wrong signal was not named"
	# every 2nd signal wrong, 4 a window: 2 errors in each of the 11 checked windows (a check of
	# the last signal alone counted 1 a window)
	EFAB_FAULT_SIGNAL=2 expect_rc 1 efa_mpi "$v" 2 -x EFAB_FAULT_SIGNAL "$EBIN/efab_put_bw" -p efa \
		-f efa-direct -o writedata --signal-send -m 8 -W 4 -n 10 -w 1 -c --csv "$WORK/sigf.csv"
	grep -q "validation failed: 22 errors" "$WORK/last.err" || die "$v: not every wrong signal counted"
	# the efa fabric (its protocol path; each rank its own simulated host): checked, no errors
	expect_rc 0 efa_mpi "$v" 2 "$EBIN/efab_put_lat" -p efa -f efa -o writedata --signal-send \
		-m 8:64K:x32 -n 30 -w 3 -c
	expect_rc 0 efa_mpi "$v" 2 "$EBIN/efab_put_bw" -p efa -f efa -o writedata --signal-send \
		-m 8:64K:x32 -W 32 -n 10 -w 2 -c
	local fault rnr
	for fault in none EFAB_FAULT_NO_CREDITS=1; do
		EFAB_FAULT_NO_CREDITS=0
		[ "$fault" = none ] || EFAB_FAULT_NO_CREDITS=1
		EFAB_FAULT_NO_CREDITS=$EFAB_FAULT_NO_CREDITS EFASIM_QP_STATS=1 EFAB_FAULT_RX_PAUSE_MS=300 \
			expect_rc 0 efa_mpi "$v" 2 -x EFASIM_QP_STATS -x EFAB_FAULT_RX_PAUSE_MS \
			-x EFAB_FAULT_NO_CREDITS "$EBIN/efab_put_bw" -p efa -f efa-direct -o writedata \
			--signal-send -m 8 -W 64 -n 40 -w 1
		rnr=$(grep -o '[0-9]* RNR$' "$WORK/last.err" | awk '{ n += $1 } END { print n + 0 }')
		[ "$(grep -c ' RNR$' "$WORK/last.err")" = 2 ] || die "$v: no efasim qp lines"
		case $fault in
		none) [ "$rnr" = 0 ] || die "$v: $rnr sends met RNR with credits" ;;
		*) [ "$rnr" -gt 0 ] || die "$v: no RNR without credits: the test cannot see what they prevent" ;;
		esac
	done
	expect_rc 2 efa_mpi "$v" 2 "$EBIN/efab_put_bw" -p efa -f efa-direct -o write --signal-send -m 8 -n 2
	grep -q "give -o writedata" "$WORK/last.err" || die "$v: --signal-send with -o write not refused"
	expect_rc 2 efa_mpi "$v" 2 "$EBIN/efab_put_bw" -p efa -f efa-direct -o writedata --signal-send \
		--pipeline -m 8 -n 2
	grep -q "not with --bidir, --pipeline" "$WORK/last.err" || die "$v: --signal-send --pipeline not refused"
}
t_efa260_signal_send() { efa_signal_send 2.6.0; }
t_efa270_signal_send() { efa_signal_send 2.7.0a1; }

for _v in $EFASIM_VERSIONS; do
	_n=${_v//./}
	_n=${_n%%a*} # 2.7.0a1 -> 270
	eval "t_efa${_n}_discovery() { efa_discovery $_v; }"
	eval "t_efa${_n}_benchmarks() { efa_benchmarks $_v; }"
	eval "t_efa${_n}_src_unregistered() { efa_src_unregistered $_v; }"
	eval "t_efa${_n}_probe_live() { efa_probe_live $_v; }"
	eval "t_efa${_n}_probe_live_put() { efa_probe_live_put $_v; }"
	eval "t_efa${_n}_mr_cache_scope() { efa_mr_cache $_v; }"
	eval "t_efa${_n}_fabtests_core() { efa_fabtests_core $_v; }"
	eval "t_efa${_n}_direct_path() { efa_direct_path $_v; }"
	if [ "$_v" = 2.1.0 ]; then
		eval "t_efa${_n}_no_rma_without_unsolicited() { efa_no_rma_before_24 $_v; }"
	else
		eval "t_efa${_n}_writedata_rx_cq_data() { efa_writedata_rx_cq_data $_v; }"
	fi
done
# A registry left by another efasim build (a stale EFASIM_DIR, here /tmp/efasim-UID
# of an older checkout) is named on stderr with what to do, not only "cannot
# open registry": its size differs, so this build cannot share it.
t_efa260_stale_registry() {
	efasim_need 2.6.0
	local d=$WORK/stale
	mkdir -p "$d"
	head -c 4096 /dev/zero >"$d/registry"
	EFASIM_DIR=$d efa_run 2.6.0 fi_info -p efa >"$WORK/last.out" 2>&1
	cat "$WORK/last.out"
	grep -q "efasim: $d/registry was made by another efasim build (its magic or size differs: 4096 bytes" \
		"$WORK/last.out" || die "the stale registry is not named"
	grep -q "remove $d or set EFASIM_DIR" "$WORK/last.out" || die "no way out said"
	[ "$(wc -c <"$d/registry")" = 4096 ] || die "the other build's registry was changed"
}
t_efa260_reordered_writes() { efa_reordered_writes 2.6.0; }
t_efa260_cq_depth() { efa_cq_depth 2.6.0; }
t_efa260_writedata_credits() { efa_writedata_credits 2.6.0; }
t_efa270_writedata_credits() { efa_writedata_credits 2.7.0a1; }
t_efa260_unload() { efa_unload 2.6.0; }
t_efa270_unload() { efa_unload 2.7.0a1; }
t_efa260_peak_flags() { efa_peak 2.6.0; }
# --no-cuda-api: efa-direct takes FI_OPT_CUDA_API_PERMITTED = false as a no-op
# and runs (the header says it was set); the efa fabric refuses it where
# libfabric found no CUDA library or device (efa_rdm_ep_set_cuda_api_permitted:
# -FI_EINVAL), exit 77 and its answer on one line per rank
t_efa260_no_cuda_api() {
	efasim_need 2.6.0
	expect_rc 0 efa_mpi 2.6.0 2 "$EBIN/efab_put_lat" -v -p efa -f efa-direct -m 8:64 -n 3 -w 1 -c --no-cuda-api
	grep -q "^# --no-cuda-api: every endpoint was opened with FI_OPT_CUDA_API_PERMITTED = false" \
		"$WORK/last.out" || die "efa-direct: the header does not say --no-cuda-api was set"
	# with a CUDA driver here libfabric answers otherwise (accepted with GPU
	# peer-to-peer, -FI_EOPNOTSUPP without): that is gpu-check's case
	if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
		echo "  (a CUDA driver is here: the efa fabric's refusal without CUDA is not checked)"
		return 0
	fi
	expect_rc 77 efa_mpi 2.6.0 2 "$EBIN/efab_get_bw" -p efa -f efa -m 64 -n 2 --no-cuda-api
	expect_msg "--no-cuda-api: fi_setopt\\(FI_OPT_CUDA_API_PERMITTED, false\\) on efa \\(fabric efa\\): Invalid argument \\(-22\\)"
}
t_efa260_mr_reg_memlock() { efa_memlock 2.6.0; }
t_efa260_hw_counters() { efa_hw_counters 2.6.0; }
t_efa260_direct_faults() { efa_direct_faults 2.6.0; }
t_efa260_verbs_path() { efa_verbs_path 2.6.0; }
t_efa240_verbs_path() { efa_verbs_path 2.4.0; }
t_efa260_sweep_p5en_configs() { efa_sweep_p5en 2.6.0; }
# libfabric 2.7.0a1 (pre-release snapshot) on rdma-core main (pre-release
# snapshot) and efasim's sim-main build, whose device has completion counters
t_efa270_reordered_writes() { efa_reordered_writes 2.7.0a1; }
t_efa270_peak_flags() { efa_peak 2.7.0a1; }
t_efa270_hw_counters() { efa_hw_counters 2.7.0a1; }
t_efa270_direct_faults() { efa_direct_faults 2.7.0a1; }
t_efa270_verbs_path() { efa_verbs_path 2.7.0a1; }
# (efa_sweep_p5en stays on 2.6.0 only: it checks efab_sweep and efab_plot on
# the simulated device, which t_efa270_benchmarks' libfabric paths do not
# change; 33 s of CI saved)

# The simulated device's GPU memory (tests/efasim/memkind.c) through the verbs
# the efa provider calls: CUDA device memory and CUDA dmabufs register with
# GPUDirect (EFASIM_P2P unset) and are refused as on a device without it
# (EFASIM_P2P=0); managed memory and bad ranges fail as the kernel's pin does.
# Without a GPU (CI) it skips with the reason; on the GPU device it runs.
t_efasim_gpu_registration() {
	local b=$EFASIM_BUILD_DIR/sim/bin/gpu_selftest rc
	efasim_built 2.6.0
	[ -x "$b" ] || { echo "$b not built: make efasim V=2.6.0"; exit 77; }
	export EFASIM_DIR="$WORK/efasim"
	"$ROOT/tests/efasim/run" 2.6.0 timeout 60 "$b" >"$WORK/p2p.out" 2>&1
	rc=$?
	cat "$WORK/p2p.out"
	[ $rc = 77 ] && exit 77
	[ $rc = 0 ] || die "gpu_selftest with GPUDirect: exit $rc"
	grep -q '^ok   ibv_reg_mr on cuMemAlloc memory' "$WORK/p2p.out" || die "device memory did not register"
	expect_rc 0 env EFASIM_P2P=0 "$ROOT/tests/efasim/run" 2.6.0 timeout 60 "$b"
	grep -q '^ok   EFASIM_P2P=0: ibv_reg_mr on cuMemAlloc memory: EFAULT' "$WORK/last.out" || die "EFASIM_P2P=0 registered"
}

# tests/efasim/spin_copy (issue 47's diagnostic: can efasim's copy finish
# while a kernel spins waiting for it): built beside gpu_selftest where
# cuda.h is; a usage error is one line and exit 2; without a GPU exit 77 with
# the reason; with one, a case ends (ran beside: 0, BLOCKED: 3), never hangs
t_efasim_spin_copy() {
	local b=$EFASIM_BUILD_DIR/sim/bin/spin_copy
	efasim_built 2.6.0
	[ -x "$b" ] || { echo "$b not built (no cuda.h when efasim was built)"; exit 77; }
	expect_rc 2 "$b" nonesuch
	[ "$(wc -l <"$WORK/last.err")" = 1 ] || die "usage: not one line"
	grep -q "^usage: spin_copy alone|queued|cold|h2d|streams|onecpu|prio|query|ipcproc|twoproc" "$WORK/last.err" || die "usage text"
	expect_rc 2 "$b" queued 0
	grep -q "LIMIT_S 0: expected 0 < s <= 60" "$WORK/last.err" || die "a zero limit accepted"
	# a CUDA driver that finds no GPU (a stub libcuda.so.1 whose every call
	# answers CUDA_ERROR_NO_DEVICE): every case, those with a helper or
	# spinner process too, exits 77 saying so, in time
	mkdir -p "$WORK/stub"
	local f
	for f in cuInit cuDeviceGet cuDeviceGetAttribute cuDevicePrimaryCtxRetain cuCtxSetCurrent \
		cuCtxGetStreamPriorityRange cuStreamCreate cuStreamCreateWithPriority cuStreamSynchronize cuStreamQuery \
		cuEventCreate cuEventRecord cuMemAlloc_v2 cuMemHostAlloc cuMemHostGetDevicePointer_v2 cuMemcpyAsync \
		cuModuleLoadData cuModuleGetFunction cuLaunchKernel cuIpcGetMemHandle cuIpcOpenMemHandle_v2 \
		cuGetErrorString; do
		echo "int $f(void) { return 100; }"
	done >"$WORK/stub/cuda.c"
	cc -shared -fPIC -o "$WORK/stub/libcuda.so.1" "$WORK/stub/cuda.c" || die "the stub libcuda"
	for c in alone queued query twoproc ipcproc; do
		LD_LIBRARY_PATH="$WORK/stub" timeout 20 "$b" "$c" 1 >"$WORK/last.out" 2>&1
		local r=$?
		[ $r = 77 ] || { cat "$WORK/last.out"; die "spin_copy $c under a driver without a GPU: exit $r, expected 77"; }
		grep -q "^$c: SKIP cuInit/cuDeviceGet failed" "$WORK/last.out" || die "spin_copy $c: no reason given"
	done
	if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
		timeout 30 "$b" queued 1 >"$WORK/last.out" 2>&1
		local rc=$?
		[ $rc = 77 ] || die "spin_copy without a GPU: exit $rc, expected 77"
		grep -q "^queued: SKIP " "$WORK/last.out" || die "spin_copy without a GPU does not say why"
		return 0
	fi
	timeout 60 "$b" alone 3 >"$WORK/last.out" 2>&1
	local rc=$?
	cat "$WORK/last.out"
	[ $rc = 0 ] || [ $rc = 3 ] || die "spin_copy alone: exit $rc"
	grep -q "^alone: .*copy D2H" "$WORK/last.out" || die "spin_copy alone: no verdict line"
}

# The kernel's object rules on the simulated device (tests/efasim/objrules.c):
# destroying a PD with MRs, QPs or AHs on it, or a CQ a QP is bound to,
# fails with EBUSY as ib_uverbs refuses it; the MR carries the type and
# access flags rdma-core's verbs layer fills in. A table of bad usage.
efasim_object_rules() { # V SIM: SIM/bin/objrules under libfabric V's environment
	efasim_built "$1"
	local b=$EFASIM_BUILD_DIR/$2/bin/objrules
	[ -x "$b" ] || die "$b not built (tests/efasim/build $1 sim)"
	export EFASIM_DIR="$WORK/efasim"
	unset EFASIM_EBUSY_LOG # its refusals are what it checks
	expect_rc 0 efa_run "$1" "$b"
	[ "$(grep -c '^ok ' "$WORK/last.out")" = 12 ] || die "12 rows expected"
}
t_efasim_object_rules() { efasim_object_rules 2.6.0 sim; }
# the simulator built against rdma-core main (pre-release snapshot), which
# libfabric 2.7.0a1 (pre-release snapshot) runs on
t_efa270_object_rules() { efasim_object_rules 2.7.0a1 sim-main; }

# libfabric 2.7.0a1's own hardware-counter fabtests (pytest/efa/test_hw_cntr.py:
# fi_efa_hw_cntr, FI_EFA_USE_HW_CNTR=1, efa-direct, pingpong and RMA write,
# counters in the library's memory and in external memory) on efasim's
# completion counters (compcntr.c); fabtests built against rdma-core main
t_efa270_fabtests_hw_cntr() {
	efasim_need 2.7.0a1
	efasim_built 2.7.0a1 .fabtests-done
	[ -x "$EFASIM_BUILD_DIR/lf-2.7.0a1/fabtests/bin/fi_efa_hw_cntr" ] ||
		die "fi_efa_hw_cntr not built: fabtests of 2.7.0a1 did not see rdma-core main's efadv.h"
	expect_rc 0 env FT_TIMEOUT=60 "$ROOT/tests/efasim/fabtests" 2.7.0a1 'fi_efa_hw_cntr'
	grep -q "^fabtests 2.7.0a1: 4 pass, 0 skip, 0 fail" "$WORK/last.out" || die "fabtests hw_cntr summary"
}

# libfabric V's own efa unit tests (prov/efa/test) on the simulated
# device (tests/efasim/unit-test): every test passes, or is a listed failure
# (unit-expected.txt) or a listed skip (unit-skips.txt). Built by make check
# (EFA_UNIT_TEST_VERSIONS) or `make efa-unit-test V=V`; skipped when not built.
efa_unit_tests() { # V
	efasim_built "$1"
	export EFASIM_DIR="$WORK/efasim"
	# libfabric's tests destroy objects in use on purpose and expect the
	# kernel's EBUSY (test_efa_cq_close_returns_ebusy_with_bound_ep): the
	# refusals are theirs to check, not this runner's failure
	unset EFASIM_EBUSY_LOG
	"$ROOT/tests/efasim/unit-test" "$1" run >"$WORK/ut.out" 2>&1
	local rc=$?
	cat "$WORK/ut.out"
	[ $rc = 77 ] && exit 77
	[ $rc = 0 ] || die "efa unit tests failed"
	grep -q 'failed 0$' "$WORK/ut.out" || grep -q 'failed (expected' "$WORK/ut.out" || die "no count line"
}
t_efa260_unit_tests() { efa_unit_tests 2.6.0; }
# 2.7.0a1 (pre-release snapshot) on rdma-core main (pre-release snapshot) and
# sim-main: the 17 hardware completion-counter tests RUN (2.6.0 skips them: they
# are compiled only with HAVE_EFADV_CREATE_COMP_CNTR). They mock
# efadv_create_comp_cntr themselves (efa_unit_test_mocks.c), so they also pass
# with EFASIM_COMP_CNTR=0; libfabric on efasim's counters (compcntr.c) is
# t_efa270_fabtests_hw_cntr.
t_efa270_unit_tests() {
	efa_unit_tests 2.7.0a1
	! grep -q 'skipped: test_efa_hw_cntr_\|skipped: test_efa_cntr_open_uses_hw_cntr' "$WORK/ut.out" ||
		die "the hardware counter tests skipped on 2.7.0a1"
	# efasim's device takes 128-byte WQEs (inline_buf_size_ex 80): the wide-WQE test runs
	! grep -q 'skipped: test_efa_rma_writemsg_with_wide_wqe_inject' "$WORK/ut.out" ||
		die "the wide-WQE test skipped on 2.7.0a1"
	# the one expected failure (unit-expected.txt) is the 64-bit request ids'; on
	# a device with 16-bit ids the whole suite passes: zero failures
	EFASIM_REQ_ID_64=0 "$ROOT/tests/efasim/unit-test" 2.7.0a1 run >"$WORK/ut16.out" 2>&1 ||
		{ cat "$WORK/ut16.out"; die "efa unit tests failed with EFASIM_REQ_ID_64=0"; }
	grep 'failed 0$' "$WORK/ut16.out" || { tail -5 "$WORK/ut16.out"; die "EFASIM_REQ_ID_64=0: failures"; }
}

# 128-byte WQEs (issue 46 item 3): libfabric 2.7.0a1 (a pre-release snapshot)
# asked for an inject size of 80 B on efa-direct creates its QP with
# EFADV_QP_FLAGS_INLINE_WRITE; efasim's device (inline_buf_size_ex 80) hands out
# an SQ of 128-byte entries (EFASIM_LOG=1 says so) and runs inline RDMA writes
# from them; fabtests' fi_rma_bw -j 80 -v checks every byte. A device without
# them (EFASIM_WIDE_WQE=0) refuses: fi_getinfo FI_ENODATA, reported as a skip.
t_efa270_wide_wqe() {
	efasim_need 2.7.0a1
	efasim_built 2.7.0a1 .fabtests-done
	expect_rc 0 env FT_TIMEOUT=60 "$ROOT/tests/efasim/fabtests" 2.7.0a1 \
		'^efa-direct FI_HMEM=system fi_rma_bw -e rdm -j 80 '
	grep -q "^fabtests 2.7.0a1: 2 pass, 0 skip, 0 fail" "$WORK/last.out" || die "fabtests -j 80 summary"
	expect_rc 0 env FT_TIMEOUT=60 EFASIM_WIDE_WQE=0 "$ROOT/tests/efasim/fabtests" 2.7.0a1 \
		'^efa-direct FI_HMEM=system fi_rma_bw -e rdm -j 80 '
	grep -q "^fabtests 2.7.0a1: 0 pass, 2 skip, 0 fail" "$WORK/last.out" ||
		die "EFASIM_WIDE_WQE=0: -j 80 should be refused (FI_ENODATA)"
}

# Issue 59: what an EFA installer ships besides libfabric (rdma-core, the
# kernel driver, the device firmware) is a probe row, so that --diff of two
# nodes or installers shows it (an LD_LIBRARY_PATH swap of libfabric keeps
# all three). The simulated device offers the driver version where a node has
# it (SYSFS_PATH/module/efa/version; EFASIM_DRIVER_VERSION) and its firmware
# per profile.
t_efa260_probe_stack() {
	efasim_need 2.6.0
	expect_rc 0 efa_run 2.6.0 "$EBIN/efab_probe" -p efa -f efa-direct --json
	cp "$WORK/last.out" "$WORK/a.json"
	expect_rc 0 env EFASIM_DRIVER_VERSION=3.3.1 EFASIM_PROFILE=p5 EFASIM_DIR="$WORK/efasim-b" \
		"$ROOT/tests/efasim/run" 2.6.0 "$EBIN/efab_probe" -p efa -f efa-direct --json
	cp "$WORK/last.out" "$WORK/b.json"
	python3 - "$WORK/a.json" "$WORK/b.json" <<'PY' || die "stack rows wrong"
import json, sys
a = json.load(open(sys.argv[1]))["fabrics"][0]
b = json.load(open(sys.argv[2]))["fabrics"][0]
assert a["rdma_core"] == "efasim", a["rdma_core"]
assert "libibverbs.so" in a["rdma_core_libs"], a["rdma_core_libs"]
assert a["efa_driver"] == "efasim" and b["efa_driver"] == "3.3.1", (a["efa_driver"], b["efa_driver"])
assert a["firmware"] == "efasim-p5en" and b["firmware"] == "efasim-p5", (a["firmware"], b["firmware"])
PY
	expect_rc 1 "$BIN/efab_probe" --diff "$WORK/a.json" "$WORK/b.json"
	grep -Eq "efa_driver +efasim -> 3\.3\.1" "$WORK/last.out" || die "--diff does not show the driver: $(cat "$WORK/last.out")"
	grep -Eq "firmware +efasim-p5en -> efasim-p5" "$WORK/last.out" || die "--diff does not show the firmware"
}

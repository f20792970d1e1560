# Bandwidth and message rate: put/get, 2 and 4 ranks, --bidir, --time, --per-pair.

BWCOLS=pair,window_us_p50,window_us_p99,inject,link_Gbps,pct_of_link

t_put_bw_check() {
	for p in shm tcp; do
		rm -f "$WORK/b.csv"
		expect_rc 0 mpi 2 "$BIN/efab_put_bw" -v -p $p -m 8:2M:x8 -c -n 20 --csv "$WORK/b.csv"
		csvcheck "$WORK/b.csv" --bench put_bw --rows 7 --bw --op write --extra $BWCOLS \
			--sizes 8,64,512,4096,32768,262144,2097152
		grep -q "^# inject: fi_inject_write" "$WORK/last.out" || die "header lacks inject"
		grep -q "^# bandwidth (bw_MBps) = payload bytes of the measured windows / the elapsed time of the timed loop" \
			"$WORK/last.out" || die "no definition"
		grep -q "bw_MBps_windows and msg_rate_Mops_windows divide by the sum of window times" \
			"$WORK/last.out" || die "the window-sum columns are not defined"
	done
	# writedata: arrival detected by remote CQ data
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -v -p tcp -o writedata -m 64:64K:x32 -c -n 10 --no-inject
	grep -q "inject: off" "$WORK/last.out" || die "header does not say inject is off"
}

t_get_bw_check() {
	for p in shm tcp; do
		rm -f "$WORK/b.csv"
		expect_rc 0 mpi 2 "$BIN/efab_get_bw" -p $p -m 8:2M:x8 -c -n 20 --csv "$WORK/b.csv"
		csvcheck "$WORK/b.csv" --bench get_bw --rows 7 --bw --op read --extra $BWCOLS
	done
}

t_bw_catches_corruption() {
	EFAB_FAULT_CORRUPT=5 expect_rc 1 mpi 2 "$BIN/efab_put_bw" -p shm -m 4K -n 10 -w 0 -W 4 -c \
		--csv "$WORK/c.csv"
	# 10 windows, one destination buffer checked per window; every 5th corrupted
	csvcheck "$WORK/c.csv" --bench put_bw --rows 1 --errors 2 --extra $BWCOLS
	EFAB_FAULT_CORRUPT=3 expect_rc 1 mpi 2 "$BIN/efab_get_bw" -p tcp -m 4K -n 6 -w 0 -W 3 -c
	expect_msg "validation failed: 2 errors"
}

t_bw_four_ranks_pairs_sum() {
	for p in shm tcp; do
		for b in put_bw get_bw; do
			rm -f "$WORK/m.csv"
			expect_rc 0 mpi 4 "$BIN/efab_$b" -p $p -m 4K:256K:x8 -n 20 -c --per-pair \
				--csv "$WORK/m.csv"
			csvcheck "$WORK/m.csv" --bench $b --rows 9 --bw --extra $BWCOLS --pairs-sum
			csvcheck "$WORK/m.csv" --bench $b --rows 3 --bw --extra $BWCOLS --where pair=all
		done
	done
}

t_bw_bidir() {
	for p in shm tcp; do
		rm -f "$WORK/m.csv"
		expect_rc 0 mpi 4 "$BIN/efab_put_bw" -v -p $p -m 64K -n 20 -c --bidir --per-pair \
			--csv "$WORK/m.csv"
		csvcheck "$WORK/m.csv" --bench put_bw --rows 3 --bw --extra $BWCOLS --pairs-sum
		grep -q "^# --bidir" "$WORK/last.out" || die "header lacks --bidir"
	done
	expect_rc 0 mpi 2 "$BIN/efab_get_bw" -v -p shm -m 64K -n 20 -c --bidir
}

t_bw_time() {
	local t0 t1
	t0=$(date +%s.%N)
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p shm -m 4K:64K:x16 --time 0.5 --csv "$WORK/t.csv"
	t1=$(date +%s.%N)
	csvcheck "$WORK/t.csv" --bench put_bw --rows 2 --bw --extra $BWCOLS
	# 2 sizes x 0.5 s: the run takes about 1 s plus start-up, far from -n defaults
	python3 -c "import sys; d=$t1-$t0; sys.exit(0 if 0.9 < d < 15 else 1)" || die "took $t1-$t0 s"
	expect_rc 0 mpi 2 "$BIN/efab_get_bw" -p tcp -m 64K --time 0.2 -c
}

t_bw_bad_inputs() {
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm -W 0
	expect_msg "out of range"
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm -m 8 -W 65536
	expect_msg "above the provider's tx queue size"
	expect_rc 2 mpi 3 "$BIN/efab_get_bw" -p shm -m 8
	expect_msg "even number of ranks"
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm --time 0
	expect_msg "out of range"
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm -o read
	expect_msg "not an operation"
}

# Issue 17: --footprint window spreads a window over window x size bytes on
# both sides (fabtests' convention), buffer (default) uses one buffer (OSU's);
# both validate, the CSV records which, and the first window stands apart.
t_bw_footprint() {
	for b in put_bw get_bw; do
		for f in buffer window; do
			rm -f "$WORK/f.csv"
			expect_rc 0 mpi 2 "$BIN/efab_$b" -v -p shm -m 4K:64K:x4 -W 16 -n 20 -c \
				--footprint $f --csv "$WORK/f.csv"
			csvcheck "$WORK/f.csv" --bench $b --rows 3 --bw --extra $BWCOLS \
				--where footprint=$f
			grep -q "^# --footprint $f: " "$WORK/last.out" || die "$b: header lacks the footprint"
			python3 - "$WORK/f.csv" <<'PY' || die "$b $f: first_us"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    assert float(r["first_us"]) > 0, r
PY
		done
	done
	# a corrupted byte in a spread window is caught as well
	rm -f "$WORK/f.csv"
	EFAB_FAULT_CORRUPT=3 expect_rc 1 mpi 2 "$BIN/efab_put_bw" -p shm -m 4K -W 8 -n 6 -c \
		--footprint window --csv "$WORK/f.csv"
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm --footprint spread
}

# Issue 28: bw_MBps and msg_rate_Mops are over the loop's elapsed time, its
# end confirmed at the target; the sum of window times is *_windows.
# csvcheck --bw fails a row whose elapsed figure exceeds the window-sum one.
t_bw_elapsed_definition() {
	local p
	for p in shm tcp; do
		rm -f "$WORK/e.csv"
		expect_rc 0 mpi 2 "$BIN/efab_put_bw" -v -p $p -o writedata -m 8:64K:x32 -n 30 --csv "$WORK/e.csv"
		csvcheck "$WORK/e.csv" --bench put_bw --rows 3 --bw --extra $BWCOLS --confirm remote-cq-data
		grep -q "^# end_confirm remote-cq-data: " "$WORK/last.out" || die "$p: no end_confirm note"
		rm -f "$WORK/e.csv"
		expect_rc 0 mpi 2 "$BIN/efab_get_bw" -v -p $p -m 4K -n 30 --csv "$WORK/e.csv"
		csvcheck "$WORK/e.csv" --bench get_bw --rows 1 --bw --extra $BWCOLS --confirm local-completion
		# -c fences every window with barriers and checks: time the window sum
		# leaves out and the elapsed time holds, so the two must differ
		rm -f "$WORK/e.csv"
		expect_rc 0 mpi 2 "$BIN/efab_put_bw" -v -p $p -m 4K -n 40 -c --csv "$WORK/e.csv"
		csvcheck "$WORK/e.csv" --bench put_bw --rows 1 --bw --extra $BWCOLS
		python3 - "$WORK/e.csv" <<'PY' || die "$p: -c gaps are not in the elapsed time"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    assert r["end_confirm"] in ("ordered-flag", "unordered-flag"), r["end_confirm"]
    assert float(r["bw_MBps"]) < float(r["bw_MBps_windows"]), (r["bw_MBps"], r["bw_MBps_windows"])
PY
	done
	# 4 ranks, both directions: every pair confirms both ways, rows still sum
	rm -f "$WORK/e.csv"
	expect_rc 0 mpi 4 "$BIN/efab_put_bw" -p shm -o writedata -m 4K -n 20 --bidir --per-pair \
		--csv "$WORK/e.csv"
	csvcheck "$WORK/e.csv" --bench put_bw --rows 3 --bw --extra $BWCOLS --pairs-sum
}

# The target really counts every write's remote completion before it
# confirms: an end flag claiming one operation more is never confirmed.
t_bw_confirm_counts_arrivals() {
	EFAB_FAULT_CONFIRM_EXTRA=1 expect_rc 1 mpi 2 "$BIN/efab_put_bw" -p shm -o writedata -m 64 \
		-n 10 -t 2
	# whichever rank's timeout is printed first (the other may be killed)
	expect_msg "timeout after 2.0 s waiting for (the remote CQ data of every operation|the peer's acknowledgement of the last window)"
	EFAB_FAULT_CONFIRM_EXTRA=0 expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p shm -o writedata -m 64 \
		-n 10 -t 2
}

# Writedata's credits (rma.c) both ways with windows larger than the credit
# limit (shm's CQ as asked: 1280 entries, 1088 kept for a rank's own
# completions and returns: at most 168 unread). A return owed for remote CQ
# data read while the hook could not run (inside a post's -FI_EAGAIN
# progress) was never posted once the peer, itself waiting for credits, sent
# nothing more: both ranks waited until the timeout (every run at 743ce7c,
# windowed, pipelined and checked alike).
t_bw_writedata_credits_bidir() {
	local m
	for m in "" "--pipeline" "-c"; do
		# shellcheck disable=SC2086
		expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p shm -o writedata -m 8:4K:x8 --bidir -W 1024 -n 20 \
			-t 10 $m
	done
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p shm -o writedata -m 8 --bidir -W 1024 -n 5 -t 10 -v
	grep -q "^# credits: CQ 1280 entries asked, 1088 kept for the target's own completions: at most 168 remote CQ data unread, returned every 24\$" \
		"$WORK/last.err" || die "no credits line, or other figures"
}

# Issue 28: with --bidir each rank's loop ends when its own end is
# confirmed. A peer still posting acknowledges a finished rank's end flag
# between its windows; before, the finished rank waited for the peer's whole
# loop, and its figure was the slower rank's. Rank 1 sleeps 1 ms after each
# window (EFAB_FAULT_SLOW), so its loop of 100 windows takes >= 100 ms. Under
# the old rule rank 0's loop ended after rank 1's (its loop was at least as
# long, less the start skew). Rank 0's own loop is bounded by rank 1 applying
# its writes: on shm the target applies them when it drives progress, which it
# does after every window (efab_drive_wait_tx), the whole command queue (1024
# on this shm) at once, so rank 0 needs a few of rank 1's windows. The check
# is the ratio of the two loops, each rank's own (-v prints them): rank 0's
# over rank 1's was 0.10-0.13 (-o write) and 0.11-0.52 (-o writedata) idle,
# and 1.09 with bw_answer disabled (the old rule: the finished rank waits for
# the peer's whole loop and starts its own earlier, so it is >= 1 by
# construction). The bound is 0.95: 0.8 failed once beside a CI rehearsal
# (writedata, whose rank 0 waits on rank 1 draining its CQ). A
# loaded machine slows rank 1's windows and so both loops, not the ratio; an
# absolute rate (the old "sum > 0.3 Mops/s") failed a CI run on a busy
# 2-core machine (writedata: 0.17 Mops/s idle here once).
# (On tcp the target reads a little of its socket per progress call: rank 0's
# data really arrives only as rank 1 drives it, so its end is that late,
# rightly.) writedata counts the remote CQ data first; -c (lockstep windows)
# as well.
t_bw_bidir_own_end() {
	local a
	for a in "-o write" "-o writedata"; do
		rm -f "$WORK/o.csv"
		# shellcheck disable=SC2086
		EFAB_FAULT_SLOW=1:1000 expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p shm $a -m 8 -W 64 \
			-n 100 --bidir -v --csv "$WORK/o.csv"
		csvcheck "$WORK/o.csv" --bench put_bw --rows 1 --bw --extra $BWCOLS
		python3 - "$WORK/o.csv" "$WORK/last.err" "$a" "${EFAB_SAN:-0}" <<'PY' || die "$a: rank 0's end waited for rank 1's loop"
import csv, re, sys
r = next(csv.DictReader(open(sys.argv[1])))
assert r["end_confirm"] != "local-completion", r["end_confirm"]
loop = {}
for m in re.finditer(r"size 8 rank (\d) \(.*\): (\d+) ops in its loop of ([0-9.]+) us, ([0-9.]+) Mops/s",
                     open(sys.argv[2]).read()):
    assert m.group(2) == "6400", m.group(0)
    loop[int(m.group(1))] = (float(m.group(3)), float(m.group(4)))
assert set(loop) == {0, 1}, loop
assert loop[1][0] >= 100000, ("rank 1 slept 100 x 1 ms", loop)
# the sum in the row is the two ranks' own rates
assert abs(loop[0][1] + loop[1][1] - float(r["msg_rate_Mops"])) < 0.001, (loop, r["msg_rate_Mops"])
# -o write: shm's fast RMA (CMA) needs nothing of rank 1, so rank 0's loop is
# a fraction of rank 1's (0.08-0.31 seen). -o writedata: each remote CQ data
# is delivered by rank 1's own progress, which runs once per rank-1 window
# here: rank 0's posts are paced by it (64 to ~500 of rank 0's operations
# per rank-1 window seen, so 0.11x to 0.97x). What bw_answer guarantees is
# structural: rank 1 acknowledges at a window boundary inside its loop, so
# rank 0's loop ends before rank 1's does; with the acknowledgement left to
# after rank 1's loop (bw_answer disabled) rank 0's is longer (1.09x).
limit = 0.95 if sys.argv[3] == "-o write" else 1.0
print("rank 0 loop %.0f us, rank 1 loop %.0f us (%.2fx)" % (loop[0][0], loop[1][0], loop[0][0] / loop[1][0]))
# Under SAN=1 rank 0's own posting is the slow side (ASan on every post: its
# 6400 writedata took 141 ms against rank 1's 115 ms of sleeps, CI rehearsal of
# stop 54), so the premise of the comparison, a fast rank 0 beside a sleeping
# rank 1, does not hold there: the run, the row and the sum are checked, the
# loops' ratio only in the plain make check
if sys.argv[4] != "1":
    assert loop[0][0] < limit * loop[1][0], ("rank 0's loop is not its own", limit, loop)
PY
	done
	# a slow rank with checked windows: lockstep, both end together, data right
	EFAB_FAULT_SLOW=1:200 expect_rc 0 mpi 2 "$BIN/efab_put_bw" -p shm -m 8:4K:x512 -W 16 -n 20 \
		--bidir -c
}

# Issue 48: the peak-rate techniques (--post-list, --pipeline, --tclass) on
# shm and tcp, each validated (-c) and named in the row's last columns and
# the header; --footprint window makes each op of a window address its own
# slot, so a post that lands in the wrong slot fails -c.
t_bw_peak_options() {
	rm -f "$WORK/p.csv"
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -v -p shm -m 8:64K:x32 -W 16 -n 10 -c --post-list 4 \
		--pipeline --footprint window --csv "$WORK/p.csv"
	csvcheck "$WORK/p.csv" --bench put_bw --rows 3 --bw --op write --extra $BWCOLS \
		--where post_list=4 --where pipeline=yes --where high_pps=no --where tclass=FI_TC_UNSPEC
	grep -q "^# --post-list 4: operations posted with fi_writemsg, FI_MORE" "$WORK/last.out" ||
		die "header lacks --post-list"
	grep -q "^# --pipeline: operations posted while completions are read, at most 16" \
		"$WORK/last.out" || die "header lacks --pipeline"
	rm -f "$WORK/p.csv"
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -v -p tcp -o writedata -m 4K -W 8 -n 10 -c --pipeline \
		--bidir --tclass low-latency --csv "$WORK/p.csv"
	csvcheck "$WORK/p.csv" --bench put_bw --rows 1 --bw --op writedata --extra $BWCOLS \
		--where post_list=1 --where pipeline=yes --where tclass=FI_TC_LOW_LATENCY
	grep -q "^# --tclass low-latency: asked FI_TC_LOW_LATENCY in tx_attr" "$WORK/last.out" ||
		die "header lacks --tclass"
	rm -f "$WORK/p.csv"
	expect_rc 0 mpi 2 "$BIN/efab_get_bw" -v -p shm -m 8:64K:x32 -W 16 -n 10 -c --post-list 8 \
		--pipeline --footprint window --csv "$WORK/p.csv"
	csvcheck "$WORK/p.csv" --bench get_bw --rows 3 --bw --op read --extra $BWCOLS \
		--where post_list=8 --where pipeline=yes
	# several endpoints per rank: operations round-robin (in --post-list batches),
	# each endpoint's own CQ driven, every arrival counted (writedata) and checked
	rm -f "$WORK/p.csv"
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -v -p shm -o writedata -m 8:64K:x32 -W 16 -n 10 -c --eps 3 \
		--post-list 4 --pipeline --footprint window --csv "$WORK/p.csv"
	csvcheck "$WORK/p.csv" --bench put_bw --rows 3 --bw --op writedata --extra $BWCOLS \
		--where eps=3 --where post_list=4 --confirm remote-cq-data
	grep -q "^# --eps 3: 3 endpoints per rank" "$WORK/last.out" || die "header lacks --eps"
	expect_rc 0 mpi 2 "$BIN/efab_get_bw" -v -p tcp -m 4K -W 8 -n 10 -c --eps 2 --bidir \
		--footprint window
	# all of it at once over two pairs: the rows still sum (no window sums to add)
	rm -f "$WORK/p.csv"
	expect_rc 0 mpi 4 "$BIN/efab_put_bw" -v -p shm -o writedata -m 64:4K:x8 -W 16 -n 10 -c --pipeline \
		--post-list 4 --eps 2 --bidir --per-pair --csv "$WORK/p.csv"
	csvcheck "$WORK/p.csv" --bench put_bw --rows 9 --bw --extra $BWCOLS --pairs-sum
	# windows (no pipeline) with FI_MORE batches that do not divide -W
	expect_rc 0 mpi 2 "$BIN/efab_get_bw" -v -p tcp -m 4K -W 10 -n 10 -c --post-list 3 \
		--footprint window
	expect_rc 0 mpi 2 "$BIN/efab_put_bw" -v -p tcp -m 4K -W 10 -n 10 -c --post-list 3 \
		--footprint window
}

# -c fails on damage in the pipelined loop too: W slots are checked once after
# the loop, every Nth check damaged (EFAB_FAULT_CORRUPT).
t_bw_peak_catches_corruption() {
	rm -f "$WORK/c.csv"
	EFAB_FAULT_CORRUPT=3 expect_rc 1 mpi 2 "$BIN/efab_put_bw" -p shm -m 4K -n 5 -W 4 -c \
		--pipeline --post-list 2 --footprint window --csv "$WORK/c.csv"
	csvcheck "$WORK/c.csv" --bench put_bw --rows 1 --errors 1 --extra $BWCOLS
	EFAB_FAULT_CORRUPT=2 expect_rc 1 mpi 2 "$BIN/efab_get_bw" -p tcp -m 4K -n 5 -W 4 -c \
		--pipeline --footprint window
	expect_msg "validation failed: 2 errors"
}

t_bw_peak_bad_inputs() {
	expect_rc 2 mpi 2 "$BIN/efab_put_bw" -p shm -m 8 --pipeline --time 1
	expect_msg "--pipeline counts operations"
	# (option values and where each option applies: tests/unit/test_opts.c)
	# FI_EFA_WR_HIGH_PPS: missing from the headers (libfabric < 2.6), or not the
	# provider's (shm): a skip that says which
	expect_rc 77 mpi 2 "$BIN/efab_put_bw" -p shm -m 8 -n 2 --high-pps
	expect_msg "--high-pps: not offered by (this libfabric|provider shm)"
}

# --no-cuda-api (fi_setopt FI_OPT_CUDA_API_PERMITTED = false before fi_enable,
# aws-ofi-nccl's setting): a provider without the option (tcp;ofi_rxm:
# -FI_ENOPROTOOPT; so is shm before libfabric 1.18, which added the option) or
# refusing it (shm >= 1.18: -FI_EINVAL without a CUDA library, -FI_EOPNOTSUPP
# with one: its CUDA support needs the CUDA API)
# ends the run with exit 77 and libfabric's answer, no crash in the close of
# the endpoint that was never enabled; the efa cases are t_efa260_no_cuda_api
t_bw_no_cuda_api_refused() {
	expect_rc 77 mpi 2 "$BIN/efab_put_bw" -p tcp -m 64 -n 2 --no-cuda-api
	expect_msg "--no-cuda-api: fi_setopt\(FI_OPT_CUDA_API_PERMITTED, false\) on tcp;ofi_rxm \(fabric [^)]*\): Protocol not available \(-92\)"
	grep -q "Segmentation\|signal 11" "$WORK/last.err" && die "a crash after the refusal"
	expect_rc 77 mpi 2 "$BIN/efab_get_lat" -p shm -m 64 -n 2 --no-cuda-api
	expect_msg "--no-cuda-api: fi_setopt\(FI_OPT_CUDA_API_PERMITTED, false\) on shm \(fabric shm\): (Protocol not available \(-92\)$|Invalid argument \(-22\): the provider refuses it where it has no CUDA library|Operation not supported \(-95\): the provider needs the CUDA API)"
	expect_rc 2 "$BIN/efab_mr_reg" --no-cuda-api
	expect_msg "unknown option '--no-cuda-api'"
}

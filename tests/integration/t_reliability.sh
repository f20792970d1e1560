# Reliability: the watchdog, a peer killed mid-run, signals, and the table of
# bad invocations (tests/bad_inputs.txt).

t_watchdog_stalled_peer() {
	local t0 t1
	t0=$(date +%s)
	EFAB_FAULT_STALL=1 expect_rc 1 mpi 2 "$BIN/efab_put_lat" -p shm -m 8 -t 2
	t1=$(date +%s)
	expect_msg "timeout after 2.0 s waiting for pong \(op write, 8 bytes, peer rank 1, iteration 0\)"
	[ $((t1 - t0)) -lt 20 ] || die "took $((t1 - t0)) s"
	EFAB_FAULT_STALL=0 expect_rc 1 mpi 2 "$BIN/efab_get_bw" -p tcp -m 4K -t 2
	expect_msg "timeout after 2.0 s waiting for"
	EFAB_FAULT_STALL=1 expect_rc 1 mpi 2 "$BIN/efab_atomic_lat" -p shm -t 1 --aop fadd
	expect_msg "timeout after 1.0 s"
}

t_peer_killed() {
	local pid t0 i victim=""
	t0=$(date +%s)
	mpi 2 "$BIN/efab_put_lat" -p tcp -m 8 -n 100000000 -t 5 >"$WORK/k.out" 2>"$WORK/k.err" &
	pid=$!
	for i in $(seq 1 100); do
		for p in $(pgrep -f "efab_put_lat -p tcp -m 8 -n 100000000"); do
			grep -qz "^OMPI_COMM_WORLD_RANK=1$" "/proc/$p/environ" 2>/dev/null && victim=$p
		done
		[ -n "$victim" ] && break
		sleep 0.1
	done
	[ -n "$victim" ] || die "rank 1 not found"
	sleep 1
	kill -9 "$victim"
	wait $pid
	local rc=$?
	[ $rc != 0 ] || die "survivor exited 0"
	[ $(($(date +%s) - t0)) -lt 30 ] || die "survivor outlived the timeout"
	pgrep -f "efab_put_lat -p tcp -m 8 -n 100000000" && die "a rank is still running"
	true
}

# SIGTERM to mpirun (a background job of a script ignores SIGINT, and so does
# the mpirun it starts); efab_sweep's SIGINT is tested in t_sweep.sh.
t_sigterm_keeps_whole_rows() {
	mpi_grace 2 "$BIN/efab_put_lat" -p shm -m 1:4M -n 20000 --csv "$WORK/s.csv" >"$WORK/s.out" 2>"$WORK/s.err" &
	local pid=$! i
	for i in $(seq 1 200); do
		[ "$(wc -l <"$WORK/s.csv" 2>/dev/null || echo 0)" -ge 3 ] && break
		sleep 0.1
	done
	# to mpirun itself (the job's shell would only stop waiting for it)
	pkill -TERM -f "^mpirun -np 2 --oversubscribe .*efab_put_lat -p shm -m 1:4M -n 20000" ||
		die "mpirun not found"
	wait $pid
	local rc=$?
	[ $rc != 0 ] || die "interrupted run exited 0"
	for i in $(seq 1 100); do # ranks finish the row they were measuring, then end
		pgrep -f "efab_put_lat -p shm -m 1:4M -n 20000" >/dev/null || break
		sleep 0.1
	done
	pgrep -f "efab_put_lat -p shm -m 1:4M -n 20000" && die "ranks outlived the job by 10 s"
	grep -q "stopped by signal 15" "$WORK/s.err" || die "no word of the signal"
	local rows
	rows=$(($(wc -l <"$WORK/s.csv") - 1))
	[ $rows -ge 2 ] && [ $rows -lt 23 ] || die "$rows rows"
	csvcheck "$WORK/s.csv" --bench put_lat --rows $rows --lat --extra inject
}

# Each line of tests/bad_inputs.txt: expected exit status | message regex | command.
# The command must exit with that status, print exactly one line of its own on
# stderr matching the regex, never crash, and leave no half-written file.
t_bad_input_table() {
	local n=0 line rc want re cmd ours
	while IFS= read -r line; do
		case "$line" in "#"* | "") continue ;; esac
		want=${line%%|*}; line=${line#*|}; re=${line%%|*}; cmd=${line#*|}
		n=$((n + 1))
		rm -f "$WORK/out.csv"
		( cd "$WORK" && eval "$cmd" ) </dev/null >"$WORK/b.out" 2>"$WORK/b.err"
		rc=$?
		[ "$rc" = "$want" ] || { cat "$WORK/b.err"; die "[$n] exit $rc, expected $want: $cmd"; }
		ours=$(grep -cE "^(efab[a-z_]*(\[rank [0-9]+\])?|efab_plot): " "$WORK/b.err")
		[ "$ours" = 1 ] || { cat "$WORK/b.err"; die "[$n] $ours lines of ours on stderr: $cmd"; }
		grep -qE -- "$re" "$WORK/b.err" || { cat "$WORK/b.err"; die "[$n] no '$re': $cmd"; }
		grep -qiE "core dumped|segmentation fault|Sanitizer|Traceback" "$WORK/b.err" &&
			die "[$n] crashed: $cmd"
		if [ -f "$WORK/out.csv" ] && [ -s "$WORK/out.csv" ]; then
			tail -c1 "$WORK/out.csv" | od -c | grep -q '\\n' || die "[$n] torn CSV: $cmd"
		fi
	done <tests/bad_inputs.txt
	echo "$n bad invocations checked"
	[ $n -ge 25 ] || die "only $n entries"
}

# efab_sweep: configs checked here even when they cannot run here (p5en), a
# real reduced local run with ok/skip/fail jobs, bad configs, resume after kill.

LOCAL_ENV="FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"

t_sweep_dry_run_configs() {
	for c in configs/*.conf; do
		head -1 "$c" | grep -q '^# ' || die "$c does not open with a comment"
		expect_rc 0 "$BIN/efab_sweep" --dry-run "$c"
	done
	expect_rc 0 "$BIN/efab_sweep" --dry-run configs/p5en-efa-vs-efa-direct.conf
	grep -q "^# configs/p5en-efa-vs-efa-direct.conf: 114 jobs" "$WORK/last.out" || die "job count"
	# every command is an mpirun of a built benchmark (mr_reg runs without one)
	python3 - "$WORK/last.out" "$BIN" <<'PY' || die "commands"
import os, shlex, sys
lines = [l for l in open(sys.argv[1]) if not l.startswith("#")]
assert len(lines) == 114, len(lines)
seen = set()
runs = {}
for l in lines:
    w = shlex.split(l)
    while "=" in w[0]:
        w.pop(0)
    exe = next(x for x in w if "/efab_" in x)
    # issue 59: every job on the NIC nearest GPU 0 (the comment's promise)
    assert w[w.index("--domain") + 1] == "auto", w
    # one series, one job: put_lat on GPU memory is writedata, asked once
    # (a default -o on cuda used to become writedata silently beside the
    # writedata job: 6 "repeats" from two jobs)
    if "efab_put_lat" in exe and w[w.index("--mem") + 1] == "cuda":
        assert "--op" in w and w[w.index("--op") + 1] == "writedata", w
    key = " ".join(x for x in w if "RUNDIR" not in x)
    runs[key] = runs.get(key, 0) + 1
    assert os.access(os.path.join(sys.argv[2], os.path.basename(exe)), os.X_OK), exe
    if "efab_mr_reg" not in exe:
        assert w[0] == "/opt/amazon/openmpi/bin/mpirun" and w[1:3] == ["-np", "2"], w
    i = w.index("--fabric")
    seen.add((os.path.basename(exe), w[i + 1], w[w.index("--mem") + 1]))
for b in ("efab_put_lat", "efab_get_lat", "efab_put_bw", "efab_atomic_lat"):
    for f in ("efa", "efa-direct"):
        for m in ("host", "cuda"):
            assert (b, f, m) in seen, (b, f, m)
assert set(runs.values()) == {3}, [k for k, v in runs.items() if v != 3]
PY
	# issue 48's tuning matrix: (2 ops x 3 post lists x 2 loops x 2 high-pps + 2 x 2
	# tclass + 3 x 2 + 2 ops x 2 post lists x 3 eps) jobs x 3 repeats, each option
	# really on the command lines
	expect_rc 0 "$BIN/efab_sweep" --dry-run configs/p5en-peak.conf
	grep -q "^# configs/p5en-peak.conf: 138 jobs" "$WORK/last.out" || die "peak job count"
	for o in "--post-list 32" "--pipeline" "--high-pps" "--tclass low-latency" "--eps 4" "efab_get_bw"; do
		grep -q -- "$o" "$WORK/last.out" || die "p5en-peak.conf: no $o"
	done
	expect_rc 0 "$BIN/efab_sweep" --dry-run configs/p5en-all-nics.conf
	grep -q -- "-np 32 --map-by ppr:16:node" "$WORK/last.out" || die "16 ranks per node"
	grep -q -- "--domain auto" "$WORK/last.out" || die "domain auto"
}

t_sweep_bad_configs() {
	printf '# x\n[j]\nbench = put_lat\nsizes = 8\nitres = 5\n' >"$WORK/typo.conf"
	expect_rc 2 "$BIN/efab_sweep" "$WORK/typo.conf"
	expect_msg "typo.conf:5: key 'itres' is not an option of efab_put_lat"
	printf '[j]\nbench = put_lat\nlauncher = mpirun -np {nprocs}\n' >"$WORK/ph.conf"
	expect_rc 2 "$BIN/efab_sweep" "$WORK/ph.conf"
	expect_msg "unknown placeholder '\{nprocs\}'"
	expect_rc 2 "$BIN/efab_sweep" "$WORK/missing.conf"
	expect_msg "cannot read config"
	expect_rc 2 "$BIN/efab_sweep"
	expect_rc 2 "$BIN/efab_sweep" configs/local.conf --label 'a b'
	ls results 2>/dev/null | grep -q 'a b' && die "a directory was created"
	true
}

t_sweep_real_run() {
	cat >"$WORK/r.conf" <<EOF
# reduced local sweep: two good jobs, one that must skip, one that must fail
[global]
launcher = mpirun -np {np} --oversubscribe
env = $LOCAL_ENV
check = true
[lat]
bench = put_lat
provider = shm, tcp
matrix = provider
sizes = 8:64K:x8
iters = 50
[gpu]
bench = get_lat
provider = shm
mem = cuda
[broken]
bench = put_lat
provider = shm
sizes = 64
iters = 20
env = $LOCAL_ENV EFAB_FAULT_CORRUPT=1
[reg]
bench = mr_reg
provider = shm
sizes = 4K:64K:x4
regime = fresh
EOF
	expect_rc 1 "$BIN/efab_sweep" "$WORK/r.conf" -o "$WORK/res" --label t
	local d
	d=$(ls -d "$WORK"/res/*-t)
	[ -f "$d/INCOMPLETE" ] && die "complete run still marked incomplete"
	for f in put_lat.csv mr_reg.csv meta.json jobs.tsv config.conf; do
		[ -s "$d/$f" ] || die "missing $f"
	done
	[ "$(ls "$d/logs" | wc -l)" = 5 ] || die "expected 5 logs"
	# 2 x 5 sizes from lat, 1 row from broken: every one of its (50 warmup, the
	# first timed alone, + 20 timed one by one + 20 in the timed batch)
	# messages corrupted on both ranks
	csvcheck "$d/put_lat.csv" --bench put_lat --rows 11 --lat --extra inject --errors 180
	cut -f2,3 "$d/jobs.tsv" | grep -q "^gpu	skip$" || die "gpu job not skip"
	cut -f2,3 "$d/jobs.tsv" | grep -q "^broken	fail$" || die "broken job not fail"
	python3 - "$d/meta.json" <<'PY' || die "meta.json"
import json, sys
m = json.load(open(sys.argv[1]))
for k in ("efabench", "hostname", "kernel", "cpu", "instance_type", "libfabric_version", "clock",
          "efa_installer", "efa_driver", "gpus", "mpi", "topology", "environment", "jobs"):
    assert k in m, k
assert m["complete"] is True
assert len(m["jobs"]) == 5 and all("command" in j for j in m["jobs"])
assert [j["status"] for j in m["jobs"]] == ["ok", "ok", "skip", "fail", "ok"], m["jobs"]
PY
	grep -q "run_id" "$d/put_lat.csv" && grep -q ":lat\[provider=tcp\]" "$d/put_lat.csv" ||
		die "run_id does not name the job"
}

t_sweep_interrupt_and_resume() {
	cat >"$WORK/k.conf" <<EOF
# three jobs; the second is slow enough to be interrupted
[global]
launcher = mpirun -np {np} --oversubscribe
env = $LOCAL_ENV
provider = shm
[a]
bench = put_lat
sizes = 8:64:x8
iters = 50
[slow]
bench = put_lat
sizes = 8
iters = 2000000
timeout = 60
[c]
bench = get_lat
sizes = 8
iters = 50
EOF
	"$BIN/efab_sweep" "$WORK/k.conf" -o "$WORK/res" --label k >"$WORK/sw.out" 2>&1 &
	local pid=$! d="" i
	for i in $(seq 1 200); do
		d=$(ls -d "$WORK"/res/*-k 2>/dev/null)
		[ -n "$d" ] && grep -q "^2	slow	pending" "$d/jobs.tsv" 2>/dev/null &&
			grep -q "^1	a	ok" "$d/jobs.tsv" && break
		sleep 0.1
	done
	sleep 1
	kill -INT $pid
	wait $pid
	local rc=$?
	[ $rc = 1 ] || die "interrupted sweep exited $rc"
	[ -f "$d/INCOMPLETE" ] || die "not marked incomplete"
	grep -q "^2	slow	interrupted" "$d/jobs.tsv" || die "slow not interrupted"
	csvcheck "$d/put_lat.csv" --bench put_lat --rows 2 --lat --extra inject
	[ -e "$d/get_lat.csv" ] && die "job c ran after the interrupt"
	# resume with a fast 'slow' job: only the incomplete jobs run
	sed -i 's/iters = 2000000/iters = 100/' "$WORK/k.conf"
	expect_rc 0 "$BIN/efab_sweep" "$WORK/k.conf" --resume "$d"
	[ -f "$d/INCOMPLETE" ] && die "still incomplete after resume"
	csvcheck "$d/put_lat.csv" --bench put_lat --rows 3 --lat --extra inject
	csvcheck "$d/get_lat.csv" --bench get_lat --rows 1 --lat
	cut -f3 "$d/jobs.tsv" | tail -3 | tr '\n' ' ' | grep -q "^ok ok ok $" || die "statuses"
}

# The probe on the first job node runs with that job's variables (env =), as
# the jobs do: a config's FI_* settings shape what libfabric reports, and on a
# root-run machine OMPI_ALLOW_RUN_AS_ROOT is one of them (a fresh Debian root
# ran make demo with every job ok and 'no probe.json': mpirun refused to run
# the probe as root). The site job's launcher is a script that records the
# environment it was started with, then runs the rest of its words.
t_sweep_probe_gets_the_jobs_env() {
	printf '%s\n' '#!/bin/sh' 'env >"$EFAB_T_ENVLOG.$$"' 'exec "$@"' >"$WORK/launch"
	chmod +x "$WORK/launch"
	cat >"$WORK/e.conf" <<CONF
[lat]
bench = put_lat
provider = shm
sizes = 8
iters = 5
launcher = $WORK/launch mpirun -np {np} --oversubscribe
env = $LOCAL_ENV EFAB_T_JOB_VAR=from-config EFAB_T_ENVLOG=$WORK/envlog
CONF
	expect_rc 0 "$BIN/efab_sweep" "$WORK/e.conf" --dry-run
	grep -q "^# probe: .*EFAB_T_JOB_VAR=from-config .*efab_probe --json" "$WORK/last.out" ||
		die "the plan's probe command does not carry the job's variables: $(grep '^# probe:' "$WORK/last.out")"
	expect_rc 0 "$BIN/efab_sweep" "$WORK/e.conf" -o "$WORK/res" --label t
	local d
	d=$(ls -d "$WORK"/res/*-t) || die "no result directory"
	[ -s "$d/probe.json" ] || die "no probe.json: $(head -3 "$d/probe.log" 2>/dev/null)"
	python3 - "$d/meta.json" <<'PY' || die "meta.json's probe command"
import json, sys
p = json.load(open(sys.argv[1]))["probe"]
assert p["status"] == "ok", p
assert "EFAB_T_JOB_VAR=from-config" in p["command"], p["command"]
PY
	# two launches (the probe's, the job's), each with the job's variables
	[ "$(cat "$WORK"/envlog.* | grep -c '^EFAB_T_JOB_VAR=from-config$')" = 2 ] ||
		die "a launch ran without the job's variables: $(grep -c EFAB_T_JOB_VAR "$WORK"/envlog.* | tr '\n' ' ')"
}

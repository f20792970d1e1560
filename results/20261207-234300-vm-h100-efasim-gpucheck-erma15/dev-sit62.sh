#!/bin/bash
# Issue 62 item 2 on the GPU host (helper session of 2026-12-07, conventions of g.sh):
# efabench against fi_efa_rma_bw, the 24 erma cases (bench/tools/efab_sidebyside --cases erma24),
# on efasim's libfabric 2.6.0 and 2.7.0a1, efa-direct, alternating runs, every process pinned.
# Needs efab_sidebyside with --ops-scale/--taskset/--deadline (branch sbs, merged into main).
#   run(carry=["build-dc","build-gpucheck-x/sit62.sh"]):
#     DEADLINE=560 timeout 590 bash build-gpucheck-x/sit62.sh
#   one build per call (see the estimate below):
#     BUILDS=2.6.0 BUILD_ALSO=2.7.0a1 DEADLINE=560 timeout 590 bash build-gpucheck-x/sit62.sh
#     BUILDS=2.7.0a1 TAG=s62b DEADLINE=560 timeout 590 bash build-gpucheck-x/sit62.sh  (same warm machine)
#   bash build-gpucheck-x/sit62.sh cpus     only print the topology and the CPUs it would pick
# Environment:
#   BUILDS      libfabric versions to measure, in order (default "2.6.0 2.7.0a1")
#   BUILD_ALSO  versions to build beside them (in parallel) without measuring, for a later call
#   CPUS        --taskset list (default: one logical CPU per physical core, hyperthread siblings
#               skipped; only the NUMA node with the most cores when it has >= 6)
#   REPS        repeats asked (default 5); DEADLINE total seconds of the whole script (default
#               560), split between the builds left (each gets its share of what is left when it
#               starts; efab_sidebyside starts no repeat the longest one so far says would end late)
#   CASES       --cases (default erma24)
#   SCALE       --ops-scale (default 8,64K=5,4M=1), TAG name of the tarball (default s62)
# SCALE: measured seconds per run at the last sitting's rates (8 B ~0.5 Mops/s per direction,
# 64 KiB ~0.055 Mops/s, 4 MiB ~2,100 MB/s); base counts 19968 / 4096 / 256 operations:
#   8 B  x8 = 159,744 ops -> 0.32 s;  64 KiB x5 = 20,480 -> 0.37 s;  4 MiB x1 = 256 -> 0.51 s
# (4 MiB's base count already measures ~0.5 s: one factor for all three cannot hit 0.3-0.5 s).
# Estimated time: 24 cases x 2 tools = 48 runs a repeat, each start-up + ~0.4 s measured.
#   Start-up measured on the 2-core dev VM (this script, SCALE=0.05, 48 runs: efabench 1.03 s,
#   fi_efa_rma_bw 2.03 s a run, its 0.5 s server wait included; repeat 0 took 73.5 s):
#   48 x (1.5 + 0.4) = ~90 s a repeat, 5 repeats ~455 s a build. At the brief's 2 s start-up:
#   48 x 2.4 = ~115 s a repeat, ~575 s a build.
#   Builds (both in parallel, JOBS=8 each, cold machine): ~60-100 s.
#   Both builds x 5 repeats: ~1000-1250 s with the builds: does NOT fit one 560 s call. One
#   build per call (BUILDS=...): the first call (builds + 2.6.0) fits 5 repeats only if a repeat
#   takes <= ~90 s, the second (2.7.0a1, machine still warm) if <= ~105 s; otherwise --deadline
#   stops after 3-4. The script prints "repeat 0 took N s" for each build: plan REPS and the
#   calls from it.
set -u
export EFAB_DEPS=$PWD/build-dc/deps
O=${OUT:-/tmp/sit62-out}; mkdir -p "$O"
t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-560} - ($(date +%s)-t0) )); }
RESERVE=15 # seconds kept for the tarball at the end
BUILDS=${BUILDS:-2.6.0 2.7.0a1}
tag=${TAG:-s62}
logs=()

# one logical CPU per physical core among this process's CPUs (on one NUMA node if it has 6+)
pick_cpus() {
	python3 - <<'PY'
import glob, os
# SIT62_SYS, SIT62_ALLOWED: a made-up topology, to check this picker
root = os.environ.get("SIT62_SYS", "/sys/devices/system/cpu")
allowed = sorted(map(int, os.environ["SIT62_ALLOWED"].split(","))) \
    if os.environ.get("SIT62_ALLOWED") else sorted(os.sched_getaffinity(0))
def sibs(c):
    try:
        text = open(f"{root}/cpu{c}/topology/thread_siblings_list").read()
    except OSError:
        return {c}
    out = set()
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out
def node(c):
    n = glob.glob(f"{root}/cpu{c}/node[0-9]*")
    return int(n[0].rsplit("node", 1)[1]) if n else 0
cores = [c for c in allowed if c == min(sibs(c) & set(allowed))]
by = {}
for c in cores:
    by.setdefault(node(c), []).append(c)
best = max(sorted(by), key=lambda n: len(by[n]))
# a run keeps 4 threads busy (2 processes, each with efasim's engine thread) beside mpirun
# and the driver: one node only when it has 6 cores or more
pick = by[best] if len(by[best]) >= 6 else cores
why = (f"{len(cores)} physical cores among {len(allowed)} CPUs allowed; "
       f"NUMA nodes {', '.join(f'{n}: {len(v)}' for n, v in sorted(by.items()))}")
if len(pick) < 4 <= len(allowed):  # a topology that reads oddly: do not pin to 1-3 CPUs
    pick, why = allowed, why + "; fewer than 4 picked: every allowed CPU instead"
print(",".join(map(str, pick)), why, sep="\t")
PY
}
topo() {
	echo "nproc: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
	echo "this process's CPUs: $(grep Cpus_allowed_list /proc/self/status | cut -f2)"
	lscpu -e 2>/dev/null || grep -H . /sys/devices/system/cpu/cpu*/topology/thread_siblings_list
	if [ -n "${CPUS:-}" ]; then
		echo "CPUS from the environment: $CPUS"
	else
		local p; p=$(pick_cpus) || { echo "cannot pick CPUs"; exit 1; }
		CPUS=${p%%$'\t'*}
		echo "picked CPUS=$CPUS (${p#*$'\t'})"
	fi
}
if [ "${1:-}" = cpus ]; then topo; exit 0; fi

nvidia-smi -L 2>/dev/null; git log --oneline -1 2>/dev/null | cut -c1-80
bench/tools/efab_sidebyside --help 2>/dev/null | grep -q -- --deadline ||
	{ echo "bench/tools/efab_sidebyside lacks --ops-scale/--taskset/--deadline: merge branch sbs"; exit 2; }
topo > "$O/cpus.txt" 2>&1; cat "$O/cpus.txt"; logs+=(cpus.txt)
CPUS=${CPUS:-$(pick_cpus | cut -f1)}

# build what is missing (both versions in parallel, the cores split between them)
need=()
for v in $BUILDS ${BUILD_ALSO:-}; do
	case " ${need[*]} " in *" $v "*) continue ;; esac
	[ -x build-efasim/lf-$v/efab/bin/efab_put_bw ] && [ -x build-efasim/lf-$v/fabtests/bin/fi_efa_rma_bw ] ||
		need+=("$v")
done
if [ ${#need[@]} -gt 0 ]; then
	jobs=$(( $(nproc) / ${#need[@]} )); [ $jobs -ge 1 ] || jobs=1
	for v in "${need[@]}"; do
		( JOBS=$jobs timeout $(( $(left) - RESERVE )) make efasim V=$v > "$O/b-$v.log" 2>&1
		  el "build $v rc=$? (JOBS=$jobs)" ) &
	done
	wait
	for v in "${need[@]}"; do grep -h 'built in' "$O/b-$v.log" | sed "s/^/  /"; logs+=(b-$v.log); done
else
	el "efasim builds present: $BUILDS ${BUILD_ALSO:-}"
fi

scale=${SCALE:-8,64K=5,4M=1}
# one build's sitting: sit_one V CPUS SHARE HARD
sit_one() {
	local v=$1 cpus=$2 share=$3 hard=$4
	local L=$PWD/build-efasim/lf-$v o=s62-$v
	if [ ! -x "$L/efab/bin/efab_put_bw" ] || [ ! -x "$L/fabtests/bin/fi_efa_rma_bw" ]; then
		el "libfabric $v: efasim build missing (see b-$v.log): skipped"; return
	fi
	el "libfabric $v: --deadline $share s (hard limit $hard s), --reps ${REPS:-5}, --ops-scale $scale, --taskset $cpus"
	timeout -k 5 $hard bench/tools/efab_sidebyside --efab "$L/efab/bin" --fabtests "$L/fabtests/bin" \
		--efasim "$PWD/tests/efasim/run:$v" --providers "" --efasim-fabrics efa-direct \
		--cases "${CASES:-erma24}" --reps "${REPS:-5}" --ops-scale "$scale" --taskset "$cpus" \
		--deadline $share --timeout 60 -o "$O/$o" > "$O/$o.log" 2>&1
	el "libfabric $v: efab_sidebyside rc=$?"
	rm -rf "$O/$o/tmp"
}
report() { # V
	local o=s62-$1
	echo "== libfabric $1"
	grep -E '^efab_sidebyside: ' "$O/$o.log" | cut -c1-300 | head -20
	grep -c ' rep [0-9]*: nan ' "$O/$o.log" | sed 's/^/  failed runs (nan): /'
	if [ -f "$O/$o/table.md" ]; then
		grep -E '^(Sitting|\*\*Only)' "$O/$o/table.md"
		grep '^| efa' "$O/$o/table.md" | cut -d'|' -f3,5-8 | sed 's/ message rate\| bandwidth//; s/, pipelined//'
	else
		echo "  no table.md (cut short): runs so far in $o/runs.csv: $(( $(wc -l < "$O/$o/runs.csv") - 1 ))"
	fi
}
set -- $BUILDS
if [ "${PARALLEL:-0}" = 1 ] && [ $# -eq 2 ]; then
	# two lanes at once, each on half the picked CPUs (each lane's two tools alternate as
	# ever, so whatever the other lane costs falls on both of a lane's tools alike)
	IFS=, read -r -a all <<<"$CPUS"; h=$(( ${#all[@]} / 2 ))
	c1=$(IFS=,; echo "${all[*]:0:$h}"); c2=$(IFS=,; echo "${all[*]:$h}")
	hard=$(( $(left) - RESERVE ))
	sit_one "$1" "$c1" "$hard" "$hard" &
	sit_one "$2" "$c2" "$hard" "$hard" &
	wait
	for v in "$@"; do report $v; logs+=("s62-$v" "s62-$v.log"); done
else
	while [ $# -gt 0 ]; do
		v=$1; shift
		share=$(( ($(left) - RESERVE) / ($# + 1) )); hard=$(( $(left) - RESERVE ))
		if [ $share -le 0 ]; then el "libfabric $v: no time left: skipped"; continue; fi
		sit_one "$v" "$CPUS" "$share" "$hard"; report $v; logs+=("s62-$v" "s62-$v.log")
	done
fi
tar czf "$O/$tag.tgz" -C "$O" "${logs[@]}" 2>/dev/null; (cd "$O" && rm -rf "${logs[@]}")
el done

# The documentation: README.md is the front door, docs/ the reference. Every
# command shown in them still works as written (as far as this machine can
# check it: tests/doccmds.py), every relative link resolves, the README keeps
# the two commands CI runs, and the code map's include rules hold.

# A scratch copy of the tree: README.md and docs/ copied, everything else linked.
doc_scratch() {
	local t=$WORK/tree e
	mkdir -p "$t"
	for e in "$ROOT"/* "$ROOT"/.ci; do
		case "$(basename "$e")" in README.md | docs) ;; *) ln -s "$e" "$t/$(basename "$e")" ;; esac
	done
	cp "$ROOT/README.md" "$t/"
	cp -r "$ROOT/docs" "$t/"
	echo "$t"
}

t_doc_commands() {
	expect_rc 0 python3 tests/doccmds.py --bin "$ABIN"
	grep -q "^doccmds: [0-9]* commands in [0-9]* files, 0 failures" "$WORK/last.out" || die "no summary"
	# it can fail (each mutation of a scratch copy, and nothing else, fails):
	local t d=tests/doccmds.py
	t=$(doc_scratch)
	# a misspelt option in the README's p5en quick start
	grep -q -- "efab_put_bw  -p efa -f efa-direct --mem cuda --domain auto" "$t/README.md" || die "no put_bw line"
	sed -i 's/efab_put_bw  -p efa -f efa-direct --mem cuda --domain auto/efab_put_bw  -p efa -f efa-direct --mem cuda --domian auto/' "$t/README.md"
	expect_rc 1 python3 $d --root "$t" --bin "$ABIN" "$t/README.md"
	grep -q "^FAIL  README.md:[0-9]*: efab_put_bw: unknown option --domian" "$WORK/last.out" || die "--domian not named"
	grep -q "files, 1 failures" "$WORK/last.out" || die "other failures"
	cp "$ROOT/README.md" "$t/"
	# a value the option table refuses, in docs/
	sed -i 's/efab_shmem_reg -m 4K:4G:x4/efab_shmem_reg -m 4K:4G:y4/' "$t/docs/nvshmem.md"
	expect_rc 1 python3 $d --root "$t" --bin "$ABIN" "$t/docs/nvshmem.md"
	grep -q "^FAIL  docs/nvshmem.md:[0-9]*: efab_shmem_reg: efab_sweep --dry-run refuses its options: .*sizes" \
		"$WORK/last.out" || die "bad size not named"
	grep -q "files, 1 failures" "$WORK/last.out" || die "other failures"
	cp "$ROOT/docs/nvshmem.md" "$t/docs/"
	# efab_scan's own parser, a missing config, an inline synopsis, a link, an anchor,
	# a command in an untagged block, a docs file the README does not link
	sed -i 's/--passes 3 --csv scan.csv/--passes three --csv scan.csv/' "$t/docs/scan.md"
	sed -i 's#configs/p5en-libfabric-ab.conf  #configs/p5en-libfabric-abc.conf #' "$t/docs/sweeps.md"
	sed -i 's/`efab_probe --diff A B \[--json\]`/`efab_probe --diff A B [--jsn]`/' "$t/docs/probe.md"
	sed -i 's#(docs/csv.md)#(docs/csv-schema.md)#; s#docs/gpu.md\#topology#docs/gpu.md\#topologie#' "$t/README.md"
	printf '\n```\nbuild/bin/efab_put_lat --bogus\n```\n' >>"$t/docs/options.md"
	printf '# orphan\n' >"$t/docs/orphan.md"
	expect_rc 1 python3 $d --root "$t" --bin "$ABIN" "$t/README.md" "$t/docs/scan.md" "$t/docs/sweeps.md" \
		"$t/docs/probe.md" "$t/docs/options.md"
	grep -q "^FAIL  docs/scan.md:[0-9]*: efab_scan: exit 2: .*--passes" "$WORK/last.out" || die "scan value"
	grep -q "^FAIL  docs/sweeps.md:[0-9]*: efab_sweep: no config configs/p5en-libfabric-abc.conf" "$WORK/last.out" ||
		die "missing config"
	grep -q "^FAIL  docs/probe.md:[0-9]*: efab_probe: unknown option --jsn" "$WORK/last.out" || die "inline option"
	grep -q "^FAIL  README.md:[0-9]*: link docs/csv-schema.md" "$WORK/last.out" || die "broken link"
	grep -q "^FAIL  README.md:[0-9]*: link docs/gpu.md#topologie: no heading" "$WORK/last.out" || die "anchor"
	grep -q "^FAIL  docs/options.md:[0-9]*: a fenced block without a language" "$WORK/last.out" || die "untagged"
	grep -q "^FAIL  README.md: docs/orphan.md is not linked from README.md" "$WORK/last.out" || die "orphan"
	grep -q "files, 10 failures" "$WORK/last.out" || die "other failures" # csv-schema and #topologie twice each; csv.md unlinked
}

# The front door keeps the two commands, exactly as CI runs them, and the
# fresh machine's one prerequisite.
t_doc_front_door() {
	python3 - <<'PY' || die "front door"
import re, sys
r = open("README.md").read()
blocks = re.findall(r"```sh\n(.*?)```", r, re.S)
two = [b for b in blocks if re.search(r"^make demo ", b, re.M)]
assert two, "no sh block with make demo"
cmds = [l.split("#")[0].strip() for l in two[0].splitlines() if l.strip() and not l.startswith(" ")]
assert cmds == ["make demo", "make check"], cmds
assert "apt-get install -y make gcc\n" in blocks, "the prerequisite block"
assert "## The two commands" in r
ci = open(".ci/run").read()
assert '.ci/fresh-root "make demo" "make check"' in ci, "CI no longer runs the README's two commands"
fr = open(".ci/fresh-root").read()
assert "apt-get install -y -qq make gcc" in fr, "fresh-root no longer installs only the prerequisite"
for s in ("## What has not been run", "No EFA device was available", "SIMULATED"):
    assert s in r, s
n = r.count("\n")
print(f"README.md: {n} lines")
PY
}

# The code map's include rules (docs/architecture.md, *checked*): which room
# may include which. A header belongs to the folder it lives in.
t_doc_code_map() {
	python3 - <<'PY' || die "code map"
import glob, os, re
room = {}
for h in glob.glob("lib/*.h") + glob.glob("bench/*/*.h") + glob.glob("tests/**/*.h", recursive=True):
    room.setdefault(os.path.basename(h), os.path.dirname(h))
def includes(f):
    src = open(f).read()
    return (re.findall(r'#\s*include\s+"([^"]+)"', src),
            re.findall(r'#\s*include\s+<([^>]+)>', src))
bad = []
def rule(files, ok, what):
    for f in files:
        q, s = includes(f)
        for h in q + s:
            r = "<system>" if h in s else room.get(os.path.basename(h), "?")
            if not ok(f, h, r):
                bad.append(f"{f}: #include {h} ({r}): {what}")
lib = glob.glob("lib/*.[ch]")
rule(lib, lambda f, h, r: h != "mpi.h" and (r == "lib" or r == "<system>"), "lib/ includes no MPI, bench/ or tests/")
eng = glob.glob("bench/engine/*.[ch]")
rule([f for f in eng if not f.endswith("families.c")], lambda f, h, r: r != "bench/ops",
     "only families.c reaches the operation families")
rule(["bench/engine/rows.c"], lambda f, h, r: h == "rows.h" or r == "<system>", "rows.c is pure data")
ops = glob.glob("bench/ops/*")
rule(ops, lambda f, h, r: r != "bench/tools", "bench/ops/ does not call bench/tools/")
rule(glob.glob("bench/tools/sweep*.[ch]") + ["bench/tools/hostfacts.c", "bench/efab_sweep.c", "bench/efab_topo.c"],
     lambda f, h, r: h != "mpi.h" and (r in ("lib", "<system>") or h in ("rows.h", "hostfacts.h", "sweep_int.h")),
     "no MPI, lib/ (and rows.h, hostfacts.h, sweep_int.h)")
rule(["bench/tools/fitrace.c"], lambda f, h, r: r == "<system>" or h == "efab_fitrace.h", "fitrace.c: efab_fitrace.h only")
everything = lib + glob.glob("bench/*.c") + glob.glob("bench/*/*.[ch]") + glob.glob("bench/*/*.cc")
rule(everything, lambda f, h, r: not r.startswith("tests"), "nothing in lib/ or bench/ includes tests/")
for b in bad:
    print(b)
print(f"code map: {len(everything)} files, {len(bad)} include rules broken")
raise SystemExit(1 if bad else 0)
PY
}

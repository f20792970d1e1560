# efab_plot grouped by provider, one provider on two fabrics: with libfabric
# >= 2.1 provider efa answers both -f efa and -f efa-direct. The rows of the
# two fabrics must never be taken for repeats of one series: each fabric is a
# group (efa/efa, efa/efa-direct), and the report compares them.
# tests/data/path/fabrics (gen.py there): shm, efa-direct, efa, 3 repeats
# each; efa-direct exactly twice as fast as efa at every size.

FABDATA=tests/data/path/fabrics
# no_traceback: t_plot_path.sh (tests/run sources every t_*.sh)

# The headline tables, the answer and the verdicts of report $1 against the
# CSVs of $FABDATA: the cells of the groups named in $2 (group=fabric,...)
# are that fabric's own medians, and where both efa groups are named,
# their ratio is efa-direct's factor 2 (0.5 for latency) at every size.
fabrics_check_report() { # REPORT GROUP=FABRIC,...
	python3 - "$1" "$2" "$FABDATA" <<'PY'
import csv, glob, re, sys
rep, names, data = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(rep).read()
fab_of = dict(kv.split("=") for kv in names.split(","))
def med(v):
    v = sorted(v); m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2
want = {}
for p in glob.glob(f"{data}/*.csv"):
    for d in csv.DictReader(open(p)):
        col = "bw_MBps" if d["bench"].endswith("_bw") else "lat_us_p50"
        want.setdefault((d["bench"], d["fabric"], int(d["size_bytes"])), []).append(float(d[col]))
want = {k: med(v) for k, v in want.items()}
def nbytes(s):
    return int(s.rstrip("KM")) * {"K": 1024, "M": 1 << 20}.get(s[-1], 1)
head = text.split("\n## Headline sizes\n", 1)[1].split("\n## ", 1)[0]
checked = 0
for bench, factor in (("put_bw", 2.0), ("put_lat", 0.5)):
    sec = head.split(f"### {bench} ", 1)[1].split("\n### ", 1)[0]
    rows = [[c.strip() for c in l.strip("|").split("|")] for l in sec.splitlines()
            if l.startswith("| ")]
    hdr, body = rows[0], rows[1:]
    assert len(body) == 4, f"{bench}: {len(body)} headline rows, expected 4 (one per size)"
    ratio_col = "efa/efa-direct ÷ efa/efa"
    if "efa/efa" in fab_of and "efa/efa-direct" in fab_of:
        assert ratio_col in hdr, f"{bench}: no column '{ratio_col}' in {hdr}"
    for r in body:
        cell = dict(zip(hdr, r))
        s = nbytes(cell["size"])
        for g, fab in fab_of.items():
            v = want[(bench, fab, s)]
            assert abs(float(cell[g]) - v) < 0.0015, \
                f"{bench} {cell['size']}: {g} {cell[g]}, the {fab} rows' median is {v:.3f}"
            checked += 1
        if ratio_col in hdr:
            assert cell[ratio_col] == f"{factor:.3f}*", \
                f"{bench} {cell['size']}: {ratio_col} {cell[ratio_col]}, expected {factor:.3f}*"
if "efa/efa" in fab_of:
    ans = text.split("\n## Answer: efa/efa-direct against efa/efa\n", 1)
    assert len(ans) == 2, "no answer efa/efa-direct against efa/efa"
    ans = ans[1].split("\n## ", 1)[0]
    lines = [l for l in ans.splitlines() if l.startswith("| put_")]
    assert len(lines) == 8, f"{len(lines)} answer rows, expected 8"
    for l in lines:
        c = [x.strip() for x in l.strip("|").split("|")]
        f = 2.0 if c[0] == "put_bw" else 0.5
        assert c[5] == f"{f:.3f}" and c[6] == "faster", f"answer row: {l}"
    assert ("efa/efa-direct: 8 faster, 0 slower, 0 without a significant difference, "
            "0 inconclusive (8 points).") in ans, "answer summary"
    for v in ("put_bw [put_bw write host:host 1p]: efa/efa-direct bandwidth is 2.00× efa/efa "
              "at 8 B (significant)",
              "put_bw [put_bw write host:host 1p]: efa/efa-direct vs efa/efa: 2 of 2 sizes "
              "from 64 KiB differ significantly",
              "put_lat [put_lat write host:host]: efa/efa-direct p50 latency is 0.50× efa/efa "
              "at 8 B (significant)"):
        assert f"\n- {v}" in text, f"no verdict '{v}'"
print(f"{checked} headline cells agree with the fabrics' own medians")
PY
}

# (a) grouped by provider (the default for one directory): two groups for
# efa, each with its own medians; efa-direct 2x efa in the headline ratio,
# the answer (faster at every size) and the verdicts; the figures draw a
# line per fabric and the ratio efa-direct ÷ efa, 2 (0.5) at every size.
t_plot_fabrics_split_by_provider() {
	local hl
	expect_rc 0 python3 plot/efab_plot "$FABDATA" -o "$WORK/p"
	# whatever the groups are named: efa's median (14664.359 MB/s at 1 MiB)
	# and efa-direct's (29328.719) each in the headline, not their merged
	# median, and efa-direct's ratio 2 to efa answered as faster
	hl=$(grep '^| put_bw write host:host 1p | 1M |' "$WORK/p/report.md")
	case "$hl" in *"| 14664.359 |"*) ;; *) die "put_bw 1M headline: not efa's own median: $hl" ;; esac
	case "$hl" in *"| 29328.719 |"*) ;; *) die "put_bw 1M headline: not efa-direct's own median: $hl" ;; esac
	grep -q '^| put_bw | put_bw write host:host 1p | 1M | 14664.359 | 29328.719 | 2.000 | faster |$' \
		"$WORK/p/report.md" || die "no answer: efa-direct 2.000x efa, faster, at 1 MiB"
	grep -q '^| put_lat | put_lat write host:host | 8 | 4.001 | 2.001 | 0.500 | faster |$' \
		"$WORK/p/report.md" || die "no answer: efa-direct 0.500x efa's latency, faster, at 8 B"
	grep -q '^Grouped by `provider`; groups: `shm`, `efa/efa`, `efa/efa-direct`\.$' "$WORK/p/report.md" ||
		die "efa not split into its fabrics: $(grep '^Grouped' "$WORK/p/report.md")"
	grep -q '^Provider `efa` ran the same series on 2 fabrics: ' "$WORK/p/report.md" ||
		die "the split is not explained"
	fabrics_check_report "$WORK/p/report.md" "shm=shm,efa/efa=efa,efa/efa-direct=efa-direct" ||
		die "report"
	# the comparison the user asks for comes first
	[ "$(grep -m1 '^## Answer' "$WORK/p/report.md")" = "## Answer: efa/efa-direct against efa/efa" ] ||
		die "efa-direct against efa is not the first answer"
	python3 - "$FABDATA" "$WORK/fig" <<'PY' || die "figures"
import importlib.machinery, importlib.util, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.figure
loader = importlib.machinery.SourceFileLoader("efab_plot_t", "plot/efab_plot")
spec = importlib.util.spec_from_loader("efab_plot_t", loader)
m = importlib.util.module_from_spec(spec)
loader.exec_module(m)
lines = {}
real = matplotlib.figure.Figure.savefig
def record(fig, fname, *a, **k):
    for ax in fig.axes:
        for ln in ax.get_lines():
            if ln.get_transform() == ax.transData:
                lines[(str(fname).rsplit("/", 1)[-1], ax.get_ylabel(), ln.get_label())] = \
                    list(ln.get_ydata())
    return real(fig, fname, *a, **k)
matplotlib.figure.Figure.savefig = record
assert m.main([sys.argv[1], "-o", sys.argv[2]]) == 0
for png, skey, f in (("put_bw.png", "put_bw write host:host 1p", 2.0),
                     ("put_lat.png", "put_lat write host:host", 0.5)):
    labs = {lab for p, _, lab in lines if p == png}
    for g in ("efa/efa", "efa/efa-direct", "shm"):
        assert f"{g} · {skey}" in labs, f"{png}: no line '{g} · {skey}' in {sorted(labs)}"
    assert f"efa · {skey}" not in labs, f"{png}: efa's fabrics drawn as one line"
    r = [ys for (p, y, lab), ys in lines.items()
         if p == png and lab == f"efa/efa-direct ÷ efa/efa · {skey}"]
    assert len(r) == 1 and len(r[0]) == 4 and all(abs(v / f - 1) < 1e-3 for v in r[0]), \
        f"{png}: ratio line efa/efa-direct ÷ efa/efa: {r}"
print("figures: a line per fabric, the ratio efa-direct ÷ efa drawn")
PY
	python3 tests/plotcheck.py --units "$FABDATA" >"$WORK/u.out" 2>&1 || { cat "$WORK/u.out"; die "units"; }
	no_traceback
}

# (b) --group-by fabric: groups are the fabrics, as they always were.
t_plot_fabrics_group_by_fabric() {
	expect_rc 0 python3 plot/efab_plot "$FABDATA" --group-by fabric -o "$WORK/p"
	grep -q '^Grouped by `fabric`; groups: `shm`, `efa-direct`, `efa`\.$' "$WORK/p/report.md" ||
		die "groups: $(grep '^Grouped' "$WORK/p/report.md")"
	grep -q '^Provider .* fabrics' "$WORK/p/report.md" && die "a split note grouped by fabric"
	fabrics_check_report "$WORK/p/report.md" "shm=shm,efa=efa,efa-direct=efa-direct" || die "report"
	grep -q '^## Answer: efa-direct against shm$' "$WORK/p/report.md" || die "efa-direct against shm"
	grep -q '^## Answer: efa against shm$' "$WORK/p/report.md" || die "efa against shm"
	no_traceback
}

# (c) A provider on one fabric, or on two that never meet in one series (tcp
# on lo for most benchmarks, on eth0 for mr_reg in issue17's run), stays one
# group named by the provider.
t_plot_fabrics_single_fabric_one_group() {
	local r
	r=$(ls -d results/*-loopback-ref | head -1)
	[ -n "$r" ] || die "no committed reference run under results/"
	expect_rc 0 python3 plot/efab_plot "$r" -o "$WORK/ref"
	grep -q '^Grouped by `provider`; groups: `shm`, `tcp;ofi_rxm`\.$' "$WORK/ref/report.md" ||
		die "reference: $(grep '^Grouped' "$WORK/ref/report.md")"
	expect_rc 0 python3 plot/efab_plot results/20261130-094047-vm-issue17-figures -o "$WORK/i17"
	grep -q '^Grouped by `provider`; groups: `shm`, `tcp;ofi_rxm`\.$' "$WORK/i17/report.md" ||
		die "issue17: $(grep '^Grouped' "$WORK/i17/report.md")"
	grep -q '^Provider .* fabrics' "$WORK/ref/report.md" "$WORK/i17/report.md" && die "a split note"
	no_traceback
}

# (d) efa before efa-direct in the files (t_plot_path's two-fabric fixture):
# the same split, each fabric's own median in the headline.
t_plot_fabrics_two_fabric_fixture() {
	expect_rc 0 python3 plot/efab_plot tests/data/path/two-fabric -o "$WORK/p"
	grep -q '^| put_bw write host:host 1p | 4M | 22975.793 | 29829.315 | 538386.549 | 1.298\* | 23.433\* |$' \
		"$WORK/p/report.md" || die "put_bw 4M: not efa's and efa-direct's own medians"
	grep -q '^| put_lat | put_lat write host:host | 64K | 9.100 | 7.461 | 0.820 | faster |$' \
		"$WORK/p/report.md" || die "put_lat 64K: efa-direct against efa"
	grep -q '^Grouped by `provider`; groups: `efa/efa`, `efa/efa-direct`, `shm`\.$' "$WORK/p/report.md" ||
		die "groups: $(grep '^Grouped' "$WORK/p/report.md")"
	no_traceback
}

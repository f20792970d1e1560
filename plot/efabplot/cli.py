"""efab_plot: figures and a comparison report from one or many efabench result
directories.

    efab_plot RESULT_DIR... [-o OUT] [--group-by KEY] [--baseline DIR]

Each benchmark gets one PNG (latency vs size with a p99 band; bandwidth and
message rate; registration time with its fitted line), a ratio panel when two
or more groups are compared, and report.md beside them: the runs, a table of
headline sizes per group with ratios, registration fits and verdicts that
claim a difference only when it exceeds the measured noise (grouped by
provider, a provider that ran one series on several fabrics -- efa on efa
and efa-direct -- is a group per fabric, efa/efa and efa/efa-direct,
compared with each other); where the rows
carry the NIC counter columns, what the NIC did (the path each payload took,
proved by the counters) and the software cost per operation (post_ns,
poll_ns; efa beside efa-direct). With --baseline
the report lists every (benchmark, size) that got significantly worse and the
exit status is 1 when any did. Exit 2 on bad input, with one line saying why.
When every directory has the probe.json efab_sweep records, the report opens
with the capability diff (efab_probe --diff) between the first and each other.
"""
import argparse
import os
import sys

from . import figbase, figures, grouping, load, report, stats


def main(argv):
    ap = argparse.ArgumentParser(prog="efab_plot", description=__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", metavar="RESULT_DIR")
    ap.add_argument("-o", "--output", help="output directory (default: DIR/plots for one "
                    "directory, ./efab-plots otherwise)")
    ap.add_argument("--group-by", choices=load.GROUP_KEYS, default=None,
                    help="what the groups are (default: label with several directories; "
                         "with one, libfabric when it ran against several libfabric "
                         "installs, else provider)")
    ap.add_argument("--allow-simulated", action="store_true",
                    help="plot runs on the simulated EFA device (efasim) beside real runs; "
                         "refused otherwise: simulated figures measure the simulator")
    ap.add_argument("--baseline", metavar="DIR",
                    help="regression check: compare every RESULT_DIR against this one; exit 1 "
                         "when anything got significantly worse")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if not a.dirs:
        print("efab_plot: give at least one RESULT_DIR (see --help)", file=sys.stderr)
        return 2
    try:
        runs = [load.load_dir(d) for d in a.dirs]
        base_run = load.load_dir(a.baseline) if a.baseline else None
    except load.InputError as e:
        print(f"efab_plot: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"efab_plot: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    everything = runs + ([base_run] if base_run else [])
    sims = [r for r in everything if r["simulated"]]
    if sims and len(sims) < len(everything) and not a.allow_simulated:
        real = next(r for r in everything if not r["simulated"])
        print(f"efab_plot: {sims[0]['path']} ran on the SIMULATED EFA device (efasim) and "
              f"{real['path']} did not: simulated figures measure the simulator, not EFA; "
              f"--allow-simulated plots them side by side, labelled", file=sys.stderr)
        return 2
    load.disambiguate_installs(everything)
    # one run swept against several libfabric installs compares the installs
    one_dir_installs = (len(runs) == 1 and not base_run
                        and len({d.get("libfabric_path", "") for d in runs[0]["rows"]}) > 1)
    group_by = a.group_by or ("label" if len(runs) > 1 or base_run
                              else "libfabric" if one_dir_installs else "provider")
    if base_run:
        group_by = "label"
        base_run["label"] = "baseline"
        for d in base_run["rows"]:
            d["label"] = "baseline"
        for r in runs:
            for d in r["rows"]:
                d["label"] = "candidate" if len(runs) == 1 else r["label"]
        runs = [base_run] + runs
    load.use_bw_definition(runs)
    groups, splits = grouping.assign_groups(runs, group_by)
    data = grouping.build(runs, group_by)
    out = a.output or (os.path.join(a.dirs[0], "plots") if len(a.dirs) == 1 else "efab-plots")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        print(f"efab_plot: cannot create {out}: {e.strerror}", file=sys.stderr)
        return 2
    try:
        mpl = figbase.setup_matplotlib()
    except ImportError:
        print("efab_plot: matplotlib is missing (pip install matplotlib)", file=sys.stderr)
        return 2
    drawn = {}
    for bench, series in sorted(data.items()):
        fig, n = figures.plot_bench(bench, series, groups, out, mpl, splits)
        if n:
            drawn[bench] = fig
    worse = []
    if base_run:
        for g in groups[1:]:
            worse += stats.regressions(data, "baseline", g)
    rpath = os.path.join(out, "report.md")
    report.write_report(rpath, runs, data, groups, group_by, drawn, bool(base_run), worse, splits)
    print(f"efab_plot: {len(drawn)} figures and {rpath}")
    if base_run and worse:
        print(f"efab_plot: {len(worse)} (benchmark, size) points got significantly worse than "
              f"the baseline", file=sys.stderr)
        return 1
    return 0

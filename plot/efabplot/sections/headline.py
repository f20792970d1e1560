"""Report section "Headline sizes": per benchmark the medians of every
series at the headline sizes, per group, with the ratios of the
comparisons (* significant, ? inconclusive)."""
from .. import fmt, grouping, load, stats


BW_REPORT_LINE = {
    "elapsed": "Bandwidth and message rate over the elapsed time of the timed loop (first post "
               "to last completion, the end confirmed at the target).",
    "windows": "Bandwidth and message rate over the sum of window times (`bw_MBps_windows`): "
               "an input CSV predates the elapsed-time `bw_MBps`, so every run is compared in "
               "that definition.",
}


def lines(data, all_groups, splits=()):
    L = ["## Headline sizes"]
    for bench, series in sorted(data.items()):
        groups = grouping.bench_groups(series, all_groups)
        col, better = stats.metric_of(bench)
        L += ["", f"### {bench} (`{col}`, {better} is better)", ""]
        if bench.endswith("_bw"):
            L += [BW_REPORT_LINE[load.BW_DEFINITION[0]], ""]
        pairs = grouping.compare_pairs(groups, splits)
        head = "| series | size | " + " | ".join(f"{g}" for g in groups)
        if pairs:
            head += " | " + " | ".join(f"{g} ÷ {g0}" for g0, g in pairs)
        L.append(head + " |")
        L.append("|" + "---|" * (2 + len(groups) + len(pairs)))
        for skey, bygroup in sorted(series.items()):
            sizes = sorted(set().union(*[set(v) for v in bygroup.values()]))
            for s in grouping.headline_sizes(sizes):
                cells = []
                for g in groups:
                    pt = bygroup.get(g, {}).get(s)
                    v = pt.median(col) if pt else None
                    cells.append(f"{v:.3f}" if v is not None else "-")
                ratios = []
                for g0, g in pairs:
                    a, b = bygroup.get(g0, {}).get(s), bygroup.get(g, {}).get(s)
                    r, v = stats.compare_verdict(a, b, col) if a and b else (None, "none")
                    mark = {"significant": "*", "inconclusive": "?"}.get(v, "")
                    ratios.append(f"{r:.3f}{mark}" if r is not None else "-")
                L.append(f"| {skey} | {fmt.size_label(s)} | " + " | ".join(cells + ratios) + " |")
        if len(groups) > 1:
            L.append("")
            L.append("`*` marks a significant difference, `?` an inconclusive one (Method).")
    return L

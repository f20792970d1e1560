"""Report section "Verdicts": per benchmark, series and comparison of two
groups, the ratio at the smallest common size and the verdict over the
sizes from 64 KiB."""
from .. import fmt, grouping, stats


def verdicts(bench, series, groups, splits=()):
    groups = grouping.bench_groups(series, groups)
    col, better = stats.metric_of(bench)
    out = []
    what = "bandwidth" if col == "bw_MBps" else "p50 latency" if bench != "mr_reg" else "registration p50"
    for skey, bygroup in sorted(series.items()):
        for g0, g in grouping.compare_pairs(groups, splits):
            if g0 not in bygroup:
                continue
            base = bygroup[g0]
            pts = bygroup.get(g)
            if not pts:
                continue
            common = sorted(set(base) & set(pts))
            if not common:
                continue
            smallest = common[0]
            r0, v0 = stats.compare_verdict(base[smallest], pts[smallest], col)
            if r0 is not None:
                out.append(f"{bench} [{skey}]: {g} {what} is {r0:.2f}× {g0} at "
                           f"{fmt.human(smallest)} "
                           f"({stats.verdict_phrase(v0, stats.repeats(base[smallest], pts[smallest], col))})")
            big = [s for s in common if s >= 65536]
            if big:
                rs = [stats.compare_verdict(base[s], pts[s], col) for s in big]
                dev = max(abs(r - 1) for r, _ in rs if r is not None)
                n_sig = sum(1 for _, v in rs if v == "significant")
                n_inc = sum(1 for _, v in rs if v == "inconclusive")
                tail = f"(largest deviation {dev * 100:.1f} %)"
                if n_sig:
                    more = f", {n_inc} inconclusive" if n_inc else ""
                    out.append(f"{bench} [{skey}]: {g} vs {g0}: {n_sig} of {len(big)} sizes "
                               f"from 64 KiB differ significantly{more} {tail}")
                elif n_inc:
                    n = min(stats.repeats(base[s], pts[s], col) for s in big)
                    out.append(f"{bench} [{skey}]: {g} vs {g0}: inconclusive from 64 KiB "
                               f"({n_inc} of {len(big)} sizes; {n} repeats, the rule needs "
                               f"{stats.MIN_REPEATS}) {tail}")
                else:
                    out.append(f"{bench} [{skey}]: {g} vs {g0}: no significant "
                               f"difference from 64 KiB {tail}")
    return out


def lines(data, groups, splits=()):
    L = ["", "## Verdicts", ""]
    vs = []
    if len(groups) > 1:
        for bench, series in sorted(data.items()):
            vs += verdicts(bench, series, groups, splits)
    return L + ([f"- {v}" for v in vs] or ["- one group only: nothing to compare"])

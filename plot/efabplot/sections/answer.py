"""Report sections "Answer: B against A": per comparison of two groups, the
medians of every benchmark, series and headline size, their ratio and
faster / slower / no significant difference / inconclusive."""
from .. import fmt, grouping, stats


def answer_rows(data, base, cand):
    """Per benchmark, series and headline size present in both groups: base
    value, candidate value, ratio and faster / slower / no significant
    difference (the noise-aware rule of compare())."""
    rows = []
    for bench, series in sorted(data.items()):
        col, better = stats.metric_of(bench)
        for skey, bygroup in sorted(series.items()):
            a, b = bygroup.get(base), bygroup.get(cand)
            if not a or not b:
                continue
            for s in grouping.headline_sizes(sorted(set(a) & set(b))):
                r, v = stats.compare_verdict(a[s], b[s], col)
                rows.append((bench, skey, s, a[s].median(col), b[s].median(col), r,
                             stats.verdict_word(r, v, better, stats.repeats(a[s], b[s], col)), col))
    return rows


def answer_section(data, groups, splits=()):
    L = []
    for g0, g in grouping.compare_pairs(groups, splits):
        rows = answer_rows(data, g0, g)
        if not rows:
            continue
        L += [f"## Answer: {g} against {g0}", "",
              "Per benchmark, series and headline size: the medians, their ratio and whether "
              f"{g} is faster, slower or not significantly different (the rule under Method; "
              "bandwidth: higher is faster, latency and registration time: lower is faster).",
              "", f"| benchmark | series | size | {g0} | {g} | ratio | {g} is |",
              "|---|---|---|---|---|---|---|"]
        for bench, skey, s, va, vb, r, word, col in rows:
            L.append(f"| {bench} | {skey} | {fmt.size_label(s)} | "
                     f"{'-' if va is None else f'{va:.3f}'} | {'-' if vb is None else f'{vb:.3f}'} | "
                     f"{'-' if r is None else f'{r:.3f}'} | {word} |")
        n = {w: sum(1 for x in rows if x[6] == w) for w in ("faster", "slower", "no significant difference")}
        n_inc = sum(1 for x in rows if x[6].startswith("inconclusive"))
        L += ["", f"{g}: {n['faster']} faster, {n['slower']} slower, "
              f"{n['no significant difference']} without a significant difference, "
              f"{n_inc} inconclusive ({len(rows)} points).", ""]
    return L

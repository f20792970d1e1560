"""Report section "Regression check against the baseline" (--baseline): the
series on one side only, and every (benchmark, size) that got significantly
worse (stats.regressions)."""
from .. import fmt, grouping


def lines(data, groups, worse):
    L = ["", "## Regression check against the baseline", ""]
    one_side = [(b, k, h, m) for b, k, h, m in grouping.coverage_gaps(data, groups)
                if "baseline" in h or "baseline" in m]
    if one_side:
        L.append("Not compared (series on one side only; the gate judges series present "
                 "in both):")
        L.append("")
        for bench, skey, have, miss in one_side:
            L.append(f"- {bench} [{skey}]: only in {', '.join(have)}")
        L.append("")
    if worse:
        L.append(f"{len(worse)} (benchmark, size) points got significantly worse:")
        L.append("")
        for bench, skey, s, r, col in worse:
            L.append(f"- {bench} [{skey}] at {fmt.human(s)}: `{col}` ratio {r:.3f}")
    else:
        L.append("No (benchmark, size) point got significantly worse.")
    return L

"""Report section "Series not in every group" (with two or more groups)."""
from .. import grouping


def lines(data, groups):
    gaps = grouping.coverage_gaps(data, groups)
    L = ["## Series not in every group", ""]
    if gaps:
        for bench, skey, have, miss in gaps:
            L.append(f"- {bench} [{skey}]: only in {', '.join(f'`{g}`' for g in have)}; "
                     f"not in {', '.join(f'`{g}`' for g in miss)}")
    else:
        L.append("None: every series has every group.")
    L.append("")
    return L

"""The grouping line ("Grouped by `KEY`; groups: ..."), and per provider that
ran one series on several fabrics, why each fabric is a group of its own."""
from .. import fmt


def lines(group_by, groups, splits=()):
    L = [f"Grouped by `{group_by}`; groups: " + ", ".join(f"`{g}`" for g in groups) + ".", ""]
    for fs in splits:
        prov = fs[0].split("/", 1)[0] + (fmt.SIM if fs[0].endswith(fmt.SIM) else "")
        L += [f"Provider `{prov}` ran the same series on {len(fs)} fabrics: each fabric is a "
              f"group of its own, named provider/fabric ({', '.join(f'`{g}`' for g in fs)}), so "
              f"their rows are never taken for repeats of one another; "
              f"{', '.join(f'`{g}`' for g in fs[1:])} {'is' if len(fs) == 2 else 'are'} "
              f"compared with `{fs[0]}` (answers, headline ratios, verdicts, the figures' ratio "
              f"panel).", ""]
    return L

"""Report section "What was asked and what each group got": the provider
and fabric libfabric returned for each request (-p/-f), per group, and a
finding per request that groups answered with different names."""
from .. import grouping


def returned_names(runs, group_by):
    """{request: {group: {(provider, fabric)}}}: what libfabric returned for
    each request, per group (rows with the request columns only)."""
    out = {}
    for r in runs:
        for d in r["rows"]:
            req = grouping.request_of(d)
            if req is None:
                continue
            g = d[group_by] if group_by in d else r["label"]
            out.setdefault(req, {}).setdefault(g, set()).add((d["provider"], d["fabric"]))
    return out


def names_str(pairs):
    return "; ".join(f"provider `{p}`, fabric `{f}`" for p, f in sorted(pairs))


def request_findings(names, groups):
    """One finding per request that different groups answered with different
    provider/fabric names (a renamed or re-layered provider)."""
    out = []
    for req, byg in sorted(names.items()):
        gs = [g for g in groups if g in byg]
        if len(gs) < 2 or all(byg[g] == byg[gs[0]] for g in gs):
            continue
        asked = f"`{req}`" if req else "nothing (`-p`/`-f` not given)"
        got = ", ".join(f"{g} returned {names_str(byg[g])}" for g in gs)
        out.append(f"asked {asked}: {got}. The provider or fabric was renamed or re-layered "
                   f"between them; the series stay matched by what was asked.")
    return out


def lines(runs, groups, group_by):
    """Empty when grouped by provider or fabric (the series hold no request
    then) or when no row has the request columns."""
    if group_by in ("provider", "fabric"):
        return []
    names = returned_names(runs, group_by)
    if not names:
        return []
    L = ["## What was asked and what each group got", "",
         "Series are matched across groups by the request (`-p`/`-f` as given, or the "
         "config's value); libfabric's answer per group:", "",
         "| asked | group | returned |", "|---|---|---|"]
    for req, byg in sorted(names.items()):
        for g in [g for g in groups if g in byg]:
            L.append(f"| {('`' + req + '`') if req else '(nothing)'} | {g} | "
                     f"{names_str(byg[g])} |")
    L.append("")
    for f in request_findings(names, groups):
        L.append(f"**Finding:** {f}")
        L.append("")
    return L

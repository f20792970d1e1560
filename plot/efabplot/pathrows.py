"""The rows of the two proof-of-path sections (What the NIC did, Software
cost per operation), by benchmark, series with its provider and fabric, and
size, named the way both sections name them."""
from . import grouping


def path_display(d, skey, group, multi_groups, multi_installs, group_by):
    """The series' name in the two sections: the group (unless it is the
    fabric, which has its own column), the series and, when one grouping
    mixes libfabric installs, the install."""
    parts = []
    if multi_groups and group_by != "fabric":
        parts.append(group)
    parts.append(skey)
    if multi_installs and group_by != "libfabric":
        parts.append(d["libfabric"])
    return " · ".join(parts)


def path_points(runs, group_by, want, strip_fabric):
    """{bench: {key: {size: [rows]}}} of the rows `want` accepts, key =
    (name, provider, fabric) with the name from path_display. The fabric
    is always part of the key (grouped by provider, efa and efa-direct would
    otherwise be one series); strip_fabric takes it out of the name and the
    group so that series differing only in fabric share a name."""
    rows = [(r, d) for r in runs for d in r["rows"] if want(d)]
    groups = {(d[group_by] if group_by in d else r["label"]) for r, d in rows}
    installs = {d["libfabric"] for _, d in rows}
    out = {}
    for r, d in rows:
        s = grouping.series_key(d, group_by)
        if s is None:
            continue
        g = d[group_by] if group_by in d else r["label"]
        if strip_fabric:
            s = " ".join(grouping.series_key(dict(d, fabric="", fabric_req=""), group_by).split())
            if group_by == "fabric":
                g = ""
        name = path_display(d, s, g, len(groups) > 1, len(installs) > 1, group_by)
        key = (name, d["provider"], d["fabric"])
        out.setdefault(d["bench"], {}).setdefault(key, {}).setdefault(
            int(d["size_bytes"]), []).append(d)
    return out

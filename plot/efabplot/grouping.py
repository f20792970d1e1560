"""Series and groups: which line a CSV row belongs to (series_key: the sweep
job, operation, memory kinds, the request), which group (the value of
--group-by; a provider that ran one series on several fabrics is a group per
fabric), the comparisons among groups (compare_pairs) and the data every
figure and table reads: {bench: {series: {group: {size: Point}}}} (build)."""
import re

from . import fmt, stats


HEADLINE = (8, 4096, 65536, 1 << 20)
# the benchmarks that run NVSHMEM (provider nvshmem; lf_fabric = the libfabric fabric under it)
SHMEM = ("shmem_reg", "shmem_lat", "shmem_bw")


def request_of(d):
    """What was asked, for matching series across runs and libfabric versions:
    "-p tcp", "-p efa -f efa-direct", "" when nothing was asked. None for
    CSVs written before the request columns (match by the returned names)."""
    if d.get("_legacy", True):
        return None
    parts = []
    if d.get("provider_req"):
        parts.append(f"-p {d['provider_req']}")
    if d.get("fabric_req"):
        parts.append(f"-f {d['fabric_req']}")
    return " ".join(parts)


def job_section(run_id):
    """The sweep job a row came from ("<run dir>:<section>[matrix]#repeat")."""
    if ":" not in run_id:
        return ""
    return re.split(r"[\[#]", run_id.split(":", 1)[1])[0]


def series_key(d, group_by):
    """What identifies a line apart from the group value: the sweep job
    (two jobs of one benchmark are two experiments; repeats share it), the
    operation and the memory kinds (and who posted: a GPU kernel's rows are a
    line of their own)."""
    parts = [p for p in (job_section(d["run_id"]),) if p] + [d["op"], f"{d['mem_local']}:{d['mem_remote']}"]
    # provider and fabric move together (tcp -> 127.0.0.1/32); grouping by either
    # keeps both out of the series. Otherwise a series is what was asked, so
    # that a provider renamed or re-layered between libfabric versions (1.17
    # answers -p tcp with tcp;ofi_rxm, 2.x with tcp) stays one series; CSVs
    # without the request columns fall back to the returned names.
    if group_by not in ("provider", "fabric"):
        req = request_of(d)
        if req is None:
            parts += [d["provider"], d["fabric"]]
        elif req:
            parts.append(req)
    if d["bench"].endswith("_bw"):
        parts.append(f"{d['pairs']}p")
        if d.get("pair", "all") not in ("all", ""):
            return None  # per-pair rows are not plotted, the aggregate is
    if d["bench"] == "mr_reg" and d.get("rank", "0") != "0":
        return None
    if d.get("domains") not in (None, "", "1", "-"):
        parts.append(f"k={d['domains']}")  # NIC fan-out: one line per k
    if d.get("footprint") == "window":
        parts.append("footprint=window")
    # NVSHMEM's rows say provider nvshmem, fabric = its transport (libfabric);
    # the libfabric fabric under it (efa-direct, or efa where the run forced
    # it) is another experiment, not a repeat: a line of its own
    if d["bench"] in SHMEM and d.get("lf_fabric") not in (None, "", "-"):
        parts.append(f"lf={d['lf_fabric'].split()[0]}")
    # NVSHMEM's own put/get: who issued it (host, stream) and an unregistered
    # local buffer are other experiments
    if d["bench"] in ("shmem_lat", "shmem_bw"):
        parts.append(f"initiator={d.get('initiator') or '?'}")
        if d.get("registered") == "no":
            parts.append("unregistered")
    # issue 48's peak-rate techniques: each combination another experiment, a
    # line of its own (a sweep's matrix runs them under one job section)
    for col, default in (("post_list", "1"), ("pipeline", "no"), ("high_pps", "no"),
                         ("tclass", "FI_TC_UNSPEC"), ("eps", "1")):
        if d.get(col) not in (None, "", default):
            parts.append(f"{col}={d[col]}")
    if d.get("initiator") == "gpu":  # a CUDA kernel posted (--initiator gpu): its own line
        parts.append("initiator=gpu")
        if d.get("gpu_threads") not in (None, "", "1"):
            parts.append(f"gpu_threads={d['gpu_threads']}")
    return " ".join(parts)


def fabric_group(d):
    """The group of a row whose provider ran on several fabrics: provider/fabric
    ("efa/efa-direct"; "efa/efa (simulated)" for efasim's rows)."""
    sim = d["provider"].endswith(fmt.SIM) or d["fabric"].endswith(fmt.SIM)
    return f"{fmt.unsim(d['provider'])}/{fmt.unsim(d['fabric'])}" + (fmt.SIM if sim else "")


def split_providers(runs, group_by):
    """{provider: its fabric groups in name order} for every provider whose
    rows of one series ran on more than one fabric; grouped by provider only
    (every other key keeps the fabric in the series or in the group). With
    libfabric >= 2.1 provider efa answers both -f efa and -f efa-direct: one
    group for both would take efa-direct's rows for repeats of efa's, so each
    fabric of such a provider is a group of its own (fabric_group). A
    provider whose fabrics never meet in one series (tcp on lo for some
    benchmarks, on eth0 for another) stays one group."""
    if group_by != "provider":
        return {}
    fabrics, meet = {}, set()
    for run in runs:
        for d in run["rows"]:
            fabrics.setdefault(d["provider"], set()).add(d["fabric"])
            s = series_key(d, group_by)
            if s is not None:
                meet.add((d["provider"], d["bench"], s, d["fabric"]))
    per_series = {}
    for p, b, s, f in meet:
        per_series.setdefault((p, b, s), set()).add(f)
    split = {p for (p, _, _), fs in per_series.items() if len(fs) > 1}
    return {p: sorted({fabric_group(dict(provider=p, fabric=f)) for f in fabrics[p]},
                      key=lambda g: fmt.unsim(g))
            for p in sorted(split)}


def assign_groups(runs, group_by):
    """Sets each row's group, d["_group"]: the value of group_by, or
    provider/fabric where split_providers splits the row's provider.
    Returns (groups, splits): the groups in order of first appearance, a
    split provider's fabric groups (in name order) where the provider first
    appears; and per split provider the list of its fabric groups."""
    split = split_providers(runs, group_by)
    order = []
    for run in runs:
        for d in run["rows"]:
            g = d[group_by] if group_by in d else run["label"]
            if g not in order:
                order.append(g)
            d["_group"] = fabric_group(d) if group_by == "provider" and d["provider"] in split else g
    present = {d["_group"] for run in runs for d in run["rows"]}
    groups = []
    for g in order:
        groups += [f for f in split[g] if f in present] if g in split else [g]
    return groups, [[f for f in split[p] if f in present] for p in split]


def compare_pairs(groups, splits=()):
    """(base, candidate) of every comparison among groups: first the fabrics
    of each split provider against its first fabric (efa-direct against
    efa), whichever group comes first; then each other group against the
    first group."""
    pairs = []
    for fs in splits:
        fs = [g for g in fs if g in groups]
        pairs += [(fs[0], g) for g in fs[1:]]
    return pairs + [(groups[0], g) for g in groups[1:] if (groups[0], g) not in pairs]


def build(runs, group_by):
    """{bench: {series: {group: {size: Point}}}}"""
    data = {}
    for run in runs:
        for d in run["rows"]:
            s = series_key(d, group_by)
            if s is None:
                continue
            g = d.get("_group") or (d[group_by] if group_by in d else run["label"])
            # efab_connect's x is the peer count, every other bench's the size
            x = int(d["peers"]) if d["bench"] == "connect" else int(d["size_bytes"])
            pt = (data.setdefault(d["bench"], {}).setdefault(s, {}).setdefault(g, {})
                  .setdefault(x, stats.Point()))
            pt.add(d)
    return data


def bench_groups(series, groups):
    return [g for g in groups if any(g in byg for byg in series.values())]


def headline_sizes(sizes):
    hs = [s for s in HEADLINE if s in sizes]
    if sizes and max(sizes) not in hs:
        hs.append(max(sizes))
    return hs


def coverage_gaps(data, groups):
    """(bench, series, groups with it, groups without it) for every series not
    present in every group that ran that benchmark."""
    gaps = []
    for bench, series in sorted(data.items()):
        bg = bench_groups(series, groups)
        for skey, bygroup in sorted(series.items()):
            have = [g for g in bg if bygroup.get(g)]
            miss = [g for g in bg if not bygroup.get(g)]
            if miss:
                gaps.append((bench, skey, have, miss))
    return gaps

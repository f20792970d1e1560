"""Report section "Software cost per operation" (issue 25): post_ns and
poll_ns per series and size, efa beside efa-direct where a series ran on
both fabrics, and what they measure on the simulated device."""
import re

from .. import fmt, pathrows


def lf_minor(d):
    m = re.match(r"(\d+)\.(\d+)", d.get("libfabric_version", ""))
    return (int(m.group(1)), int(m.group(2))) if m else None


def cost_section(runs, group_by):
    """Report lines "Software cost per operation"; empty when no row has
    post_ns or poll_ns."""
    def want(d):
        return fmt.fnum(d.get("post_ns")) is not None or fmt.fnum(d.get("poll_ns")) is not None
    data = pathrows.path_points(runs, group_by, want, True)
    if not data:
        return []
    allrows = [d for b in data.values() for k in b.values() for rs in k.values() for d in rs]
    L = ["## Software cost per operation", "",
         "`post_ns`: nanoseconds per operation spent in the post calls (fi_write, "
         "fi_read, fi_atomic, their -FI_EAGAIN retries included) at the initiating ranks; "
         "`poll_ns`: nanoseconds per completion inside the fi_cq_read calls that returned "
         "at least one completion (empty polls are not in it); each the median over the "
         "sampled iterations or measured windows, averaged over initiating ranks (docs/"
         "proof-of-path.md). Both are time spent inside "
         "libfabric's calls, whatever the provider does there; medians over repeats. Series "
         "that differ only in fabric are side by side, with the ratio efa ÷ efa-direct (above "
         "1: the efa fabric's protocol layer costs more per operation).", ""]
    sims = sorted({d["libfabric"] for d in allrows if d.get("_simulated")})
    if sims:
        paths = []
        for lib in sims:
            v = next(lf_minor(d) for d in allrows if d["libfabric"] == lib)
            paths.append(f"{lib}: " + ("the direct data path by default (libfabric ≥ 2.4)"
                                       if v and v >= (2, 4) else
                                       "the verbs data path (libfabric < 2.4)" if v else
                                       "data path unknown (no version)"))
        L += ["**SIMULATED device:** rows marked `(simulated)` ran on efasim. On efasim's "
              "verbs data path (libfabric < 2.4, `FI_EFA_USE_DATA_PATH_DIRECT=0`, or the p4d "
              "profile) the post call runs the simulated device's work, so `post_ns` includes "
              "the simulator's work (its copies too) and is no measure of the provider alone. "
              "On its direct data path (libfabric ≥ 2.4 on the p5/p5en profiles, the default) "
              "the device runs in another thread: `post_ns` and `poll_ns` are the provider's "
              "own software cost -- real libfabric code on a real CPU, with a simulated "
              "device. Here: " + "; ".join(paths) + ".", ""]
    for bench in sorted(data):
        byname = {}
        for (name, prov, fab), bysize in data[bench].items():
            byname.setdefault((name, prov), {})[fmt.unsim(fab)] = (fab, bysize)
        pairs, single = [], []
        for (name, prov), fabs in sorted(byname.items()):
            if "efa" in fabs and "efa-direct" in fabs:
                pairs.append((name, fabs["efa"], fabs["efa-direct"]))
                rest = [f for f in fabs if f not in ("efa", "efa-direct")]
            else:
                rest = list(fabs)
            single += [(name, fabs[f]) for f in sorted(rest)]
        if not pairs and not single:
            continue
        L += [f"### {bench}", ""]
        if pairs:
            L += ["| series | size | post efa (ns) | post efa-direct (ns) | post efa ÷ "
                  "efa-direct | poll efa (ns) | poll efa-direct (ns) | poll efa ÷ efa-direct |",
                  "|---|---|---|---|---|---|---|---|"]
            for name, (fa, se), (_, sd) in pairs:
                if fa.endswith(fmt.SIM) and fmt.SIM.strip() not in name:
                    name += fmt.SIM
                for s in sorted(set(se) | set(sd)):
                    cells = []
                    for col in ("post_ns", "poll_ns"):
                        ve = fmt.median_of(fmt.fnum(d.get(col)) for d in se.get(s, []))
                        vd = fmt.median_of(fmt.fnum(d.get(col)) for d in sd.get(s, []))
                        r = ve / vd if ve is not None and vd else None
                        cells += [fmt.fns(ve), fmt.fns(vd), "-" if r is None else f"{r:.2f}"]
                    L.append(f"| {name} | {fmt.size_label(s)} | " + " | ".join(cells) + " |")
            L.append("")
        if single:
            L += ["| series | fabric | size | post (ns) | poll (ns) |", "|---|---|---|---|---|"]
            for name, (fab, bysize) in single:
                for s in sorted(bysize):
                    rs = bysize[s]
                    L.append(f"| {name} | {fab} | {fmt.size_label(s)} | "
                             f"{fmt.fns(fmt.median_of(fmt.fnum(d.get('post_ns')) for d in rs))} | "
                             f"{fmt.fns(fmt.median_of(fmt.fnum(d.get('poll_ns')) for d in rs))} |")
            L.append("")
    return L

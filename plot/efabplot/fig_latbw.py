"""Latency, bandwidth and connect figures: a panel per quantity (latency p50
with its p99 band; bandwidth and message rate), the cold first operation
as x in each panel's units, and with several groups a ratio panel."""
import os

from . import captions, figbase, fmt, grouping, stats


def first_value(pt, pcol):
    """The cold first operation (window) of a size in the quantity of the panel
    pcol it is drawn on: first_us itself on a latency panel; on a bandwidth
    panel the first window's bandwidth = bytes of that window (window x size)
    / first_us, MB/s; on a message-rate panel its operations / first_us,
    10^6 ops/s. first_us of a bandwidth row is one initiating rank's window
    (the slowest), so the marker is one pair's rate. Median over repeats."""
    vals = []
    for d in pt.rows:
        f, w, s = fmt.fnum(d.get("first_us")), fmt.fnum(d.get("window")), fmt.fnum(d.get("size_bytes"))
        if not f or f <= 0:
            continue
        if pcol == "bw_MBps":
            vals.append(w * s / f if w and s else None)
        elif pcol == "msg_rate_Mops":
            vals.append(w / f if w else None)
        elif pcol.startswith("lat_us"):
            vals.append(f)
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return None
    m = len(vals) // 2
    return vals[m] if len(vals) % 2 else (vals[m - 1] + vals[m]) / 2


def plot_lat_or_bw(bench, series, groups, outdir, mpl, splits=()):
    plt, FuncFormatter, LogLocator = mpl
    groups = grouping.bench_groups(series, groups)
    pairs = grouping.compare_pairs(groups, splits)
    col, better = stats.metric_of(bench)
    panels = [("lat_us_p50", "latency p50 (µs), band to p99")]
    if bench.endswith("_bw"):
        panels = [("bw_MBps", "bandwidth (MB/s = 10^6 B/s)"),
                  ("msg_rate_Mops", "message rate (10^6 ops/s)")]
    if bench == "connect":
        panels = [("lat_us_p50", "µs (log)")]
    ratio = len(groups) > 1
    nrows = len(panels) + (1 if ratio else 0)
    fig = figbase.sized(plt, 9, 3.6, nrows)
    gs = fig.add_gridspec(nrows, 1, left=0.09, right=0.62, top=0.94,
                          bottom=0.7 / fig.get_size_inches()[1] + 0.08, hspace=0.15)
    axes = [fig.add_subplot(gs[i, 0]) for i in range(nrows)]
    for a in axes[1:]:
        a.sharex(axes[0])
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    lines, cold = 0, False
    for si, (skey, bygroup) in enumerate(sorted(series.items())):
        for gi, g in enumerate(groups):
            pts = bygroup.get(g)
            if not pts:
                continue
            sizes = sorted(pts)
            color = colors[(si * len(groups) + gi) % len(colors)]
            style = ["-", "--", ":", "-."][gi % 4]
            name = f"{g} · {skey}"
            for ax, (pcol, _) in zip(axes, panels):
                y = [pts[s].median(pcol) for s in sizes]
                xs = [s for s, v in zip(sizes, y) if v is not None]
                ys = [v for v in y if v is not None]
                if not ys:
                    continue
                lab = name + (" · first op" if bench == "connect" else "")
                ax.plot(xs, ys, style, marker="o", ms=3, color=color, label=lab, zorder=3)
                lines += 1
                if pcol == "lat_us_p50":
                    hi = [pts[s].median("lat_us_p99") for s in xs]
                    ax.fill_between(xs, ys, [h if h else v for h, v in zip(hi, ys)],
                                    color=color, alpha=0.12, lw=0, zorder=1)
                    for c2, mk, what in (("second_us_p50", "s", "second op"),
                                         ("av_insert_us", "^", "fi_av_insert")):
                        if bench != "connect":
                            break
                        v2 = [pts[s].median(c2) for s in xs]
                        ax.plot(xs, v2, ":", marker=mk, ms=3, color=color, lw=1,
                                label=f"{name} · {what}", zorder=2)
                if bench != "connect":
                    fx = [(s, first_value(pts[s], pcol)) for s in xs]
                    fx = [(s, v) for s, v in fx if v]
                    if fx:
                        cold = True
                        ax.plot([s for s, _ in fx], [v for _, v in fx], "x", ms=5,
                                color=color, zorder=4)
            for g0 in [b for b, c in pairs if c == g and b in bygroup]:
                base = bygroup[g0]
                xs, rs = [], []
                for s in sizes:
                    if s in base:
                        r, _ = stats.compare(base[s], pts[s], col)
                        if r is not None:
                            xs.append(s)
                            rs.append(r)
                if xs:
                    axes[-1].plot(xs, rs, style, marker="o" if g0 == groups[0] else "s", ms=3,
                                  color=color, label=f"{g} ÷ {g0} · {skey}")
    for ax, (_, title) in zip(axes, panels):
        ax.set_ylabel(title, fontsize=8)
        ax.set_yscale("log")
        figbase.size_axis(ax, FuncFormatter, LogLocator)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    if ratio:
        axes[-1].axhline(1.0, color="black", lw=1)
        bases = list(dict.fromkeys(b for b, _ in pairs))
        axes[-1].set_ylabel(f"ratio of {col} (÷ {groups[0]})" if len(bases) == 1 else
                            f"ratio of {col} (÷ {', '.join(bases)}: legend)", fontsize=8)
        axes[-1].set_yscale("linear")
        figbase.size_axis(axes[-1], FuncFormatter, LogLocator)
        if axes[-1].get_legend_handles_labels()[0]:
            axes[-1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                            borderaxespad=0)
    axes[-1].set_xlabel({"mr_reg": "buffer size (bytes)", "connect": "peers"}.get(
        bench, "message size (bytes)"))
    axes[0].set_title(f"{bench}: " + {"lower": "lower is better", "higher": "higher is better"}[better]
                      + figbase.simulated_note(series),
                      fontsize=10)
    h, l = axes[0].get_legend_handles_labels()
    if cold:
        h.append(figbase.cold_handle(plt))
        l.append(h[-1].get_label())
    axes[0].legend(h, l, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                   borderaxespad=0)
    captions.add_caption(fig, bench, 0.7)
    out = os.path.join(outdir, f"{bench}.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out, lines

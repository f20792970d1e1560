"""Registration figures (mr_reg, shmem_reg): small multiples, a row per
regime and a column per memory kind, with the fitted line of each series."""
import os

from . import captions, figbase, fmt, grouping


REGIME_ORDER = ["fresh", "fresh_dmabuf", "same", "accumulate", "cuMemHostRegister",
                "dmabuf_export", "buffer_register_cuda", "buffer_register_host", "nvshmem_malloc",
                "buffer_register_cuda_vmm"]


def plot_mr_reg(bench, series, groups, outdir, mpl):
    """Small multiples: a row per regime (op), a column per memory kind,
    axes shared; per facet the series of every group, the fitted line of
    each (labelled once, with its equation, in the facet's legend outside
    the data) and the first calls as × apart from the p50 line."""
    plt, FuncFormatter, LogLocator = mpl
    groups = grouping.bench_groups(series, groups)
    facets = {}
    for skey, bygroup in series.items():
        d = next(iter(next(iter(bygroup.values())).values())).rows[0]
        facets.setdefault((d["op"], d["mem_local"]), []).append(skey)
    ops = sorted({o for o, _ in facets}, key=lambda o: (REGIME_ORDER.index(o)
                                                         if o in REGIME_ORDER else 99, o))
    mems = sorted({m for _, m in facets})
    nr, nc = len(ops), len(mems)
    H = 2.7 * nr + 1.3
    fig = plt.figure(figsize=(9 * nc, H))
    gs = fig.add_gridspec(nr, nc, left=0.08 / nc, right=1 - 0.5 / nc, top=1 - 0.55 / H,
                          bottom=1.25 / H, hspace=0.35, wspace=0.95)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    first_ax, lines = None, 0
    for i, op in enumerate(ops):
        for j, mem in enumerate(mems):
            ax = fig.add_subplot(gs[i, j], sharex=first_ax, sharey=first_ax)
            first_ax = first_ax or ax
            keys = sorted(facets.get((op, mem), []))
            cold = False
            if not keys:
                ax.text(0.5, 0.5, f"{op}: not measured on {mem} memory", ha="center",
                        va="center", fontsize=8, color="0.4", transform=ax.transAxes)
            for si, skey in enumerate(keys):
                for gi, g in enumerate(groups):
                    pts = series[skey].get(g)
                    if not pts:
                        continue
                    color = colors[(si * len(groups) + gi) % len(colors)]
                    xs = sorted(s for s in pts if pts[s].median("lat_us_p50") is not None)
                    if not xs:
                        continue
                    ys = [pts[s].median("lat_us_p50") for s in xs]
                    hi = [pts[s].median("lat_us_p99") or y for s, y in zip(xs, ys)]
                    # the panel's title says the regime and the memory kind
                    short = " ".join(t for t in skey.split() if t not in (op, f"{mem}:-"))
                    name = f"{g} · {short}" if len(groups) > 1 else (short or g)
                    ax.plot(xs, ys, "-", marker="o", ms=3, color=color, label=name, zorder=3)
                    ax.fill_between(xs, ys, hi, color=color, alpha=0.12, lw=0, zorder=1)
                    lines += 1
                    fx = [(s, pts[s].median("first_us")) for s in xs]
                    fx = [(s, v) for s, v in fx if v]
                    if fx:
                        cold = True
                        ax.plot([s for s, _ in fx], [v for _, v in fx], "x", ms=5, color=color,
                                zorder=4)
                    d = pts[xs[0]].rows[0]
                    a, b = fmt.fnum(d.get("fit_fixed_us")), fmt.fnum(d.get("fit_us_per_MiB"))
                    fit_xs = [s for s in xs if a is not None and b is not None
                              and a + b * s / 2**20 > 0]  # a negative fit is not drawn
                    if fit_xs and d.get("fit_x") == "size":
                        ax.plot(fit_xs, [a + b * s / 2**20 for s in fit_xs], ":", color=color,
                                lw=1.2, zorder=2,
                                label=f"fit {fmt.fit_param(d, 'fit_fixed_us', 2, ' µs')} + "
                                      f"{fmt.fit_param(d, 'fit_us_per_MiB', 4, ' µs/MiB')} "
                                      f"(R² {fmt.fnum(d.get('fit_r2')) or 0:.2f})")
            ax.set_title(f"{op} · {mem} memory", fontsize=9)
            ax.set_yscale("log")
            figbase.size_axis(ax, FuncFormatter, LogLocator)
            if i < nr - 1:
                ax.tick_params(labelbottom=False)
            else:
                ax.set_xlabel("buffer size (bytes)", fontsize=8)
            if j == 0:
                ax.set_ylabel("µs per call (p50, band to p99)", fontsize=8)
            h, l = ax.get_legend_handles_labels()
            if cold:
                h.append(figbase.cold_handle(plt))
                l.append(h[-1].get_label())
            if h:
                ax.legend(h, l, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                          borderaxespad=0)
    title = f"{bench}: registration cost, lower is better{figbase.simulated_note(series)}"
    fig.suptitle(title, fontsize=11, y=1 - 0.12 / H)
    captions.add_caption(fig, bench, 0.9)
    out = os.path.join(outdir, f"{bench}.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out, lines

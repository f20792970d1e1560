"""One figure per benchmark: the kind of figure each benchmark gets."""
from . import fig_latbw, fig_reg


def plot_bench(bench, series, groups, outdir, mpl, splits=()):
    if bench in ("mr_reg", "shmem_reg"):
        return fig_reg.plot_mr_reg(bench, series, groups, outdir, mpl)
    return fig_latbw.plot_lat_or_bw(bench, series, groups, outdir, mpl, splits)

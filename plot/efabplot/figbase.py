"""What every figure shares: matplotlib on the Agg backend, the log2 size
axis, a figure with room for its caption, the legend entry of the cold
first operation."""
from . import fmt


def setup_matplotlib():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator
    return plt, FuncFormatter, LogLocator


def size_axis(ax, FuncFormatter, LogLocator):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=2, numticks=40))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt.size_label(v) if v >= 1 else ""))
    ax.xaxis.set_minor_locator(LogLocator(base=2, subs=(), numticks=40))
    ax.tick_params(axis="x", labelsize=7)
    for lab in ax.get_xticklabels():
        lab.set_rotation(45)
    ax.grid(True, which="major", alpha=0.3)


def simulated_note(series):
    """" · SIMULATED EFA device" where any row plotted ran on efasim (the
    loader marked it), for the figure's title: a legend with one group
    does not show the group's " (simulated)"."""
    sim = any(d.get("_simulated") for bygroup in series.values() for pts in bygroup.values()
              for p in pts.values() for d in p.rows)
    return " · SIMULATED EFA device (efasim), not EFA figures" if sim else ""


def sized(plt, w_in, h_axes_in, n_rows, caption_in=0.7):
    """A figure n_rows panels high with room for the caption at the bottom."""
    fig = plt.figure(figsize=(w_in, h_axes_in * n_rows + caption_in))
    return fig


def cold_handle(plt):
    from matplotlib.lines import Line2D
    return Line2D([], [], ls="none", marker="x", color="0.3", ms=6,
                  label="× first call/operation (cold)")

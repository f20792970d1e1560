"""Formatting shared by the figures and the report: sizes (8, 4K, 1M and
4 KiB), numbers read from CSV cells, counts with decimal prefixes,
nanoseconds, markdown cells, a registration fit's parameter with its
interval, the median of a list, and the " (simulated)" suffix of the
grouping values of efasim's rows."""


def size_label(v):
    v = int(v)
    for suffix, shift in (("G", 30), ("M", 20), ("K", 10)):
        if v >= (1 << shift) and v % (1 << shift) == 0:
            return f"{v >> shift}{suffix}"
    return str(v)


def human(v):
    v = int(v)
    for suffix, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if v >= (1 << shift) and v % (1 << shift) == 0:
            return f"{v >> shift} {suffix}"
    return f"{v} B"


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def fit_param(d, col, prec, unit=""):
    """A registration fit's parameter with its 95 % interval from the
    <col>_lo/<col>_hi columns: "67.85 [58.01, 77.70]". CSVs from before
    the 1/y² weighting have no interval columns (and held an ordinary
    least-squares fit): the value alone. "-" when there is no fit."""
    v, lo, hi = fnum(d.get(col)), fnum(d.get(col + "_lo")), fnum(d.get(col + "_hi"))
    if v is None:
        return "-"
    if lo is None or hi is None:
        return f"{v:.{prec}f}{unit}"
    return f"{v:.{prec}f}{unit} [{lo:.{prec}f}, {hi:.{prec}f}]"


def md_cell(s):
    return "(absent)" if s is None else "`" + str(s).replace("|", "\\|").replace("`", "'") + "`"


SIM = " (simulated)"


def unsim(s):
    return s[:-len(SIM)] if s.endswith(SIM) else s


def median_of(vals):
    v = sorted(x for x in vals if x is not None)
    if not v:
        return None
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


def fcount(v):
    """A byte or event count, decimal prefixes: 51200, 2.684 G."""
    if v is None:
        return "-"
    if abs(v) < 100000:
        return f"{v:.0f}"
    for p, e in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= e:
            return f"{v / e:.4g} {p}"
    return f"{v:.0f}"


def fns(v):
    if v is None:
        return "-"
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.1f}"

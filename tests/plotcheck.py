#!/usr/bin/env python3
"""Checks efab_plot's output: every PNG exists, has a size efab_plot draws
and is not blank; the headline table of report.md matches medians and ratios
recomputed here from the CSVs; and every point efab_plot draws is in the
quantity of the axis it is drawn on (check_units: the figures are drawn again
in this process and each line read back from matplotlib).

    plotcheck.py PLOTS RUN BENCH...            all checks
    plotcheck.py --units [--plotter F] RUN...  the units check alone"""
import csv
import glob
import os
import re
import struct
import sys


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"plotcheck: {path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def not_blank(path):
    import matplotlib.image as mpimg
    img = mpimg.imread(path)
    return float(img.std()) > 0.02


def median(v):
    v = sorted(v)
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


def load_plotter(path):
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("efab_plot_checked", path)
    spec = importlib.util.spec_from_loader("efab_plot_checked", loader)
    m = importlib.util.module_from_spec(spec)
    loader.exec_module(m)
    return m


def axis_quantity(label):
    """What an axis' label says it shows: bw (MB/s), rate (10^6 ops/s),
    time (µs) or ratio."""
    if label.startswith("ratio"):
        return "ratio"
    if "MB/s" in label:
        return "bw"
    if "ops/s" in label:
        return "rate"
    if "µs" in label:
        return "time"
    return None


def allowed_values(d, q):
    """The values one CSV row can put on an axis of quantity q."""
    f = lambda c: float(d[c]) if d.get(c) not in (None, "") else None  # noqa: E731
    first, w, s = f("first_us"), f("window"), f("size_bytes")
    if q == "bw":
        v = [f("bw_MBps"), f("bw_MBps_windows")] + ([w * s / first] if first and w and s else [])
    elif q == "rate":
        v = [f("msg_rate_Mops"), f("msg_rate_Mops_windows")] + ([w / first] if first and w else [])
    elif q == "time":
        v = [f(c) for c in d if c.endswith("_us") or "_us_" in c]
        a, b = f("fit_fixed_us"), f("fit_us_per_MiB")
        if a is not None and b is not None and s is not None:
            v.append(a + b * s / 2**20)
    else:
        v = []
    return [x for x in v if x is not None and x > 0]


def check_units(runs, plotter):
    """Redraw the figures of RUNS with efab_plot (module at plotter) and read
    back every line: a point at x on an axis of quantity q must lie within
    the range of the values of quantity q the CSV rows of that benchmark at
    x can give (bandwidths on a MB/s axis, times on a µs axis, ...); a ratio
    within [min/max, max/min] of the benchmark's metric at x. first_us (µs)
    drawn on a MB/s axis falls outside. Returns the number of points checked."""
    import tempfile
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.figure
    m = load_plotter(plotter)
    drawn = []
    real_savefig = matplotlib.figure.Figure.savefig

    def record(fig, fname, *a, **k):
        bench = os.path.splitext(os.path.basename(str(fname)))[0]
        for ax in fig.axes:
            q = axis_quantity(ax.get_ylabel())
            for ln in ax.get_lines():
                if ln.get_transform() != ax.transData:
                    continue  # axhline and the like: axes coordinates
                drawn.append((bench, ax.get_ylabel(), q, ln.get_label(),
                              list(zip(ln.get_xdata(), ln.get_ydata()))))
        return real_savefig(fig, fname, *a, **k)

    matplotlib.figure.Figure.savefig = record
    try:
        with tempfile.TemporaryDirectory() as out:
            rc = m.main(list(runs) + ["-o", out])
    finally:
        matplotlib.figure.Figure.savefig = real_savefig
    if rc not in (0, 1):
        raise SystemExit(f"plotcheck: efab_plot exit {rc}")
    rows = {}
    for run in runs:
        for path in glob.glob(os.path.join(run, "*.csv")):
            for d in csv.DictReader(open(path)):
                if d.get("schema") not in ("1", "2"):
                    continue
                x = int(d["peers"]) if d["bench"] == "connect" else int(d["size_bytes"])
                rows.setdefault((d["bench"], x), []).append(d)
    checked = 0
    for bench, ylabel, q, label, pts in drawn:
        if q is None:
            raise SystemExit(f"plotcheck: {bench}: axis '{ylabel}' names no quantity")
        metric = "bw_MBps" if bench.endswith("_bw") else "lat_us_p50"
        for x, y in pts:
            if y is None or y != y:  # NaN: a gap, nothing drawn
                continue
            ds = rows.get((bench, int(round(x))), [])
            if q == "ratio":
                v = [float(d[metric]) for d in ds if d.get(metric)]
                lo, hi = (min(v) / max(v), max(v) / min(v)) if v and min(v) > 0 else (None, None)
            else:
                v = [a for d in ds for a in allowed_values(d, q)]
                lo, hi = (min(v), max(v)) if v else (None, None)
            if lo is None or not lo * (1 - 1e-3) <= y <= hi * (1 + 1e-3):
                rng = "no such value in the CSV" if lo is None else f"the CSV gives {lo:.6g} .. {hi:.6g}"
                raise SystemExit(f"plotcheck: {bench}: '{label}' draws {y:.6g} at x={x:g} on the "
                                 f"axis '{ylabel}' ({q}); {rng}")
            checked += 1
    if not checked:
        raise SystemExit("plotcheck: no point drawn")
    return checked


def main():
    if sys.argv[1:2] == ["--units"]:
        args = sys.argv[2:]
        plotter = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plot", "efab_plot")
        if args[:1] == ["--plotter"]:
            plotter, args = args[1], args[2:]
        n = check_units(args, plotter)
        print(f"plotcheck: {n} drawn points in their axis' units")
        return
    plots, run, *benches = sys.argv[1:]
    for b in benches:
        p = os.path.join(plots, f"{b}.png")
        if not os.path.exists(p):
            raise SystemExit(f"plotcheck: {p} missing")
        w, h = png_size(p)
        # latency/bandwidth: 990 px wide (9 in at 110 dpi), 3.6 in per panel plus
        # the caption; mr_reg: small multiples 6.8 in per memory kind, 2.7 in per regime
        if w < 740 or not 396 <= h <= 6000:
            raise SystemExit(f"plotcheck: {p} is {w}x{h}")
        if not not_blank(p):
            raise SystemExit(f"plotcheck: {p} is blank")
    # recompute the headline table of put_lat grouped by provider
    rows = list(csv.DictReader(open(os.path.join(run, "put_lat.csv"))))
    rep = open(os.path.join(plots, "report.md")).read()
    sec = rep.split("### put_lat")[1].split("###")[0]
    checked = 0
    for line in sec.splitlines():
        m = re.match(r"\| (\S+) (\S+) host:host \| (\S+) \| (\S+) \| (\S+) \| (\S+) \|", line)
        if not m:
            continue
        section, op, size, shm, tcp, ratio = m.groups()
        mult = {"K": 1024, "M": 1 << 20}.get(size[-1], 1)
        nbytes = int(size.rstrip("KM")) * mult
        got = {}
        for prov in ("shm", "tcp;ofi_rxm"):
            v = [float(r["lat_us_p50"]) for r in rows
                 if r["op"] == op and int(r["size_bytes"]) == nbytes and r["provider"] == prov
                 and re.split(r"[\[#]", r["run_id"].split(":", 1)[1])[0] == section]
            got[prov] = median(v)
        if abs(got["shm"] - float(shm)) > 0.0015 or abs(got["tcp;ofi_rxm"] - float(tcp)) > 0.0015:
            raise SystemExit(f"plotcheck: {op} {size}: report {shm}/{tcp}, CSV {got}")
        r = got["tcp;ofi_rxm"] / got["shm"]
        if abs(r - float(ratio.rstrip("*?"))) > 0.0015:
            raise SystemExit(f"plotcheck: {op} {size}: ratio {ratio}, recomputed {r:.3f}")
        checked += 1
    if checked < 4:
        raise SystemExit(f"plotcheck: only {checked} headline rows found")
    n = check_units([run], os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plot",
                                        "efab_plot"))
    print(f"plotcheck: {len(benches)} figures, {checked} headline rows agree with the CSV, "
          f"{n} drawn points in their axis' units")


if __name__ == "__main__":
    main()

"""Constructed inputs for the unit tests of plot/efabplot (tests/plot/test_*.py):
efabench CSV rows built in the test, written into temporary result
directories, and the package on sys.path. Run a test as a script:

    python3 tests/plot/test_stats.py [-v]
"""
import csv
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "plot"))

# efabench CSV schema 1: the columns every file starts with, written out here
# (not taken from efabplot.load) so that a change of the schema the loader
# accepts fails test_load.
BASE = ("schema,run_id,timestamp,bench,op,provider,fabric,domain,libfabric_version,"
        "provider_version,mem_local,mem_remote,ranks,pairs,window,size_bytes,iters,"
        "lat_us_min,lat_us_p50,lat_us_mean,lat_us_p99,lat_us_p999,lat_us_max,"
        "lat_us_stdev,bw_MBps,msg_rate_Mops,errors").split(",")
REQUEST = ["provider_req", "fabric_req", "libfabric_path"]


def row(bench="put_lat", size=8, p50=1.0, **kw):
    """One CSV row as a dict: bench at size with latency p50 (bandwidth
    benches: bw_MBps = p50 unless given); every other column from kw, or a
    plausible default."""
    d = {c: "" for c in BASE}
    d.update(schema="1", run_id=kw.pop("run_id", f"r:{bench}#1"), timestamp="2026-12-02T00:00:00Z",
             bench=bench, op="write", provider="shm", fabric="shm", domain="shm",
             libfabric_version="2.6", provider_version="206.0", mem_local="host",
             mem_remote="host", ranks="2", pairs="1", window="0", size_bytes=str(size),
             iters="100", errors="0")
    if bench.endswith("_bw"):
        d.update(window="64", bw_MBps=str(kw.pop("bw", p50)), msg_rate_Mops="1.0")
    else:
        d.update(lat_us_min=str(p50 * 0.9), lat_us_p50=str(p50), lat_us_mean=str(p50),
                 lat_us_p99=str(p50 * 1.5), lat_us_p999=str(p50 * 2), lat_us_max=str(p50 * 3),
                 lat_us_stdev=str(p50 * 0.1))
    d.update({k: str(v) for k, v in kw.items()})
    return d


def write_csv(path, rows):
    """rows (dicts) as a CSV: the schema columns first, then every other key
    in order of first appearance."""
    cols = list(BASE)
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n", restval="")
        w.writeheader()
        w.writerows(rows)


def result_dir(parent, name, files, meta=None):
    """A result directory parent/name with {file name: rows} and meta.json."""
    d = os.path.join(parent, name)
    os.makedirs(d, exist_ok=True)
    for fname, rows in files.items():
        write_csv(os.path.join(d, fname), rows)
    if meta is not None:
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
    return d


class TempDir:
    """A temporary directory for a test case: self.tmp, removed after."""

    def setUp(self):
        self._td = tempfile.TemporaryDirectory()
        self.tmp = self._td.name

    def tearDown(self):
        self._td.cleanup()


def loaded(parent, name, files, meta=None):
    """result_dir, then efabplot.load.load_dir on it."""
    from efabplot import load
    return load.load_dir(result_dir(parent, name, files, meta))


def data_of(runs, group_by="provider"):
    """(data, groups, splits) the way efab_plot's main builds them."""
    from efabplot import grouping, load
    load.use_bw_definition(runs)
    groups, splits = grouping.assign_groups(runs, group_by)
    return grouping.build(runs, group_by), groups, splits


def two_providers(parent, shm=(1.0,), tcp=(10.0,), sizes=(8, 4096), bench="put_lat", **kw):
    """A loaded run of bench on providers shm and tcp: a row per provider, size
    and repeat (shm, tcp: the p50 of each repeat at sizes under 4 KiB, times
    size / 4096 from 4 KiB)."""
    rows = []
    for prov, reps in (("shm", shm), ("tcp", tcp)):
        for s in sizes:
            for i, v in enumerate(reps, 1):
                rows.append(row(bench, s, v * max(1, s // 4096), provider=prov, fabric=prov,
                                run_id=f"r:{bench}[{prov}]#{i}", **kw))
    return loaded(parent, "run", {f"{bench}.csv": rows}, {"label": "two"})


class Drawn:
    """Every figure saved while it is active (a context manager): per figure
    its file name and per axis its ylabel, title, texts and the lines drawn
    in data coordinates as (label, xs, ys); the PNGs are still written."""

    def __enter__(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.figure
        self.figures = []
        self._cls = matplotlib.figure.Figure
        self._real = self._cls.savefig
        drawn = self.figures
        real = self._real

        def record(fig, fname, *a, **k):
            axes = []
            for ax in fig.axes:
                axes.append({"ylabel": ax.get_ylabel(), "title": ax.get_title(),
                             "texts": [t.get_text() for t in ax.texts],
                             "lines": [(ln.get_label(), [float(x) for x in ln.get_xdata()],
                                        [float(y) for y in ln.get_ydata()])
                                       for ln in ax.get_lines()
                                       if ln.get_transform() == ax.transData]})
            drawn.append({"file": os.path.basename(str(fname)), "axes": axes,
                          "texts": [t.get_text() for t in fig.texts],
                          "suptitle": fig._suptitle.get_text() if fig._suptitle else "",
                          "size": tuple(fig.get_size_inches())})
            return real(fig, fname, *a, **k)

        self._cls.savefig = record
        return self

    def __exit__(self, *exc):
        self._cls.savefig = self._real
        return False

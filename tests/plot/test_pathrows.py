#!/usr/bin/env python3
"""efabplot.pathrows: the rows of the proof-of-path sections by benchmark,
series (named with group and install when they vary), provider, fabric and
size."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from plotdata import row
from efabplot import pathrows


def lrow(**kw):
    d = row(**kw)
    d.setdefault("libfabric", "libfabric 2.6")
    return d


class Display(unittest.TestCase):
    def test_path_display(self):
        d = {"libfabric": "libfabric 2.4.0"}
        self.assertEqual(pathrows.path_display(d, "s", "g", False, False, "provider"), "s")
        self.assertEqual(pathrows.path_display(d, "s", "g", True, False, "provider"), "g · s")
        self.assertEqual(pathrows.path_display(d, "s", "g", True, False, "fabric"), "s")
        self.assertEqual(pathrows.path_display(d, "s", "g", True, True, "label"),
                         "g · s · libfabric 2.4.0")
        self.assertEqual(pathrows.path_display(d, "s", "g", False, True, "libfabric"), "s")


class Points(unittest.TestCase):
    def rows(self):
        return [lrow(run_id="x:lat[d]#1", provider="efa", fabric="efa-direct", path="device-write"),
                lrow(run_id="x:lat[d]#2", provider="efa", fabric="efa-direct", path="device-write"),
                lrow(run_id="x:lat[e]#1", provider="efa", fabric="efa", path="emulated-send"),
                lrow(run_id="x:lat[s]#1", provider="shm", fabric="shm", path="", size=16)]

    def test_rows_the_filter_accepts_by_provider_and_fabric(self):
        out = pathrows.path_points([{"label": "r", "rows": self.rows()}], "provider",
                                   lambda d: bool(d.get("path")), False)
        self.assertEqual(list(out), ["put_lat"])
        series = out["put_lat"]
        # one group (efa) among the accepted rows: the name is the series alone
        self.assertEqual(sorted(series), [("lat write host:host", "efa", "efa"),
                                          ("lat write host:host", "efa", "efa-direct")])
        self.assertEqual(len(series[("lat write host:host", "efa", "efa-direct")][8]), 2)

    def test_strip_fabric_and_two_groups(self):
        rows = self.rows()
        rows[3]["path"] = "-"
        out = pathrows.path_points([{"label": "r", "rows": rows}], "label",
                                   lambda d: True, True)
        # grouped by label (one run): the series holds the returned names,
        # the fabric taken out of them
        self.assertEqual(sorted(out["put_lat"]),
                         [("lat write host:host efa", "efa", "efa"),
                          ("lat write host:host efa", "efa", "efa-direct"),
                          ("lat write host:host shm", "shm", "shm")])
        out = pathrows.path_points([{"label": "r", "rows": rows}], "fabric",
                                   lambda d: True, True)
        self.assertIn(("lat write host:host", "efa", "efa-direct"), out["put_lat"])
        out = pathrows.path_points([{"label": "r", "rows": rows}], "provider",
                                   lambda d: True, False)
        self.assertIn(("shm · lat write host:host", "shm", "shm"), out["put_lat"])
        self.assertEqual(list(out["put_lat"][("shm · lat write host:host", "shm", "shm")]), [16])


if __name__ == "__main__":
    unittest.main()

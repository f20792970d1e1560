#!/usr/bin/env python3
"""efabplot.fig_latbw: latency, bandwidth and connect figures; the cold
first operation in each panel's units."""
import os
import struct
import unittest

import plotdata
from plotdata import row
from efabplot import fig_latbw, figbase, stats


def point(*rows):
    p = stats.Point()
    for d in rows:
        p.add(d)
    return p


class FirstValue(unittest.TestCase):
    def test_in_the_panel_units(self):
        p = point(*({"first_us": str(f), "window": "10", "size_bytes": "1000"}
                    for f in (2, 4, 100)))
        self.assertEqual(fig_latbw.first_value(p, "lat_us_p50"), 4)  # µs
        self.assertEqual(fig_latbw.first_value(p, "bw_MBps"), 2500)  # 10 x 1000 B / 4 µs
        self.assertEqual(fig_latbw.first_value(p, "msg_rate_Mops"), 2.5)  # 10 ops / 4 µs

    def test_missing_or_zero_first_us(self):
        p = point({"first_us": "0", "window": "1", "size_bytes": "8"}, {"first_us": ""})
        self.assertIsNone(fig_latbw.first_value(p, "lat_us_p50"))
        p = point({"first_us": "2"}, {"first_us": "4"})  # no window: no bandwidth
        self.assertIsNone(fig_latbw.first_value(p, "bw_MBps"))
        self.assertEqual(fig_latbw.first_value(p, "lat_us_p99"), 3)
        self.assertIsNone(fig_latbw.first_value(p, "other"))


class Figures(plotdata.TempDir, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mpl = figbase.setup_matplotlib()

    def draw(self, bench, run, groups=None):
        data, gs, splits = plotdata.data_of([run])
        with plotdata.Drawn() as d:
            out = fig_latbw.plot_lat_or_bw(bench, data[bench], groups or gs, self.tmp, self.mpl,
                                           splits)
        self.assertEqual(len(d.figures), 1)
        return out, d.figures[0]

    def test_latency_two_groups_with_ratio_panel(self):
        run = plotdata.two_providers(self.tmp, shm=(1.0,), tcp=(10.0,), first_us=5)
        (path, n), fig = self.draw("put_lat", run)
        self.assertEqual((path, n), (os.path.join(self.tmp, "put_lat.png"), 2))
        with open(path, "rb") as f:
            self.assertEqual(struct.unpack(">II", f.read(24)[16:24])[0], 990)  # 9 in, 110 dpi
        lat, ratio = fig["axes"]
        self.assertEqual(lat["ylabel"], "latency p50 (µs), band to p99")
        self.assertEqual(lat["title"], "put_lat: lower is better")
        lines = {lab: (xs, ys) for lab, xs, ys in lat["lines"]}
        self.assertEqual(lines["shm · put_lat write host:host"], ([8, 4096], [1.0, 1.0]))
        self.assertEqual(lines["tcp · put_lat write host:host"], ([8, 4096], [10.0, 10.0]))
        # the first operations: x markers at first_us (µs on a µs axis)
        cold = [ys for lab, xs, ys in lat["lines"] if lab.startswith("_")]
        self.assertEqual(cold, [[5.0, 5.0], [5.0, 5.0]])
        self.assertEqual(ratio["ylabel"], "ratio of lat_us_p50 (÷ shm)")
        self.assertEqual([(lab, ys) for lab, xs, ys in ratio["lines"]],
                         [("tcp ÷ shm · put_lat write host:host", [10.0, 10.0])])
        self.assertIn("½ RTT", fig["texts"][0])

    def test_one_group_has_no_ratio_panel(self):
        run = plotdata.two_providers(self.tmp)
        (path, n), fig = self.draw("put_lat", run, groups=["shm"])
        self.assertEqual(n, 1)
        self.assertEqual(len(fig["axes"]), 1)

    def test_bandwidth_panels(self):
        run = plotdata.two_providers(self.tmp, shm=(100.0,), tcp=(50.0,), bench="put_bw",
                                     first_us=4)
        (path, n), fig = self.draw("put_bw", run)
        self.assertEqual(n, 4)  # 2 groups x bandwidth and message rate
        self.assertEqual([a["ylabel"] for a in fig["axes"]],
                         ["bandwidth (MB/s = 10^6 B/s)", "message rate (10^6 ops/s)",
                          "ratio of bw_MBps (÷ shm)"])
        self.assertEqual(fig["axes"][0]["title"], "put_bw: higher is better")
        bw = {lab: ys for lab, xs, ys in fig["axes"][0]["lines"]}
        self.assertEqual(bw["shm · put_bw write host:host 1p"], [100.0, 100.0])
        # first window: 64 x size bytes / 4 µs on the MB/s axis, 64 ops / 4 µs on the rate axis
        cold_bw = [ys for lab, xs, ys in fig["axes"][0]["lines"] if lab.startswith("_")]
        self.assertEqual(cold_bw[0], [64 * 8 / 4, 64 * 4096 / 4])
        cold_rate = [ys for lab, xs, ys in fig["axes"][1]["lines"] if lab.startswith("_")]
        self.assertEqual(cold_rate[0], [16.0, 16.0])
        ratio = fig["axes"][2]["lines"]
        self.assertEqual([ys for _, _, ys in ratio], [[0.5, 0.5]])

    def test_connect(self):
        rows = [row("connect", p50=100, peers=str(p), second_us_p50="3", av_insert_us="7",
                    run_id="x:c#1") for p in (2, 4)]
        run = plotdata.loaded(self.tmp, "c", {"connect.csv": rows})
        (path, n), fig = self.draw("connect", run)
        ax = fig["axes"][0]
        self.assertEqual(ax["ylabel"], "µs (log)")
        self.assertEqual(sorted(lab for lab, _, _ in ax["lines"]),
                         ["shm · c write host:host · fi_av_insert",
                          "shm · c write host:host · first op",
                          "shm · c write host:host · second op"])
        first = [xs for lab, xs, _ in ax["lines"] if lab.endswith("first op")][0]
        self.assertEqual(first, [2, 4])  # x = peers


if __name__ == "__main__":
    unittest.main()

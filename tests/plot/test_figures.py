#!/usr/bin/env python3
"""efabplot.figures: which kind of figure each benchmark gets."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot import fig_latbw, fig_reg, figures


class Dispatch(unittest.TestCase):
    def setUp(self):
        self.calls = []
        self.saved = fig_latbw.plot_lat_or_bw, fig_reg.plot_mr_reg
        fig_latbw.plot_lat_or_bw = lambda *a: self.calls.append(("latbw",) + a) or ("f", 1)
        fig_reg.plot_mr_reg = lambda *a: self.calls.append(("reg",) + a) or ("g", 2)

    def tearDown(self):
        fig_latbw.plot_lat_or_bw, fig_reg.plot_mr_reg = self.saved

    def test_registration_benches_get_small_multiples(self):
        self.assertEqual(figures.plot_bench("mr_reg", {"s": 1}, ["a"], "out", "mpl", [["x"]]),
                         ("g", 2))
        self.assertEqual(figures.plot_bench("shmem_reg", {}, [], "o", None), ("g", 2))
        # no splits: the small multiples draw no ratio panel
        self.assertEqual(self.calls, [("reg", "mr_reg", {"s": 1}, ["a"], "out", "mpl"),
                                      ("reg", "shmem_reg", {}, [], "o", None)])

    def test_every_other_bench_gets_the_panels(self):
        for bench in ("put_lat", "get_bw", "atomic_lat", "connect", "new_bench"):
            self.assertEqual(figures.plot_bench(bench, {}, ["a"], "o", None, [["s"]]), ("f", 1))
        self.assertEqual([c[:2] for c in self.calls],
                         [("latbw", b) for b in ("put_lat", "get_bw", "atomic_lat", "connect",
                                                 "new_bench")])
        self.assertEqual(self.calls[0][-1], [["s"]])


if __name__ == "__main__":
    unittest.main()

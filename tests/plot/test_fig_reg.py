#!/usr/bin/env python3
"""efabplot.fig_reg: registration small multiples, a row per regime and a
column per memory kind, with each series' fitted line."""
import unittest

import plotdata
from plotdata import row
from efabplot import fig_reg, figbase


def reg(op, mem, size, p50, **kw):
    fit = dict(fit_x="size", fit_fixed_us="1.0", fit_fixed_us_lo="0.9", fit_fixed_us_hi="1.1",
               fit_us_per_MiB="0.5", fit_us_per_MiB_lo="0.4", fit_us_per_MiB_hi="0.6",
               fit_r2="0.99")
    fit.update(kw)
    return row("mr_reg", size, p50, op=op, mem_local=mem, mem_remote="-",
               run_id=f"x:reg_{mem}#1", **fit)


class SmallMultiples(plotdata.TempDir, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mpl = figbase.setup_matplotlib()

    def draw(self, rows):
        run = plotdata.loaded(self.tmp, "r", {"mr_reg.csv": rows})
        data, groups, splits = plotdata.data_of([run])
        with plotdata.Drawn() as d:
            out = fig_reg.plot_mr_reg("mr_reg", data["mr_reg"], groups, self.tmp, self.mpl)
        return out, d.figures[0]

    def test_a_panel_per_regime_and_memory_kind(self):
        rows = [reg(op, "host", s, 2.0 + s / 2**20, first_us="40")
                for op in ("same", "fresh") for s in (4096, 1 << 20)]
        rows += [reg("fresh", "cuda", 4096, 30.0), reg("fresh", "cuda", 1 << 20, 60.0)]
        (path, n), fig = self.draw(rows)
        self.assertEqual(n, 3)
        # regimes in REGIME_ORDER (fresh before same), memory kinds in name order
        self.assertEqual([a["title"] for a in fig["axes"]],
                         ["fresh · cuda memory", "fresh · host memory",
                          "same · cuda memory", "same · host memory"])
        self.assertEqual(fig["axes"][2]["texts"], ["same: not measured on cuda memory"])
        self.assertEqual(fig["size"], (18.0, 2.7 * 2 + 1.3))  # 9 in per memory kind
        host = {lab: (xs, ys) for lab, xs, ys in fig["axes"][1]["lines"]}
        # the regime and the memory kind are the panel's title, not in the label
        self.assertEqual(host["reg_host"], ([4096, 1 << 20], [2.0 + 4096 / 2**20, 3.0]))
        fit = "fit 1.00 µs [0.90, 1.10] + 0.5000 µs/MiB [0.4000, 0.6000] (R² 0.99)"
        self.assertEqual(host[fit], ([4096, 1 << 20], [1.0 + 0.5 * 4096 / 2**20, 1.5]))
        cold = [ys for lab, xs, ys in fig["axes"][1]["lines"] if lab.startswith("_")]
        self.assertEqual(cold, [[40.0, 40.0]])
        self.assertEqual(fig["axes"][0]["ylabel"], "µs per call (p50, band to p99)")
        self.assertIn("1/y²", fig["texts"][-1])  # the caption

    def test_a_negative_fit_is_not_drawn(self):
        rows = [reg("fresh", "host", s, 1.0, fit_fixed_us="-5", fit_us_per_MiB="1")
                for s in (4096, 1 << 20)]
        (path, n), fig = self.draw(rows)
        labels = [lab for lab, _, _ in fig["axes"][0]["lines"]]
        self.assertFalse(any(lab.startswith("fit") for lab in labels), labels)

    def test_two_groups_name_the_group(self):
        rows = [reg("fresh", "host", 4096, 1.0, provider=p, fabric=p) for p in ("shm", "tcp")]
        (path, n), fig = self.draw(rows)
        labels = [lab for lab, _, _ in fig["axes"][0]["lines"] if not lab.startswith(("_", "fit"))]
        self.assertEqual(labels, ["shm · reg_host", "tcp · reg_host"])

    def test_simulated_rows_say_so_in_the_title(self):
        rows = [reg("fresh", "host", 4096, 1.0)]
        run = plotdata.loaded(self.tmp, "sim", {"mr_reg.csv": rows}, {"simulated": "yes"})
        data, groups, _ = plotdata.data_of([run])
        with plotdata.Drawn() as d:
            fig_reg.plot_mr_reg("mr_reg", data["mr_reg"], groups, self.tmp, self.mpl)
        self.assertIn("SIMULATED EFA device", d.figures[0]["suptitle"])
        (path, n), fig = self.draw(rows)  # a real run's title does not
        self.assertNotIn("SIMULATED", fig["suptitle"])

    def test_shmem_reg_a_line_per_libfabric_fabric(self):
        rows = [dict(reg("buffer_register_cuda", "cuda+host", s, p50), bench="shmem_reg",
                     provider="nvshmem", fabric="libfabric", lf_fabric=lf, run_id="x#1")
                for lf, p50 in (("efa-direct", 2.0), ("efa (EFAB_FITRACE_FABRIC)", 3.0))
                for s in (4096, 1 << 20)]
        run = plotdata.loaded(self.tmp, "nv", {"shmem_reg.csv": rows})
        data, groups, _ = plotdata.data_of([run])
        with plotdata.Drawn() as d:
            _, n = fig_reg.plot_mr_reg("shmem_reg", data["shmem_reg"], groups, self.tmp, self.mpl)
        fig = d.figures[0]
        lines = {lab: ys for lab, xs, ys in fig["axes"][0]["lines"]
                 if not lab.startswith(("_", "fit"))}
        self.assertEqual(lines, {"lf=efa-direct": [2.0, 2.0], "lf=efa": [3.0, 3.0]})
        self.assertIn("nvshmemx_buffer_register", fig["texts"][-1])  # its own caption


if __name__ == "__main__":
    unittest.main()

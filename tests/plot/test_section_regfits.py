#!/usr/bin/env python3
"""efabplot.sections.regfits: the registration fits of rank 0, once per run,
provider, memory kind and regime."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from plotdata import row
from efabplot.sections import regfits


def reg(**kw):
    d = dict(op="fresh", mem_remote="-", fit_x="size", fit_fixed_us="67.85", fit_fixed_us_lo="58.01",
             fit_fixed_us_hi="77.7", fit_us_per_MiB="12.5", fit_us_per_MiB_lo="12",
             fit_us_per_MiB_hi="13", fit_r2="0.987", includes_nic_work="yes")
    d.update(kw)
    return row("mr_reg", **d)


class Fits(unittest.TestCase):
    def test_one_line_per_fit(self):
        rows = [reg(), reg(size=16), reg(rank="1", fit_fixed_us="1"),
                reg(op="same", fit_r2="", includes_nic_work="no"),
                reg(fit_x="", op="accumulate"), row("put_lat", fit_x="size")]
        for d in rows[3:4]:
            for k in [k for k in d if k.endswith(("_lo", "_hi"))]:
                del d[k]  # a CSV from before the interval columns
        L = regfits.lines([{"label": "run", "rows": rows}])
        self.assertEqual(L[:3], ["", "## Registration fits", ""])
        self.assertIn("weighted by 1/y²", L[3])
        self.assertEqual(L[5:7], ["| run | provider | memory | regime | fixed (µs) [95 % CI] "
                                  "| per MiB (µs) [95 % CI] | R² | weights | includes NIC work |",
                                  "|---|---|---|---|---|---|---|---|---|"])
        self.assertEqual(L[7:], [
            "| run | shm | host | fresh | 67.850 [58.010, 77.700] | 12.50000 [12.00000, "
            "13.00000] | 0.987 | 1/y² | yes |",
            "| run | shm | host | same | 67.850 | 12.50000 | - | none (OLS) | no |"])

    def test_weighting(self):
        self.assertEqual(regfits.fit_weighting({"fit_fixed_us_lo": ""}), "1/y²")
        self.assertEqual(regfits.fit_weighting({}), "none (OLS)")

    def test_no_fits(self):
        self.assertEqual(regfits.lines([{"label": "r", "rows": [row()]}]), [])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.fmt: sizes, numbers from CSV cells, counts, markdown cells."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot import fmt


class Sizes(unittest.TestCase):
    def test_size_label(self):
        self.assertEqual(fmt.size_label(8), "8")
        self.assertEqual(fmt.size_label(4096), "4K")
        self.assertEqual(fmt.size_label("1048576"), "1M")
        self.assertEqual(fmt.size_label(1 << 31), "2G")
        self.assertEqual(fmt.size_label(1536), "1536")  # not a whole KiB

    def test_human(self):
        self.assertEqual(fmt.human(100), "100 B")
        self.assertEqual(fmt.human(65536), "64 KiB")
        self.assertEqual(fmt.human(3 << 20), "3 MiB")
        self.assertEqual(fmt.human(1 << 30), "1 GiB")


class Numbers(unittest.TestCase):
    def test_fnum(self):
        self.assertEqual(fmt.fnum("2.5"), 2.5)
        self.assertIsNone(fmt.fnum(""))
        self.assertIsNone(fmt.fnum(None))
        self.assertIsNone(fmt.fnum("n/a"))

    def test_median_of(self):
        self.assertEqual(fmt.median_of([3, None, 1, 2]), 2)
        self.assertEqual(fmt.median_of([4, 1, 3, 2]), 2.5)
        self.assertIsNone(fmt.median_of([None]))
        self.assertIsNone(fmt.median_of(iter([])))

    def test_fcount(self):
        self.assertEqual(fmt.fcount(None), "-")
        self.assertEqual(fmt.fcount(51200), "51200")
        self.assertEqual(fmt.fcount(99999), "99999")
        self.assertEqual(fmt.fcount(2.684e9), "2.684 G")
        self.assertEqual(fmt.fcount(460800), "460.8 k")
        self.assertEqual(fmt.fcount(1.5e12), "1.5 T")

    def test_fns(self):
        self.assertEqual(fmt.fns(None), "-")
        self.assertEqual(fmt.fns(12.34), "12.3")
        self.assertEqual(fmt.fns(999.96), "1000.0")
        self.assertEqual(fmt.fns(1500.4), "1500")


class Cells(unittest.TestCase):
    def test_md_cell(self):
        self.assertEqual(fmt.md_cell(None), "(absent)")
        self.assertEqual(fmt.md_cell(3), "`3`")
        self.assertEqual(fmt.md_cell("a|b`c"), "`a\\|b'c`")

    def test_fit_param(self):
        d = {"fit_fixed_us": "67.85", "fit_fixed_us_lo": "58.01", "fit_fixed_us_hi": "77.7"}
        self.assertEqual(fmt.fit_param(d, "fit_fixed_us", 2), "67.85 [58.01, 77.70]")
        self.assertEqual(fmt.fit_param(d, "fit_fixed_us", 1, " µs"), "67.8 µs [58.0, 77.7]")
        # a CSV from before the interval columns: the value alone
        self.assertEqual(fmt.fit_param({"fit_fixed_us": "3"}, "fit_fixed_us", 3), "3.000")
        self.assertEqual(fmt.fit_param({}, "fit_fixed_us", 3), "-")

    def test_simulated_suffix(self):
        self.assertEqual(fmt.SIM, " (simulated)")
        self.assertEqual(fmt.unsim("efa (simulated)"), "efa")
        self.assertEqual(fmt.unsim("efa"), "efa")
        self.assertEqual(fmt.unsim("(simulated) efa"), "(simulated) efa")


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.sections.grouped: the grouping line and the split providers."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot.sections import grouped


class Grouped(unittest.TestCase):
    def test_grouping_line(self):
        self.assertEqual(grouped.lines("label", ["a", "b"]),
                         ["Grouped by `label`; groups: `a`, `b`.", ""])

    def test_a_provider_on_two_fabrics(self):
        L = grouped.lines("provider", ["shm", "efa/efa", "efa/efa-direct"],
                          [["efa/efa", "efa/efa-direct"]])
        self.assertEqual(L[0], "Grouped by `provider`; groups: `shm`, `efa/efa`, "
                               "`efa/efa-direct`.")
        self.assertEqual(L[2], "Provider `efa` ran the same series on 2 fabrics: each fabric is "
                               "a group of its own, named provider/fabric (`efa/efa`, "
                               "`efa/efa-direct`), so their rows are never taken for repeats of "
                               "one another; `efa/efa-direct` is compared with `efa/efa` "
                               "(answers, headline ratios, verdicts, the figures' ratio panel).")
        self.assertEqual((len(L), L[3]), (4, ""))

    def test_three_simulated_fabrics(self):
        fs = ["x/a (simulated)", "x/b (simulated)", "x/c (simulated)"]
        L = grouped.lines("provider", fs, [fs])
        self.assertTrue(L[2].startswith("Provider `x (simulated)` ran the same series on 3 "
                                        "fabrics"))
        self.assertIn("`x/b (simulated)`, `x/c (simulated)` are compared with "
                      "`x/a (simulated)`", L[2])


if __name__ == "__main__":
    unittest.main()

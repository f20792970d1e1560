#!/usr/bin/env python3
"""efabplot.sections.coverage: the series not in every group."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot import stats
from efabplot.sections import coverage


class Coverage(unittest.TestCase):
    def test_gaps_listed(self):
        p = stats.Point()
        data = {"put_lat": {"s1": {"a": {8: p}, "b": {8: p}}, "s2": {"b": {8: p}}}}
        self.assertEqual(coverage.lines(data, ["a", "b"]),
                         ["## Series not in every group", "",
                          "- put_lat [s2]: only in `b`; not in `a`", ""])

    def test_none(self):
        p = stats.Point()
        data = {"put_lat": {"s1": {"a": {8: p}, "b": {8: p}}}}
        self.assertEqual(coverage.lines(data, ["a", "b"]),
                         ["## Series not in every group", "",
                          "None: every series has every group.", ""])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.sections.regression: the baseline gate's section."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot import stats
from efabplot.sections import regression


class Regression(unittest.TestCase):
    def test_worse_points_and_one_sided_series(self):
        p = stats.Point()
        data = {"put_lat": {"s1": {"baseline": {8: p}, "candidate": {8: p}},
                            "s2": {"candidate": {8: p}}}}
        worse = [("put_lat", "s1", 65536, 3.0, "lat_us_p50"),
                 ("put_bw", "s3", 8, 0.4567, "bw_MBps")]
        self.assertEqual(regression.lines(data, ["baseline", "candidate"], worse), [
            "", "## Regression check against the baseline", "",
            "Not compared (series on one side only; the gate judges series present in both):",
            "", "- put_lat [s2]: only in candidate", "",
            "2 (benchmark, size) points got significantly worse:", "",
            "- put_lat [s1] at 64 KiB: `lat_us_p50` ratio 3.000",
            "- put_bw [s3] at 8 B: `bw_MBps` ratio 0.457"])

    def test_nothing_worse(self):
        p = stats.Point()
        data = {"put_lat": {"s1": {"baseline": {8: p}, "candidate": {8: p}}}}
        self.assertEqual(regression.lines(data, ["baseline", "candidate"], []), [
            "", "## Regression check against the baseline", "",
            "No (benchmark, size) point got significantly worse."])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.stats: Point's intervals and noise, the rule that calls a
difference significant / none / inconclusive, the metric of a benchmark,
the baseline gate's list of what got worse."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot import stats


def lat_point(*p50s, q=0.01, iters=100):
    """The repeats p50s of a latency, each with quartiles p50 -/+ q."""
    p = stats.Point()
    for v in p50s:
        p.add({"lat_us_p50": str(v), "lat_us_p25": str(v - q), "lat_us_p75": str(v + q),
               "iters": str(iters)})
    return p


class PointStatistics(unittest.TestCase):
    def test_values_and_median(self):
        p = lat_point(3, 1, 2, 10)
        self.assertEqual(p.values("lat_us_p50"), [3, 1, 2, 10])
        self.assertEqual(p.median("lat_us_p50"), 2.5)
        self.assertIsNone(p.median("bw_MBps"))
        p.add({"lat_us_p50": ""})  # an empty cell is no value
        self.assertEqual(len(p.values("lat_us_p50")), 4)

    def test_within_from_the_quartiles(self):
        d = {"lat_us_p50": "1", "lat_us_p25": "0.9", "lat_us_p75": "1.1", "iters": "100",
             "lat_us_stdev": "500"}  # the stdev is not used when there are quartiles
        self.assertAlmostEqual(stats.Point().within(d, "lat_us_p50"), 0.0364191, places=6)

    def test_within_without_quartiles_takes_the_smaller_of_stdev_and_p99(self):
        d = {"lat_us_p50": "1", "lat_us_p99": "1.5", "lat_us_stdev": "5", "iters": "100"}
        self.assertAlmostEqual(stats.Point().within(d, "lat_us_p50"), 0.0528046, places=6)
        self.assertIsNone(stats.Point().within({"lat_us_p50": "1"}, "lat_us_p50"))

    def test_within_bandwidth_from_the_window_times(self):
        d = {"bw_MBps": "500", "window_us_p50": "50", "window_us_p25": "49",
             "window_us_p75": "51", "iters": "100"}
        self.assertAlmostEqual(stats.Point().within(d, "bw_MBps"), 3.6419096, places=5)
        self.assertIsNone(stats.Point().within({"bw_MBps": "500"}, "bw_MBps"))

    def test_interval_is_the_hull_of_the_repeats(self):
        p = lat_point(1.0, 2.0, q=0.1, iters=1)
        lo, hi = p.interval("lat_us_p50")
        w = 1.96 * 1.2533 * 0.2 / 1.349
        self.assertAlmostEqual(lo, 1.0 - w)
        self.assertAlmostEqual(hi, 2.0 + w)
        p.add({"lat_us_p50": "3"})  # a repeat without spread: no interval
        self.assertIsNone(p.interval("lat_us_p50"))

    def test_log_noise_needs_three_repeats(self):
        self.assertIsNone(lat_point(1, 2).log_noise("lat_us_p50"))
        self.assertAlmostEqual(lat_point(1, 2, 4).log_noise("lat_us_p50"), 1.1613122, places=6)
        self.assertIsNone(lat_point(0, 2, 4).log_noise("lat_us_p50"))


class Verdict(unittest.TestCase):
    col = "lat_us_p50"

    def verdict(self, a, b):
        return stats.compare_verdict(a, b, self.col)

    def test_within_one_percent_is_never_called(self):
        r, v = self.verdict(lat_point(1.0), lat_point(1.005, q=0.0001))
        self.assertAlmostEqual(r, 1.005)
        self.assertEqual(v, "none")

    def test_repeats_beyond_their_noise_are_significant(self):
        r, v = self.verdict(lat_point(1.0, 1.01, 0.99), lat_point(3.0, 3.03, 2.97))
        self.assertAlmostEqual(r, 3.0)
        self.assertEqual(v, "significant")
        self.assertEqual(stats.compare(lat_point(1.0, 1.01, 0.99), lat_point(3.0, 3.03, 2.97),
                                       self.col), (r, True))

    def test_repeats_within_their_noise_overlapping_are_no_difference(self):
        self.assertEqual(self.verdict(lat_point(1, 2, 4), lat_point(1.1, 2.2, 4.4))[1], "none")

    def test_repeats_within_their_noise_disjoint_are_inconclusive(self):
        r, v = self.verdict(lat_point(1.0, 1.9, 2.0), lat_point(2.1, 2.2, 4.0))
        self.assertAlmostEqual(r, 2.2 / 1.9)
        self.assertEqual(v, "inconclusive")

    def test_few_repeats_disjoint_intervals_are_significant(self):
        self.assertEqual(self.verdict(lat_point(1.0), lat_point(2.0))[1], "significant")

    def test_few_repeats_overlapping_intervals_are_inconclusive(self):
        r, v = self.verdict(lat_point(1.0, q=0.5), lat_point(1.05, q=0.5))
        self.assertEqual(v, "inconclusive")
        self.assertEqual(stats.compare(lat_point(1.0, q=0.5), lat_point(1.05, q=0.5), self.col),
                         (r, False))

    def test_no_base_value(self):
        self.assertEqual(self.verdict(stats.Point(), lat_point(1.0)), (None, "none"))
        self.assertEqual(self.verdict(lat_point(0.0), lat_point(1.0)), (None, "none"))

    def test_repeats_counts_the_smaller_side(self):
        self.assertEqual(stats.repeats(lat_point(1, 2, 3), lat_point(1), self.col), 1)

    def test_words(self):
        self.assertEqual(stats.verdict_phrase("significant", 1), "significant")
        self.assertEqual(stats.verdict_phrase("none", 1), "no significant difference")
        self.assertEqual(stats.verdict_phrase("inconclusive", 2), "inconclusive (2 repeats)")
        self.assertEqual(stats.verdict_word(0.5, "significant", "lower", 3), "faster")
        self.assertEqual(stats.verdict_word(0.5, "significant", "higher", 3), "slower")
        self.assertEqual(stats.verdict_word(2.0, "significant", "lower", 3), "slower")
        self.assertEqual(stats.verdict_word(2.0, "none", "lower", 3), "no significant difference")
        self.assertEqual(stats.verdict_word(None, "none", "lower", 3), "-")


class Gate(unittest.TestCase):
    def test_metric_of(self):
        self.assertEqual(stats.metric_of("put_bw"), ("bw_MBps", "higher"))
        self.assertEqual(stats.metric_of("atomic_bw"), ("bw_MBps", "higher"))
        self.assertEqual(stats.metric_of("put_lat"), ("lat_us_p50", "lower"))
        self.assertEqual(stats.metric_of("mr_reg"), ("lat_us_p50", "lower"))

    def test_regressions_lists_what_got_worse_only(self):
        def bw(v):
            p = stats.Point()
            p.add({"bw_MBps": str(v), "window_us_p50": "50", "window_us_p25": "49.9",
                   "window_us_p75": "50.1", "iters": "100"})
            return p
        data = {"put_lat": {"s": {"baseline": {8: lat_point(1.0), 16: lat_point(1.0)},
                                  "new": {8: lat_point(3.0), 16: lat_point(0.5)}}},
                "put_bw": {"t": {"baseline": {8: bw(100), 16: bw(100)},
                                 "new": {8: bw(50), 16: bw(200)}}},
                "get_lat": {"u": {"baseline": {8: lat_point(1.0)}}}}
        worse = stats.regressions(data, "baseline", "new")
        self.assertEqual([(b, k, s, round(r, 3), c) for b, k, s, r, c in worse],
                         [("put_bw", "t", 8, 0.5, "bw_MBps"),
                          ("put_lat", "s", 8, 3.0, "lat_us_p50")])
        self.assertEqual(stats.regressions(data, "baseline", "baseline"), [])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.sections.verdicts: a sentence per series and comparison, at the
smallest size and over the sizes from 64 KiB."""
import unittest

import plotdata
from efabplot.sections import verdicts

SIZES = (8, 65536, 1 << 20)


class Verdicts(plotdata.TempDir, unittest.TestCase):
    def data(self, **kw):
        run = plotdata.two_providers(self.tmp, **kw)
        return plotdata.data_of([run])

    def test_significant(self):
        data, groups, splits = self.data(shm=(1.0, 1.02, 0.98), tcp=(10.0, 10.2, 9.8),
                                         sizes=SIZES)
        self.assertEqual(verdicts.verdicts("put_lat", data["put_lat"], groups, splits), [
            "put_lat [put_lat write host:host]: tcp p50 latency is 10.00× shm at 8 B "
            "(significant)",
            "put_lat [put_lat write host:host]: tcp vs shm: 2 of 2 sizes from 64 KiB differ "
            "significantly (largest deviation 900.0 %)"])

    def test_no_difference_and_inconclusive(self):
        data, groups, splits = self.data(shm=(1.0, 1.02, 0.98), tcp=(1.0, 1.03, 0.97),
                                         sizes=SIZES)
        self.assertEqual(verdicts.verdicts("put_lat", data["put_lat"], groups)[1],
                         "put_lat [put_lat write host:host]: tcp vs shm: no significant "
                         "difference from 64 KiB (largest deviation 0.0 %)")
        # one repeat each, wide quartiles of one iteration: intervals overlap
        data, groups, splits = self.data(shm=(1.0,), tcp=(1.05,), sizes=(8, 65536),
                                         lat_us_p25=0.5, lat_us_p75=1.5, iters=1)
        v = verdicts.verdicts("put_lat", data["put_lat"], groups)
        self.assertEqual(v[0], "put_lat [put_lat write host:host]: tcp p50 latency is 1.05× "
                               "shm at 8 B (inconclusive (1 repeats))")
        self.assertEqual(v[1], "put_lat [put_lat write host:host]: tcp vs shm: inconclusive "
                               "from 64 KiB (1 of 1 sizes; 1 repeats, the rule needs 3) "
                               "(largest deviation 5.0 %)")

    def test_bandwidth_and_registration_words(self):
        data, groups, _ = self.data(bench="put_bw", shm=(100.0,), tcp=(50.0,), sizes=(8,))
        self.assertIn("tcp bandwidth is 0.50× shm at 8 B",
                      verdicts.verdicts("put_bw", data["put_bw"], groups)[0])

    def test_lines(self):
        data, groups, splits = self.data(sizes=(8,))
        L = verdicts.lines(data, groups, splits)
        self.assertEqual(L[:3], ["", "## Verdicts", ""])
        self.assertTrue(L[3].startswith("- put_lat [put_lat write host:host]: tcp p50 latency"))
        self.assertEqual(verdicts.lines(data, ["shm"]),
                         ["", "## Verdicts", "", "- one group only: nothing to compare"])


if __name__ == "__main__":
    unittest.main()

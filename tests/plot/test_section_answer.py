#!/usr/bin/env python3
"""efabplot.sections.answer: per comparison, the medians at the headline
sizes, their ratio and faster / slower / no difference / inconclusive."""
import unittest

import plotdata
from efabplot.sections import answer


class Answer(plotdata.TempDir, unittest.TestCase):
    def test_rows_and_counts(self):
        # shm: 3 repeats around 1 µs; tcp: 10x slower at 8 B, the same at 4 KiB
        run = plotdata.two_providers(self.tmp, shm=(1.0, 1.02, 0.98), tcp=(10.0, 10.2, 9.8),
                                     sizes=(8,))
        more = plotdata.two_providers(self.tmp + "/m", shm=(1.0, 1.02, 0.98),
                                      tcp=(1.0, 1.03, 0.97), sizes=(4096,))
        run["rows"] += more["rows"]
        data, groups, splits = plotdata.data_of([run])
        rows = answer.answer_rows(data, "shm", "tcp")
        self.assertEqual([(b, s, round(va, 3), round(vb, 3), round(r, 3), w)
                          for b, _, s, va, vb, r, w, _ in rows],
                         [("put_lat", 8, 1.0, 10.0, 10.0, "slower"),
                          ("put_lat", 4096, 1.0, 1.0, 1.0, "no significant difference")])
        self.assertEqual(answer.answer_rows(data, "tcp", "shm")[0][6], "faster")
        L = answer.answer_section(data, groups, splits)
        self.assertEqual(L[0], "## Answer: tcp against shm")
        self.assertEqual(L[4:6], ["| benchmark | series | size | shm | tcp | ratio | tcp is |",
                                  "|---|---|---|---|---|---|---|"])
        self.assertEqual(L[6:8], [
            "| put_lat | put_lat write host:host | 8 | 1.000 | 10.000 | 10.000 | slower |",
            "| put_lat | put_lat write host:host | 4K | 1.000 | 1.000 | 1.000 | "
            "no significant difference |"])
        self.assertEqual(L[8:], ["", "tcp: 0 faster, 1 slower, 1 without a significant "
                                 "difference, 0 inconclusive (2 points).", ""])

    def test_inconclusive_and_one_group(self):
        run = plotdata.two_providers(self.tmp, shm=(1.0,), tcp=(1.05,), sizes=(8,),
                                     lat_us_p25=0.5, lat_us_p75=1.5)
        data, groups, splits = plotdata.data_of([run])
        L = answer.answer_section(data, groups)
        self.assertTrue(L[6].endswith("| 1.050 | inconclusive (1 repeats) |"), L[6])
        self.assertTrue(L[8].endswith("0 without a significant difference, 1 inconclusive "
                                      "(1 points)."), L[8])
        self.assertEqual(answer.answer_section(data, ["shm"]), [])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.sections.headline: the medians at the headline sizes per group,
with the comparisons' ratios and their marks."""
import unittest

import plotdata
from efabplot import load
from efabplot.sections import headline


class Headline(plotdata.TempDir, unittest.TestCase):
    def tearDown(self):
        load.BW_DEFINITION[0] = "elapsed"
        super().tearDown()

    def test_two_groups(self):
        run = plotdata.two_providers(self.tmp, shm=(1.0,), tcp=(10.0,), sizes=(8, 16, 4096))
        data, groups, splits = plotdata.data_of([run])
        self.assertEqual(headline.lines(data, groups, splits), [
            "## Headline sizes", "", "### put_lat (`lat_us_p50`, lower is better)", "",
            "| series | size | shm | tcp | tcp ÷ shm |", "|---|---|---|---|---|",
            # 16 is no headline size; 4 KiB is, and the largest size
            "| put_lat write host:host | 8 | 1.000 | 10.000 | 10.000* |",
            "| put_lat write host:host | 4K | 1.000 | 10.000 | 10.000* |",
            "", "`*` marks a significant difference, `?` an inconclusive one (Method)."])

    def test_inconclusive_mark_and_one_group(self):
        run = plotdata.two_providers(self.tmp, shm=(1.0,), tcp=(1.05,), sizes=(8,),
                                     lat_us_p25=0.5, lat_us_p75=1.5)
        data, groups, splits = plotdata.data_of([run])
        self.assertEqual(headline.lines(data, groups)[6],
                         "| put_lat write host:host | 8 | 1.000 | 1.050 | 1.050? |")
        self.assertEqual(headline.lines(data, ["shm"]), [
            "## Headline sizes", "", "### put_lat (`lat_us_p50`, lower is better)", "",
            "| series | size | shm |", "|---|---|---|", "| put_lat write host:host | 8 | 1.000 |"])

    def test_bandwidth_says_its_definition(self):
        run = plotdata.two_providers(self.tmp, bench="put_bw", sizes=(8,))
        data, groups, splits = plotdata.data_of([run])
        L = headline.lines(data, groups)
        self.assertEqual(L[2:5], ["### put_bw (`bw_MBps`, higher is better)", "",
                                  headline.BW_REPORT_LINE["windows"]])
        load.BW_DEFINITION[0] = "elapsed"
        self.assertEqual(headline.lines(data, groups)[4], headline.BW_REPORT_LINE["elapsed"])


if __name__ == "__main__":
    unittest.main()

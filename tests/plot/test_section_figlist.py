#!/usr/bin/env python3
"""efabplot.sections.figlist: a link to every figure."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot.sections import figlist


class Figlist(unittest.TestCase):
    def test_links_by_bench(self):
        self.assertEqual(figlist.lines({"put_lat": "/x/out/put_lat.png",
                                        "get_bw": "out/get_bw.png"}),
                         ["## Figures", "", "![get_bw](get_bw.png)",
                          "![put_lat](put_lat.png)", ""])
        self.assertEqual(figlist.lines({}), ["## Figures", "", ""])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.sections.title: the title, and the SIMULATED banner."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot.sections import title


class Title(unittest.TestCase):
    def test_real_runs(self):
        self.assertEqual(title.lines([{"simulated": False}, {}]),
                         ["# efabench comparison report", ""])

    def test_a_simulated_run_opens_with_the_banner(self):
        L = title.lines([{"simulated": False}, {"simulated": True}])
        self.assertEqual(len(L), 4)
        self.assertEqual(L[:2], ["# efabench comparison report", ""])
        self.assertTrue(L[2].startswith("**SIMULATED:** runs marked `(simulated)` ran on efasim"))
        self.assertTrue(L[2].endswith("never EFA hardware."))
        self.assertEqual(L[3], "")


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.sections.method: the significance rule in words."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot import stats
from efabplot.sections import method


class Method(unittest.TestCase):
    def test_the_rule_in_words(self):
        L = method.lines()
        self.assertEqual(L[:3], ["", "## Method", ""])
        self.assertEqual((len(L), L[-1]), (5, ""))
        text = L[3]
        self.assertIn(f"(2) With {stats.MIN_REPEATS} or more repeats on both sides", text)
        self.assertIn("(1) A ratio within 1 % of 1 is never called", text)
        self.assertIn("ln(median) is compared with the repeats' own spread", text)
        self.assertIn("median ± 1.96 × 1.2533 × (p75 - p25) / 1.349 / sqrt(n)", text)
        self.assertTrue(text.endswith("too few repeats to claim there is no difference."))

    def test_follows_the_repeat_rule(self):
        saved = stats.MIN_REPEATS
        stats.MIN_REPEATS = 5
        try:
            self.assertIn("(2) With 5 or more repeats", method.lines()[3])
        finally:
            stats.MIN_REPEATS = saved


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.figbase: matplotlib on Agg, the log2 size axis, the figure size
with caption room, the cold-operation legend entry."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot import figbase


class Figbase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mpl = figbase.setup_matplotlib()

    def test_agg(self):
        import matplotlib
        self.assertEqual(matplotlib.get_backend().lower(), "agg")
        plt, FuncFormatter, LogLocator = self.mpl
        self.assertEqual(FuncFormatter.__name__, "FuncFormatter")

    def test_size_axis_labels_sizes_in_powers_of_two(self):
        plt, FuncFormatter, LogLocator = self.mpl
        fig = plt.figure()
        ax = fig.add_subplot()
        figbase.size_axis(ax, FuncFormatter, LogLocator)
        self.assertEqual(ax.get_xscale(), "log")
        f = ax.xaxis.get_major_formatter()
        self.assertEqual([f(v, 0) for v in (0.5, 8, 4096, 1 << 20)], ["", "8", "4K", "1M"])
        plt.close(fig)

    def test_sized_leaves_room_for_the_caption(self):
        plt = self.mpl[0]
        fig = figbase.sized(plt, 9, 3.6, 2)
        self.assertEqual(tuple(fig.get_size_inches()), (9.0, 3.6 * 2 + 0.7))
        plt.close(fig)
        fig = figbase.sized(plt, 9, 2, 1, caption_in=1)
        self.assertEqual(tuple(fig.get_size_inches()), (9.0, 3.0))
        plt.close(fig)

    def test_cold_handle(self):
        h = figbase.cold_handle(self.mpl[0])
        self.assertEqual(h.get_label(), "× first call/operation (cold)")
        self.assertEqual((h.get_marker(), h.get_linestyle()), ("x", "None"))


if __name__ == "__main__":
    unittest.main()

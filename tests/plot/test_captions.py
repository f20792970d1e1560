#!/usr/bin/env python3
"""efabplot.captions: what each figure's caption says, in the bandwidth
definition in use."""
import textwrap
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot import captions, figbase, load


class Captions(unittest.TestCase):
    def tearDown(self):
        load.BW_DEFINITION[0] = "elapsed"

    def test_latency(self):
        c = captions.caption_text("put_lat")
        self.assertTrue(c.startswith("put_lat: RMA write latency = half the round trip (½ RTT)"))
        self.assertTrue(c.endswith(captions.LAT_NOTE))
        self.assertIn("full RTT", captions.caption_text("get_lat"))
        self.assertIn("p99", captions.caption_text("atomic_lat"))

    def test_registration(self):
        self.assertEqual(captions.caption_text("mr_reg"),
                         captions.CAPTIONS["mr_reg"] + captions.REG_NOTE)
        self.assertIn("1/y²", captions.caption_text("mr_reg"))
        self.assertIn("first call", captions.caption_text("mr_reg"))

    def test_bandwidth_follows_the_definition(self):
        c = captions.caption_text("put_bw")
        self.assertTrue(c.startswith(captions.CAPTIONS["put_bw"]))
        self.assertIn("elapsed time of the timed loop", c)
        self.assertIn("10^6 B/s", c)
        self.assertTrue(c.endswith("one initiating rank's window (the slowest)."))
        load.BW_DEFINITION[0] = "windows"
        c = captions.caption_text("put_bw")
        self.assertTrue(c.startswith(captions.BW_CAPTION_WINDOWS["put_bw"]))
        self.assertIn("bw_MBps_windows", c)
        # benches without a window-sum caption keep theirs
        self.assertEqual(captions.caption_text("put_lat"),
                         captions.CAPTIONS["put_lat"] + captions.LAT_NOTE)

    def test_other_benches(self):
        self.assertEqual(captions.caption_text("foo"), "foo.")
        self.assertEqual(captions.caption_text("connect"), captions.CAPTIONS["connect"])
        # NVSHMEM's registration: its own definition, mr_reg's note on the fit
        self.assertEqual(captions.caption_text("shmem_reg"),
                         captions.CAPTIONS["shmem_reg"] + captions.REG_NOTE)

    def test_add_caption_wraps_to_the_figure_width(self):
        plt = figbase.setup_matplotlib()[0]
        fig = plt.figure(figsize=(4, 3))
        captions.add_caption(fig, "put_lat", 0.7)
        text = fig.texts[0].get_text()
        self.assertEqual(text.replace("\n", " "), captions.caption_text("put_lat"))
        # 4 in wide: 60 characters a line
        self.assertEqual(text, "\n".join(textwrap.wrap(captions.caption_text("put_lat"), 60)))
        self.assertTrue(all(len(ln) <= 60 for ln in text.splitlines()))
        plt.close(fig)


if __name__ == "__main__":
    unittest.main()

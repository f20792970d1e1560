#!/usr/bin/env python3
"""efabplot.report: the sections in their order, separated by one blank
line, the file ending in one newline."""
import os
import unittest

import plotdata
from plotdata import row
from efabplot import report, stats


def rows(p50):
    out = []
    for s in (8, 65536):
        out.append(row("put_lat", s, p50, provider="efa", fabric="efa", provider_req="efa",
                       fabric_req="efa", run_id="x:lat#1", path="device-write",
                       path_ratio="1.0", payload_bytes="1600", nic_init_rdma_write_bytes="1600",
                       post_ns="300", poll_ns="80"))
    return {"put_lat.csv": out,
            "mr_reg.csv": [row("mr_reg", s, 2.0, op="fresh", mem_remote="-", fit_x="size",
                               fit_fixed_us="1.5", fit_us_per_MiB="0.25", fit_r2="0.9",
                               run_id="x:reg#1") for s in (4096, 1 << 20)]}


class Report(plotdata.TempDir, unittest.TestCase):
    def write(self, runs, group_by, baseline=False):
        data, groups, splits = plotdata.data_of(runs, group_by)
        worse = stats.regressions(data, groups[0], groups[1]) if baseline else []
        path = os.path.join(self.tmp, "report.md")
        report.write_report(path, runs, data, groups, group_by,
                            {"put_lat": os.path.join(self.tmp, "put_lat.png")}, baseline, worse,
                            splits)
        with open(path) as f:
            return f.read()

    def test_every_section_in_its_order(self):
        runs = [plotdata.loaded(self.tmp, "a", rows(1.0), {"label": "baseline"}),
                plotdata.loaded(self.tmp, "b", rows(3.0), {"label": "new"})]
        text = self.write(runs, "label", baseline=True)
        heads = [ln for ln in text.splitlines() if ln.startswith("# ") or ln.startswith("## ")]
        self.assertEqual(heads, [
            "# efabench comparison report", "## What was asked and what each group got",
            "## Series not in every group", "## Answer: new against baseline", "## Runs",
            "## Method", "## Figures", "## Headline sizes", "## Registration fits",
            "## What the NIC did", "## Software cost per operation", "## Verdicts",
            "## Regression check against the baseline"])
        self.assertIn("\nGrouped by `label`; groups: `baseline`, `new`.\n", text)
        self.assertIn("\n![put_lat](put_lat.png)\n", text)
        self.assertIn("\n- put_lat [lat write host:host -p efa -f efa] at 8 B: `lat_us_p50` "
                      "ratio 3.000\n", text)
        self.assertTrue(text.endswith("ratio 3.000\n"))
        self.assertNotIn("\n\n\n", text)
        # the proof-of-path sections: one blank line before each and before the verdicts
        self.assertIn("\n\n## What the NIC did\n\n", text)
        self.assertIn(" |\n\n## Software cost per operation\n\n", text)
        self.assertIn(" |\n\n## Verdicts\n\n", text)

    def test_one_group_leaves_the_comparisons_out(self):
        run = plotdata.loaded(self.tmp, "a", {"put_lat.csv": [row()]}, {"label": "a"})
        text = self.write([run], "provider")
        heads = [ln for ln in text.splitlines() if ln.startswith("## ")]
        self.assertEqual(heads, ["## Runs", "## Method", "## Figures", "## Headline sizes",
                                 "## Verdicts"])
        self.assertTrue(text.endswith("\n## Verdicts\n\n- one group only: nothing to compare\n"))
        self.assertTrue(text.startswith("# efabench comparison report\n\nGrouped by `provider`; "
                                        "groups: `shm`.\n\n## Runs\n"))
        self.assertNotIn("\n\n\n", text)


if __name__ == "__main__":
    unittest.main()

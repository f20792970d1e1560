#!/usr/bin/env python3
"""efabplot.sections.runtable: the runs, their libfabric installs, the
provenance flags."""
import unittest

import plotdata  # noqa: F401  (puts plot/ on sys.path)
from efabplot.sections import runtable

META = {"hostname": "h1", "instance_type": "p5en.48xlarge", "libfabric_version": "2.6",
        "efa_installer": "1.38.0", "efa_driver": "2.13", "gpus": "8 H200", "jobs": [1, 2, 3]}


class Runs(unittest.TestCase):
    def test_a_row_per_run(self):
        runs = [{"path": "results/20261202-a/", "label": "a", "meta": META},
                {"path": "b", "label": "b (simulated)", "meta": {"hostname": "h1"}}]
        self.assertEqual(runtable.lines(runs, "label"), [
            "## Runs", "",
            "| run | label | host | instance | libfabric | EFA installer | efa driver | GPUs | jobs |",
            "|---|---|---|---|---|---|---|---|---|",
            "| 20261202-a | a | h1 | p5en.48xlarge | 2.6 | 1.38.0 | 2.13 | 8 H200 | 3 |",
            "| b | b (simulated) | h1 | - |  | - | - | - | 0 |",
            "",
            "**Flag:** runs differ in `instance_type` (, p5en.48xlarge), not only in the "
            "grouping key `label`.",
            "**Flag:** runs differ in `libfabric_version` (, 2.6), not only in the grouping "
            "key `label`.",
            "**Flag:** runs differ in `efa_installer` (, 1.38.0), not only in the grouping "
            "key `label`.",
            "**Flag:** runs differ in `efa_driver` (, 2.13), not only in the grouping key "
            "`label`.",
            "**Flag:** runs differ in `gpus` (, 8 H200), not only in the grouping key `label`."])

    def test_the_grouping_key_is_no_flag(self):
        runs = [{"path": "a", "meta": {"libfabric_version": "2.4"}},
                {"path": "b", "meta": {"libfabric_version": "2.6"}}]
        self.assertEqual(runtable.provenance_flags(runs, "libfabric_version"), [])
        self.assertEqual(len(runtable.provenance_flags(runs, "label")), 1)

    def test_installs(self):
        meta = dict(META, libfabric_installs=[
            {"libfabric": "/opt/lf-2.4", "library": "/opt/lf-2.4/lib/libfabric.so",
             "version": "2.4.0", "probe": {"file": "probe-lf1.json"}},
            {"libfabric": "/opt/lf-2.6", "library": "/opt/lf-2.6/lib/libfabric.so",
             "probe": {"status": "failed"}}])
        L = runtable.lines([{"path": "r", "label": "r", "meta": meta}], "libfabric")
        self.assertEqual(L[5:], [
            "", "libfabric installs (key `libfabric` of the sweep; every job ran once against "
            "each, interleaved):", "", "| run | install | library | version | EFA installer "
            "| probe |", "|---|---|---|---|---|---|",
            "| r | `/opt/lf-2.4` | `/opt/lf-2.4/lib/libfabric.so` | 2.4.0 | - | probe-lf1.json |",
            "| r | `/opt/lf-2.6` | `/opt/lf-2.6/lib/libfabric.so` | - | - | failed |"])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.cli: efab_plot's command line -- defaults of the output directory
and the grouping, the baseline gate's exit status, refusals with exit 2."""
import contextlib
import io
import os
import unittest

import plotdata
from plotdata import row
from efabplot import cli, load


def lat(p50, **kw):
    return {"put_lat.csv": [row("put_lat", s, p50, run_id=f"x:lat#{i}", **kw)
                            for s in (8, 4096) for i in (1, 2, 3)]}


class Cli(plotdata.TempDir, unittest.TestCase):
    def tearDown(self):
        load.BW_DEFINITION[0] = "elapsed"
        super().tearDown()

    def main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(list(args))
        self.out, self.err = out.getvalue(), err.getvalue()
        return rc

    def report(self, out):
        with open(os.path.join(out, "report.md")) as f:
            return f.read()

    def test_usage_errors(self):
        self.assertEqual(self.main(), 2)
        self.assertEqual(self.err, "efab_plot: give at least one RESULT_DIR (see --help)\n")
        self.assertEqual(self.main(self.tmp, "--group-by", "colour"), 2)
        self.assertIn("invalid choice: 'colour'", self.err)
        self.assertEqual(self.main(os.path.join(self.tmp, "none")), 2)
        self.assertEqual(self.err, f"efab_plot: {self.tmp}/none: not a directory\n")
        self.assertEqual(self.main("--help"), 0)
        self.assertTrue(self.out.startswith("usage: efab_plot "))
        # the description: the usage paragraph of the command's docstring
        self.assertIn("\n    efab_plot RESULT_DIR... [-o OUT] [--group-by KEY] [--baseline DIR]\n",
                      self.out)

    def test_one_directory(self):
        d = plotdata.result_dir(self.tmp, "run", lat(1.0))
        self.assertEqual(self.main(d), 0)
        out = os.path.join(d, "plots")
        self.assertEqual(self.out, f"efab_plot: 1 figures and {out}/report.md\n")
        self.assertTrue(os.path.isfile(os.path.join(out, "put_lat.png")))
        self.assertIn("\nGrouped by `provider`; groups: `shm`.\n", self.report(out))

    def test_one_directory_of_several_installs_groups_by_libfabric(self):
        files = lat(1.0, libfabric_path="/a/libfabric.so", provider_req="shm", fabric_req="")
        files["put_lat.csv"] += lat(2.0, libfabric_path="/b/libfabric.so", libfabric_version="2.4",
                                    provider_req="shm", fabric_req="")["put_lat.csv"]
        d = plotdata.result_dir(self.tmp, "run", files)
        self.assertEqual(self.main(d, "-o", os.path.join(self.tmp, "o")), 0)
        self.assertIn("\nGrouped by `libfabric`; groups: `libfabric 2.6`, `libfabric 2.4`.\n",
                      self.report(os.path.join(self.tmp, "o")))

    def test_several_directories_group_by_label_into_efab_plots(self):
        a = plotdata.result_dir(self.tmp, "a", lat(1.0), {"label": "one"})
        b = plotdata.result_dir(self.tmp, "b", lat(1.0), {"label": "two"})
        cwd = os.getcwd()
        os.chdir(self.tmp)
        try:
            self.assertEqual(self.main(a, b), 0)
        finally:
            os.chdir(cwd)
        self.assertIn("\nGrouped by `label`; groups: `one`, `two`.\n",
                      self.report(os.path.join(self.tmp, "efab-plots")))

    def test_baseline_gate(self):
        base = plotdata.result_dir(self.tmp, "base", lat(1.0))
        same = plotdata.result_dir(self.tmp, "same", lat(1.0))
        slow = plotdata.result_dir(self.tmp, "slow", lat(3.0))
        o = os.path.join(self.tmp, "g")
        self.assertEqual(self.main(same, "--baseline", base, "-o", o), 0)
        self.assertIn("\nGrouped by `label`; groups: `baseline`, `candidate`.\n", self.report(o))
        self.assertIn("\nNo (benchmark, size) point got significantly worse.\n", self.report(o))
        self.assertEqual(self.main(slow, "--baseline", base, "-o", o), 1)
        self.assertEqual(self.err, "efab_plot: 2 (benchmark, size) points got significantly "
                                   "worse than the baseline\n")
        self.assertIn("\n2 (benchmark, size) points got significantly worse:\n", self.report(o))

    def test_simulated_beside_real_needs_allow_simulated(self):
        sim = plotdata.result_dir(self.tmp, "sim", lat(1.0), {"simulated": "yes"})
        real = plotdata.result_dir(self.tmp, "real", lat(1.0))
        o = os.path.join(self.tmp, "o")
        self.assertEqual(self.main(sim, real, "-o", o), 2)
        self.assertTrue(self.err.startswith(f"efab_plot: {sim} ran on the SIMULATED EFA device "
                                            f"(efasim) and {real} did not"), self.err)
        self.assertFalse(os.path.exists(o))
        self.assertEqual(self.main(sim, real, "-o", o, "--allow-simulated"), 0)
        self.assertIn("**SIMULATED:**", self.report(o))

    def test_cannot_create_the_output(self):
        d = plotdata.result_dir(self.tmp, "run", lat(1.0))
        blocker = os.path.join(self.tmp, "file")
        open(blocker, "w").close()
        self.assertEqual(self.main(d, "-o", os.path.join(blocker, "sub")), 2)
        self.assertTrue(self.err.startswith(f"efab_plot: cannot create {blocker}/sub: "), self.err)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""plot/efab_plot, the command: runs from any directory; loaded as a module
it offers every name the single-file efab_plot had, and a name rebound on
it is rebound in the package for main, then restored."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import unittest

import plotdata
from efabplot import fig_latbw

COMMAND = os.path.join(plotdata.ROOT, "plot", "efab_plot")
# every top-level name of plot/efab_plot before it became a package
OLD_NAMES = """SCHEMA_BASE GROUP_KEYS REQUEST_COLS BW_WINDOWS HEADLINE Z InputError size_label human
fnum fit_param fit_weighting load_dir libfabric_name disambiguate_installs request_of job_section
series_key metric_of Point fabric_group split_providers assign_groups compare_pairs build
MIN_REPEATS compare_verdict repeats compare setup_matplotlib size_axis bench_groups CAPTIONS
LAT_NOTE REG_NOTE BW_DEFINITION BW_CAPTION_WINDOWS BW_REPORT_LINE use_bw_definition caption_text
add_caption sized cold_handle first_value plot_lat_or_bw REGIME_ORDER plot_mr_reg plot_bench
provenance_flags headline_sizes verdicts regressions find_probe md_cell diff_pair install_probes
capability_diff returned_names names_str request_findings coverage_gaps verdict_phrase
verdict_word answer_rows answer_section NIC_COUNTERS NIC_ERROR_COUNTERS NIC_BYTE_COLUMNS SIM unsim
has_path median_of side_sum fcount fns path_display path_points paths_seen error_notes nic_section
lf_minor cost_section write_report main""".split()


def load_command(name):
    loader = importlib.machinery.SourceFileLoader(name, COMMAND)
    m = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    loader.exec_module(m)
    return m


class Command(plotdata.TempDir, unittest.TestCase):
    def test_every_old_name(self):
        m = load_command("efab_plot_names")
        self.assertEqual(len(OLD_NAMES), 84)
        self.assertEqual([n for n in OLD_NAMES if not hasattr(m, n)], [])
        self.assertIs(m.first_value, fig_latbw.first_value)
        self.assertIn("½ RTT", m.caption_text("put_lat"))

    def test_a_rebound_name_reaches_the_package_for_main(self):
        m = load_command("efab_plot_rebound")
        d = plotdata.result_dir(self.tmp, "r", {"put_lat.csv": [
            plotdata.row(size=s, first_us=5) for s in (8, 16)]})
        calls = []
        m.first_value = lambda pt, pcol: calls.append(pcol) or 7.0
        original = fig_latbw.first_value
        self.assertEqual(m.main([d, "-o", os.path.join(self.tmp, "o")]), 0)
        self.assertEqual(calls, ["lat_us_p50", "lat_us_p50"])
        self.assertIs(fig_latbw.first_value, original)  # restored after main

    def test_runs_from_any_directory(self):
        d = plotdata.result_dir(self.tmp, "r", {"put_lat.csv": [plotdata.row()]})
        p = subprocess.run([sys.executable, COMMAND, "r", "-o", "out"], cwd=self.tmp,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual((p.returncode, p.stdout), (0, "efab_plot: 1 figures and out/report.md\n"))
        self.assertTrue(os.path.isfile(os.path.join(d, "..", "out", "put_lat.png")))
        p = subprocess.run([COMMAND, "missing"], cwd=self.tmp, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual((p.returncode, p.stderr), (2, "efab_plot: missing: not a directory\n"))


if __name__ == "__main__":
    unittest.main()

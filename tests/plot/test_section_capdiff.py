#!/usr/bin/env python3
"""efabplot.sections.capdiff: the capability diff between the runs' probes
and between a run's libfabric installs, laid out from efab_probe --diff's
JSON (a stand-in efab_probe here, EFAB_PROBE)."""
import json
import os
import sys
import unittest

import plotdata
from efabplot.sections import capdiff

FAKE = f"""#!{sys.executable}
# a stand-in for efab_probe --diff A B --json: prints $FAKE_JSON, exits $FAKE_RC
import os, sys
open(os.environ["FAKE_ARGS"], "a").write(" ".join(sys.argv[1:]) + "\\n")
sys.stdout.write(os.environ.get("FAKE_JSON", ""))
sys.stderr.write("efab_probe: cannot read it\\n")
sys.exit(int(os.environ.get("FAKE_RC", "0")))
"""

DIFF = {"matched_by_position": [{"provider": "efa", "fabric": "efa", "a_domain": "rdmap16s0-rdm",
                                 "b_domain": "rdmap32s0-rdm"}],
        "identical": False, "differences": 3, "a": {"columns": 4},
        "changes": [{"provider": "efa", "fabric": "efa", "a_domain": "rdmap16s0-rdm",
                     "b_domain": "rdmap32s0-rdm", "property": "api_version", "a": "2.4",
                     "b": "2.6"},
                    {"provider": "tcp", "fabric": "lo", "a_domain": None, "b_domain": "lo",
                     "property": None, "a": None, "b": {}},
                    {"provider": "efa", "fabric": "efa", "a_domain": "d", "b_domain": "d",
                     "property": "atomic_datatypes", "a": "a|b", "b": "a|b|c",
                     "datatypes_appeared": ["c", "e"]}]}


class Capdiff(plotdata.TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.env = dict(os.environ)
        self.probe = os.path.join(self.tmp, "efab_probe")
        with open(self.probe, "w") as f:
            f.write(FAKE)
        os.chmod(self.probe, 0o755)
        os.environ.update(EFAB_PROBE=self.probe, FAKE_ARGS=os.path.join(self.tmp, "args"),
                          FAKE_JSON=json.dumps(DIFF), FAKE_RC="1")

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.env)
        super().tearDown()

    def run_dir(self, name, probe=True, **meta):
        d = os.path.join(self.tmp, name)
        os.makedirs(d)
        if probe:
            open(os.path.join(d, "probe.json"), "w").close()
        return {"path": d, "label": name, "meta": meta}

    def test_find_probe(self):
        self.assertEqual(capdiff.find_probe(), self.probe)
        del os.environ["EFAB_PROBE"]
        os.environ["PATH"] = self.tmp  # the stand-in on PATH
        built = os.path.join(plotdata.ROOT, "build", "bin", "efab_probe")
        # build/bin of this tree first, else PATH
        self.assertEqual(capdiff.find_probe(),
                         built if os.access(built, os.X_OK) else self.probe)
        os.environ["PATH"] = ""
        self.assertEqual(capdiff.find_probe(), built if os.access(built, os.X_OK) else None)

    def test_differences_between_runs(self):
        a, b = self.run_dir("a"), self.run_dir("b")
        L = capdiff.capability_diff([a, b])
        fa, fb = a["path"] + "/probe.json", b["path"] + "/probe.json"
        self.assertEqual(L, [
            "## Capability diff (efab_probe --diff)", "", "### a → b", "",
            "efa/efa: domain `rdmap16s0-rdm` matched to `rdmap32s0-rdm` by position (the domain "
            "names differ only in the NIC name).",
            f"3 differences (`efab_probe --diff {fa} {fb}`):", "",
            "| column | property | a | b |", "|---|---|---|---|",
            "| efa/efa/rdmap16s0-rdm | api_version | `2.4` | `2.6` |",
            "| tcp/lo/lo | (column) | absent | present (appeared) |",
            "| efa/efa/d | atomic_datatypes | `a\\|b` | `a\\|b\\|c` (appeared: c e) |", ""])
        with open(os.environ["FAKE_ARGS"]) as f:
            self.assertEqual(f.read(), f"--diff {fa} {fb} --json\n")

    def test_identical_and_failed(self):
        os.environ["FAKE_JSON"] = json.dumps({"matched_by_position": [], "identical": True,
                                              "a": {"columns": 1}})
        L = capdiff.capability_diff([self.run_dir("a"), self.run_dir("b")])
        self.assertEqual(L[4:], ["No capability differences (1 column).", ""])
        os.environ.update(FAKE_JSON="", FAKE_RC="2")
        L = capdiff.capability_diff([self.run_dir("c"), self.run_dir("d")])
        self.assertEqual(L[4:], [f"Not compared: `{self.probe} --diff {self.tmp}/c/probe.json "
                                 f"{self.tmp}/d/probe.json`: efab_probe: cannot read it", ""])

    def test_nothing_to_compare_or_a_probe_missing(self):
        self.assertEqual(capdiff.capability_diff([self.run_dir("a")]), [])
        self.assertEqual(capdiff.capability_diff([self.run_dir("b", False),
                                                  self.run_dir("c", False)]), [])
        c = self.run_dir("x", False)
        self.assertEqual(capdiff.capability_diff([self.run_dir("y"), c]), [
            "## Capability diff (efab_probe --diff)", "",
            f"Not compared: no probe.json in `{c['path']}` (efab_sweep records one at the "
            "start of a run).", ""])
        os.environ["EFAB_PROBE"] = ""
        os.environ["PATH"] = ""
        built = os.path.join(plotdata.ROOT, "build", "bin", "efab_probe")
        if not os.access(built, os.X_OK):
            self.assertEqual(capdiff.capability_diff([self.run_dir("p"), self.run_dir("q")])[2],
                             "Not compared: efab_probe not found (build it with `make`, or set "
                             "EFAB_PROBE).")

    def test_installs_of_one_run(self):
        r = self.run_dir("r", False, libfabric_installs=[
            {"version": "2.4.0", "probe": {"file": "probe-lf1.json"}},
            {"libfabric": "/opt/x", "probe": {"status": "failed"}},
            {"version": "2.6.0", "probe": {"file": "probe-lf2.json"}}])
        r["simulated"] = True
        self.assertEqual(capdiff.install_probes(r), [
            ("libfabric 2.4.0 (simulated)", r["path"] + "/probe-lf1.json"),
            ("libfabric 2.6.0 (simulated)", r["path"] + "/probe-lf2.json")])
        L = capdiff.capability_diff([r])
        self.assertEqual(L[2], "### libfabric 2.4.0 (simulated) → libfabric 2.6.0 (simulated)")


if __name__ == "__main__":
    unittest.main()

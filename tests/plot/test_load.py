#!/usr/bin/env python3
"""efabplot.load: result directories, CSV schemas 1 and 2, meta.json, simulated
runs, libfabric installs, the bandwidth definition."""
import os
import unittest

import plotdata
from plotdata import result_dir, row
from efabplot import load, schema


class Schema(unittest.TestCase):
    def test_schema_base_is_the_documented_header(self):
        self.assertEqual(load.SCHEMA_BASE, plotdata.BASE)
        self.assertEqual(load.GROUP_KEYS, ("fabric", "provider", "libfabric_version",
                                           "libfabric", "efa_installer", "label"))


class LoadDir(plotdata.TempDir, unittest.TestCase):
    def test_rows_label_and_derived_columns(self):
        d = result_dir(self.tmp, "run1", {"put_lat.csv": [row(size=8), row(size=16)]},
                       {"label": "mine", "efa_installer": "1.38.0"})
        r = load.load_dir(d)
        self.assertEqual(r["label"], "mine")
        self.assertFalse(r["simulated"])
        self.assertEqual([x["size_bytes"] for x in r["rows"]], ["8", "16"])
        x = r["rows"][0]
        self.assertEqual((x["label"], x["_label"], x["_dir"]), ("mine", "mine", d))
        self.assertTrue(x["_legacy"])  # no provider_req/fabric_req columns
        self.assertEqual(x["efa_installer"], "1.38.0")  # the host's, from meta.json
        self.assertEqual(x["libfabric"], "libfabric 2.6")

    def test_schema_2_has_exactly_its_benchmarks_columns(self):
        cols = schema.COLUMNS["put_lat"]
        full = {c: "" for c in cols}
        full.update(row(schema=2, provider_req="shm", fabric_req=""))
        d = result_dir(self.tmp, "two", {"put_lat.csv": [full]})
        x = load.load_dir(d)["rows"][0]
        self.assertEqual(x["schema"], "2")
        self.assertFalse(x["_legacy"])
        short = dict(full)
        del short["late_bytes"]
        d = result_dir(self.tmp, "short", {"put_lat.csv": [short]})
        self.assertRefused(d, "put_lat.csv: schema 2: 93 columns, schema 2's put_lat has 94")
        swapped = {c: full[c] for c in cols[:40] + [cols[41], cols[40]] + cols[42:]}
        d = result_dir(self.tmp, "swapped", {"put_lat.csv": [swapped]})
        self.assertRefused(d, f"schema 2: column 41 is {cols[41]}, schema 2's put_lat has "
                              f"{cols[40]} there")
        # the same columns as schema 1 load, and so does a leading part of them
        d = result_dir(self.tmp, "one", {"put_lat.csv": [dict(full, schema="1")],
                                         "get_lat.csv": [row("get_lat")]})
        self.assertEqual(len(load.load_dir(d)["rows"]), 2)

    def test_label_defaults_to_directory_name(self):
        d = result_dir(self.tmp, "20261202-x", {"a.csv": [row()]})
        self.assertEqual(load.load_dir(d + "/")["label"], "20261202-x")
        self.assertEqual(load.load_dir(d)["rows"][0]["efa_installer"], "unknown")

    def test_request_columns_make_a_row_current(self):
        d = result_dir(self.tmp, "r", {"a.csv": [row(provider_req="shm", fabric_req="")]})
        self.assertFalse(load.load_dir(d)["rows"][0]["_legacy"])

    def test_old_bandwidth_csv_holds_the_window_sum(self):
        d = result_dir(self.tmp, "old", {"put_bw.csv": [row("put_bw", 8, bw=100)]})
        x = load.load_dir(d)["rows"][0]
        self.assertTrue(x["_bw_windows_only"])
        self.assertEqual((x["bw_MBps_windows"], x["msg_rate_Mops_windows"]), ("100", "1.0"))
        d = result_dir(self.tmp, "new", {"put_bw.csv": [row("put_bw", 8, bw=100,
                                                             bw_MBps_windows=90)]})
        self.assertNotIn("_bw_windows_only", load.load_dir(d)["rows"][0])

    def test_simulated_rows_say_so_in_every_grouping_key(self):
        d = result_dir(self.tmp, "sim", {"a.csv": [row(provider="efa", fabric="efa-direct",
                                                       provider_version="206.0 simulated")]},
                       {"label": "s"})
        r = load.load_dir(d)
        self.assertTrue(r["simulated"])
        self.assertEqual(r["label"], "s (simulated)")
        x = r["rows"][0]
        self.assertTrue(x["_simulated"])
        for k in load.GROUP_KEYS:
            self.assertTrue(x[k].endswith(" (simulated)"), k)
        self.assertEqual(x["provider"], "efa (simulated)")
        d = result_dir(self.tmp, "sim2", {"a.csv": [row()]}, {"simulated": "efasim"})
        self.assertTrue(load.load_dir(d)["simulated"])
        d = result_dir(self.tmp, "real", {"a.csv": [row()]}, {"simulated": "no"})
        self.assertFalse(load.load_dir(d)["simulated"])

    def test_probe_long_format_is_skipped(self):
        d = result_dir(self.tmp, "p", {"put_lat.csv": [row()]})
        with open(os.path.join(d, "probe.csv"), "w") as f:
            f.write("provider,fabric,property,value\nshm,shm,x,1\n")
        open(os.path.join(d, "empty.csv"), "w").close()
        self.assertEqual(len(load.load_dir(d)["rows"]), 1)

    def assertRefused(self, path, message):
        with self.assertRaises(load.InputError) as e:
            load.load_dir(path)
        self.assertIn(message, str(e.exception))

    def test_bad_input(self):
        self.assertRefused(os.path.join(self.tmp, "none"), "none: not a directory")
        os.makedirs(os.path.join(self.tmp, "empty"))
        self.assertRefused(os.path.join(self.tmp, "empty"), "no efabench CSV (schema 1 and 2)")
        d = result_dir(self.tmp, "j", {"a.csv": [row()]})
        with open(os.path.join(d, "meta.json"), "w") as f:
            f.write("{not json")
        self.assertRefused(d, "meta.json: not valid JSON")
        d = result_dir(self.tmp, "s3", {"a.csv": [row(schema=3)]})
        self.assertRefused(d, "a.csv:2: schema 3, this efab_plot reads 1 and 2")
        d = result_dir(self.tmp, "s12", {"a.csv": [row(), row(schema=2)]})
        self.assertRefused(d, "a.csv:3: schema 2 after schema 1 rows; one schema per CSV")
        d = result_dir(self.tmp, "mix", {"a.csv": [row("put_lat"), row("get_lat")]})
        self.assertRefused(d, "a.csv: mixes benchmarks ['get_lat', 'put_lat']; one per CSV")
        d = result_dir(self.tmp, "cols", {})
        with open(os.path.join(d, "a.csv"), "w") as f:
            f.write("schema,run_id\n1,x\n")
        self.assertRefused(d, "columns are not efabench CSV schema 1 or 2")
        with open(os.path.join(d, "a.csv"), "w") as f:
            f.write(",".join(plotdata.BASE) + "\n1,x\n")
        self.assertRefused(d, "a.csv:2: 2 fields, header has 27")


class Installs(plotdata.TempDir, unittest.TestCase):
    def test_libfabric_name_prefers_the_install_version(self):
        meta = {"libfabric_installs": [{"library": "/a/lib.so", "version": "2.4.0"}]}
        self.assertEqual(load.libfabric_name({"libfabric_path": "/a/lib.so",
                                              "libfabric_version": "2.4"}, meta),
                         "libfabric 2.4.0")
        self.assertEqual(load.libfabric_name({"libfabric_path": "/b/lib.so",
                                              "libfabric_version": "2.6"}, meta),
                         "libfabric 2.6")

    def test_one_version_name_two_libraries(self):
        runs = [{"rows": [{"libfabric": "libfabric 2.6", "libfabric_path": "/a"},
                          {"libfabric": "libfabric 2.6", "libfabric_path": "/b"},
                          {"libfabric": "libfabric 2.6 (simulated)", "libfabric_path": ""},
                          {"libfabric": "libfabric 2.4", "libfabric_path": "/c"}]}]
        runs[0]["rows"].append({"libfabric": "libfabric 2.6 (simulated)", "libfabric_path": "/d"})
        load.disambiguate_installs(runs)
        self.assertEqual([d["libfabric"] for d in runs[0]["rows"]],
                         ["libfabric 2.6 (/a)", "libfabric 2.6 (/b)",
                          "libfabric 2.6 (path unknown) (simulated)", "libfabric 2.4",
                          "libfabric 2.6 (/d) (simulated)"])


class BandwidthDefinition(plotdata.TempDir, unittest.TestCase):
    def tearDown(self):
        load.BW_DEFINITION[0] = "elapsed"
        super().tearDown()

    def test_an_old_csv_puts_every_run_on_the_window_sum(self):
        old = load.load_dir(result_dir(self.tmp, "old", {"put_bw.csv": [row("put_bw", bw=50)]}))
        new = load.load_dir(result_dir(self.tmp, "new", {"put_bw.csv": [
            row("put_bw", bw=100, bw_MBps_windows=90, msg_rate_Mops_windows=0.9)]}))
        load.use_bw_definition([new])
        self.assertEqual(load.BW_DEFINITION, ["elapsed"])
        self.assertEqual(new["rows"][0]["bw_MBps"], "100")
        load.use_bw_definition([old, new])
        self.assertEqual(load.BW_DEFINITION, ["windows"])
        x = new["rows"][0]
        self.assertEqual((x["bw_MBps"], x["bw_MBps_elapsed"]), ("90", "100"))
        self.assertEqual((x["msg_rate_Mops"], x["msg_rate_Mops_elapsed"]), ("0.9", "1.0"))
        self.assertEqual(old["rows"][0]["bw_MBps"], "50")
        self.assertNotIn("bw_MBps_elapsed", old["rows"][0])


if __name__ == "__main__":
    unittest.main()

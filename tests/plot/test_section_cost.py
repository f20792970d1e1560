#!/usr/bin/env python3
"""efabplot.sections.cost: software cost per operation, efa beside
efa-direct."""
import unittest

import plotdata
from plotdata import row
from efabplot.sections import cost


def crow(fabric, size, post, poll, rep=1, **kw):
    return row("put_lat", size, provider="efa", fabric=fabric, post_ns=post, poll_ns=poll,
               run_id=f"x:lat[{fabric}]#{rep}", **kw)


class Cost(plotdata.TempDir, unittest.TestCase):
    def test_lf_minor(self):
        self.assertEqual(cost.lf_minor({"libfabric_version": "2.4"}), (2, 4))
        self.assertEqual(cost.lf_minor({"libfabric_version": "1.17.0"}), (1, 17))
        self.assertIsNone(cost.lf_minor({"libfabric_version": "unknown"}))

    def test_efa_beside_efa_direct(self):
        rows = [crow("efa", 8, 400, 100), crow("efa", 8, 380, 100, rep=2),
                crow("efa-direct", 8, 200, 50), crow("efa", 16, 500, 1200),
                row("put_lat", 8, provider="tcp", fabric="lo", post_ns=1500, poll_ns="",
                    run_id="x:lat[t]#1")]
        run = plotdata.loaded(self.tmp, "r", {"put_lat.csv": rows})
        L = cost.cost_section([run], "provider")
        self.assertEqual(L[0], "## Software cost per operation")
        i = L.index("### put_lat")
        self.assertEqual(L[i + 2:], [
            "| series | size | post efa (ns) | post efa-direct (ns) | post efa ÷ efa-direct | "
            "poll efa (ns) | poll efa-direct (ns) | poll efa ÷ efa-direct |",
            "|---|---|---|---|---|---|---|---|",
            "| efa · lat write host:host | 8 | 390.0 | 200.0 | 1.95 | 100.0 | 50.0 | 2.00 |",
            "| efa · lat write host:host | 16 | 500.0 | - | - | 1200 | - | - |",
            "",
            "| series | fabric | size | post (ns) | poll (ns) |", "|---|---|---|---|---|",
            "| tcp · lat write host:host | lo | 8 | 1500 | - |", ""])

    def test_simulated_data_paths(self):
        rows = [crow("efa", 8, 400, 100), crow("efa-direct", 8, 200, 50)]
        a = plotdata.loaded(self.tmp, "a", {"put_lat.csv": rows}, {"simulated": "yes"})
        rows = [crow("efa", 8, 400, 100, libfabric_version="2.1")]
        b = plotdata.loaded(self.tmp, "b", {"put_lat.csv": rows}, {"simulated": "yes"})
        for d in b["rows"]:
            d["libfabric"] = "libfabric 2.1 (simulated)"
        L = cost.cost_section([a, b], "fabric")
        sim = [x for x in L if x.startswith("**SIMULATED device:**")]
        self.assertEqual(len(sim), 1)
        self.assertTrue(sim[0].endswith("Here: libfabric 2.1 (simulated): the verbs data path "
                                        "(libfabric < 2.4); libfabric 2.6 (simulated): the "
                                        "direct data path by default (libfabric ≥ 2.4)."), sim[0])
        # two installs: each series is named with its install
        self.assertIn("| lat write host:host · libfabric 2.6 (simulated) | 8 | 400.0 | 200.0 | "
                      "2.00 | 100.0 | 50.0 | 2.00 |", L)
        self.assertIn("| lat write host:host · libfabric 2.1 (simulated) | efa (simulated) | 8 | "
                      "400.0 | 100.0 |", L)
        # one install: the pair table says simulated in the series' name
        self.assertIn("| lat write host:host (simulated) | 8 | 400.0 | 200.0 | 2.00 | 100.0 | "
                      "50.0 | 2.00 |", cost.cost_section([a], "fabric"))

    def test_no_cost_columns_no_section(self):
        run = plotdata.loaded(self.tmp, "r", {"put_lat.csv": [row()]})
        self.assertEqual(cost.cost_section([run], "provider"), [])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.sections.nic: what the NIC did, per series and size, from the
path columns and the NIC counters."""
import unittest

import plotdata
from plotdata import row
from efabplot.sections import nic


def prow(size=8, path="device-write", rep=1, **kw):
    """A put_lat row through efa-direct with its counters: 1600 B written by
    RDMA on the initiator's NIC, 1600 B received at the target's."""
    d = dict(provider="efa", fabric="efa-direct", run_id=f"x:lat[d]#{rep}", path=path,
             path_ratio="1.000000", payload_bytes="1600", hw_nics="2",
             nic_init_rdma_write_bytes="1600", nic_tgt_rdma_write_bytes="0",
             nic_init_tx_bytes="14400", nic_tgt_rx_bytes="14400",
             nic_init_retrans_pkts="0", nic_tgt_retrans_pkts="0")
    d.update(kw)
    return row("put_lat", size, **d)


class Counters(unittest.TestCase):
    def test_side_sum(self):
        self.assertEqual(nic.side_sum({"nic_init_x": "3", "nic_tgt_x": "4"}, "x"), 7)
        # one NIC served both sides: counted once
        self.assertEqual(nic.side_sum({"nic_init_x": "3", "nic_tgt_x": "3", "hw_nics": "1"},
                                      "x"), 3)
        self.assertEqual(nic.side_sum({"nic_tgt_x": "4", "hw_nics": "1"}, "x"), 4)
        self.assertIsNone(nic.side_sum({}, "x"))

    def test_error_notes_name_every_nonzero_counter(self):
        rows = [prow(nic_tgt_retrans_pkts="5", hw_note="shared NIC"),
                prow(nic_tgt_retrans_pkts="120000", nic_init_rx_drops="1", hw_note="shared NIC")]
        self.assertEqual(nic.error_notes(rows),
                         ["rx_drops 1 (initiator; 1 of 2 repeats)",
                          "retrans_pkts 120 k (target; 2 of 2 repeats)",
                          "note: `shared NIC`"])
        self.assertEqual(nic.error_notes([prow()]), [])
        self.assertEqual(nic.paths_seen([prow(), prow(path="mixed"), prow()]),
                         ["device-write", "mixed"])


class Section(plotdata.TempDir, unittest.TestCase):
    def test_table_findings_and_bare_providers(self):
        rows = [prow(8, rep=1), prow(8, rep=2, path="emulated-send"),
                prow(16, nic_init_rdma_read_wr_err="2"),
                row("put_lat", 8, provider="shm", fabric="shm", path="-", run_id="x:lat[s]#1")]
        run = plotdata.loaded(self.tmp, "r", {"put_lat.csv": rows})
        L = nic.nic_section([run], "provider")
        self.assertEqual(L[0], "## What the NIC did")
        i = L.index("### put_lat")
        self.assertEqual(L[i + 2], "| series | fabric | size | path | repeats | payload (B) | "
                                   "path_ratio | RDMA write (B) | RDMA read (B) | send (B) | "
                                   "tx (B) | rx (B) | NICs | errors, retransmits, notes |")
        self.assertEqual(L[i + 4:i + 6], [
            "| efa · lat write host:host | efa-direct | 8 | device-write / emulated-send | 2 | "
            "1600 | 1.000000 | 1600 | - | - | 14400 | 14400 | 2 | - |",
            "| efa · lat write host:host | efa-direct | 16 | device-write | 1 | 1600 | 1.000000 "
            "| 1600 | - | - | 14400 | 14400 | 2 | rdma_read_wr_err 2 (initiator) |"])
        self.assertEqual(L[i + 7:], [
            "**Finding:** put_lat [efa · lat write host:host] efa-direct at 8 B: the repeats "
            "disagree on the path (device-write ×1, emulated-send ×1).", "",
            "**Finding:** put_lat [efa · lat write host:host] efa-direct at 16 B: error "
            "counters, or retransmits/drops above 1 % of the side's traffic: rdma_read_wr_err 2 "
            "(initiator).", "",
            "No NIC counters (path `-` in every row: the provider bypasses the NIC or the driver "
            "has no counters; every nic_* column empty): shm: put_lat [lat write host:host].",
            ""])

    def test_retransmits_judged_by_the_side_s_traffic(self):
        """As efab_scan: a background retransmit rate (efasim's default, 1 in 1000) is
        named in the table but is no finding; above 1 % of tx_pkts it is, and so is
        one with no packets to judge it by."""
        base = dict(nic_init_tx_pkts="10000", nic_tgt_rx_pkts="10000")
        rows = [prow(8, **base, nic_init_retrans_pkts="10"),
                prow(16, **base, nic_init_retrans_pkts="101"),
                prow(32, nic_tgt_rx_drops="2", nic_tgt_rx_pkts="0")]
        run = plotdata.loaded(self.tmp, "r", {"put_lat.csv": rows})
        L = nic.nic_section([run], "provider")
        table = [x for x in L if x.startswith("| lat write")]
        self.assertIn("retrans_pkts 10 (initiator)", table[0])
        found = [x for x in L if x.startswith("**Finding:**")]
        self.assertEqual(len(found), 2, found)
        self.assertIn("at 16 B:", found[0])
        self.assertIn("retrans_pkts 101 (initiator; 1.01 % of 10000 tx_pkts)", found[0])
        self.assertIn("at 32 B:", found[1])
        self.assertIn("rx_drops 2 (target; 0 rx_pkts)", found[1])
        self.assertTrue(nic.is_trouble({"nic_init_rdma_write_wr_err": "1"}, "init",
                                       "rdma_write_wr_err"))
        self.assertFalse(nic.is_trouble({"nic_init_retrans_bytes": "100",
                                         "nic_init_tx_bytes": "10000"}, "init", "retrans_bytes"))

    def test_no_path_columns_no_section(self):
        run = plotdata.loaded(self.tmp, "r", {"put_lat.csv": [row()]})
        self.assertEqual(nic.nic_section([run], "provider"), [])

    def test_simulated_counters_are_the_simulator_s(self):
        run = plotdata.loaded(self.tmp, "r", {"put_lat.csv": [prow()]}, {"simulated": "yes"})
        L = nic.nic_section([run], "fabric")
        self.assertEqual(L[4], "Rows marked `(simulated)`: the counters are efasim's, counted "
                               "as the simulated device moves bytes, not a NIC's.")


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""efabplot.sections.requests: what was asked and what each group got."""
import unittest

import plotdata
from plotdata import row
from efabplot.sections import requests


def asked(prov, fab, req, **kw):
    return row(provider=prov, fabric=fab, provider_req=req, fabric_req="", **kw)


class Requests(plotdata.TempDir, unittest.TestCase):
    def runs(self):
        a = plotdata.loaded(self.tmp, "a", {"x.csv": [asked("tcp;ofi_rxm", "lo", "tcp")]},
                            {"label": "old"})
        b = plotdata.loaded(self.tmp, "b", {"x.csv": [asked("tcp", "lo", "tcp"),
                                                      asked("shm", "shm", "")]},
                            {"label": "new"})
        return [a, b]

    def test_returned_names(self):
        self.assertEqual(requests.returned_names(self.runs(), "label"),
                         {"-p tcp": {"old": {("tcp;ofi_rxm", "lo")}, "new": {("tcp", "lo")}},
                          "": {"new": {("shm", "shm")}}})
        self.assertEqual(requests.names_str({("b", "2"), ("a", "1")}),
                         "provider `a`, fabric `1`; provider `b`, fabric `2`")

    def test_a_renamed_provider_is_a_finding(self):
        L = requests.lines(self.runs(), ["old", "new"], "label")
        self.assertEqual(L[:6], ["## What was asked and what each group got", "",
                                 "Series are matched across groups by the request (`-p`/`-f` as "
                                 "given, or the config's value); libfabric's answer per group:",
                                 "", "| asked | group | returned |", "|---|---|---|"])
        self.assertEqual(L[6:9], ["| (nothing) | new | provider `shm`, fabric `shm` |",
                                  "| `-p tcp` | old | provider `tcp;ofi_rxm`, fabric `lo` |",
                                  "| `-p tcp` | new | provider `tcp`, fabric `lo` |"])
        self.assertEqual(L[9:], ["", "**Finding:** asked `-p tcp`: old returned provider "
                                 "`tcp;ofi_rxm`, fabric `lo`, new returned provider `tcp`, "
                                 "fabric `lo`. The provider or fabric was renamed or re-layered "
                                 "between them; the series stay matched by what was asked.", ""])

    def test_not_when_grouped_by_provider_or_fabric_or_without_request_columns(self):
        self.assertEqual(requests.lines(self.runs(), ["old", "new"], "provider"), [])
        self.assertEqual(requests.lines(self.runs(), ["old", "new"], "fabric"), [])
        legacy = plotdata.loaded(self.tmp, "c", {"x.csv": [row()]})
        self.assertEqual(requests.lines([legacy], ["c"], "label"), [])
        self.assertEqual(requests.request_findings({"-p x": {"a": {("x", "y")}}}, ["a", "b"]),
                         [])


if __name__ == "__main__":
    unittest.main()

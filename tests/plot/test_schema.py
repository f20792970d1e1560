#!/usr/bin/env python3
"""efabplot.schema: the CSV schemas efab_plot reads, each benchmark's
schema-2 columns as docs/csv.md documents them, the header rule."""
import os
import sys
import unittest

import plotdata
from efabplot import schema

sys.path.insert(0, os.path.join(plotdata.ROOT, "tests"))
import csvdoc  # noqa: E402  (tests/csvdoc.py: docs/csv.md parsed)


class Columns(unittest.TestCase):
    def test_the_columns_are_the_docs(self):
        doc = csvdoc.Schema()
        self.assertEqual(doc.number, max(schema.SCHEMAS))
        self.assertEqual(sorted(schema.COLUMNS), sorted(doc.benches))
        for bench, cols in schema.COLUMNS.items():
            self.assertIsNone(csvdoc.first_difference(cols, doc.columns(bench)), bench)
        self.assertEqual(schema.COMMON, doc.common_columns())

    def test_schema_1_base_leads_every_file(self):
        self.assertEqual(schema.SCHEMA1_BASE, plotdata.BASE)
        for cols in schema.COLUMNS.values():
            self.assertEqual(cols[:len(schema.SCHEMA1_BASE)], schema.SCHEMA1_BASE)


class HeaderRule(unittest.TestCase):
    def test_schema_1_needs_the_base_only(self):
        base = list(schema.SCHEMA1_BASE)
        self.assertIsNone(schema.header_problem(base, 1, "put_lat"))
        self.assertIsNone(schema.header_problem(base + ["inject", "x"], 1, "put_lat"))
        self.assertEqual(schema.header_problem(base[:-1], 1, "put_lat"),
                         "columns are not efabench CSV schema 1")

    def test_schema_2_needs_exactly_the_benchmarks(self):
        cols = schema.COLUMNS["connect"]
        self.assertIsNone(schema.header_problem(cols, 2, "connect"))
        self.assertEqual(schema.header_problem(cols[:-1], 2, "connect"),
                         "36 columns, schema 2's connect has 37")
        self.assertEqual(schema.header_problem(cols + ["x"], 2, "connect"),
                         "38 columns, schema 2's connect has 37")
        self.assertEqual(schema.header_problem(cols[:32] + cols[33:] + cols[32:33], 2, "connect"),
                         "column 33 is av_insert_us, schema 2's connect has peers there")
        self.assertEqual(schema.header_problem(cols, 2, "scan"),
                         "bench scan is not in efabench CSV schema 2")


if __name__ == "__main__":
    unittest.main()

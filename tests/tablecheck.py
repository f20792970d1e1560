#!/usr/bin/env python3
"""Checks a benchmark's terminal output (issue 61 item 1): the '#' lines above
the table (at most --notes of them; '#' lines between rows, such as
efab_mr_reg's fit sentences, are not counted but must fit --width), the width of every line (at most
--width characters), and the table's alignment: every row has as many fields
as the header, each ending where the header's column name ends (the columns
are right-aligned in fixed widths). --columns a,b,c: the header's names, in
that order; --min-columns N: at least N of them. Exit 1 with the reason.

  tablecheck.py FILE [--notes N] [--width N] [--columns a,b,c] [--min-columns N]
"""
import argparse
import re
import sys


def fields(line):
    """(text, end column) of each whitespace-separated field."""
    return [(m.group(0), m.end()) for m in re.finditer(r"\S+", line)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--notes", type=int)
    ap.add_argument("--width", type=int)
    ap.add_argument("--columns")
    ap.add_argument("--min-columns", type=int, default=1)
    a = ap.parse_args()
    lines = open(a.file).read().splitlines()
    errs = []
    first = next((k for k, l in enumerate(lines) if l.strip() and not l.startswith("#")), len(lines))
    notes = [l for l in lines[:first] if l.startswith("#")]
    table = [l for l in lines if l.strip() and not l.startswith("#")]
    if a.notes is not None and len(notes) > a.notes:
        errs.append(f"{len(notes)} '#' lines above the table, at most {a.notes} expected")
    if a.width is not None:
        for l in lines:
            if len(l) > a.width:
                errs.append(f"a line of {len(l)} characters (at most {a.width}): {l[:80]}...")
    if not table:
        errs.append("no table")
    else:
        head = fields(table[0])
        names = [f[0] for f in head]
        if a.columns is not None and names != a.columns.split(","):
            errs.append(f"columns {','.join(names)}, expected {a.columns}")
        if len(names) < a.min_columns:
            errs.append(f"{len(names)} columns, at least {a.min_columns} expected")
        if len(table) < 2:
            errs.append("a header and no rows")
        for row in table[1:]:
            got = fields(row)
            if [e for _, e in got] != [e for _, e in head]:
                errs.append(f"row not aligned with the header:\n  {table[0]}\n  {row}")
    for e in errs:
        print(f"tablecheck {a.file}: {e}")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks a benchmark's terminal output (issue 61 item 1): the '#' lines above
the table (at most --notes of them; '#' lines between rows, such as
efab_mr_reg's fit sentences, are not counted but must fit --width), the width of every line (at most
--width characters), and the table's alignment: every row has as many fields
as the header, each ending where the header's column name ends (the columns
are right-aligned in fixed widths) or, for names, starting where it starts. --columns a,b,c: the header's names, in
that order; --min-columns N: at least N of them. Exit 1 with the reason.

  tablecheck.py FILE [--notes N] [--width N] [--columns a,b,c] [--min-columns N]
                [--table-from REGEX]
"""
import argparse
import re
import sys


def fields(line):
    """(text, start column, end column) of each whitespace-separated field."""
    return [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+", line)]


def aligned(row, head):
    """Each field ends where its column name ends (right-aligned) or starts
    where it starts (left-aligned: names)."""
    return len(row) == len(head) and all(
        r[2] == h[2] or r[1] == h[1] for r, h in zip(row, head))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--notes", type=int)
    ap.add_argument("--width", type=int)
    ap.add_argument("--columns")
    ap.add_argument("--min-columns", type=int, default=1)
    ap.add_argument("--table-from", help="the table is the block after the line matching this "
                    "regex, up to the next empty line (efab_scan's per-NIC table)")
    a = ap.parse_args()
    lines = open(a.file).read().splitlines()
    errs = []
    first = next((k for k, l in enumerate(lines) if l.strip() and not l.startswith("#")), len(lines))
    notes = [l for l in lines[:first] if l.startswith("#")]
    table = [l for l in lines if l.strip() and not l.startswith("#")]
    if a.table_from:
        k = next((k for k, l in enumerate(lines) if re.search(a.table_from, l)), None)
        if k is None:
            errs.append(f"no line matching {a.table_from!r}")
            table = []
        else:
            rest = lines[k + 1:]
            end = next((j for j, l in enumerate(rest) if not l.strip()), len(rest))
            table = [l for l in rest[:end] if not l.startswith("#")]
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
            if not aligned(got, head):
                errs.append(f"row not aligned with the header:\n  {table[0]}\n  {row}")
    for e in errs:
        print(f"tablecheck {a.file}: {e}")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())

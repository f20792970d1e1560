#!/usr/bin/env python3
"""The CSV schema as docs/csv.md documents it ("How to read this page"
there): the schema number from the title, the common columns, the groups,
and every benchmark's full ordered column list.

    csvdoc.py [--doc FILE] columns BENCH       the bench's columns, one line, commas
    csvdoc.py [--doc FILE] benches             the documented benches
    csvdoc.py [--doc FILE] header BENCH CSV    CSV's header and every row's schema cell
                                               against the doc (exit 1 at the first
                                               difference, naming it)
    csvdoc.py [--doc FILE] source [--root DIR] the NVSHMEM benches' columns (shmem_reg,
                                               shmem_lat, shmem_bw: not built without
                                               NVSHMEM) against the arrays in their
                                               source, and the common columns against
                                               bench/cli/result.c

Exit 0 when it holds, 1 with one line saying the first difference, 2 when
the doc cannot be parsed (its line named)."""
import argparse
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
DOC = os.path.join(ROOT, "docs", "csv.md")
TABLE_HEAD = ["column", "unit", "meaning", "empty when"]
NAME = r"[A-Za-z0-9_]+"
RE_COL = re.compile(rf"^`({NAME})`$")
RE_GROUP = re.compile(rf"^\[group `({NAME})`\]\(#group-({NAME})\)$")
RE_PREFIXED = re.compile(rf"^`({NAME})` \+ \[group `({NAME})`\]\(#group-({NAME})\)$")


class DocError(Exception):
    pass


def cells(line):
    """The cells of a markdown table row (no escaped pipes in this doc)."""
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|")):
        return None
    return [c.strip() for c in s[1:-1].split("|")]


class Schema:
    """docs/csv.md parsed: number, common (rows), groups {name: rows},
    benches {name: rows}; a row is (first cell, unit, meaning, empty, line)."""

    def __init__(self, path=DOC):
        self.path = path
        self.number = None
        self.common = None
        self.groups = {}
        self.benches = {}
        self._parse(open(path).read().split("\n"))

    def _err(self, n, msg):
        raise DocError(f"{os.path.relpath(self.path)}:{n}: {msg}")

    def _parse(self, lines):
        h2 = h3 = None
        n = 0
        infence = False
        while n < len(lines):
            line = lines[n]
            n += 1
            if line.lstrip().startswith("```"):
                infence = not infence
                continue
            if infence:
                continue
            m = re.match(r"^# CSV \(schema (\d+)\)\s*$", line)
            if m and n == 1:
                self.number = int(m.group(1))
                continue
            if line.startswith("## "):
                h2, h3 = line[3:].strip(), None
                continue
            if line.startswith("### "):
                h3 = line[4:].strip()
                continue
            c = cells(line)
            if c is None or [x.lower() for x in c] != TABLE_HEAD:
                continue
            start = n
            if n >= len(lines) or not re.match(r"^\|(\s*-+\s*\|){4}\s*$", lines[n]):
                self._err(n + 1, "a column table's header without its |---| line")
            n += 1
            rows = []
            while n < len(lines) and lines[n].strip().startswith("|"):
                r = cells(lines[n])
                n += 1
                if len(r) != 4:
                    self._err(n, f"{len(r)} cells, a column table has 4")
                rows.append((r[0], r[1], r[2], r[3], n))
            if h2 == "Common columns" and h3 is None:
                where = ("common", None)
            elif h2 == "Groups" and h3:
                m = re.match(rf"^Group `({NAME})`$", h3)
                if not m:
                    self._err(start, f"a group's heading is 'Group `name`', not '{h3}'")
                where = ("group", m.group(1))
            elif h2 == "Columns per benchmark" and h3:
                if not re.match(rf"^{NAME}$", h3):
                    self._err(start, f"a benchmark's heading is its bench name, not '{h3}'")
                where = ("bench", h3)
            else:
                self._err(start, f"a column table outside the common columns, a group or a "
                                 f"benchmark (under '{h2}' / '{h3}')")
            self._check_rows(rows)
            kind, name = where
            if kind == "common":
                if self.common is not None:
                    self._err(start, "a second table of common columns")
                self.common = rows
            else:
                table = self.groups if kind == "group" else self.benches
                if name in table:
                    self._err(start, f"{kind} {name} documented twice")
                table[name] = rows
        if self.number is None:
            raise DocError(f"{self.path}:1: the title is not '# CSV (schema N)'")
        if not self.common:
            raise DocError(f"{self.path}: no table under '## Common columns'")
        for b in self.benches:
            self.columns(b)  # every reference resolves, no column twice

    def _check_rows(self, rows):
        for first, unit, meaning, empty, n in rows:
            if RE_COL.match(first):
                if not (unit and meaning and empty):
                    self._err(n, f"column {first}: unit, meaning and 'empty when' are all needed")
            elif RE_GROUP.match(first) or RE_PREFIXED.match(first):
                m = RE_GROUP.match(first) or RE_PREFIXED.match(first)
                g = m.groups()
                if g[-1] != g[-2]:
                    self._err(n, f"the link of group {g[-2]} goes to #group-{g[-1]}")
            else:
                self._err(n, f"'{first}' is neither `column`, [group `G`](#group-G) nor "
                             f"`prefix_` + [group `G`](#group-G)")

    def _expand(self, rows, prefix="", seen=()):
        out = []
        for first, _, _, _, n in rows:
            m = RE_COL.match(first)
            if m:
                out.append(prefix + m.group(1))
                continue
            m = RE_PREFIXED.match(first)
            p, g = (m.group(1), m.group(2)) if m else ("", RE_GROUP.match(first).group(1))
            if g not in self.groups:
                self._err(n, f"group {g} is not documented (no '### Group `{g}`')")
            if g in seen:
                self._err(n, f"group {g} includes itself")
            out += self._expand(self.groups[g], prefix + p, seen + (g,))
        return out

    def common_columns(self):
        return self._expand(self.common)

    def columns(self, bench):
        """The bench's full ordered column list (common columns first)."""
        if bench not in self.benches:
            raise KeyError(bench)
        cols = self.common_columns() + self._expand(self.benches[bench])
        dup = sorted({c for c in cols if cols.count(c) > 1})
        if dup:
            raise DocError(f"{self.path}: {bench}: column(s) {', '.join(dup)} twice")
        return cols


def first_difference(got, want):
    """None when equal, else a line naming the first differing column."""
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"column {i + 1}: '{g}' where the doc has '{w}'"
    if len(got) > len(want):
        return f"column {len(want) + 1}: '{got[len(want)]}' after the doc's last column"
    if len(got) < len(want):
        return f"column {len(got) + 1}: the doc's '{want[len(got)]}' is missing (the header ends)"
    return None


def check_header(schema, bench, path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return f"{path}: empty"
    diff = first_difference(rows[0], schema.columns(bench))
    if diff:
        return f"{path}: {bench}: {diff}"
    if len(rows) < 2:
        return f"{path}: no data row (the schema cell is unchecked)"
    for n, r in enumerate(rows[1:], 2):
        if r[0] != str(schema.number):
            return f"{path}:{n}: schema {r[0]}, the doc's is {schema.number}"
    return None


# ---- the source's arrays (the NVSHMEM benches, not built without NVSHMEM) ----

def c_strings(text):
    return re.findall(r'"((?:[^"\\]|\\.)*)"', text)


def c_array(src, name, macros=None):
    """The strings of `static const char *const NAME[...] = {...};`, with
    #define'd string-list macros expanded."""
    m = re.search(rf"\b{name}\s*\[[^\]]*\]\s*=\s*\{{(.*?)\}};", src, re.S)
    if not m:
        raise DocError(f"no array {name}")
    out = []
    for tok in re.findall(r'"(?:[^"\\]|\\.)*"|\b[A-Z_][A-Z0-9_]*\b', m.group(1)):
        if tok.startswith('"'):
            out.append(tok[1:-1])
        elif macros and tok in macros:
            out += macros[tok]
    return out


def c_macro(src, name):
    m = re.search(rf"#define {name}\b((?:.*\\\n)*.*)", src)
    if not m:
        raise DocError(f"no macro {name}")
    return c_strings(m.group(1))


def source_columns(root):
    """{bench: columns} from the source, for the common columns and the
    NVSHMEM benches, and the assumptions checked on the way."""
    rd = lambda p: open(os.path.join(root, p)).read()  # noqa: E731
    result = rd("bench/cli/result.c")
    rows = rd("bench/engine/rows.c")
    mr = rd("bench/ops/mr_reg.c")
    sreg = rd("bench/ops/shmem_reg.cc")
    sput = rd("bench/ops/shmem_put.cc")
    base = c_array(result, "base_cols")
    rma = c_macro(rows, "SHMEM_RMA_COLS")
    out = {"(common)": base}
    # efab_shmem_lat/bw (shmem_put.cc): the row's extra_cols and nothing else
    if "efab_evidence_columns" in sput or "efab_gda_columns" in sput or "tail_cols" in sput:
        raise DocError("bench/ops/shmem_put.cc adds columns beyond its row's extra_cols: "
                       "teach tests/csvdoc.py")
    for b in ("shmem_lat", "shmem_bw"):
        out[b] = base + c_array(rows, f"{b}_cols", {"SHMEM_RMA_COLS": rma})
    # efab_shmem_reg: efab_reg_columns (mr_reg.c's cols), then shmem_reg.cc's own
    if not re.search(r"efab_reg_columns\(&r->ri\);\s*for \(size_t i = 0; i < S_N; i\+\+\)\s*"
                     r"r->ri\.extra_cols\[r->ri\.n_extra\+\+\] = shmem_cols\[i\];", sreg):
        raise DocError("bench/ops/shmem_reg.cc no longer appends mr_reg's columns then "
                       "shmem_cols: teach tests/csvdoc.py")
    out["shmem_reg"] = base + c_array(mr, "cols") + c_array(sreg, "shmem_cols")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--doc", default=DOC)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("columns")
    p.add_argument("bench")
    sub.add_parser("benches")
    p = sub.add_parser("header")
    p.add_argument("bench")
    p.add_argument("csv")
    p = sub.add_parser("source")
    p.add_argument("--root", default=ROOT)
    a = ap.parse_args()
    try:
        s = Schema(a.doc)
        if a.cmd == "benches":
            print(" ".join(s.benches))
        elif a.cmd == "columns":
            if a.bench not in s.benches:
                print(f"csvdoc: {a.bench}: not documented under '## Columns per benchmark'",
                      file=sys.stderr)
                return 1
            print(",".join(s.columns(a.bench)))
        elif a.cmd == "header":
            if a.bench not in s.benches:
                print(f"csvdoc: {a.bench}: not documented under '## Columns per benchmark'",
                      file=sys.stderr)
                return 1
            err = check_header(s, a.bench, a.csv)
            if err:
                print(f"csvdoc: {err}", file=sys.stderr)
                return 1
            print(f"csvdoc: {a.csv}: {a.bench}'s {len(s.columns(a.bench))} columns as "
                  f"documented, schema {s.number}")
        else:
            for b, cols in source_columns(a.root).items():
                want = s.common_columns() if b == "(common)" else s.columns(b)
                diff = first_difference(cols, want)
                if diff:
                    print(f"csvdoc: {b}: the source's {diff}", file=sys.stderr)
                    return 1
                print(f"csvdoc: {b}: {len(cols)} columns in the source as documented")
    except DocError as e:
        print(f"csvdoc: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

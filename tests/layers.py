#!/usr/bin/env python3
"""The layer checker: which file of efabench calls which, read from the
objects (nm: the symbols each object defines and the ones it needs), not
from the source text.

Every C file of bench/ (and lib/, as one node) is given a rung in a ladder
declared in tests/layers.conf, lowest first. It fails (exit 1) on
  - a circle: files that reach each other through their calls;
  - an upward call: a file that needs a symbol defined in a higher rung;
  - an upward include: a file that includes a header of a higher rung
    (the headers carry the types and inline helpers, which nm cannot see);
  - a file of bench/ or lib/ that the ladder does not name.
Calls inside one rung are allowed (listed with the graph) as long as they
make no circle. Calls through function pointers (a pattern calling an
operation's callbacks, the harness's family table) are not edges: that is
how a lower rung drives a higher one's code without depending on it.

  tests/layers.py [--build DIR] [--root DIR] [--layers FILE] [--no-make]
                  [--graph] [--all]
--graph prints the file graph (every edge with the symbols it carries);
--all ignores the ladder and checks only for circles (the graph of a tree
that predates it). Objects are made with the Makefile's own rules first
(make BUILD=DIR <objects>), unless --no-make.
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

SOURCE_GLOBS = ["lib/*.c", "bench/*.c", "bench/*/*.c", "bench/*/*.cc"]
HEADER_GLOBS = ["lib/*.h", "bench/*/*.h"]


def read_layers(path):
    """[(rung, [globs])] lowest first, and the globs to ignore."""
    rungs, ignore = [], []
    for raw in open(path):
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        if line[0] == "ignore":
            ignore += line[1:]
        else:
            rungs.append((line[0].rstrip(":"), line[1:]))
    return rungs, ignore


def glob_files(root, globs):
    out = []
    for g in globs:
        d, pat = os.path.split(g)
        if "*" in d:  # bench/*/x: one level of folders
            base, _ = os.path.split(d)
            dirs = [os.path.join(base, x) for x in sorted(os.listdir(os.path.join(root, base)))
                    if os.path.isdir(os.path.join(root, base, x))] if os.path.isdir(os.path.join(root, base)) else []
        else:
            dirs = [d]
        for dd in dirs:
            full = os.path.join(root, dd)
            if not os.path.isdir(full):
                continue
            for f in sorted(os.listdir(full)):
                if fnmatch.fnmatch(f, pat):
                    out.append(os.path.join(dd, f))
    return sorted(set(out))


def rung_of(path, rungs, ignore):
    if any(fnmatch.fnmatch(path, g) for g in ignore):
        return None, None
    for i, (name, globs) in enumerate(rungs):
        if any(fnmatch.fnmatch(path, g) for g in globs):
            return i, name
    return -1, None


def node_of(path):
    """lib/ is one node (libefab): the bench side's view of it."""
    return "lib" if path.startswith("lib/") else path


def nm_symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind in ("U", "w", "v"):
            needed.add(name)
        elif kind.isupper() and kind not in ("N",):
            defined.add(name)
    return defined, needed


def sccs(nodes, edges):
    """Tarjan: the strongly connected components with more than one node
    (or a node calling itself)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def includes(root, path):
    try:
        text = open(os.path.join(root, path), errors="replace").read()
    except OSError:
        return []
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    ap.add_argument("--layers", default=os.path.join(here, "layers.conf"))
    ap.add_argument("--no-make", action="store_true")
    ap.add_argument("--graph", action="store_true")
    ap.add_argument("--all", action="store_true", help="circles only, no ladder")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    build = a.build if os.path.isabs(a.build) else os.path.join(root, a.build)
    rungs, ignore = read_layers(a.layers)
    problems = []

    sources = glob_files(root, SOURCE_GLOBS)
    rung = {}
    for s in sources:
        i, _ = rung_of(s, rungs, ignore)
        if i is None:
            continue
        if i < 0 and not a.all:
            problems.append(f"{s}: not on the ladder (declare its rung in {os.path.relpath(a.layers, root)})")
        rung[s] = i
    objs = {s: os.path.join(build, os.path.splitext(s)[0] + ".o") for s in rung}
    if not a.no_make:
        want = [os.path.relpath(objs[s], root) if not os.path.isabs(a.build) else objs[s]
                for s in rung if s.endswith(".c")]
        r = subprocess.run(["make", "-s", "--no-print-directory", f"BUILD={a.build}"] + want,
                           cwd=root, capture_output=True, text=True)
        if r.returncode:
            print(r.stdout + r.stderr, end="")
            print("layers: building the objects failed")
            return 1
    defined_by, needs = {}, {}
    skipped = []
    for s in sorted(rung):
        if not os.path.exists(objs[s]):
            if s.endswith(".cc"):  # NVSHMEM's, built only where NVSHMEM is
                skipped.append(s)
                continue
            problems.append(f"{s}: no object {objs[s]}")
            continue
        d, u = nm_symbols(objs[s])
        n = node_of(s)
        for sym in d:
            defined_by.setdefault(sym, set()).add(n)
        needs.setdefault(n, set()).update(u)
    # the graph: node -> node -> symbols
    edges, nodes = {}, set(needs)
    for n, syms in needs.items():
        for sym in syms:
            for m in defined_by.get(sym, ()):
                if m != n:
                    edges.setdefault(n, {}).setdefault(m, set()).add(sym)
    node_rung = {}
    for s, i in rung.items():
        n = node_of(s)
        node_rung[n] = i if n != "lib" else rung_of("lib/x.c", rungs, ignore)[0]

    def rname(i):
        return rungs[i][0] if i is not None and 0 <= i < len(rungs) else "?"

    if a.graph:
        print("# file -> file it calls: symbols (rung in brackets)")
        for n in sorted(edges):
            for m in sorted(edges[n]):
                syms = sorted(edges[n][m])
                more = f" (+{len(syms) - 6})" if len(syms) > 6 else ""
                print(f"{n} [{rname(node_rung.get(n))}] -> {m} [{rname(node_rung.get(m))}]: "
                      f"{', '.join(syms[:6])}{more}")
    for comp in sccs(nodes, edges):
        inner = [f"{n} -> {m} ({', '.join(sorted(edges[n][m])[:4])})"
                 for n in comp for m in sorted(edges.get(n, {})) if m in comp]
        problems.append("circle: " + " <-> ".join(comp) + "; its calls: " + "; ".join(inner))
    if not a.all:
        for n in sorted(edges):
            for m in sorted(edges[n]):
                if node_rung.get(m, -1) > node_rung.get(n, -1):
                    problems.append(f"upward call: {n} [{rname(node_rung.get(n))}] calls {m} "
                                    f"[{rname(node_rung.get(m))}]: {', '.join(sorted(edges[n][m]))}")
        # headers: a file includes no header of a higher rung
        headers = {os.path.basename(h): h for h in glob_files(root, HEADER_GLOBS)}
        for s in sorted(set(rung) | set(headers.values())):
            i, _ = rung_of(s, rungs, ignore)
            if i is None or i < 0:
                if s.endswith(".h") and i is not None and i < 0:
                    problems.append(f"{s}: not on the ladder (declare its rung)")
                continue
            for inc in includes(root, s):
                h = headers.get(inc)
                if not h:
                    continue
                j, _ = rung_of(h, rungs, ignore)
                if j is not None and j > i:
                    problems.append(f"upward include: {s} [{rname(i)}] includes {h} [{rname(j)}]")
    for s in skipped:
        print(f"layers: {s} not built here (no NVSHMEM): its calls are not checked")
    nedges = sum(len(v) for v in edges.values())
    for p in problems:
        print("layers: " + p)
    if problems:
        print(f"layers: FAILED, {len(problems)} problem(s) in {len(nodes)} files, {nedges} edges")
        return 1
    print(f"layers: ok: {len(nodes)} files ({'no ladder' if a.all else f'{len(rungs)} rungs'}), "
          f"{nedges} edges, no circle{'' if a.all else ', no upward call or include'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

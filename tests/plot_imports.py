#!/usr/bin/env python3
"""Checks the shape of a Python package (plot/efabplot, efab_plot's code):
no import cycle among its modules, no module over MAX lines, no import of a
package module that the importing code never uses, and, with --tests DIR,
a test file DIR/test_<name>.py for every module (sections/x.py:
test_section_x.py; package __init__ files need none). Reads the source
only (ast), imports nothing.

    plot_imports.py [--max-lines N] [--tests DIR] [--graph] PACKAGE_DIR

An import of a package module is an edge: `from . import a`, `from .. import
a`, `from .sub import a`, `from .a import f`, `import pkg.a`, also inside
functions. `from . import NAME` where NAME is no module of the package is an
edge to the package's __init__. Exit 0 when the package passes (one summary
line), 1 with a line per problem, 2 on bad usage. --graph prints every
module with the package modules it imports, lowest first."""
import ast
import os
import sys

MAX_LINES = 500


def modules(pkg_dir):
    """{dotted name: path} of every .py file under pkg_dir, named from the
    package's own name (efabplot, efabplot.sections.nic, ...)."""
    root = os.path.basename(os.path.normpath(pkg_dir))
    out = {}
    for d, dirs, files in os.walk(pkg_dir):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        rel = os.path.relpath(d, pkg_dir)
        parts = [root] + ([] if rel == "." else rel.split(os.sep))
        for f in sorted(files):
            if f.endswith(".py"):
                name = parts if f == "__init__.py" else parts + [f[:-3]]
                out[".".join(name)] = os.path.join(d, f)
    return out


def package_of(name, path):
    """The package a module's relative imports start from."""
    return name if os.path.basename(path) == "__init__.py" else name.rsplit(".", 1)[0]


def imports(name, path, mods):
    """[(imported module, [names it binds in this module], line)] of every
    import of a module of the package."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    root = name.split(".")[0]
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name == root or a.name.startswith(root + "."):
                    out.append((a.name, [a.asname or a.name.split(".")[0]], n.lineno))
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = package_of(name, path).split(".")
                base = base[:len(base) - (n.level - 1)]
                target = ".".join(base + ([n.module] if n.module else []))
            else:
                target = n.module or ""
            if target != root and not target.startswith(root + "."):
                continue
            for a in n.names:
                sub = f"{target}.{a.name}"
                if sub in mods:
                    out.append((sub, [a.asname or a.name], n.lineno))
                else:  # a name defined in module (or package __init__) target
                    out.append((target, [a.asname or a.name], n.lineno))
    return out, tree


def find_cycle(graph):
    """One import cycle as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                return stack[stack.index(t):] + [t]
            if t not in state:
                c = visit(t)
                if c:
                    return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None


def order(graph):
    """The modules lowest first (each after every module it imports)."""
    done, out = set(), []

    def visit(m):
        if m in done:
            return
        done.add(m)
        for t in sorted(graph.get(m, ())):
            visit(t)
        out.append(m)

    for m in sorted(graph):
        visit(m)
    return out


def check(pkg_dir, max_lines=MAX_LINES, tests=None):
    """(problems, graph, line counts)."""
    mods = modules(pkg_dir)
    graph, lines, problems = {}, {}, []
    for name, path in mods.items():
        with open(path, encoding="utf-8") as f:
            lines[name] = len(f.read().splitlines())
        if lines[name] > max_lines:
            problems.append(f"{path}: {lines[name]} lines, more than {max_lines}")
        try:
            imps, tree = imports(name, path, mods)
        except SyntaxError as e:
            problems.append(f"{path}:{e.lineno}: {e.msg}")
            continue
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        graph[name] = set()
        for target, binds, line in imps:
            if target not in mods:
                problems.append(f"{path}:{line}: imports {target}, no module of the package")
                continue
            if target != name:
                graph[name].add(target)
            for b in binds:
                if target.endswith("." + b) and b not in used:
                    problems.append(f"{path}:{line}: imports {target} and never uses it")
    cycle = find_cycle(graph)
    if cycle:
        problems.append("import cycle: " + " -> ".join(cycle))
    if tests is not None:
        for name, path in sorted(mods.items()):
            if os.path.basename(path) == "__init__.py":
                continue
            parts = name.split(".")[1:]
            want = os.path.join(tests, "test_" + "_".join(
                ["section" if p == "sections" else p for p in parts]) + ".py")
            if not os.path.isfile(want):
                problems.append(f"{path}: no tests ({want} missing)")
    return problems, graph, lines


def main(argv):
    max_lines, tests, graph_out, args = MAX_LINES, None, False, list(argv)
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--max-lines" and args:
            max_lines = int(args.pop(0))
        elif opt == "--tests" and args:
            tests = args.pop(0)
        elif opt == "--graph":
            graph_out = True
        else:
            print(f"plot_imports: unknown option {opt}", file=sys.stderr)
            return 2
    if len(args) != 1 or not os.path.isdir(args[0]):
        print("usage: plot_imports.py [--max-lines N] [--tests DIR] [--graph] PACKAGE_DIR",
              file=sys.stderr)
        return 2
    problems, graph, lines = check(args[0], max_lines, tests)
    if graph_out:
        for m in order(graph):
            print(f"{m} ({lines[m]} lines): {', '.join(sorted(graph[m])) or '-'}")
    for p in problems:
        print(f"plot_imports: {p}")
    if problems:
        return 1
    big = max(lines, key=lambda m: lines[m])
    print(f"plot_imports: {len(graph)} modules, {sum(len(v) for v in graph.values())} imports "
          f"among them, no cycle; the longest is {big} ({lines[big]} lines, at most {max_lines})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

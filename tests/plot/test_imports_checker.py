#!/usr/bin/env python3
"""tests/plot_imports.py, the package checker: it fails on an import cycle,
a module over the line limit, an unused or unknown package import, a module
without tests; it passes plot/efabplot."""
import contextlib
import importlib.util
import io
import os
import unittest

import plotdata

spec = importlib.util.spec_from_file_location(
    "plot_imports", os.path.join(plotdata.ROOT, "tests", "plot_imports.py"))
checker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(checker)


class Checker(plotdata.TempDir, unittest.TestCase):
    def package(self, files):
        root = os.path.join(self.tmp, "pkg")
        for name, text in dict({"__init__.py": "", "sub/__init__.py": ""}, **files).items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        return root

    def test_a_ladder_passes(self):
        root = self.package({"a.py": "X = 1\n",
                             "b.py": "from . import a\nY = a.X\n",
                             "sub/c.py": "from .. import a, b\n\n\ndef f():\n    return a.X + b.Y\n",
                             "d.py": "from .sub import c\nimport pkg.a\nZ = c.f() + pkg.a.X\n"})
        problems, graph, lines = checker.check(root)
        self.assertEqual(problems, [])
        self.assertEqual(graph["pkg.sub.c"], {"pkg.a", "pkg.b"})
        self.assertEqual(graph["pkg.d"], {"pkg.sub.c", "pkg.a"})
        self.assertEqual(lines["pkg.sub.c"], 5)
        self.assertEqual(checker.order(graph).index("pkg.a") < checker.order(graph).index("pkg.d"),
                         True)

    def test_a_cycle_fails(self):
        root = self.package({"a.py": "from . import c\nX = c\n",
                             "b.py": "from . import a\nY = a\n",
                             "c.py": "def f():\n    from .b import Y\n    return Y\n"})
        problems, _, _ = checker.check(root)
        self.assertEqual(problems, ["import cycle: pkg.a -> pkg.c -> pkg.b -> pkg.a"])

    def test_long_unused_and_unknown_fail(self):
        root = self.package({"a.py": "x = 1\n" * 501, "b.py": "from . import a\n",
                             "c.py": "from .nothere import y\nprint(y)\n"})
        problems, _, _ = checker.check(root)
        self.assertEqual(sorted(p.split("/pkg/", 1)[1] for p in problems), [
            "a.py: 501 lines, more than 500",
            "b.py:1: imports pkg.a and never uses it",
            "c.py:1: imports pkg.nothere, no module of the package"])
        self.assertEqual(checker.check(root, max_lines=501)[0][0].split("/pkg/")[1],
                         "b.py:1: imports pkg.a and never uses it")

    def test_every_module_needs_tests(self):
        root = self.package({"a.py": "", "sections/__init__.py": "", "sections/x.py": ""})
        tests = os.path.join(self.tmp, "tests")
        os.makedirs(tests)
        open(os.path.join(tests, "test_a.py"), "w").close()
        problems, _, _ = checker.check(root, tests=tests)
        self.assertEqual([p.split(" (")[1] for p in problems],
                         [f"{tests}/test_section_x.py missing)"])

    def test_main(self):
        root = self.package({"a.py": "X = 1\n"})
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            self.assertEqual(checker.main([root]), 0)
            self.assertEqual(checker.main(["--max-lines", "0", root]), 1)
            self.assertEqual(checker.main(["--bogus", root]), 2)
            self.assertEqual(checker.main([]), 2)
        self.assertEqual(out.getvalue().splitlines()[0],
                         "plot_imports: 3 modules, 0 imports among them, no cycle; the longest "
                         "is pkg.a (1 lines, at most 500)")
        self.assertIn("plot_imports: " + root + "/a.py: 1 lines, more than 0", out.getvalue())

    def test_efabplot_passes(self):
        problems, graph, lines = checker.check(os.path.join(plotdata.ROOT, "plot", "efabplot"),
                                               tests=plotdata.HERE)
        self.assertEqual(problems, [])
        self.assertGreaterEqual(len(graph), 25)
        self.assertLessEqual(max(lines.values()), 500)


if __name__ == "__main__":
    unittest.main()

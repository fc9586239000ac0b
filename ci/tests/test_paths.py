"""The repository root is computed once, in common/paths.py: every other
module imports ROOT from there (a module's own directory, e.g. a file
beside it, is not the root). common/ imports nothing of ci/ or tools/,
tools/ (its tests aside) nothing of ci/, and no module of ci/ imports one
that imports it back, however indirectly."""

import ast
import subprocess
import unittest

from common import paths
from common.paths import ROOT


def python_files():
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.py"], cwd=ROOT,
                         text=True, capture_output=True, check=True).stdout
    return [f for f in out.split() if not f.startswith(("patches/", "ci/tests/data/"))
            and (ROOT / f).is_file()]


def climbs_from_file(node):
    """Whether node is <...__file__...>.parents[...] or .parent.parent: a
    directory above the module's own."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "parents":
        inner = node.value.value
    elif isinstance(node, ast.Attribute) and node.attr == "parent" \
            and isinstance(node.value, ast.Attribute) and node.value.attr == "parent":
        inner = node.value.value
    else:
        return False
    return any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(inner))


class RootTest(unittest.TestCase):
    def test_root_is_the_checkout(self):
        self.assertTrue((ROOT / "ci/pipeline.py").is_file())
        self.assertTrue((ROOT / "common/paths.py").samefile(paths.__file__))

    def test_no_other_module_computes_the_root(self):
        found = []
        for f in python_files():
            if f == "common/paths.py":
                continue
            tree = ast.parse((ROOT / f).read_text(), f)
            found += [f"{f}:{n.lineno}: a directory above __file__" for n in ast.walk(tree)
                      if climbs_from_file(n)]
            found += [f"{f}:{n.lineno}: ROOT assigned" for n in tree.body
                      if isinstance(n, ast.Assign)
                      and any(isinstance(t, ast.Name) and t.id == "ROOT" for t in n.targets)]
        self.assertEqual(found, [], "import ROOT from common.paths instead")

    def test_the_check_sees_a_root_computation(self):
        for text in ("ROOT = Path(__file__).resolve().parents[2]\n",
                     "X = Path(__file__).parent.parent / 'a'\n"):
            tree = ast.parse(text)
            self.assertTrue(any(climbs_from_file(n) for n in ast.walk(tree)), text)
        tree = ast.parse("HERE = Path(__file__).resolve().parent\n")
        self.assertFalse(any(climbs_from_file(n) for n in ast.walk(tree)))

    def test_common_imports_nothing_above_it(self):
        bad = [f"{f}:{line}: {m}" for f in python_files() if f.startswith("common/")
               for line, m in imports(f) if m.split(".")[0] in ("ci", "tools", "kunit")]
        self.assertEqual(bad, [])

    def test_tools_import_nothing_of_ci(self):
        bad = [f"{f}:{line}: {m}" for f in python_files()
               if f.startswith("tools/") and "/tests/" not in f
               for line, m in imports(f) if m.split(".")[0] == "ci"]
        self.assertEqual(bad, [])

    def test_no_import_circle_in_ci(self):
        graph = {}
        for f in python_files():
            if f.startswith("ci/") and not f.startswith("ci/tests/"):
                graph[module_of(f)] = {m for _, m in imports(f)}
        self.assertEqual(circles(graph), [])

    def test_a_circle_is_found(self):
        graph = {"ci.a": {"ci.b", "os"}, "ci.b": {"ci.c"}, "ci.c": {"ci.a.x", "ci.a"},
                 "ci.d": {"ci.a"}}
        self.assertEqual(circles(graph), [["ci.a", "ci.b", "ci.c", "ci.a"]])
        # The circle pipeline_common and pipeline_state made, through a
        # TYPE_CHECKING import.
        text = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from ci.pipeline_state import RunState\n")
        self.assertEqual([m for _, m in imports_of(text)][2:],
                         ["ci.pipeline_state.RunState", "ci.pipeline_state"])


def imports_of(text, name="<text>"):
    """(line, module) of every import in text, however nested (a
    TYPE_CHECKING one, one inside a function); "from a import b" gives
    both a.b and a."""
    out = []
    for n in ast.walk(ast.parse(text, name)):
        if isinstance(n, ast.Import):
            out += [(n.lineno, a.name) for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.module:
            out += [(n.lineno, f"{n.module}.{a.name}") for a in n.names] + [(n.lineno, n.module)]
    return out


def imports(f):
    return imports_of((ROOT / f).read_text(), f)


def module_of(f):
    return f.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def circles(graph):
    """The import circles of graph ({module: names it imports}), each once,
    as the list of modules from its smallest round to it again."""
    edges = {m: sorted(n for n in names if n in graph and n != m) for m, names in graph.items()}
    found = set()

    def walk(path):
        for nxt in edges[path[-1]]:
            if nxt == path[0]:
                found.add(tuple(path + [nxt]))
            elif nxt not in path and nxt > path[0]:
                walk(path + [nxt])
    for m in sorted(graph):
        walk([m])
    return [list(c) for c in sorted(found)]


if __name__ == "__main__":
    unittest.main()

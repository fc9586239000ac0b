"""The repository root is computed once, in common/paths.py: every other
module imports ROOT from there (a module's own directory, e.g. a file
beside it, is not the root). common/ imports nothing of ci/ or tools/."""

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
        bad = []
        for f in python_files():
            if not f.startswith("common/"):
                continue
            for n in ast.walk(ast.parse((ROOT / f).read_text(), f)):
                names = ([a.name for a in n.names] if isinstance(n, ast.Import)
                         else [n.module or ""] if isinstance(n, ast.ImportFrom) else [])
                bad += [f"{f}:{n.lineno}: {m}" for m in names
                        if m.split(".")[0] in ("ci", "tools", "kunit")]
        self.assertEqual(bad, [])


if __name__ == "__main__":
    unittest.main()

"""The source stamp of a kernel build directory: the tree commit built."""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from common.paths import ROOT
from common.stamp import BUILD_SOURCE, build_source, tree_source, write_build_source


def tree(root: Path) -> str:
    """A git tree with one commit at root; its commit."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    root.mkdir(parents=True)
    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (root / "dummy.c").write_text("int x;\n")
    git("add", "-A")
    git("commit", "-q", "-m", "one")
    return git("rev-parse", "HEAD")


class BuildSourceTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)
        self.src, self.out = self.tmp / "src", self.tmp / "build"
        self.commit = tree(self.src)
        self.out.mkdir()

    def test_a_build_is_named_by_the_commit_built(self):
        write_build_source(self.src, self.out)
        self.assertEqual(build_source(self.out), {"dir": str(self.out), "tree": str(self.src),
                                                  "commit": self.commit, "dirty": False})

    def test_local_changes_built_are_named_by_their_digest(self):
        # A negative control's kernel: a patch applied, not committed.
        (self.src / "dummy.c").write_text("int y;\n")
        changed = tree_source(self.src)
        self.assertTrue(changed["dirty"])
        (self.src / "new.c").write_text("int z;\n")
        more = tree_source(self.src)
        self.assertRegex(more["changes_sha256"], "^[0-9a-f]{64}$")
        self.assertNotEqual(more["changes_sha256"], changed["changes_sha256"])

    def test_an_unstamped_build_names_no_commit(self):
        # Built before kernel/build.sh stamped its builds: the path alone.
        self.assertEqual(build_source(self.out), {"dir": str(self.out), "commit": None})
        self.assertEqual(tree_source(self.tmp / "none")["commit"], None)

    def test_command_line(self):
        res = subprocess.run([sys.executable, "-m", "common.stamp", "build-source",
                              str(self.src), str(self.out)], cwd=ROOT, capture_output=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(json.loads((self.out / BUILD_SOURCE).read_text())["commit"],
                         self.commit)

    def test_build_sh_stamps_only_a_finished_build(self):
        # Removed before make, written after it: a failed build (set -e) leaves none.
        text = (ROOT / "kernel/build.sh").read_text()
        removed = text.index(f'rm -f "$out/{BUILD_SOURCE}"')
        made = text.index('"${mk[@]}" "$@"', removed)
        self.assertGreater(text.index("-m common.stamp build-source", made), made)


if __name__ == "__main__":
    unittest.main()

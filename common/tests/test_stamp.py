"""The source stamp of a kernel build directory: the tree commit built."""

import json
import os
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

    def test_build_sh_stamps_a_kernel_it_built(self):
        """kernel/build.sh on a stand-in tree (a Makefile that links a
        "vmlinux" unless FAIL is set, and compiles an object alone)."""
        (self.src / "Makefile").write_text(
            "all:\n\t@test -z \"$(FAIL)\" && echo linked > $(O)/vmlinux\n"
            "tinyconfig olddefconfig:\n\t@touch $(O)/.config\n"
            "%.o:\n\t@echo compiled > $(O)/$@\n")
        merge = self.src / "scripts/kconfig/merge_config.sh"
        merge.parent.mkdir(parents=True)
        merge.write_text("#!/bin/sh\n")
        merge.chmod(0o755)
        frag = self.tmp / "frag.config"
        frag.write_text("")
        env = {**os.environ, "PROJECT_CACHE": str(self.tmp / "cache"), "JOBS": "1"}

        def commit(msg):
            for args in (["add", "-A"], ["commit", "-q", "-m", msg], ["rev-parse", "HEAD"]):
                out = subprocess.run(["git", "-C", str(self.src), *args], capture_output=True,
                                     text=True, check=True).stdout.strip()
            return out

        def build(*args):
            return subprocess.run(["bash", str(ROOT / "kernel/build.sh"), str(self.src),
                                   str(self.out), "x86_64", str(frag), "--", *args], env=env,
                                  capture_output=True, text=True).returncode

        first = commit("a tree that builds")
        self.assertEqual(build("W=1"), 0)
        self.assertEqual(build_source(self.out)["commit"], first)
        (self.src / "dummy.c").write_text("int y;\n")
        second = commit("a change")
        # An object alone: the kernel is still the first commit's.
        self.assertEqual(build("W=1", "dummy.o"), 0)
        self.assertEqual(build_source(self.out)["commit"], first)
        # A failed build of the kernel leaves no stamp.
        self.assertNotEqual(build("FAIL=1"), 0)
        self.assertIsNone(build_source(self.out)["commit"])
        self.assertEqual(build(), 0)
        self.assertEqual(build_source(self.out)["commit"], second)


if __name__ == "__main__":
    unittest.main()

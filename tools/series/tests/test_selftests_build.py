"""build_tools (kbuild.SelftestsBuild) with a fake make in a scratch tree:
a build that fails at the patch fails, whether or not the parent built."""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from tools.series.checks import kbuild

ENV = {"GIT_AUTHOR_NAME": "A U", "GIT_AUTHOR_EMAIL": "a@example.invalid",
       "GIT_COMMITTER_NAME": "A U", "GIT_COMMITTER_EMAIL": "a@example.invalid"}
FATAL = "gcc: fatal error: cannot execute 'cc1': execvp: No such file or directory\n"


class SelftestsBuildTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = Path(self.tmp.name)
        self.git("init", "-q")
        self.write("tools/testing/selftests/Makefile", "TARGETS += net\n")
        self.write("tools/testing/selftests/net/t.c", "int t;\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "base")
        self.write("tools/testing/selftests/net/t.c", "int t, u;\n")
        self.git("commit", "-q", "-a", "-m", "selftest change")
        self.sha = self.git("rev-parse", "HEAD").strip()
        self.parent = self.git("rev-parse", "HEAD^").strip()

    def tearDown(self):
        self.tmp.cleanup()

    def git(self, *args):
        return subprocess.run(["git", "-C", str(self.repo), *args], check=True, text=True,
                              capture_output=True, env={**os.environ, **ENV}).stdout

    def write(self, rel, text):
        f = self.repo / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)

    def check(self, fails_at):
        """The check's result with a make that fails (gcc: fatal error) at
        the commits in fails_at."""
        def make(args):
            head = self.git("rev-parse", "HEAD").strip()
            return (1, FATAL) if head in fails_at and args != ["headers"] else (0, "")
        return kbuild.SelftestsBuild(self.repo, make)(self.sha)

    def test_both_sides_failing_fails(self):
        res = self.check({self.parent, self.sha})
        self.assertEqual(res.status, "fail")
        self.assertIn("build broken: gcc: fatal error", res.message)
        self.assertIn("the parent does not build either", res.message)

    def test_broken_by_the_patch_fails(self):
        res = self.check({self.sha})
        self.assertEqual(res.status, "fail")
        self.assertNotIn("either", res.message)

    def test_building_on_both_sides_passes(self):
        self.assertEqual(self.check(set()).status, "pass")

    def test_fixed_by_the_patch_passes(self):
        # A target the parent could not build (say it lacked its files).
        self.assertEqual(self.check({self.parent}).status, "pass")


if __name__ == "__main__":
    unittest.main()

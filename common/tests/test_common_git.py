"""common/git.py: the one way the project runs git."""

import subprocess
import tempfile
import unittest
from pathlib import Path

from common.git import GitError, git, git_bytes, git_ok, git_run


class GitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.repo = Path(self.tmp.name)
        git(self.repo, "init", "-q")

    def test_failure_raises_naming_the_command_and_tree(self):
        with self.assertRaises(GitError) as err:
            git(self.repo, "rev-parse", "--verify", "no-such-branch")
        self.assertIn("git rev-parse --verify no-such-branch failed in", str(err.exception))
        self.assertEqual(git(self.repo, "rev-parse", "--verify", "nope", check=False)[:5], "fatal")

    def test_run_returns_the_exit_code_and_keeps_the_output_as_printed(self):
        res = git_run(self.repo, "hash-object", "--stdin", input="a\n\n")
        self.assertEqual(res.returncode, 0)
        self.assertRegex(res.stdout, r"^[0-9a-f]{40}\n$")  # unstripped
        bad = git_run(self.repo, "cat-file", "-p", "0" * 40, capture="apart")
        self.assertNotEqual(bad.returncode, 0)
        self.assertEqual(bad.stdout, "")
        self.assertIn("0" * 40, bad.stderr)

    def test_merged_output_holds_stderr(self):
        res = git_run(self.repo, "cat-file", "-p", "f" * 40)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("f" * 40, res.stdout)
        self.assertIsNone(res.stderr)

    def test_without_a_tree_git_runs_with_the_arguments_only(self):
        cfg = self.repo / "cfg"
        git_run(None, "config", "-f", str(cfg), "a.b", "c", capture="none").check_returncode()
        self.assertEqual(git_run(None, "config", "-f", str(cfg), "--list").stdout, "a.b=c\n")

    def test_bytes_go_in_and_come_out_unchanged(self):
        blob = b"\xff\xfe not utf-8\r\n"
        sha = git_bytes(self.repo, "hash-object", "-w", "--stdin", input=blob).stdout.strip()
        self.assertEqual(git_bytes(self.repo, "cat-file", "blob", sha.decode()).stdout, blob)
        self.assertTrue(git_ok(self.repo, "cat-file", "-e", sha.decode()))
        self.assertFalse(git_ok(self.repo, "cat-file", "-e", "0" * 40))

    def test_check_returncode_raises_for_a_failure(self):
        with self.assertRaises(subprocess.CalledProcessError):
            git_run(self.repo, "no-such-command", capture="apart").check_returncode()


if __name__ == "__main__":
    unittest.main()

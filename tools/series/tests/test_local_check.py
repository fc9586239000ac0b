"""python3 -m tools.series.check on a scratch repository: a branch range,
an mbox and a directory of patch files, exit status by the worst result,
the user's tree left alone, no build unless asked; --build's checks (the
build mocked) in the worktree kept in the cache."""

import contextlib
import hashlib
import io
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.series import check
from tools.series.checks import patchwork, runner

ME = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@x.invalid",
      "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@x.invalid"}
CHEAP = "header_inline,verify_signedoff,verify_fixes,module_param"


def git(repo, *args, input=None):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True, input=input,
                          capture_output=True, env={**os.environ, **ME}).stdout.strip()


class LocalCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = Path(self.tmp.name) / "linux"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        (self.repo / "scripts").mkdir()
        (self.repo / "drivers/net").mkdir(parents=True)
        (self.repo / "drivers/net/a.c").write_text("int a;\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "base")
        git(self.repo, "tag", "base")
        git(self.repo, "checkout", "-q", "-b", "series/net-next/x")

    def tearDown(self):
        self.tmp.cleanup()

    def commit(self, text, signed=True):
        (self.repo / "drivers/net/a.c").write_text(text)
        msg = "net: a: change\n\nWhy.\n" + ("\nSigned-off-by: Dev <dev@x.invalid>\n"
                                            if signed else "")
        git(self.repo, "commit", "-q", "-am", msg)

    def run_check(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = check.main([str(self.repo / "drivers"), *args, "--checks", CHEAP])
        return code, out.getvalue()

    def test_clean_branch_passes_and_the_tree_is_left_alone(self):
        self.commit("int a;\nint b;\n")
        head, status = git(self.repo, "rev-parse", "HEAD"), git(self.repo, "status", "-s")
        code, out = self.run_check("base..series/net-next/x")
        self.assertEqual(code, 0, out)
        self.assertIn("verify_signedoff", out.splitlines()[0])
        self.assertIn("Clearly marked for net-next", out)
        self.assertEqual(git(self.repo, "rev-parse", "HEAD"), head)
        self.assertEqual(git(self.repo, "status", "-s"), status)
        self.assertEqual(len(git(self.repo, "worktree", "list").splitlines()), 1)

    def test_exit_status_is_the_worst_result(self):
        self.commit("int a;\nint b;\n", signed=False)
        code, out = self.run_check("base..HEAD")
        self.assertEqual(code, 2, out)
        self.assertIn("verify_signedoff: fail: author Signed-off-by missing", out)
        git(self.repo, "commit", "-q", "--amend", "-m", "net: a: change\n\n"
            "Signed-off-by: Dev <dev@x.invalid>\n")
        (self.repo / "drivers/net/b.c").write_text("x\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "net: b\n\nSigned-off-by: Dev <dev@x.invalid>\n")
        (self.repo / "drivers/net/c.c").write_text("x\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "net: c\n\nSigned-off-by: Dev <dev@x.invalid>\n")
        code, out = self.run_check("base..HEAD")  # three patches, no cover letter: a warning
        self.assertEqual(code, 1, out)
        self.assertIn("cover_letter: warn", out)
        # The branch's description is its cover letter, as series apply keeps it.
        git(self.repo, "config", "branch.series/net-next/x.description",
            "net: a, b and c\n\nWhy all three.\n")
        code, out = self.run_check("base..series/net-next/x")
        self.assertEqual(code, 0, out)
        self.assertIn("cover_letter: pass: Series has a cover letter", out)

    def test_an_mbox_is_applied_on_base_and_checked(self):
        self.commit("int a;\nint c;\n")
        mbox = Path(self.tmp.name) / "s.mbox"
        mbox.write_text(git(self.repo, "format-patch", "--stdout",
                            "--subject-prefix=PATCH net", "base..HEAD") + "\n")
        git(self.repo, "checkout", "-q", "main")
        code, out = self.run_check("--base", "base", str(mbox))
        # the subject names net: a net patch without a Fixes: tag fails
        self.assertEqual(code, 2, out)
        self.assertIn("  net  ", out.splitlines()[1])
        self.assertIn("verify_fixes: fail: Fixes tag missing", out)
        self.assertIn("verify_signedoff  verify_fixes", out)
        self.assertEqual(git(self.repo, "rev-parse", "HEAD"), git(self.repo, "rev-parse", "base"))

    def test_a_directory_of_patch_files_is_applied_on_base_and_checked(self):
        self.commit("int a;\nint c;\n")
        (self.repo / "drivers/net/b.c").write_text("int b;\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "net: b: add\n\nWhy.\n\n"
            "Signed-off-by: Dev <dev@x.invalid>\n")
        head = git(self.repo, "rev-parse", "HEAD")
        outgoing = Path(self.tmp.name) / "outgoing"
        git(self.repo, "format-patch", "-q", "-o", str(outgoing), "--subject-prefix=PATCH net-next",
            "base..HEAD")
        (outgoing / "notes.txt").write_text("not a patch\n")
        code, out = self.run_check("--base", "base", str(outgoing))
        self.assertEqual(code, 0, out)
        rows = out.splitlines()[1:3]
        self.assertRegex(rows[0], r"^1 +net-next +net: a: change ")
        self.assertRegex(rows[1], r"^2 +net-next +net: b: add ")
        self.assertIn("series patches:patch_count: pass: 2 patches", out)
        self.assertIn("series patches:subject_prefix: pass: Tree named in all 2 subjects", out)
        self.assertIn("2 patch(es) x 4 checks", out)
        self.assertEqual(git(self.repo, "rev-parse", "HEAD"), head)
        self.assertEqual(len(git(self.repo, "worktree", "list").splitlines()), 1)

    def test_build_checks_in_the_kept_worktree(self):
        """--build: the build checks (the build itself mocked) in a full
        worktree kept in the cache's ws-check/ for the next run."""
        self.commit("int a;\nint b;\n")
        cache, build = Path(self.tmp.name) / "cache", Path(self.tmp.name) / "build"
        seen = []

        def context(wt, out, base):
            seen.append((wt, out, base))
            return {"build": lambda c: (patchwork.Result("pass", "built"),
                                        patchwork.Result("pass", "no new warnings")),
                    "xmit_disasm": lambda c: patchwork.Result("warn", "4 more instructions")}

        top = Path(git(self.repo, "rev-parse", "--show-toplevel"))
        kept = cache / "ws-check" / hashlib.sha256(str(top).encode()).hexdigest()[:12] / "src"
        base = git(self.repo, "rev-parse", "base")
        for _ in range(2):  # the second run in the same worktree
            out = io.StringIO()
            with mock.patch.dict(os.environ, {"PROJECT_CACHE": str(cache)}), \
                    mock.patch.object(check, "build_context", side_effect=context), \
                    contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = check.main([str(self.repo), "base..HEAD", "--build", str(build),
                                   "--checks", f"{CHEAP},build,sparse,xmit_disasm"])
            self.assertEqual(code, 1, out.getvalue())  # xmit_disasm's warning
            self.assertEqual(seen[-1], (kept, build.resolve(), base))
            head, row = out.getvalue().splitlines()[:2]
            self.assertEqual(head.split()[-3:], ["build", "sparse", "xmit_disasm"])
            self.assertEqual(row.split()[-3:], ["pass", "pass", "warn"])
            self.assertIn("patch 1 xmit_disasm: warn: 4 more instructions", out.getvalue())
        # What --build adds to the checks run by default.
        self.assertLessEqual({"build", "sparse", "xmit_disasm"},
                             set(runner.names("local")) - set(runner.names("local", build=False)))
        self.assertEqual(len(seen), 2)
        worktrees = git(self.repo, "worktree", "list", "--porcelain")
        self.assertIn(f"worktree {kept}\n", worktrees)
        self.assertEqual(worktrees.count("worktree "), 2)

    def test_no_build_unless_asked(self):
        self.commit("int a;\nint b;\n")
        self.assertNotIn("build", runner.names("local", build=False))
        with mock.patch.object(check, "build_context", side_effect=AssertionError("built")):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = check.main([str(self.repo), "base..HEAD", "--checks",
                                   "verify_signedoff"])
        self.assertEqual(code, 0, out.getvalue())

    def test_usage_errors(self):
        for args in ([], ["base..HEAD", "--checks", "nonsense"]):
            with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
                check.main([str(self.repo), *args])
            self.assertEqual(e.exception.code, 3, args)
        code, out = self.run_check("HEAD..HEAD")
        self.assertEqual(code, 3, out)


class UserTreeTest(unittest.TestCase):
    def test_kernel_src_subdirectory_is_its_top_level(self):
        from ci import pipeline_tree
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "linux"
            (repo / "drivers/net").mkdir(parents=True)
            git(repo, "init", "-q")
            self.assertEqual(pipeline_tree.user_tree(repo / "drivers/net"), repo.resolve())
            self.assertEqual(pipeline_tree.user_tree(repo), repo.resolve())


class ApplySummaryTest(unittest.TestCase):
    def test_round_trip_named_only_when_it_ran(self):
        from ci import pipeline_tree
        ran = pipeline_tree.apply_summary(4, ["net/a"], True)
        skipped = pipeline_tree.apply_summary(4, ["net/a"], False)
        self.assertIn("export round trip exact", ran)
        self.assertNotIn("exact", skipped)
        self.assertIn("export round trip not run", skipped)


if __name__ == "__main__":
    unittest.main()

"""python3 -m tools.series.check as a user types it (README's lines, read
from README.md): the real scripts/checkpatch.pl on an mbox in a small tree
holding what checkpatch reads, copied from a kernel tree on this machine
(KERNEL_SRC, the pipeline's worktree, or base.git); the exit status rule;
what is refused with one line; a check that cannot run in full; --detail
and --json."""

import contextlib
import io
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from common.paths import ROOT
from tools.series import check
from tools.series.checks import linters, source

ME = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@x.invalid",
      "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@x.invalid"}
# What checkpatch.pl and spdxcheck.py read of a kernel tree.
CHECKPATCH_FILES = ("scripts/checkpatch.pl", "scripts/spelling.txt",
                    "scripts/const_structs.checkpatch", "scripts/spdxcheck.py",
                    "scripts/spdxexclude", "LICENSES")
# checkpatch.pl's top_of_kernel_tree(): files and directories it wants.
TOP_FILES = ("COPYING", "CREDITS", "Kbuild", "MAINTAINERS", "Makefile", "README")
TOP_DIRS = ("Documentation", "arch", "include", "fs", "init", "ipc", "kernel", "lib")
SOB = "\n\nSigned-off-by: Dev <dev@x.invalid>\n"


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True,
                          capture_output=True, env={**os.environ, **ME}).stdout.strip()


def copy_kernel_files(dst: Path) -> bool:
    """CHECKPATCH_FILES of a kernel tree on this machine into dst; False if none."""
    cache = Path(os.environ.get("PROJECT_CACHE", Path.home() / ".cache/mqbypass"))
    trees = [os.environ.get("KERNEL_SRC"), cache / "ws/series/src"]
    base = cache / "base.git"
    tags = subprocess.run(["git", f"--git-dir={base}", "for-each-ref", "--format=%(refname)",
                           "refs/tags/base/"], text=True, capture_output=True).stdout.split()
    archive = subprocess.run(["git", f"--git-dir={base}", "archive", tags[0],
                              *CHECKPATCH_FILES], capture_output=True) if tags else None
    if archive is not None and archive.returncode == 0:  # the pinned base, read only
        subprocess.run(["tar", "-x", "-C", str(dst)], input=archive.stdout, check=True)
        return True
    for tree in trees:
        if tree and all((Path(tree) / f).exists() for f in CHECKPATCH_FILES):
            for f in CHECKPATCH_FILES:
                (dst / f).parent.mkdir(parents=True, exist_ok=True)
                if (Path(tree) / f).is_dir():
                    shutil.copytree(Path(tree) / f, dst / f)
                else:
                    shutil.copy2(Path(tree) / f, dst / f)
            return True
    return False


KERNEL_FILES = Path(tempfile.mkdtemp(prefix="mqbypass-test-kernel-files-"))
HAVE_CHECKPATCH = copy_kernel_files(KERNEL_FILES) and shutil.which("perl") is not None


def tearDownModule():
    shutil.rmtree(KERNEL_FILES, ignore_errors=True)


def readme_line(start: str) -> str:
    """The command of README.md's line that starts with `start`, comment cut."""
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.strip().startswith(start):
            return line.strip().split("  #")[0].strip()
    raise AssertionError(f"README.md has no line starting {start!r}")


def ply_python() -> bool:
    return subprocess.run(["/usr/bin/python3", "-c", "import ply, git"],
                          capture_output=True).returncode == 0


class Tree(unittest.TestCase):
    """A scratch kernel-like tree (tag base) and the user's ~/work/linux and $base."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.repo = self.tmp / "linux"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        for f in TOP_FILES:
            (self.repo / f).write_text(f"{f}\n")
        for d in TOP_DIRS:
            (self.repo / d).mkdir()
            (self.repo / d / "placeholder").write_text("x\n")
        (self.repo / "drivers/net").mkdir(parents=True)
        (self.repo / "drivers/net/a.c").write_text("// SPDX-License-Identifier: GPL-2.0\n"
                                                   "int a;\n")
        (self.repo / "scripts").mkdir()
        if HAVE_CHECKPATCH:
            shutil.copytree(KERNEL_FILES, self.repo, dirs_exist_ok=True)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "base")
        git(self.repo, "tag", "base")

    def mbox(self, files: dict[str, str], subject: str = "net: a: change") -> Path:
        """One patch changing `files`, as an mbox; the tree back on main."""
        git(self.repo, "checkout", "-q", "-b", "work")
        for path, text in files.items():
            (self.repo / path).write_text(text)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", f"{subject}\n\nWhy.{SOB}")
        out = self.tmp / "outgoing/net-next/x/v1.mbox"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(git(self.repo, "format-patch", "--stdout",
                           "--subject-prefix=PATCH net-next", "base..work") + "\n")
        git(self.repo, "checkout", "-q", "main")
        return out

    def readme(self, start: str, *extra: str, patches: str = "",
               series: str = "") -> tuple[object, str]:
        """README's line run with the user's values: ~/work/linux, $base,
        the patch files (the word after --base's) and the range ($base..X)."""
        words = shlex.split(readme_line(start))
        self.assertEqual(words[:3], ["python3", "-m", "tools.series.check"], words)
        args: list[str] = []
        for w in words[3:]:
            if w == "~/work/linux":
                w = str(self.repo)
            elif w.startswith("$base.."):
                w = series
            elif args[-2:-1] == ["--base"]:
                w = patches
            elif w == "$base":
                w = "base"
            args.append(w)
        return self.run_check(*args, *extra)

    def run_check(self, *args: str) -> tuple[object, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                code: object = check.main(list(args))
            except SystemExit as e:
                code = e.code
        return code, out.getvalue()


MBOX_LINE = "python3 -m tools.series.check ~/work/linux --base $base"
RANGE_LINE = "python3 -m tools.series.check ~/work/linux $base.."


@unittest.skipUnless(HAVE_CHECKPATCH, "no kernel tree with scripts/checkpatch.pl on this machine")
class RealCheckpatchOnAnMbox(Tree):
    def no_ply(self) -> Path:
        """A directory whose python3 has no ply (Debian's, its site packages off)."""
        bad = self.tmp / "bin"
        if not bad.is_dir():
            bad.mkdir()
            (bad / "python3").write_text('#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n')
            (bad / "python3").chmod(0o755)
        return bad

    def test_a_crafted_fault_is_found(self):
        mbox = self.mbox({"drivers/net/a.c": "// SPDX-License-Identifier: GPL-2.0\n"
                          "int a;   \n"})
        code, out = self.readme(MBOX_LINE, "--checks", "checkpatch,verify_signedoff",
                                patches=str(mbox))
        self.assertNotIn("did not run", out)
        self.assertIn("patch 1 checkpatch: fail: ERROR: trailing whitespace", out)
        self.assertEqual(code, 2, out)

    def test_a_checkpatch_warning_alone_is_exit_1(self):
        long = "int " + "b" * 80 + ";\n"
        mbox = self.mbox({"drivers/net/a.c": "// SPDX-License-Identifier: GPL-2.0\n"
                          "int a;\n" + long})
        code, out = self.readme(MBOX_LINE, "--checks", "checkpatch",
                                patches=str(mbox))
        self.assertIn("patch 1 checkpatch: warn: WARNING: line length of 85 exceeds 80 columns",
                      out)
        self.assertEqual(code, 1, out)
        self.assertIn(": warnings - warned: checkpatch (patch 1)", out.splitlines()[-1])

    @unittest.skipUnless(ply_python(), "no /usr/bin/python3 with ply and git")
    def test_a_bogus_spdx_id_is_caught_whatever_python3_is_first_on_path(self):
        """A python3 without ply first on PATH (pyenv's, here one run with -S)."""
        bad = self.no_ply()
        mbox = self.mbox({"drivers/net/b.c": "// SPDX-License-Identifier: NOT-A-LICENSE\n"
                          "int b;\n"})
        git(self.repo, "branch", "-m", "work", "series/net-next/x")
        with mock.patch.dict(os.environ, {"PATH": f"{bad}:{os.environ['PATH']}"}):
            runs = [self.readme(MBOX_LINE, "--checks", "checkpatch", patches=str(mbox)),
                    self.readme(RANGE_LINE, "--checks", "checkpatch",
                                series="base..series/net-next/x")]
        for code, out in runs:
            self.assertIn("'SPDX-License-Identifier: NOT-A-LICENSE' is not supported in "
                          "LICENSES/", out)
            self.assertEqual(code, 1, out)

    def test_spdx_check_that_cannot_run_is_a_named_warning_a_failure_under_ci(self):
        mbox = self.mbox({"drivers/net/a.c": "// SPDX-License-Identifier: GPL-2.0\n"
                          "int a;\nint c;\n"})
        for ci, want in (("", 1), ("true", 2)):
            # The only python3 tried lacks ply (its site packages off).
            with mock.patch.object(source, "python_dirs", return_value=[str(self.no_ply())]), \
                    mock.patch.dict(os.environ, {"CI": ci}):
                code, out = self.readme(MBOX_LINE, "--checks", "checkpatch",
                                        patches=str(mbox))
            self.assertEqual(code, want, out)
            self.assertRegex(out, r"\n1 +net-next +net: a: change +pass!")
            self.assertIn("patch 1 checkpatch: could not run: SPDX identifiers not checked: "
                          "no python3 runs scripts/spdxcheck.py", out)
            self.assertIn("could not run in full", out.splitlines()[-1])
            self.assertIn("checkpatch (patch 1)", out.splitlines()[-1])


class RefusedWithOneLine(Tree):
    def assertRefused(self, args, text):
        code, out = self.run_check(*map(str, args))
        self.assertEqual(code, 3, out)
        self.assertIn(text, out)
        self.assertNotIn("Traceback", out)
        return out

    def test_a_file_that_is_no_patch(self):
        notes = self.tmp / "os-release"
        notes.write_text('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n')
        self.assertRefused([self.repo, "--base", "base", notes], "not a mail")
        mail = self.tmp / "hello.eml"
        mail.write_text("From: Dev <dev@x.invalid>\nSubject: [PATCH net-next] hello\n\nhi\n")
        self.assertRefused([self.repo, "--base", "base", mail], "no patch in")
        empty = self.tmp / "empty"
        empty.mkdir()
        self.assertRefused([self.repo, "--base", "base", empty], "no *.patch or *.eml")

    def test_an_unknown_check_is_a_usage_error(self):
        self.assertRefused([self.repo, "base..main", "--checks", "nosuchcheck"],
                           "unknown check(s): nosuchcheck")
        self.assertRefused([self.repo], "name a commit range")

    def test_a_single_revision_is_refused_at_once(self):
        with mock.patch.object(check, "range_group", wraps=check.range_group), \
                mock.patch("subprocess.run", wraps=subprocess.run) as ran:
            out = self.assertRefused([self.repo, "main"], "main: one revision, not a range")
        self.assertIn("BASE..main, or main^..main", out)
        self.assertFalse([c for c in ran.call_args_list if "format-patch" in c.args[0]])

    def test_revisions_that_are_no_commits(self):
        self.assertRefused([self.repo, "nosuch..main"], "no commit nosuch in")
        mbox = self.mbox({"drivers/net/a.c": "int a;\nint b;\n"})
        self.assertRefused([self.repo, "--base", "nosuch", mbox], "--base: no commit nosuch in")

    def test_a_repository_that_is_no_kernel_tree(self):
        plain = self.tmp / "plain"
        plain.mkdir()
        git(plain, "init", "-q", "-b", "main")
        (plain / "a.c").write_text("int a;\n")
        git(plain, "add", "-A")
        git(plain, "commit", "-q", "-m", "base")
        git(plain, "tag", "base")
        (plain / "a.c").write_text("int a;\nint b;\n")
        git(plain, "commit", "-q", "-am", f"a: b{SOB}")
        out = self.assertRefused([plain, "base..main"], f"{plain} is not a kernel tree: no ")
        self.assertIn("scripts/checkpatch.pl", out)
        self.assertNotIn("Errno", out)
        self.assertEqual(len(out.strip().splitlines()), 1, out)


class CannotRunAndDetail(Tree):
    def py_patch(self):
        git(self.repo, "checkout", "-q", "-b", "work")
        (self.repo / "tools").mkdir()
        (self.repo / "tools/x.py").write_text("import os\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", f"tools: x{SOB}")

    def test_a_missing_linter_is_a_named_warning_a_failure_under_ci(self):
        self.py_patch()
        for ci, want in (("false", 1), ("true", 2)):
            with mock.patch.object(linters.pylint, "available", return_value=False), \
                    mock.patch.dict(os.environ, {"CI": ci}):
                code, out = self.run_check(str(self.repo), "base..work", "--checks",
                                           "pylint,verify_signedoff")
            self.assertEqual(code, want, out)
            self.assertIn("patch 1 pylint: could not run: pylint is not installed", out)
            self.assertRegex(out, r"\n1 +net-next +tools: x +-! +pass")
            self.assertIn("could not run in full", out.splitlines()[-1])

    def test_detail_and_json(self):
        self.py_patch()
        with mock.patch.object(linters.pylint, "lint",
                               return_value=["tools/x.py:1:0: W0611: Unused import os "
                                             "(unused-import)"]):
            code, out = self.run_check(str(self.repo), "base..work", "--checks",
                                       "pylint,module_param,cocci", "-v")
        self.assertEqual(code, 1, out)
        self.assertIn("      tools/x.py:1:0: W0611: Unused import os (unused-import)", out)
        self.assertIn("patch 1 cocci: skip: cocci: main mode only", out)
        self.assertIn("patch 1 module_param: pass: Was 0 now: 0", out)
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = check.main([str(self.repo), "base..work", "--checks",
                               "module_param,verify_signedoff", "--json", "-"])
        self.assertEqual(code, 0)
        data = json.loads(stdout.getvalue())
        self.assertEqual(data["exit"], 0)
        [patch] = data["patches"]
        self.assertEqual((patch["index"], patch["series"], patch["subject"]),
                         (1, "net-next", "tools: x"))
        self.assertEqual(patch["results"]["verify_signedoff"]["status"], "pass")
        self.assertIn("message", patch["results"]["module_param"])
        self.assertEqual(data["series"]["base..work:patch_count"]["status"], "pass")
        self.assertIn("module_param", stderr.getvalue())  # the table, on stderr

    def test_help_keeps_every_line_of_the_description(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit):
            check.main(["--help"])
        for line in check.__doc__.splitlines():
            self.assertIn(line.strip(), out.getvalue())


if __name__ == "__main__":
    unittest.main()

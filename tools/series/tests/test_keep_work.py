"""The four ways the series commands lost a user's work, each made for real
in a scratch repository: the command refuses, names what would be lost and
leaves every file and branch as it was."""

import contextlib
import io
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from common import cache
from tools.series import cleanup, series
from tools.series.tests.test_series import Workspace, git, make_base
from tools.series.tests.test_series_safety import state


def run(argv):
    """series.main(argv): (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = series.main(argv)
    return code, out.getvalue(), err.getvalue()


class ApplyKeepsEditedMessages(Workspace):
    """apply judged "in patches/" by patch-id, which ignores the message and
    the author: an amended message was reset without --force."""

    def applied_tree(self, name):
        tree = make_base(self.tmp / name)
        series.apply(tree, "base", conf=self.conf, patches=self.patches)
        git(tree, "checkout", "-q", "series/net/drv-fix")
        return tree

    def refused(self, tree, what):
        before = state(tree)
        code, _, err = run(["apply", str(tree), "base", "--patches", str(self.patches)])
        self.assertEqual(code, 1, err)
        self.assertRegex(err, r"series/net/drv-fix: 1 commit\(s\) in neither patches/ nor the "
                         rf"last apply: \w+ {what}")
        self.assertIn("nothing was changed", err)
        self.assertEqual(state(tree), before)

    def test_amended_message_is_refused(self):
        tree = self.applied_tree("reworded")
        git(tree, "commit", "-q", "--amend", "-m", "drv: fix line one, my wording",
            "-m", "A reason only I wrote.")
        self.refused(tree, "drv: fix line one, my wording")

    def test_amended_body_is_refused(self):
        tree = self.applied_tree("body")
        msg = git(tree, "log", "-1", "--format=%B")
        git(tree, "commit", "-q", "--amend", "-m", msg.replace("Why:", "Because:"))
        self.refused(tree, "drv: fix line one")

    def test_amended_author_is_refused(self):
        tree = self.applied_tree("author")
        git(tree, "commit", "-q", "--amend", "--no-edit", "--author", "Ann Dev <ann@example.org>")
        self.refused(tree, "drv: fix line one")

    def test_exported_message_is_not_refused(self):
        # The loop: amend, export, apply again: the new message is in patches/.
        tree = self.applied_tree("exported")
        git(tree, "commit", "-q", "--amend", "-m", "drv: fix line one, my wording",
            "-m", "Why: mine.\n\nSigned-off-by: Role Identity <role@example.invalid>")
        git(tree, "rebase", "-q", "--onto", "series/net/drv-fix", "HEAD@{1}",
            "series/net-next/drv-features")
        series.export(tree, "base", self.patches, conf=self.conf)
        code, _, err = run(["apply", str(tree), "base", "--patches", str(self.patches)])
        self.assertEqual(code, 0, err)
        self.assertEqual(git(tree, "log", "-1", "--format=%s", "series/net/drv-fix").strip(),
                         "drv: fix line one, my wording")


if __name__ == "__main__":
    unittest.main()


class ExportKeepsOtherWork(Workspace):
    """export (and send-prep --out) cleared every <tree>/<topic>/*.patch of
    the output before writing: a topic with no workspace branch, a new one
    being written included, was deleted, uncommitted or not."""

    def setUp(self):
        super().setUp()
        git(self.patches, "init", "-q", "-b", "main")
        git(self.patches, "add", "-A")
        git(self.patches, "commit", "-q", "-m", "the series")

    def export(self):
        return run(["export", str(self.dev), "base", "--out", str(self.patches)])

    def test_new_topic_without_a_branch_is_kept(self):
        mine = self.patches / "net/my-topic/0001-my-fix.patch"
        mine.parent.mkdir()
        mine.write_text("the patch I am writing\n")
        committed = self.patches / "net-next/old-topic/0001-old.patch"
        committed.parent.mkdir()
        committed.write_text("a series whose branch I do not have here\n")
        git(self.patches, "add", str(committed))
        git(self.patches, "commit", "-q", "-m", "old topic")
        code, out, err = self.export()
        self.assertEqual(code, 0, err)
        self.assertEqual(mine.read_text(), "the patch I am writing\n")
        self.assertTrue(committed.is_file())
        self.assertIn("kept net/my-topic, net-next/old-topic: no series/<tree>/<topic> branch",
                      out)

    def refused(self, path, why):
        before = self.files(self.patches)
        code, _, err = self.export()
        self.assertEqual(code, 1, err)
        self.assertIn(f"{path.relative_to(self.patches)} ({why})", err)
        self.assertIn("nothing was written", err)
        self.assertEqual(self.files(self.patches), before)

    def test_uncommitted_edit_in_an_exported_topic_is_refused(self):
        fix = next((self.patches / "net/drv-fix").glob("*.patch"))
        fix.write_text(fix.read_text().replace("Why: drv: fix line one.", "My hand edit."))
        self.refused(fix, "uncommitted changes")

    def test_untracked_patch_in_an_exported_topic_is_refused(self):
        new = self.patches / "net/drv-fix/0002-my-next-fix.patch"
        new.write_text("a patch I put here by hand\n")
        self.refused(new, "untracked")

    def test_export_again_without_commit_is_allowed(self):
        # Uncommitted files that the export writes again byte for byte lose nothing.
        git(self.dev, "commit", "-q", "--amend", "--no-edit", "--date", "@1700000500 +0000")
        self.assertEqual(self.export()[0], 0)
        self.assertTrue(git(self.patches, "status", "--porcelain"))
        code, _, err = self.export()
        self.assertEqual(code, 0, err)

    def test_send_prep_keeps_other_directories_of_out(self):
        out = self.tmp / "outgoing"
        other = out / "net/earlier/0001-kept.patch"
        other.parent.mkdir(parents=True)
        other.write_text("from an earlier posting\n")
        code, _, err = run(["send-prep", str(self.dev), "base", "--out", str(out)])
        self.assertEqual(code, 0, err)
        self.assertEqual(other.read_text(), "from an earlier posting\n")
        self.assertTrue(list((out / "net/drv-fix").glob("*.patch")))


class CleanupKeepsAPopulatedCache(unittest.TestCase):
    """PROJECT_CACHE pointing at a directory of the user's (a home, a work
    directory): cleanup removed every entry named like one the tooling
    makes (ws, tools, downloads, ...), theirs or not."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.home = self.tmp / "home"
        for d in ("Documents", "tools/bin", "ws/notes", "downloads"):
            (self.home / d).mkdir(parents=True)
        (self.home / ".bashrc").write_text("alias ll='ls -l'\n")
        (self.home / "tools/bin/mytool").write_text("#!/bin/sh\n")
        (self.home / "ws/notes/todo.txt").write_text("my todo\n")
        env = mock.patch.dict(os.environ, {"PROJECT_CACHE": str(self.home)})
        env.start()
        self.addCleanup(env.stop)
        os.environ.pop("KERNEL_SRC", None)

    def cleanup(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = cleanup.main(list(args))
        return code, out.getvalue()

    def snapshot(self):
        return sorted(str(p.relative_to(self.home)) for p in self.home.rglob("*")
                      if p.name not in (".mqbypass-cache", "pipeline.lock"))

    def test_populated_directory_is_refused_and_kept(self):
        before = self.snapshot()
        for args in ((), ("--all",), ("--all", "--force")):
            code, out = self.cleanup(*args)
            self.assertEqual(code, 1, out)
            for name in ("downloads", "tools", "ws") if args else ("ws",):
                self.assertIn(f"refused: {self.home / name}: it was there before the tooling "
                              "first used the cache", out)
            self.assertEqual(self.snapshot(), before)

    def test_what_the_tooling_made_there_later_goes(self):
        cache.claim(self.home)
        (self.home / "ws-0123/series/build").mkdir(parents=True)
        (self.home / "tarballs").mkdir()
        code, out = self.cleanup("--all")
        self.assertEqual(code, 1, out)
        self.assertFalse((self.home / "ws-0123").exists())
        self.assertFalse((self.home / "tarballs").exists())
        self.assertEqual((self.home / "ws/notes/todo.txt").read_text(), "my todo\n")
        self.assertTrue((self.home / ".bashrc").is_file())

"""series apply, export and send-prep on a developer's tree: each way the
old apply lost work, made for real in a scratch repository; nothing is lost
and the refusal names what would have been, or --force goes ahead."""

import contextlib
import email
import io
import re
import subprocess
import unittest

from tools.series.tests.test_series import Workspace, git, make_base
from tools.series import series
from tools.series.checks import source


def state(tree):
    """Everything apply must leave alone: branch tips, HEAD, index, files."""
    refs = git(tree, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
    head = subprocess.run(["git", "-C", str(tree), "symbolic-ref", "-q", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    files = {p.relative_to(tree).as_posix(): p.read_text() for p in sorted(tree.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(tree).parts}
    return {"refs": refs, "head": head, "commit": git(tree, "rev-parse", "HEAD"),
            "index": git(tree, "diff", "--cached"), "files": files}


class ApplySafety(Workspace):

    def apply(self, tree, base="base", **kw):
        return series.apply(tree, base, conf=self.conf, patches=self.patches, **kw)

    def dirty_tree(self, name):
        tree = make_base(self.tmp / name)
        (tree / "driver.c").write_text((tree / "driver.c").read_text() + "my unstaged edit\n")
        (tree / "new.c").write_text("my staged file\n")
        git(tree, "add", "new.c")
        return tree

    def test_dirty_tree_is_refused_and_left_as_it_was(self):
        tree = self.dirty_tree("dirty")
        before = state(tree)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = series.main(["apply", str(tree), "base", "--patches", str(self.patches)])
        self.assertEqual(code, 1)
        self.assertIn("uncommitted changes (2 files): M driver.c, A new.c", err.getvalue())
        self.assertIn("nothing was changed", err.getvalue())
        self.assertEqual(state(tree), before)

    def test_force_on_dirty_tree_moves_branches_and_keeps_the_edits(self):
        tree = self.dirty_tree("forced")
        before = state(tree)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = series.main(["apply", str(tree), "base", "--patches", str(self.patches),
                                "--force"])
        self.assertEqual(code, 0)
        self.assertIn("applied 5 patches", out.getvalue())
        self.assertIn("HEAD (" + before["commit"].strip()[:12] + ") and the files left",
                      out.getvalue())
        after = state(tree)
        self.assertEqual({k: after[k] for k in ("head", "commit", "index", "files")},
                         {k: before[k] for k in ("head", "commit", "index", "files")})
        self.assertIn("feature 30", git(tree, "show", "series/all:driver.c"))

    def test_clean_tree_checks_out_all_and_says_so(self):
        tree = make_base(self.tmp / "clean")
        with self.assertLogs("tools.series.applying", "INFO") as logged:
            series.apply(tree, "base", conf=self.conf, patches=self.patches)
        self.assertEqual(git(tree, "symbolic-ref", "HEAD").strip(), "refs/heads/series/all")
        self.assertIn(f"  checked out series/all in {tree} (HEAD was main)",
                      [r.getMessage() for r in logged.records])
        self.assertEqual(git(tree, "status", "--porcelain"), "")

    def test_commit_added_on_a_series_branch_is_refused(self):
        tree = make_base(self.tmp / "added")
        self.apply(tree)
        git(tree, "checkout", "-q", "series/net/drv-fix")
        (tree / "driver.c").write_text((tree / "driver.c").read_text() + "my fix\n")
        git(tree, "commit", "-q", "-a", "-m", "drv: my own fix")
        mine = git(tree, "rev-parse", "--short=7", "HEAD").strip()
        before = state(tree)
        with self.assertRaises(series.SeriesError) as ctx:
            self.apply(tree)
        msg = str(ctx.exception)
        self.assertRegex(msg, r"series/net/drv-fix: 1 commit\(s\) in neither patches/ nor the "
                         rf"last apply: {mine}\w* drv: my own fix")
        self.assertEqual(state(tree), before)
        # The developer's loop: rebase the series building on it, export to
        # patches/, apply again: nothing lost, no refusal.
        old_fix = git(tree, "rev-parse", "HEAD^").strip()
        git(tree, "rebase", "-q", "--onto", "series/net/drv-fix", old_fix,
            "series/net-next/drv-features")
        series.export(tree, "base", self.patches, conf=self.conf)
        self.apply(tree)
        self.assertIn("my fix", git(tree, "show", "series/net/drv-fix:driver.c"))

    def test_force_drops_the_added_commit_and_detaches_head_first(self):
        tree = make_base(self.tmp / "dropped")
        self.apply(tree)
        fix = git(tree, "rev-parse", "series/net/drv-fix").strip()
        git(tree, "checkout", "-q", "series/net/drv-fix")
        git(tree, "commit", "-q", "--allow-empty", "-m", "scratch")
        with self.assertLogs("tools.series.applying", "INFO") as logged:
            series.apply(tree, "base", conf=self.conf, patches=self.patches, force=True)
        said = [r.getMessage() for r in logged.records]
        self.assertEqual(git(tree, "rev-parse", "series/net/drv-fix").strip(), fix)
        self.assertTrue(any("--force: series/net/drv-fix drops" in m for m in said), said)
        self.assertIn(f"  checked out series/all in {tree} (HEAD was series/net/drv-fix)", said)

    def test_wrong_base_on_dirty_tree_changes_nothing(self):
        tree = self.dirty_tree("wrong-base")
        before = state(tree)
        with self.assertRaises(series.SeriesError) as ctx:
            self.apply(tree, base="no-such-tag", force=True)
        self.assertIn("base no-such-tag: no such commit", str(ctx.exception))
        self.assertEqual(state(tree), before)

    def test_patch_failing_halfway_moves_no_branch(self):
        tree = make_base(self.tmp / "halfway")
        self.apply(tree)
        before = state(tree)
        # New patches: the fix reworded (its branch would move), the third
        # feature patch's context no longer the tree's.
        fix = next((self.patches / "net/drv-fix").glob("*.patch"))
        fix.write_text(fix.read_text().replace("Why: drv: fix line one.", "Reworded."))
        third = next((self.patches / "net-next/drv-features").glob("*0003-*.patch"))
        text = third.read_text()
        header = re.search(r"^@@ [^@]* @@ ?(.*)$", text, re.M)
        third.write_text(text.replace("\n line 31\n", "\n line 31 elsewhere\n"))
        with self.assertRaises(series.SeriesError) as ctx:
            self.apply(tree)
        msg = str(ctx.exception)
        self.assertIn("patch does not apply: patches/net-next/drv-features/"
                      "v2-0003-drv-feature-30.patch (patch 3 of 3 of net-next/drv-features)", msg)
        self.assertIn(f"driver.c: hunk #1 of 1 (line 28, in {header[1]}): ", msg)
        self.assertTrue(header[1])
        self.assertNotIn("Patch failed at 0001", msg)
        self.assertEqual(state(tree), before)

    def test_branch_checked_out_in_another_worktree_is_refused(self):
        tree = make_base(self.tmp / "main-tree")
        self.apply(tree)
        git(tree, "checkout", "-q", "--detach")
        other = self.tmp / "other-worktree"
        git(tree, "worktree", "add", "-q", str(other), "series/net/drv-fix")
        fix = next((self.patches / "net/drv-fix").glob("*.patch"))
        fix.write_text(fix.read_text().replace("Why: drv: fix line one.", "Reworded."))
        before = state(tree)
        with self.assertRaises(series.SeriesError) as ctx:
            self.apply(tree, force=True)
        self.assertIn(f"series/net/drv-fix is checked out in {other}", str(ctx.exception))
        self.assertEqual(state(tree), before)

    def test_commits_are_those_git_am_makes(self):
        # On a tree where the fix needs the 3-way fallback (a context line differs).
        tree = make_base(self.tmp / "plumbing")
        f = tree / "driver.c"
        f.write_text(f.read_text().replace("line 3\n", "line three\n"))
        git(tree, "commit", "-q", "-a", "-m", "context moved")
        self.apply(tree, base="main")
        am = make_base(self.tmp / "am")
        git(am, "fetch", "-q", str(tree), "main")
        git(am, "checkout", "-q", "FETCH_HEAD")
        role = {"GIT_COMMITTER_NAME": "Role Identity",
                "GIT_COMMITTER_EMAIL": "role@example.invalid"}
        files = [*sorted((self.patches / "net/drv-fix").glob("*.patch")),
                 *sorted((self.patches / "net-next/drv-features").glob("v2-000[1-9]*.patch"))]
        git(am, "am", "-q", "--3way", "--keep-cr", "--committer-date-is-author-date",
            *map(str, files), env=role)
        self.assertEqual(git(am, "rev-parse", "HEAD"),
                         git(tree, "rev-parse", "series/net-next/drv-features"))


class OutputSafety(Workspace):
    """A failing export or send-prep leaves the output as it was."""

    def break_stack(self):
        # drv-features no longer builds on drv-fix: both commands fail on it,
        # after drv-fix is written.
        git(self.dev, "checkout", "-q", "series/net/drv-fix")
        git(self.dev, "commit", "-q", "--amend", "-m", "drv: fix line one, reworded")

    def leftovers(self, parent):
        return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))

    def test_failed_send_prep_leaves_no_output_dir(self):
        self.break_stack()
        out = self.tmp / "outgoing"
        with self.assertRaises(series.SeriesError) as ctx:
            series.send_prep(self.dev, "base", out, conf=self.conf, identity=("A", "a@b.c"))
        self.assertIn("series/net/drv-fix is not an ancestor", str(ctx.exception))
        self.assertFalse(out.exists())
        self.assertEqual(self.leftovers(self.tmp), [])

    def test_failed_export_keeps_the_patches(self):
        before = self.files(self.patches)
        self.break_stack()
        with self.assertRaises(series.SeriesError):
            series.export(self.dev, "base", self.patches, conf=self.conf)
        self.assertEqual(self.files(self.patches), before)
        self.assertEqual(self.leftovers(self.tmp), [])


GET_MAINTAINER = """#!/usr/bin/perl
print "Jane Maint <jane\\@example.org> (maintainer:DRV DRIVER)\\n";
print "Bob Rev <bob\\@example.org> (reviewer:DRV DRIVER)\\n";
print "netdev\\@vger.kernel.org (open list:NETWORKING DRIVERS)\\n";
print "linux-kernel\\@vger.kernel.org (open list)\\n";
"""


class SendPrepRecipients(Workspace):

    def test_to_and_cc_are_those_the_cc_maintainers_check_wants(self):
        script = self.dev / "scripts/get_maintainer.pl"
        script.parent.mkdir()
        script.write_text(GET_MAINTAINER)
        out = self.tmp / "outgoing"
        done = series.send_prep(self.dev, "base", out, conf=self.conf, identity=("A", "a@b.c"))
        files = dict((p.series.name, f) for p, f in done)["net-next/zz-more"]
        mail = email.message_from_string(files[0].read_text())
        self.assertEqual(mail["To"], "Jane Maint <jane@example.org>")
        self.assertEqual(re.sub(r"\s+", " ", mail["Cc"]),
                         "Bob Rev <bob@example.org>, netdev@vger.kernel.org")
        result, _, _ = source.cc_maintainers(
            self.dev, git(self.dev, "rev-parse", "series/net-next/zz-more").strip(),
            [mail["To"], *mail["Cc"].split(",")])
        self.assertEqual(result.status, "pass", result.message)

    def test_without_get_maintainer_the_cli_says_so(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            series.main(["send-prep", str(self.dev), "base", "--out", str(self.tmp / "o")])
        self.assertIn(f"no To/Cc: no scripts/get_maintainer.pl in {self.dev}", out.getvalue())


if __name__ == "__main__":
    unittest.main()

"""Series tooling on a small git repository: apply, export, failures, and the
posting order (a series waits until the one it builds on is merged)."""

import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from tools.series import series

CONF = ('SERIES_AUTHOR_NAME="Role Identity"\nSERIES_AUTHOR_EMAIL="role@example.invalid"\n'
        "SERIES_VERSION_NET_DRV_FIX=1\nSERIES_VERSION_NET_NEXT_DRV_FEATURES=2\n"
        'SERIES_BASE_NET_NEXT_DRV_FEATURES="net/drv-fix"\n')
ROLE = {"GIT_AUTHOR_NAME": "Role Identity", "GIT_AUTHOR_EMAIL": "role@example.invalid",
        "GIT_COMMITTER_NAME": "Role Identity", "GIT_COMMITTER_EMAIL": "role@example.invalid",
        "GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000"}


def git(repo, *args, env=None):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True,
                          capture_output=True, env={**os.environ, **ROLE, **(env or {})}).stdout


def make_base(path):
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "driver.c").write_text("".join(f"line {i}\n" for i in range(40)))
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    git(path, "tag", "base")
    return path


def commit_edit(repo, line, text, subject, date):
    f = repo / "driver.c"
    lines = f.read_text().splitlines(keepends=True)
    lines[line] = text + "\n"
    f.write_text("".join(lines))
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    git(repo, "commit", "-q", "-a", "-s", "-m", subject, "-m", f"Why: {subject}.", env=env)


class Workspace(unittest.TestCase):
    """Three exported series and the workspace branches they came from."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.patches = self.tmp / "patches"
        self.patches.mkdir()
        (self.patches / "series.conf").write_text(CONF)
        self.conf = series.load_conf(self.patches / "series.conf")
        # Author three series: one fix, three features on top of it (cover
        # letter), one more feature in a second net-next topic that needs
        # neither of them; then export.
        dev = make_base(self.tmp / "dev")
        git(dev, "checkout", "-q", "-b", "series/net/drv-fix")
        commit_edit(dev, 1, "fixed 1", "drv: fix line one", "@1700000100 +0000")
        git(dev, "checkout", "-q", "-b", "series/net-next/drv-features")
        for i in (10, 20, 30):
            commit_edit(dev, i, f"feature {i}", f"drv: feature {i}", f"@17000002{i} +0000")
        git(dev, "config", "branch.series/net-next/drv-features.description",
            "drv: three features\n\nWhy they matter.\n\nChanges in v2:\n- reworded\n")
        git(dev, "checkout", "-q", "-b", "series/net-next/zz-more", "base")
        commit_edit(dev, 35, "more", "drv: more", "@1700000400 +0000")
        series.export(dev, "base", self.patches, conf=self.conf)
        self.dev = dev

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def files(self, d):
        return {p.relative_to(d): p.read_text() for p in sorted(d.rglob("*.patch"))}


class SeriesTest(Workspace):

    def test_export_layout(self):
        feat = self.patches / "net-next/drv-features"
        names = sorted(p.name for p in feat.glob("*.patch"))
        self.assertEqual(names[0], "v2-0000-cover-letter.patch")
        self.assertEqual(len(names), 4)
        cover = (feat / names[0]).read_text()
        self.assertIn("Subject: [PATCH net-next v2 0/3] drv: three features", cover)
        self.assertIn("Changes in v2:", cover)
        self.assertIn("base-commit: ", cover)
        fix = next((self.patches / "net/drv-fix").glob("*.patch")).read_text()
        self.assertIn("Subject: [PATCH net] drv: fix line one", fix)
        names = " ".join(p.name for p in (self.patches / "net/drv-fix").iterdir())
        self.assertNotIn("cover-letter", names)
        more = [p.name for p in (self.patches / "net-next/zz-more").glob("*.patch")]
        self.assertEqual(more, ["0001-drv-more.patch"])
        self.assertEqual([s.name for s in series.load_series(self.conf, self.patches)],
                         ["net/drv-fix", "net-next/drv-features", "net-next/zz-more"])

    def test_prerequisites_name_only_the_series_built_on(self):
        feat = (self.patches / "net-next/drv-features/v2-0000-cover-letter.patch").read_text()
        fix = next((self.patches / "net/drv-fix").glob("*.patch")).read_text()
        self.assertEqual(feat.count("prerequisite-patch-id:"), 1)
        more = next((self.patches / "net-next/zz-more").glob("*.patch")).read_text()
        self.assertNotIn("prerequisite-patch-id:", more)
        self.assertNotIn("prerequisite-patch-id:", fix)

    def test_apply_merges_every_series_into_all(self):
        tree = make_base(self.tmp / "merged")
        series.apply(tree, "base", conf=self.conf, patches=self.patches)
        text = git(tree, "show", "series/all:driver.c")
        for want in ("fixed 1", "feature 10", "feature 30", "more"):
            self.assertIn(want, text)
        self.assertEqual(git(tree, "merge-base", "series/net-next/zz-more", "series/net/drv-fix"),
                         git(tree, "rev-parse", "base"))
        # The same patches give the same merge commit.
        again = make_base(self.tmp / "merged-again")
        series.apply(again, "base", conf=self.conf, patches=self.patches)
        self.assertEqual(git(tree, "rev-parse", "series/all"),
                         git(again, "rev-parse", "series/all"))

    def test_unknown_base_series_is_refused(self):
        conf = dict(self.conf, SERIES_BASE_NET_NEXT_ZZ_MORE="net/nonexistent")
        with self.assertRaises(series.SeriesError) as ctx:
            series.load_series(conf, self.patches)
        self.assertIn("SERIES_BASE_NET_NEXT_ZZ_MORE=net/nonexistent", str(ctx.exception))

    def test_apply_then_export_is_exact(self):
        tree = make_base(self.tmp / "fresh")
        applied = series.apply(tree, "base", conf=self.conf, patches=self.patches)
        self.assertEqual(len(applied), 5)
        out = self.tmp / "out"
        series.export(tree, "base", out, conf=self.conf)
        self.assertEqual(self.files(self.patches), self.files(out))

    def test_export_is_exact_after_amend_without_change(self):
        # Amending with another committer and date must not change the export.
        git(self.dev, "commit", "-q", "--amend", "--no-edit",
            env={"GIT_COMMITTER_NAME": "Someone", "GIT_COMMITTER_DATE": "@1800000000 +0000"})
        out = self.tmp / "out"
        series.export(self.dev, "base", out, conf=self.conf)
        self.assertEqual(self.files(self.patches), self.files(out))

    def test_patch_that_does_not_apply_is_named_and_tree_left_clean(self):
        tree = make_base(self.tmp / "other")
        (tree / "driver.c").write_text("".join(f"other {i}\n" for i in range(40)))
        git(tree, "commit", "-q", "-a", "-m", "diverge")
        with self.assertRaises(series.SeriesError) as ctx:
            series.apply(tree, "HEAD", conf=self.conf, patches=self.patches)
        msg = str(ctx.exception)
        self.assertIn("patch does not apply: patches/net/drv-fix/0001-drv-fix-line-one.patch", msg)
        self.assertIn("driver.c", msg)
        self.assertFalse((tree / ".git/rebase-apply").exists())
        self.assertEqual(git(tree, "status", "--porcelain"), "")

    def test_unfinished_am_is_refused_and_kept_with_force(self):
        # A git am stopped in the tree is the user's work in progress: apply
        # neither aborts it nor applies over it; --force moves the branches only.
        tree = make_base(self.tmp / "interrupted")
        patch = next((self.patches / "net-next/drv-features").glob("*0002-*.patch"))
        (tree / "driver.c").write_text("conflict\n")
        git(tree, "commit", "-q", "-a", "-m", "conflict")
        subprocess.run(["git", "-C", str(tree), "am", str(patch)], capture_output=True)
        self.assertTrue((tree / ".git/rebase-apply").exists())
        with self.assertRaises(series.SeriesError) as ctx:
            series.apply(tree, "base", conf=self.conf, patches=self.patches)
        self.assertIn("an unfinished git am", str(ctx.exception))
        self.assertEqual(git(tree, "branch", "--list", "series/*"), "")
        applied = series.apply(tree, "base", conf=self.conf, patches=self.patches,
                               force=True)
        self.assertEqual(len(applied), 5)
        self.assertTrue((tree / ".git/rebase-apply").exists())
        self.assertEqual(git(tree, "symbolic-ref", "HEAD").strip(), "refs/heads/main")

    def test_stray_patch_outside_a_topic_is_refused(self):
        (self.patches / "net-next" / "0001-stray.patch").write_text("x")
        with self.assertRaises(series.SeriesError):
            series.load_series(self.conf, self.patches)

    def test_send_prep_substitutes_identity(self):
        out = self.tmp / "send"
        series.export(self.dev, "base", out, conf=self.conf,
                      identity=("Ann Dev", "ann@example.org"))
        text = "".join(self.files(out).values())
        self.assertNotIn("Role Identity", text)
        self.assertIn("From: Ann Dev <ann@example.org>", text)
        self.assertIn("Signed-off-by: Ann Dev <ann@example.org>", text)

    def test_cover_parse(self):
        cover = series.parse_cover(
            next((self.patches / "net-next/drv-features").glob("*0000-cover*")))
        self.assertEqual(cover.subject, "drv: three features")
        self.assertTrue(cover.body.startswith("Why they matter."))
        self.assertTrue(cover.body.rstrip().endswith("- reworded"))


class PostOrderTest(Workspace):
    """net/drv-fix, then net-next/drv-features building on it (blocked until
    it is merged into net-next), and net-next/zz-more needing neither."""

    def prep(self, merged=()):
        out = self.tmp / "outgoing"
        done = series.send_prep(self.dev, "base", out, merged, conf=self.conf,
                                identity=("Ann Dev", "ann@example.org"))
        return out, {p.series.name: (p, files) for p, files in done}

    def test_order_is_net_first(self):
        all_series = series.load_series(self.conf, self.patches)
        for given in (all_series, list(reversed(all_series))):
            order = series.post_order(given)
            self.assertEqual([p.series.name for p in order],
                             ["net/drv-fix", "net-next/drv-features", "net-next/zz-more"])
            self.assertEqual([p.blocked for p in order], [False, True, False])
        self.assertEqual(order[1].status, "blocked until net/drv-fix is merged into net-next")
        merged = series.post_order(all_series, ["net/drv-fix"])
        self.assertEqual([p.blocked for p in merged], [False, False, False])
        self.assertTrue(merged[0].merged)
        self.assertIn("post now, rebased onto net-next with net/drv-fix merged", merged[1].status)

    def test_cli_prints_the_order(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = series.main(["post-order", "--patches", str(self.patches)])
        self.assertEqual(code, 0)
        self.assertEqual(re.findall(r"^  \d\. (\S+): (.*)$", out.getvalue(), re.M), [
            ("net/drv-fix", "post now"),
            ("net-next/drv-features", "blocked until net/drv-fix is merged into net-next"),
            ("net-next/zz-more", "post now")])
        self.assertIn("run again with --merged net/drv-fix", out.getvalue())

    def test_blocked_series_is_refused_with_its_prerequisite_named(self):
        out, done = self.prep()
        posting, files = done["net-next/drv-features"]
        self.assertTrue(posting.blocked)
        self.assertEqual(files, [])
        self.assertEqual(list((out / "net-next/drv-features").glob("*.patch")), [])
        self.assertIn("blocked until net/drv-fix is merged into net-next",
                      "\n".join(series.order_lines([p for p, _ in done.values()])))
        # The others are written as posted: on the base, no prerequisite ids.
        for name in ("net/drv-fix", "net-next/zz-more"):
            text = "".join(f.read_text() for f in done[name][1])
            self.assertTrue(done[name][1], name)
            self.assertNotIn("prerequisite-patch-id:", text)
            self.assertIn(f"base-commit: {git(self.dev, 'rev-parse', 'base').strip()}", text)
            self.assertIn("From: Ann Dev <ann@example.org>", text)

    def test_merged_prerequisite_gives_patches_for_base_plus_net(self):
        out, done = self.prep(merged=["net/drv-fix"])
        self.assertEqual(done["net/drv-fix"][1], [])  # merged: not posted again
        files = done["net-next/drv-features"][1]
        self.assertEqual([f.name[:7] for f in files], ["v2-0000", "v2-0001", "v2-0002", "v2-0003"])
        cover = files[0].read_text()
        self.assertNotIn("prerequisite-patch-id:", "".join(f.read_text() for f in files))
        self.assertIn("Subject: [PATCH net-next v2 0/3] drv: three features", cover)
        # base-commit: the base with net/drv-fix merged, standing for net-next.
        merge = re.search(r"^base-commit: ([0-9a-f]{40})$", cover, re.M)[1]
        self.assertEqual(git(self.dev, "log", "-1", "--format=%P %s", merge).split(" ", 2),
                         [git(self.dev, "rev-parse", "base").strip(),
                          git(self.dev, "rev-parse", "series/net/drv-fix").strip(),
                          "Merge net/drv-fix into net-next\n"])
        # They apply with git am to the base plus the net series as posted.
        tree = make_base(self.tmp / "net-next")
        for f in [*sorted((self.patches / "net/drv-fix").glob("*.patch")), *files[1:]]:
            git(tree, "am", "-q", str(f))
        self.assertEqual(git(tree, "rev-parse", "HEAD^{tree}"),
                         git(self.dev, "rev-parse", "series/net-next/drv-features^{tree}"))

    def test_prerequisite_ids_are_refused(self):
        # The stored form names the net patches as prerequisites: not postable.
        files = sorted((self.patches / "net-next/drv-features").glob("*.patch"))
        with self.assertRaises(series.SeriesError) as ctx:
            series.check_posting(self.dev, git(self.dev, "rev-parse", "base").strip(), files,
                                 "series/net-next/drv-features")
        self.assertIn("v2-0000-cover-letter.patch: prerequisite-patch-id lines", str(ctx.exception))

    def test_bad_merged_names_are_refused(self):
        all_series = series.load_series(self.conf, self.patches)
        with self.assertRaises(series.SeriesError) as ctx:
            series.post_order(all_series, ["net/nonexistent"])
        self.assertIn("--merged net/nonexistent: no such series", str(ctx.exception))
        with self.assertRaises(series.SeriesError) as ctx:
            series.post_order(all_series, ["net-next/drv-features"])
        self.assertIn("it builds on net/drv-fix", str(ctx.exception))


if __name__ == "__main__":
    unittest.main()

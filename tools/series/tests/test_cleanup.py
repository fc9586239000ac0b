"""tools/series/cleanup.py on a scratch PROJECT_CACHE and scratch kernel
repositories laid out as the pipeline leaves them: worktrees in ws*/,
build directories, ci/* branches made by series.apply (which records them),
and the developer's own branches, worktrees and files beside them."""

import contextlib
import fcntl
import hashlib
import io
import os
import subprocess
from pathlib import Path
from unittest import mock

from tools.series.tests.test_series import Workspace, git, make_base
from common import cache
from tools.series import cleanup, series


def digest(path):
    return hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:12]


def snapshot(root):
    """Every path under root, and every repository's refs and worktrees."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


class Cleanup(Workspace):

    def setUp(self):
        super().setUp()
        self.cache = self.tmp / "cache"
        env = mock.patch.dict(os.environ, {"PROJECT_CACHE": str(self.cache)})
        env.start()
        self.addCleanup(env.stop)
        os.environ.pop("KERNEL_SRC", None)
        cache.claim(self.cache)  # the tooling made the cache (common/cache.py)
        for d in ("ccache/0", "downloads", "tarballs", "kselftest/vm/net", "ws/b4/repo/.git",
                  "import.tmp.base_x"):
            (self.cache / d).mkdir(parents=True)
        (self.cache / "tarballs/linux.tar.xz").write_text("tarball")
        # The developer's repository: their branch, a worktree of theirs, a file.
        self.linux = make_base(self.tmp / "linux")
        git(self.linux, "checkout", "-q", "-b", "feature")
        (self.linux / "mine.c").write_text("work in progress\n")
        self.mine = self.tmp / "my-worktree"
        git(self.linux, "worktree", "add", "-q", "-b", "experiment", str(self.mine), "base")

    def pipeline_run(self, src=None):
        """What the pipeline does with KERNEL_SRC=src: a worktree at
        ws-<digest>/series/src, the series applied there on ci/* branches
        (ci/all checked out), a build directory beside it."""
        src = Path(src or self.linux)
        ws = self.cache / f"ws-{digest(src)}"
        tree = ws / "series/src"
        git(self.linux, "worktree", "add", "-q", "--detach", str(tree), "base")
        series.apply(tree, "base", conf=self.conf, patches=self.patches, prefix="ci/")
        (ws / "series/build-x86").mkdir()
        (ws / "series/build-x86/vmlinux").write_text("kernel")
        return tree

    def cleanup(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cleanup.main(list(map(str, args)))
        return code, out.getvalue() + err.getvalue()

    def branches(self, repo=None):
        return git(repo or self.linux, "for-each-ref", "--format=%(refname:strip=2)",
                   "refs/heads/").split()

    def worktrees(self, repo=None):
        return [str(p) for p, _, _ in cleanup.registered(repo or self.linux)]

    def test_dry_run_lists_everything_and_removes_nothing(self):
        tree = self.pipeline_run()
        before = (snapshot(self.tmp), self.branches(), self.worktrees())
        code, out = self.cleanup("--dry-run")
        self.assertEqual(code, 0, out)
        self.assertEqual((snapshot(self.tmp), self.branches(), self.worktrees()), before)
        for what in (f"would remove worktree {tree}", "would delete branch ci/all",
                     "would delete branch ci/net/drv-fix", "would remove ws (",
                     f"would remove ws-{digest(self.linux)} (", "would remove kselftest (",
                     "would remove import.tmp.base_x (",
                     "kept: ccache, downloads, tarballs (--all removes them)"):
            self.assertIn(what, out)

    def test_removes_what_the_pipeline_made_and_nothing_else(self):
        self.pipeline_run()
        code, out = self.cleanup()
        self.assertEqual(code, 0, out)
        self.assertEqual(sorted(p.name for p in self.cache.iterdir()),
                         [cache.MARK, "ccache", "downloads", "pipeline.lock", "tarballs"])
        self.assertEqual((self.cache / "tarballs/linux.tar.xz").read_text(), "tarball")
        self.assertEqual(self.branches(), ["experiment", "feature", "main"])
        self.assertEqual(self.worktrees(), [str(self.linux), str(self.mine)])
        self.assertEqual((self.linux / "mine.c").read_text(), "work in progress\n")
        self.assertIn("ci/all in", out)
        self.assertIn("restores it", out)

    def test_branch_checked_out_in_a_cache_worktree_is_deleted_after_it(self):
        self.pipeline_run()
        # The situation: git itself refuses to delete ci/all.
        res = subprocess.run(["git", "-C", str(self.linux), "branch", "-D", "ci/all"],
                             capture_output=True, text=True)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("checked out", res.stderr)
        code, out = self.cleanup(self.linux)
        self.assertEqual(code, 0, out)
        self.assertNotIn("ci/all", self.branches())

    def test_a_worktree_per_kernel_src_path_all_removed(self):
        sub = self.linux / "drivers"
        sub.mkdir()
        top, second = self.pipeline_run(), self.cache / f"ws-{digest(sub)}/series/src"
        git(self.linux, "worktree", "add", "-q", "--detach", str(second), "base")
        self.assertEqual(len(self.worktrees()), 4)
        # Named by a subdirectory, as KERNEL_SRC may have named it.
        with mock.patch.dict(os.environ, {"KERNEL_SRC": str(sub)}):
            code, out = self.cleanup()
        self.assertEqual(code, 0, out)
        self.assertIn(f"removing worktree {top}", out)
        self.assertIn(f"removing worktree {second}", out)
        self.assertEqual(self.worktrees(), [str(self.linux), str(self.mine)])
        self.assertFalse(list(self.cache.glob("ws-*")))

    def work_clones(self, legacy=False):
        """What b4flow and mailflow leave in ws/: a clone --shared each of a
        tree whose ci/all is checked out, so on a ci/all of its own (no
        record of an apply), with one checkout, its own. `legacy`: as
        earlier versions left them, a round-trip worktree registered beside
        each and the bot's beside mailflow's."""
        src = make_base(self.tmp / "series-tree")
        git(src, "checkout", "-q", "-b", "ci/all")
        clones = []
        for name in ("b4", "mail"):
            clone = self.cache / "ws" / name / "repo"
            subprocess.run(["rm", "-rf", str(clone)], check=True)
            git(self.cache, "clone", "-q", "--shared", str(src), str(clone))
            for tree in ("roundtrip", "bot")[:(2 if name == "mail" else 1) if legacy else 0]:
                git(clone, "worktree", "add", "-q", "--detach", str(clone.parent / tree), "base")
            clones.append(clone)
        return src, clones

    def test_work_clones_in_the_cache_go_with_ws(self):
        """A clone in ws/ is no repository of yours: no `git worktree
        remove` of its main working tree (git refuses), no refusal of its
        ci/all; the tree it was cloned from is left alone, and a repository
        of yours is cleaned up as ever."""
        self.check_work_clones_go_with_ws(legacy=False)

    def test_work_clones_of_an_earlier_layout_go_with_ws(self):
        """The same for a cache an earlier version left: the clones'
        round-trip and bot worktrees beside them go with ws/ too."""
        self.check_work_clones_go_with_ws(legacy=True)

    def check_work_clones_go_with_ws(self, legacy):
        tree = self.pipeline_run()
        src, clones = self.work_clones(legacy)
        self.assertEqual(sorted(p.name for p in (self.cache / "ws/mail").iterdir()),
                         ["bot", "repo", "roundtrip"] if legacy else ["repo"])
        self.assertEqual(git(clones[0], "branch", "--show-current").strip(), "ci/all")
        before = (snapshot(src), self.branches(src), self.worktrees(src))
        code, out = self.cleanup("--dry-run")
        self.assertEqual(code, 0, out)
        for clone in clones:
            self.assertNotIn(f"repository {clone}", out)
        code, out = self.cleanup()
        self.assertEqual(code, 0, out)
        self.assertFalse((self.cache / "ws").exists())
        self.assertEqual((snapshot(src), self.branches(src), self.worktrees(src)), before)
        self.assertEqual(git(src, "fsck", "--no-progress"), "")
        self.assertIn(f"removing worktree {tree}", out)
        self.assertEqual(self.branches(), ["experiment", "feature", "main"])
        self.assertEqual(self.worktrees(), [str(self.linux), str(self.mine)])

    def test_repository_found_from_a_stale_registration_too(self):
        """The cache removed by hand: the registration is left in the
        repository, which the user names."""
        self.pipeline_run()
        subprocess.run(["rm", "-rf", str(self.cache / f"ws-{digest(self.linux)}")], check=True)
        code, out = self.cleanup(self.linux)
        self.assertEqual(code, 0, out)
        self.assertEqual(self.worktrees(), [str(self.linux), str(self.mine)])
        self.assertNotIn("ci/all", self.branches())

    def test_branch_with_commits_of_yours_is_refused_unless_force(self):
        tree = self.pipeline_run()
        git(tree, "checkout", "-q", "ci/net/drv-fix")
        (tree / "driver.c").write_text("my fix on the pipeline's branch\n")
        git(tree, "commit", "-q", "-am", "drv: my own fix")
        code, out = self.cleanup()
        self.assertEqual(code, 1, out)
        self.assertIn("ci/net/drv-fix: commit(s) the tooling did not make: ", out)
        self.assertIn(f"drv: my own fix; cleanup --force {self.linux} deletes it", out)
        self.assertIn("ci/net/drv-fix", self.branches())
        self.assertNotIn("ci/all", self.branches())  # the rest is done
        code, out = self.cleanup("--force", self.linux)
        self.assertEqual(code, 0, out)
        self.assertNotIn("ci/net/drv-fix", self.branches())

    def test_branch_without_record_is_refused(self):
        git(self.linux, "branch", "ci/mine", "base")
        code, out = self.cleanup(self.linux)
        self.assertEqual(code, 1, out)
        self.assertIn("ci/mine: no record that the tooling made it", out)
        self.assertIn("ci/mine", self.branches())

    def test_branch_checked_out_outside_the_cache_is_kept_even_with_force(self):
        self.pipeline_run()
        git(self.mine, "checkout", "-q", "ci/net-next/drv-features")
        code, out = self.cleanup("--force", self.linux)
        self.assertEqual(code, 1, out)
        self.assertIn(f"ci/net-next/drv-features: checked out in {self.mine}", out)
        self.assertIn("ci/net-next/drv-features", self.branches())
        self.assertNotIn("ci/all", self.branches())

    def test_all_keeps_base_git_with_your_work_unless_force(self):
        base = self.cache / "base.git"
        make_base(base)
        git(base, "branch", "-m", "base")
        tree = self.cache / "ws/series/src"
        git(base, "worktree", "add", "-q", "--detach", str(tree), "base")
        series.apply(tree, "base", conf=self.conf, patches=self.patches, prefix="ci/")
        mine = self.tmp / "dev-linux"
        git(base, "worktree", "add", "-q", "-b", "series/net/x", str(mine), "refs/tags/base")
        (self.cache / "unknown.txt").write_text("not the tooling's\n")
        code, out = self.cleanup("--all")
        self.assertEqual(code, 1, out)
        self.assertIn(f"{base}: holds branches series/net/x and worktrees {mine}", out)
        self.assertEqual(sorted(p.name for p in self.cache.iterdir()),
                         [cache.MARK, "base.git", "pipeline.lock", "unknown.txt"])
        self.assertEqual(self.branches(base), ["base", "series/net/x"])
        code, out = self.cleanup("--all", "--force")
        self.assertEqual(code, 0, out)
        self.assertEqual(sorted(p.name for p in self.cache.iterdir()), [cache.MARK, "unknown.txt"])

    def test_all_on_a_cache_of_the_tooling_only_removes_the_cache(self):
        code, out = self.cleanup("--all")
        self.assertEqual(code, 0, out)
        self.assertFalse(self.cache.exists())

    def test_a_running_pipeline_is_not_cleaned_under(self):
        self.pipeline_run()
        with open(self.cache / "pipeline.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            before = snapshot(self.tmp)
            code, out = self.cleanup()
            self.assertEqual(code, 2, out)
            self.assertIn("a pipeline run holds", out)
            self.assertEqual(snapshot(self.tmp), before)
            # A dry run only reads: it lists, and the lock stays the run's.
            code, out = self.cleanup("--dry-run")
            self.assertEqual(code, 0, out)
            self.assertIn("would delete branch ci/all", out)
            self.assertEqual(snapshot(self.tmp), before)

    def test_only_the_tooling_worktree_paths_are_ours(self):
        tmp = Path(cleanup.tempfile.gettempdir())
        self.assertTrue(cleanup.ours(str(self.cache / "ws/series/src"), self.cache))
        self.assertTrue(cleanup.ours(str(self.cache / "ws-check/0123/src"), self.cache))
        self.assertTrue(cleanup.ours(str(tmp / "mqbypass-check-x1/src"), self.cache))
        self.assertFalse(cleanup.ours(str(self.cache / "base.git"), self.cache))
        self.assertFalse(cleanup.ours(str(self.cache / "mine/src"), self.cache))
        self.assertFalse(cleanup.ours(str(tmp / "other/src"), self.cache))
        self.assertFalse(cleanup.ours(str(self.mine), self.cache))

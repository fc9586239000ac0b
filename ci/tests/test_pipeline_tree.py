"""The base and apply stages on a scratch "kernel" repository: with
KERNEL_SRC the user's uncommitted changes are named as not tested and
commits added to the ci/* branches of the user's repository are refused;
the pipeline's own repository is forced as before."""

import contextlib
import io
import json
import os
import unittest
from pathlib import Path
from unittest import mock

from ci import pipeline, pipeline_tree
from ci.pipeline_common import Stage
from tools.series.tests.test_series import Workspace, git, make_base
from tools.series import series


class TreeStagesTest(Workspace):

    def setUp(self):
        super().setUp()
        self.repo = make_base(self.tmp / "linux")
        apply = series.apply
        patches = self.patches
        conf = self.conf

        def scratch_apply(*args, **kw):  # patches/ of the scratch workspace
            return apply(*args, conf=conf, patches=patches, **kw)
        for patch in (mock.patch.object(series, "apply", scratch_apply),
                      mock.patch.object(pipeline_tree.kconfig_tree, "extract"),
                      mock.patch.object(pipeline_tree, "CACHE", self.tmp / "cache")):
            patch.start()
            self.addCleanup(patch.stop)

    def run_stages(self, kernel_src, *names):
        env = {"KERNEL_SRC": str(self.repo), "KERNEL_BASE": "base"} if kernel_src else {}
        with mock.patch.dict(os.environ, env), contextlib.redirect_stdout(io.StringIO()):
            if not kernel_src:
                os.environ.pop("KERNEL_SRC", None)
            p = pipeline.Pipeline("test", self.tmp / "results")
            p.state.ws = self.tmp / "ws"
            p.state.base = {"BASE_REPO": str(self.repo), "BASE_TAG": "base", "BASE_PINNED": "no"}
            stages = [Stage(n) for n in names]
            for st in stages:
                getattr(p, f"stage_{st.name}")(st)
        return p, stages

    def test_uncommitted_changes_are_named_as_not_tested(self):
        (self.repo / "driver.c").write_text("edited\n")
        (self.repo / "new.c").write_text("new\n")
        _, (base,) = self.run_stages(True, "base")
        sha = git(self.repo, "rev-parse", "base").strip()[:12]
        self.assertIn(f"WARNING: uncommitted changes in {self.repo.resolve()} NOT tested "
                      f"(2 files: driver.c, new.c): the run tests commit {sha} (base)",
                      base.summary)

    def test_clean_tree_gives_no_warning(self):
        _, (base,) = self.run_stages(True, "base")
        self.assertNotIn("WARNING", base.summary)

    def test_kernel_src_commit_on_ci_branch_is_refused(self):
        p, _ = self.run_stages(True, "base", "apply")
        self.assertEqual(git(self.repo, "symbolic-ref", "HEAD").strip(), "refs/heads/main")
        git(self.repo, "checkout", "-q", "ci/net/drv-fix")
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "my note on the fix")
        mine = git(self.repo, "rev-parse", "HEAD").strip()
        git(self.repo, "checkout", "-q", "main")
        with self.assertRaises(pipeline_tree.StageFailed) as ctx:
            self.run_stages(True, "base", "apply")
        self.assertIn(f"ci/net/drv-fix: 1 commit(s) in neither patches/ nor the last apply: "
                      f"{mine[:7]}", str(ctx.exception))
        self.assertIn("the ci/* branches are the pipeline's", str(ctx.exception))
        self.assertEqual(git(self.repo, "rev-parse", "ci/net/drv-fix").strip(), mine)

    def test_pipeline_repository_is_forced(self):
        self.run_stages(False, "apply")
        fix = git(self.repo, "rev-parse", "ci/net/drv-fix").strip()
        git(self.repo, "branch", "-f", "ci/net/drv-fix",
            git(self.repo, "commit-tree", "-p", fix, "-m", "stray", f"{fix}^{{tree}}").strip())
        p, (apply,) = self.run_stages(False, "apply")
        self.assertEqual(git(self.repo, "rev-parse", "ci/net/drv-fix").strip(), fix)
        self.assertEqual(len(p.state.applied), 5)
        self.assertIn("5 patches of 3 series", apply.summary)

    def test_series_tree_moves_to_the_tip_alone(self):
        """apply works in ws/apply/src; ws/series/src, where the kernels are
        built, goes to the tip, and a second apply of the same patches
        rewrites none of its files (make has nothing to compile again)."""
        p, _ = self.run_stages(False, "apply")
        tree = self.tmp / "ws/series/src"
        self.assertEqual(p.state.series_tree, tree)
        # Neither worktree holds a branch: the user's repository keeps them free.
        for t in (tree, self.tmp / "ws/apply/src"):
            self.assertEqual(git(t, "rev-parse", "--abbrev-ref", "HEAD").strip(), "HEAD")
        self.assertEqual(git(tree, "rev-parse", "HEAD").strip(),
                         git(self.repo, "rev-parse", "ci/all").strip())
        touched = git(tree, "diff", "--name-only", "base", "HEAD").split()
        self.assertTrue(touched)
        times = {f: os.stat(tree / f).st_mtime_ns for f in touched}
        self.run_stages(False, "apply")
        self.assertEqual({f: os.stat(tree / f).st_mtime_ns for f in touched}, times)

    def test_base_built_once_for_the_same_key(self):
        built = []
        fragment = self.tmp / "fragment.config"
        fragment.write_text("CONFIG_A=y\n")

        def build(stages, src, out, label, *a, **kw):
            built.append(label)
            stages.logfile(label).parent.mkdir(parents=True, exist_ok=True)
            (Path(out) / "arch/x86/boot").mkdir(parents=True, exist_ok=True)
            (Path(out) / "arch/x86/boot/bzImage").write_text("kernel")
            (Path(out) / "build-source.json").write_text(json.dumps(
                {"commit": git(self.repo, "rev-parse", "base^{commit}").strip(),
                 "dirty": False}))
        with mock.patch.object(pipeline.Pipeline, "build", build), \
                mock.patch.object(pipeline.Pipeline, "test_fragments", lambda s: [fragment]):
            p, (_, first) = self.run_stages(False, "apply", "build_base")
            _, (_, second) = self.run_stages(False, "apply", "build_base")
            self.assertEqual(built, ["build-base"])
            self.assertIn("as built before", second.summary)
            self.assertEqual(p.state.base_kernel, self.tmp / "ws/base" / pipeline_tree.X86_BUILD)
            fragment.write_text("CONFIG_A=n\n")
            self.run_stages(False, "apply", "build_base")
            self.assertEqual(built, ["build-base", "build-base"])
            (p.state.base_kernel / "arch/x86/boot/bzImage").unlink()
            self.run_stages(False, "apply", "build_base")
            self.assertEqual(len(built), 3)
            # A copy whose stamp names another commit is no copy of the base.
            (p.state.base_kernel / "build-source.json").write_text('{"commit": "0"}')
            self.run_stages(False, "apply", "build_base")
            self.assertEqual(len(built), 4)
            with mock.patch.dict(os.environ, {"KCFLAGS": "-O1"}):
                self.run_stages(False, "apply", "build_base")
            self.assertEqual(len(built), 5)


if __name__ == "__main__":
    unittest.main()


class ControlPatchesTest(unittest.TestCase):
    """A negative control or design variant the series' tip no longer
    takes is named by the apply stage."""

    def test_every_control_is_listed(self):
        names = {p.name for p in pipeline_tree.control_patches()}
        self.assertIn("sfq-without-chain-head-change.patch", names)
        self.assertIn("dummy-queue-lock.patch", names)

    def test_a_patch_that_no_longer_applies_is_named(self):
        import subprocess
        import tempfile
        from pathlib import Path
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            subprocess.run(["git", "init", "-q", str(tree)], check=True)
            (tree / "f.c").write_text("a\nb\nc\n")
            good, bad = tree / "good.patch", tree / "bad.patch"
            good.write_text("--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
            # Made against an older f.c: its context line is gone.
            bad.write_text("--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n a\n-x\n+X\n c\n")
            self.assertEqual(pipeline_tree.not_applying(tree, [good, bad]), [bad])
            self.assertEqual((tree / "f.c").read_text(), "a\nb\nc\n")

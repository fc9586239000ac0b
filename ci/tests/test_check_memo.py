"""The checks stage reuses a patch's results while nothing that decides them
changed (ci/check_memo.py): the key over each part, the store, and the
stage on a small git repository with the runner stood in for."""

import contextlib
import io
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci import check_memo, pipeline_checks
from ci.pipeline_common import Stage, StageFailed
from ci.pipeline_state import RunState
from tools.series import series
from tools.series.checks import patchwork, runner
from tools.series.checks.patchwork import PatchReport, Result

IDENT = {"GIT_AUTHOR_NAME": "A U Thor", "GIT_AUTHOR_EMAIL": "author@example.org",
         "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_NAME": "C O Mitter",
         "GIT_COMMITTER_EMAIL": "committer@example.org",
         "GIT_COMMITTER_DATE": "2026-01-02T00:00:00Z"}


def git(repo, *args, **env):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True,
                          capture_output=True,
                          env={**os.environ, **IDENT, **env}).stdout.strip()


def commit(repo, files, message, **env):
    """A commit of files ({path: text}) on HEAD; its id."""
    for path, text in files.items():
        (Path(repo) / path).parent.mkdir(parents=True, exist_ok=True)
        (Path(repo) / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, **env)
    return git(repo, "rev-parse", "HEAD")


def new_repo(tmp):
    repo = Path(tmp) / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


class KeyTest(unittest.TestCase):
    """Each part of the key changes it; the committer date does not."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = new_repo(self.tmp.name)
        self.base = commit(self.repo, {"net/a.c": "int a = 1;\n"}, "base")
        self.patch = commit(self.repo, {"net/a.c": "int a = 2;\n"},
                            "net: a is 2\n\nSigned-off-by: A U Thor <author@example.org>\n")
        self.kw = dict(tree_name="net-next", recipients=None, committer_signs=True,
                       checks=["checkpatch", "build"], unavailable={"build": "no build"},
                       series_sources=["net/a.c"], fingerprint="f" * 64)

    def tearDown(self):
        self.tmp.cleanup()

    def key(self, commit_id=None, **changed):
        return check_memo.key(check_memo.key_parts(self.repo, commit_id or self.patch,
                                                   **{**self.kw, **changed}))

    def redo(self, files, message, parent=None, **env):
        """The patch made again on parent (default: the base)."""
        git(self.repo, "checkout", "-q", "--detach", parent or self.base)
        return commit(self.repo, files, message, **env)

    def test_the_same_content_with_another_committer_date_gives_the_same_key(self):
        again = self.redo({"net/a.c": "int a = 2;\n"},
                          "net: a is 2\n\nSigned-off-by: A U Thor <author@example.org>\n",
                          GIT_COMMITTER_DATE="2026-03-04T05:06:07Z")
        self.assertNotEqual(again, self.patch)
        self.assertEqual(self.key(again), self.key())

    def test_a_changed_message_changes_the_key(self):
        again = self.redo({"net/a.c": "int a = 2;\n"}, "net: a is two\n")
        self.assertNotEqual(self.key(again), self.key())

    def test_a_changed_author_changes_the_key(self):
        again = self.redo({"net/a.c": "int a = 2;\n"},
                          "net: a is 2\n\nSigned-off-by: A U Thor <author@example.org>\n",
                          GIT_AUTHOR_EMAIL="other@example.org")
        self.assertNotEqual(self.key(again), self.key())

    def test_a_changed_tree_changes_the_key(self):
        again = self.redo({"net/a.c": "int a = 3;\n"},
                          "net: a is 2\n\nSigned-off-by: A U Thor <author@example.org>\n")
        self.assertNotEqual(self.key(again), self.key())

    def test_a_changed_parent_tree_changes_the_key(self):
        # The same tree after the patch, reached from another parent.
        git(self.repo, "checkout", "-q", "--detach", self.base)
        other_base = commit(self.repo, {"net/a.c": "int a = 0;\n"}, "base")
        again = self.redo({"net/a.c": "int a = 2;\n"},
                          "net: a is 2\n\nSigned-off-by: A U Thor <author@example.org>\n",
                          parent=other_base)
        self.assertEqual(git(self.repo, "rev-parse", f"{again}^{{tree}}"),
                         git(self.repo, "rev-parse", f"{self.patch}^{{tree}}"))
        self.assertNotEqual(self.key(again), self.key())

    def test_each_setting_of_the_run_changes_the_key(self):
        for part, value in (("tree_name", "net"),
                            ("recipients", ["netdev@vger.kernel.org"]),
                            ("committer_signs", False),
                            ("checks", ["checkpatch"]),
                            ("unavailable", {}),  # a mode gate lifted
                            ("unavailable", {"build": "build: main mode only"}),
                            ("series_sources", ["net/a.c", "net/b.c"]),
                            ("fingerprint", "e" * 64)):
            with self.subTest(part=part, value=value):
                self.assertNotEqual(self.key(**{part: value}), self.key())

    def test_recipients_in_another_order_give_the_same_key(self):
        self.assertEqual(self.key(recipients=["b@example.org", "a@example.org"]),
                         self.key(recipients=["a@example.org", "b@example.org"]))
        self.assertNotEqual(self.key(recipients=[]), self.key(recipients=None))


class FingerprintTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        (self.root / "tools/series/checks").mkdir(parents=True)
        (self.root / "kernel/configs").mkdir(parents=True)
        (self.root / "tools/series/checks/source.py").write_text("A = 1\n")
        (self.root / "kernel/configs/vng.config").write_text("CONFIG_A=y\n")
        self.frag = self.root / "net.config"
        self.frag.write_text("CONFIG_NET=y\n")
        self.tools = {"gcc": "gcc 12.2.0", "sparse": "0.6.5"}

    def tearDown(self):
        self.tmp.cleanup()

    def fp(self, tools=None):
        return check_memo.fingerprint(tools or self.tools, [self.frag], root=self.root)

    def test_a_changed_project_file_changes_the_fingerprint(self):
        before = self.fp()
        for path in ("tools/series/checks/source.py", "kernel/configs/vng.config"):
            with self.subTest(path=path):
                old = (self.root / path).read_text()
                (self.root / path).write_text(old + "# changed\n")
                self.assertNotEqual(self.fp(), before)
                (self.root / path).write_text(old)
                self.assertEqual(self.fp(), before)

    def test_a_new_file_of_the_checks_changes_the_fingerprint(self):
        before = self.fp()
        (self.root / "tools/series/checks/rules.txt").write_text("x\n")
        self.assertNotEqual(self.fp(), before)

    def test_python_caches_leave_the_fingerprint_alone(self):
        before = self.fp()
        (self.root / "tools/series/checks/__pycache__").mkdir()
        (self.root / "tools/series/checks/__pycache__/source.cpython-311.pyc").write_bytes(b"x")
        self.assertEqual(self.fp(), before)

    def test_a_changed_fragment_changes_the_fingerprint(self):
        before = self.fp()
        self.frag.write_text("CONFIG_NET=y\nCONFIG_DUMMY=y\n")
        self.assertNotEqual(self.fp(), before)

    def test_a_changed_tool_version_changes_the_fingerprint(self):
        self.assertNotEqual(self.fp({**self.tools, "gcc": "gcc 12.3.0"}), self.fp())

    def test_every_tool_the_checks_run_is_versioned(self):
        with mock.patch.dict(check_memo.TOOLS, {n: (lambda n=n: f"{n} 1")
                                                for n in check_memo.TOOLS}):
            versions = check_memo.tool_versions(clang="clang-19 19.1.7")
        self.assertEqual(set(versions), {"gcc", "sparse", "clang", "spatch", "objdump", "perl",
                                         "pylint", "ruff", "shellcheck", "yamllint", "python"})
        self.assertEqual(versions["clang"], "clang-19 19.1.7")

    def test_the_projects_check_files_are_fingerprinted(self):
        from common.paths import ROOT
        files = {p.relative_to(ROOT).as_posix() for pat in check_memo.PROJECT_FILES
                 for p in ROOT.glob(pat) if p.is_file()}
        for want in ("tools/series/checks/runner.py", "tools/series/checks/kbuild.py",
                     "tools/series/ruff-check.js", "ci/pipeline_checks.py",
                     "kernel/known-commits.txt", "kernel/configs/no-werror.config"):
            self.assertIn(want, files)


class StoreTest(unittest.TestCase):
    def test_a_stored_report_comes_back_exactly(self):
        results = {  # not in sorted order: the checks' order is kept
            "xmit_disasm": Result("fail", "dummy_xmit differs from the base: +nop",
                                  "--- base\n+++ patch\n+ nop\n"),
            "checkpatch": Result("warn", "1 warning ‘x’", "WARNING: line 1\n\ttab"),
            "ruff": Result("skip", "ruff is not installed", missing="ruff is not installed"),
            "build": Result("pass", "no new warnings"),
        }
        report = PatchReport(3, "net-next/x", "c" * 40, "net: x", results,
                             ["netdev@vger.kernel.org"], ["a@example.org", "b@example.org"])
        parts = check_memo.KeyParts("t", "p", "m", "net-next", None, True, ["build"], {}, [],
                                    "f")
        with tempfile.TemporaryDirectory() as tmp:
            store = check_memo.Store(Path(tmp) / "check-results")
            self.assertIsNone(store.get("k" * 64))
            store.put("k" * 64, report, parts)
            got = store.get("k" * 64)
            self.assertEqual([p.name for p in store.directory.iterdir()], ["k" * 64 + ".json"])
        self.assertEqual(got["results"], results)
        self.assertEqual(list(got["results"]), list(results))
        self.assertEqual((got["to"], got["cc"]), (report.to, report.cc))

    def test_a_file_of_another_key_or_format_is_not_read(self):
        report = PatchReport(1, "t", "c", "s", {"build": Result("pass")})
        parts = check_memo.KeyParts("t", "p", "m", "net", None, True, [], {}, [], "f")
        with tempfile.TemporaryDirectory() as tmp:
            store = check_memo.Store(Path(tmp))
            store.put("a" * 64, report, parts)
            os.replace(store.path("a" * 64), store.path("b" * 64))
            self.assertIsNone(store.get("b" * 64))
            store.path("c" * 64).write_text("{not json")
            self.assertIsNone(store.get("c" * 64))


CONTROL_FAULT = "trailing whitespace"


def fake_check_patch(tree, report, ctx, wanted=runner.CHECKS):
    """Every check passes on a series patch; checkpatch fails a control."""
    control = "control" in report.subject
    report.results = {c: Result("fail", f"{c}: {CONTROL_FAULT}", "line 1\n")
                      if control and c == "checkpatch" else Result("pass", f"{c} ok {report.index}")
                      for c in wanted}
    report.to, report.cc = ["netdev@vger.kernel.org"], [f"m{report.index}@example.org"]
    return report


class StageTest(unittest.TestCase):
    """stage_checks on a git repository of two patches and one negative
    control, the builds and the runner stood in for."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        tmp = Path(self.tmp.name)
        self.repo = repo = new_repo(tmp)
        self.base = commit(repo, {"net/a.c": "int a;\n", "net/b.c": "int b;\n"}, "base")
        shas = [commit(repo, {"net/a.c": "int a = 1;\n"}, "net: a is 1"),
                commit(repo, {"net/b.c": "int b = 1;\n"}, "net: b is 1")]
        ser = series.Series("net-next", "x", Path("."), 1)
        self.applied = [(ser, Path(f"{i}.patch"), sha) for i, sha in enumerate(shas, 1)]
        controls = tmp / "controls"
        commit(repo, {"net/a.c": "int a = 1; \n"}, "net: negative control")
        git(repo, "format-patch", "-q", "-1", "-o", str(controls))
        (next(controls.glob("*.patch"))).rename(controls / "ctl.patch")
        git(repo, "reset", "-q", "--hard", shas[-1])
        frag = tmp / "net.config"
        frag.write_text("CONFIG_NET=y\n")
        self.store = tmp / "cache/check-results"
        self.ws = tmp / "ws"
        env = {**os.environ, **IDENT}
        self.patches = [
            mock.patch.object(pipeline_checks, "CACHE", tmp / "cache"),
            mock.patch.object(pipeline_checks, "CONTROLS", controls),
            mock.patch.object(pipeline_checks, "NEGATIVE_CONTROLS",
                              {"ctl.patch": {"checkpatch": CONTROL_FAULT}}),
            mock.patch.object(check_memo, "STORE", self.store),
            mock.patch.object(check_memo, "tool_versions", lambda clang: {"gcc": "12"}),
            mock.patch.object(series, "load_conf", lambda: None),
            mock.patch.object(series, "role_env", lambda conf: env),
            mock.patch.object(series, "load_series", lambda: []),
            mock.patch.object(pipeline_checks.per_series, "series_checks",
                              lambda infos: {"cover_letter": Result("pass", "one")}),
            mock.patch.object(pipeline_checks.CheckStages, "build",
                              lambda *a, **k: (0, "")),
            mock.patch.object(pipeline_checks.CheckStages, "object_builds",
                              lambda *a, **k: {}),
            mock.patch.object(pipeline_checks.CheckStages, "test_fragments",
                              lambda self, extra=(): [frag, *extra]),
        ]
        for p in self.patches:
            p.start()
        self.addCleanup(mock.patch.stopall)

    def tearDown(self):
        self.tmp.cleanup()

    def run_stage(self, config_ok=True, check=fake_check_patch):
        stages = pipeline_checks.CheckStages()
        stages.mode, stages.results = "test", Path(self.tmp.name) / "results"
        stages.state = RunState()
        stages.state.series_tree = self.repo
        stages.state.base = {"BASE_TAG": self.base}
        stages.state.applied = self.applied
        stages.state.tip = self.applied[-1][2]
        stages.state.ws = self.ws
        stage = Stage("checks")
        calls = mock.Mock(side_effect=check)
        prepared = mock.Mock()
        out = io.StringIO()
        with mock.patch.object(runner, "check_patch", calls), \
                mock.patch.object(runner, "prepare", prepared), \
                mock.patch.object(pipeline_checks.CheckStages, "test_config",
                                  lambda self, tree: (config_ok, "test_config said so")), \
                contextlib.redirect_stdout(out):
            failed = None
            try:
                stages.stage_checks(stage)
            except StageFailed as err:
                failed = err
        subjects = [c.args[1].subject for c in calls.call_args_list]
        prepared_commits = [c.args[1] for c in prepared.call_args_list]
        return stages, stage, failed, subjects, prepared_commits, out.getvalue()

    def stored(self):
        return sorted(self.store.glob("*.json")) if self.store.is_dir() else []

    def test_a_reused_patchs_runner_is_not_called_and_its_report_is_the_same(self):
        first, stage1, failed, subjects, _, _ = self.run_stage()
        self.assertIsNone(failed)
        self.assertEqual(subjects, ["net: a is 1", "net: b is 1", "net: negative control"])
        self.assertEqual(len(self.stored()), 3)
        again, stage2, failed, subjects, prepared, out = self.run_stage()
        self.assertIsNone(failed)
        self.assertEqual(subjects, [], "a reused patch was checked again")
        self.assertEqual(prepared, [], "prepare ran for patches nobody checks")
        self.assertEqual([r.as_dict() for r in again.state.patch_reports],
                         [r.as_dict() for r in first.state.patch_reports])
        self.assertEqual(stage2.cases, stage1.cases)
        self.assertEqual(patchwork.table(again.state.patch_reports),
                         patchwork.table(first.state.patch_reports))
        self.assertIn("results of 3 of 3 patches reused: same content, checks and tools",
                      stage2.summary)
        self.assertIn("results of 0 of 3 patches reused", stage1.summary)
        self.assertRegex(out, r"\[1/2\] net-next/x: net: a is 1: results reused "
                              r"\(key [0-9a-f]{12}\)")
        self.assertRegex(out, r"net: negative control: results reused \(key [0-9a-f]{12}\)")

    def test_a_changed_patch_is_checked_again_and_prepared_alone(self):
        self.run_stage()
        git(self.repo, "checkout", "-q", "--detach", self.applied[0][2])
        changed = commit(self.repo, {"net/b.c": "int b = 2;\n"}, "net: b is 2")
        self.applied[1] = (self.applied[1][0], self.applied[1][1], changed)
        _, _, failed, subjects, prepared, _ = self.run_stage()
        self.assertIsNone(failed)
        # The control is applied on another tip: its parent tree changed too.
        self.assertEqual(subjects, ["net: b is 2", "net: negative control"])
        self.assertEqual(prepared[0], [changed])

    def test_checks_fresh_checks_every_patch_again(self):
        self.run_stage()
        with mock.patch.dict(os.environ, {check_memo.FRESH: "1"}):
            _, stage, _, subjects, _, _ = self.run_stage()
        self.assertEqual(len(subjects), 3)
        self.assertIn("results of 0 of 3 patches reused", stage.summary)

    def test_only_a_stage_that_passed_stores_results(self):
        def failing_patch(tree, report, ctx, wanted=runner.CHECKS):
            fake_check_patch(tree, report, ctx, wanted)
            if report.index == 2 and "control" not in report.subject:
                report.results["build"] = Result("fail", "build broken: x")
            return report

        def control_not_caught(tree, report, ctx, wanted=runner.CHECKS):
            report.results = {c: Result("pass", "ok") for c in wanted}
            return report
        for why, kw in (("test_config", {"config_ok": False}),
                        ("a failing patch", {"check": failing_patch}),
                        ("a negative control not caught", {"check": control_not_caught})):
            with self.subTest(why=why):
                _, _, failed, _, _, _ = self.run_stage(**kw)
                self.assertIsNotNone(failed)
                self.assertEqual(self.stored(), [], f"stored after failing on {why}")
        # The same patches checked again in full, and kept once it passes.
        _, _, failed, subjects, _, _ = self.run_stage()
        self.assertIsNone(failed)
        self.assertEqual(len(subjects), 3)
        self.assertEqual(len(self.stored()), 3)


if __name__ == "__main__":
    unittest.main()

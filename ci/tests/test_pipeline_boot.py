"""The main command's vm-debug stage: the patched kernel built with each
debug config and booted with the judged programs (no peer suite), its cases
named after the config, and a failing config failing the stage."""

import contextlib
import io
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

import pipeline
import pipeline_boot
import report
import selftests_run


class VmDebugTest(unittest.TestCase):
    def run_stage(self, ok_by_cfg):
        calls = []

        def fake_matrix(kernels, outdir, **kw):
            cfg = Path(outdir).name.removeprefix("vm-")
            calls.append((cfg, kernels, kw))
            return types.SimpleNamespace(
                ok=ok_by_cfg[cfg], summary=f"{cfg} summary", matrix="",
                cases=[report.Case("vm.patched", "boot and run", "pass")])

        builds = []
        with tempfile.TemporaryDirectory() as tmp:
            p = pipeline.Pipeline("main", tmp)
            p.tip_commit, p.ws, p.series_tree = "abc", Path(tmp) / "ws", Path(tmp) / "src"
            st = pipeline.Stage("vm_debug")
            with mock.patch.object(selftests_run, "run_matrix", fake_matrix), \
                    mock.patch.object(selftests_run, "programs",
                                      lambda: [("churn", "ktap"), ("tc-testing", "peer")]), \
                    mock.patch.object(pipeline.Pipeline, "checkout", lambda *a: None), \
                    mock.patch.object(pipeline.Pipeline, "build",
                                      lambda self, src, out, label, **kw:
                                      builds.append((out.name, kw["fragments"]))), \
                    contextlib.redirect_stdout(io.StringIO()):
                try:
                    p.stage_vm_debug(st)
                    failed = None
                except pipeline.StageFailed as e:
                    failed = str(e)
        return st, calls, builds, failed

    def test_both_configs_built_and_booted(self):
        st, calls, builds, failed = self.run_stage({"debug": True, "kcsan": True})
        self.assertIsNone(failed)
        self.assertEqual([b[0] for b in builds], ["build-x86-debug", "build-x86-kcsan"])
        self.assertEqual([f.name for f in builds[0][1]],
                         ["vng.config", "net-tests.config", "debug.config"])
        self.assertEqual([c[0] for c in calls], ["debug", "kcsan"])
        for _, kernels, kw in calls:
            self.assertEqual(list(kernels), ["patched"])
            self.assertEqual(kw["progs"], [("churn", "ktap")])  # no peer suite
            self.assertEqual(kw["churn_seconds"], 60)
        self.assertEqual([c.suite for c in st.cases], ["debug.vm.patched", "kcsan.vm.patched"])

    def test_a_failing_config_fails_the_stage(self):
        _, calls, _, failed = self.run_stage({"debug": True, "kcsan": False})
        self.assertEqual(len(calls), 2)
        self.assertIn("kcsan summary", failed)

    def test_stage_is_in_main_only(self):
        self.assertIn("vm_debug", pipeline.Pipeline.PLAN["main"])
        self.assertNotIn("vm_debug", pipeline.Pipeline.PLAN["test"])
        self.assertIs(pipeline.Pipeline.stage_vm_debug, pipeline_boot.BootStages.stage_vm_debug)


if __name__ == "__main__":
    unittest.main()

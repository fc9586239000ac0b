"""The pipeline's layout (one module per job) and its process helpers."""

import contextlib
import io
import re
import tempfile
import unittest
from pathlib import Path

import pipeline
import pipeline_checks
import pipeline_common


class LayoutTest(unittest.TestCase):
    OWNER = {"setup": "pipeline_host", "userspace": "pipeline_host",
             "host_tests": "pipeline_host", "base": "pipeline_tree", "apply": "pipeline_tree",
             "build_base": "pipeline_tree", "checks": "pipeline_checks",
             "submission": "pipeline_submit", "mailing_list": "pipeline_mail",
             "kunit": "pipeline_boot", "vm": "pipeline_boot", "vm_debug": "pipeline_boot",
             "bench": "pipeline_bench"}

    def test_every_planned_stage_has_its_module(self):
        planned = {n for plan in pipeline.Pipeline.PLAN.values() for n in plan}
        self.assertEqual(planned, set(self.OWNER))
        for name, module in self.OWNER.items():
            with self.subTest(name):
                method = getattr(pipeline.Pipeline, f"stage_{name}")
                self.assertEqual(method.__module__, module)

    def test_api_stays_on_pipeline(self):
        self.assertIs(pipeline.Stage, pipeline_common.Stage)
        self.assertIs(pipeline.StageFailed, pipeline_common.StageFailed)
        self.assertIs(pipeline.UsageError, pipeline_common.UsageError)
        self.assertEqual(pipeline.CACHE, pipeline_common.CACHE)


class ShTest(unittest.TestCase):
    def test_output_logged_and_returned(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "x.log"
            seen = []
            code, out = pipeline_common.sh(["sh", "-c", "echo one; echo two >&2"], log,
                                           progress=seen.append)
            self.assertEqual((code, out), (0, "one\ntwo\n"))
            self.assertEqual(seen, ["one", "two"])
            self.assertEqual(log.read_text(), "one\ntwo\n")

    def test_failure_raises_with_the_tail(self):
        with self.assertRaises(pipeline_common.StageFailed) as ctx:
            pipeline_common.sh(["sh", "-c", "seq 1 30; exit 3"])
        msg = str(ctx.exception)
        self.assertTrue(msg.startswith("sh -c seq 1 30; exit 3 exited 3\n16\n"), msg)
        self.assertTrue(msg.endswith("\n30"))
        self.assertEqual(pipeline_common.sh(["sh", "-c", "exit 4"], check=False), (4, ""))

    def test_project_cache_in_the_environment(self):
        _, out = pipeline_common.sh(["sh", "-c", "echo $PROJECT_CACHE"])
        self.assertEqual(out.strip(), str(pipeline_common.CACHE))


class BuildProgressTest(unittest.TestCase):
    def test_counts_objects_and_echoes_errors(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            p = pipeline_common.BuildProgress("x", every=2)
            for line in ["  CC      a.o", "  LD      b.o", "  HOSTCC  c", "x.c:1: error: no",
                         "  AR      d.a"]:
                p(line)
        self.assertEqual(p.n, 3)
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 2)
        self.assertTrue(re.match(r"    x: 2 objects, \d+s$", lines[0]), lines)
        self.assertEqual(lines[1], "    x.c:1: error: no")


class NegativeControlTest(unittest.TestCase):
    def test_broken_patch_breaks_what_must_catch_it(self):
        text = pipeline_checks.NEGATIVE_CONTROL
        self.assertTrue(any(len(ln.expandtabs(8)) > 80 for ln in text.splitlines()))
        self.assertIn("int unused_variable;", text)
        self.assertEqual(pipeline_checks.NEGATIVE_CONTROL_CAUGHT_BY,
                         {"checkpatch", "build", "xmit_disasm"})
        old, new = pipeline_checks.NEGATIVE_CONTROL_XMIT
        self.assertTrue(new.startswith(old) and len(new) > len(old))


if __name__ == "__main__":
    unittest.main()

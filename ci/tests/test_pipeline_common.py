"""The pipeline's layout (one module per job) and its process helpers."""

import contextlib
import io
import re
import tempfile
import unittest
from pathlib import Path

from ci import pipeline
from tools.series.checks import per_series, runner
from ci import pipeline_checks
from ci import pipeline_common


class LayoutTest(unittest.TestCase):
    OWNER = {"setup": "pipeline_host", "userspace": "pipeline_host",
             "host_tests": "pipeline_host", "base": "pipeline_tree", "apply": "pipeline_tree",
             "build_base": "pipeline_tree", "checks": "pipeline_checks",
             "submission": "pipeline_submit", "mailing_list": "pipeline_mail",
             "kunit": "pipeline_boot", "vm": "pipeline_boot", "vm_debug": "pipeline_boot",
             "icount": "pipeline_bench", "bench": "pipeline_bench"}

    def test_every_planned_stage_has_its_module(self):
        planned = {n for plan in pipeline.Pipeline.PLAN.values() for n in plan}
        self.assertEqual(planned, set(self.OWNER))
        for name, module in self.OWNER.items():
            with self.subTest(name):
                method = getattr(pipeline.Pipeline, f"stage_{name}")
                self.assertEqual(method.__module__, f"ci.{module}")

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
    def test_every_check_has_a_control(self):
        named = {c for want in pipeline_checks.NEGATIVE_CONTROLS.values() for c in want}
        self.assertEqual(named, set(runner.CHECKS))
        self.assertEqual(set(pipeline_checks.BAD_SERIES_FAILS), set(runner.SERIES_CHECKS))

    def test_controls_carry_their_faults(self):
        kernel = (pipeline_checks.CONTROLS / "checks-kernel.patch").read_text()
        added = [ln[1:] for ln in kernel.splitlines() if ln.startswith("+")]
        self.assertTrue(any(ln != ln.rstrip() for ln in added))  # trailing whitespace
        self.assertTrue(any(len(ln.expandtabs(8)) > 80 for ln in added))
        for text in ("static inline int dummy_negative_inline", "module_param(negative_param",
                     "return bytes / ns;", "negative_count++;", "int unused_variable;",
                     "if (p)\n+\t\tkfree(p);", " * @wrong:", "+static int dummy_negative_header",
                     "+F:\tdrivers/net/dummy_negative_missing.c",
                     "skb_orphan(skb);", 'Fixes: 3f05e6886a59 ("net_sched: a subject'):
            self.assertIn(text, kernel)
        self.assertNotIn("Signed-off-by:", kernel.split("\n---\n")[0])
        selftests = (pipeline_checks.CONTROLS / "checks-selftests.patch").read_text()
        for text in ("+\tnegative_control.sh \\\n \taltnames.sh", "print(undefined_name)",
                     "+name: one\n+name: two", "+\tint negative;", "+cd $dir"):
            self.assertIn(text, selftests)

    def test_bad_series_breaks_each_rule(self):
        for check, want in pipeline_checks.BAD_SERIES_FAILS.items():
            res = per_series.SERIES_FUNCS[check](pipeline_checks.BAD_SERIES)
            self.assertEqual(res.status, want, check)


if __name__ == "__main__":
    unittest.main()

"""The run's kernel builds table: each build's CC lines, time and ccache
hits and misses (BuildProgress, sh), summed per stage and build in
summary.md, results.json and the run's output."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci import pipeline, pipeline_checks, pipeline_common, report
from ci.pipeline_common import BuildProgress, KernelBuild, Stage
from ci.tests.test_pipeline import Fake
from tools.series.checks.patchwork import PatchReport

MAKE_OUTPUT = """\
  SYNC    include/config/auto.conf
  HOSTCC  scripts/basic/fixdep
  CC      init/main.o
  CC [M]  net/sched/sch_sfq.o
  AS      arch/x86/entry/entry_64.o
  CC      net/core/dev.o
  AR      net/built-in.a
  LD [M]  net/sched/sch_sfq.ko
"""

# ccache --print-stats of ccache 4.7/4.8 (part), before and after a build.
BEFORE = "cache_miss\t100\ndirect_cache_hit\t40\npreprocessed_cache_hit\t2\nfiles_in_cache\t7\n"
AFTER = "cache_miss\t103\ndirect_cache_hit\t45\npreprocessed_cache_hit\t3\nfiles_in_cache\t9\n"


def fake_ccache(*texts):
    """ccache_counters() answering texts in turn; the directories asked for."""
    asked, answers = [], iter(texts)

    def counters(directory):
        asked.append(str(directory))
        text = next(answers)
        return None if text is None else pipeline_common.parse_ccache_stats(text)
    return counters, asked


class RecorderTest(unittest.TestCase):
    def setUp(self):
        self.first = len(pipeline_common.BUILDS)

    def recorded(self):
        return pipeline_common.BUILDS[self.first:]

    def test_parse_print_stats(self):
        self.assertEqual(pipeline_common.parse_ccache_stats(BEFORE + "junk line\n"),
                         {"cache_miss": 100, "direct_cache_hit": 40,
                          "preprocessed_cache_hit": 2, "files_in_cache": 7})

    def test_cc_lines_and_ccache_delta(self):
        counters, asked = fake_ccache(BEFORE, AFTER)
        with mock.patch.object(pipeline_common, "ccache_counters", counters), \
                contextlib.redirect_stdout(io.StringIO()):
            with BuildProgress("patched", ccache="/c") as p:
                for line in MAKE_OUTPUT.splitlines():
                    p(line)
        [b] = self.recorded()
        self.assertEqual((b.label, b.objects, b.hits, b.misses, b.from_ccache),
                         ("patched", 3, 6, 3, False))
        self.assertEqual(asked, ["/c", "/c"])
        self.assertEqual(p.n, 6)  # the progress lines still count CC, LD, AR, AS

    def test_no_cc_lines_counts_ccache_calls(self):
        counters, _ = fake_ccache(BEFORE, AFTER)
        with mock.patch.object(pipeline_common, "ccache_counters", counters):
            with BuildProgress("UML kunit", cc_lines=False, ccache="/c") as p:
                p("[06:40:01] Building KUnit Kernel ...")
        [b] = self.recorded()
        self.assertEqual((b.objects, b.hits, b.misses, b.from_ccache), (9, 6, 3, True))

    def test_without_ccache_hits_are_unknown(self):
        counters, _ = fake_ccache(None, AFTER)
        with mock.patch.object(pipeline_common, "ccache_counters", counters):
            with BuildProgress("x", ccache="/c") as p:
                p("  CC      a.o")
        [b] = self.recorded()
        self.assertEqual((b.objects, b.hits, b.misses), (1, None, None))

    def test_sh_records_a_build_with_its_ccache_dir(self):
        counters, asked = fake_ccache(BEFORE, AFTER)
        script = "printf '%s' \"$OUT\""
        with mock.patch.object(pipeline_common, "ccache_counters", counters), \
                contextlib.redirect_stdout(io.StringIO()):
            with self.assertRaises(pipeline_common.StageFailed):
                pipeline_common.sh(["sh", "-c", script + "; exit 2"], progress=BuildProgress("b"),
                                   env={"OUT": MAKE_OUTPUT, "CCACHE_DIR": "/elsewhere"})
        [b] = self.recorded()  # a failed build is recorded too
        self.assertEqual((b.label, b.objects, b.hits, b.misses), ("b", 3, 6, 3))
        self.assertEqual(asked, ["/elsewhere", "/elsewhere"])

    def test_ccache_dir_defaults_to_the_project_cache(self):
        self.assertEqual(pipeline_common.ccache_dir({}), pipeline_common.CACHE / "ccache")
        self.assertEqual(pipeline_common.ccache_dir({"CCACHE_DIR": "/x"}), Path("/x"))


def stages():
    checks = Stage("checks", "pass", 600.0)
    checks.builds = [KernelBuild("base", 0, 20.0, 0, 0),
                     KernelBuild("W=1 net/a patch 1", 10, 30.0, 4, 6),
                     KernelBuild("W=1 net/a patch 1", 2, 6.0, 2, 0),
                     KernelBuild("patched", 5, 10.0, None, None)]
    base = Stage("build-base", "pass", 1000.0)
    base.builds = [KernelBuild("base", 2000, 900.0, 100, 1900)]
    kunit = Stage("kunit", "pass", 300.0)
    kunit.builds = [KernelBuild("UML kunit", 400, 200.0, 50, 350, from_ccache=True)]
    return [Stage("setup", "pass", 5.0), base, checks, kunit]


class TableTest(unittest.TestCase):
    def test_rows_per_stage_and_build_with_the_total(self):
        rows = report.build_rows(stages())
        got = [(r["stage"], r["label"], r["builds"], r["objects"], r["seconds"],
                r["s_per_object"], r["hits"], r["misses"]) for r in rows]
        self.assertEqual(got, [
            ("build-base", "base", 1, 2000, 900.0, 0.45, 100, 1900),
            ("checks", "base", 1, 0, 20.0, None, 0, 0),
            ("checks", "W=1 net/a patch 1", 2, 12, 36.0, 3.0, 6, 6),
            ("checks", "patched", 1, 5, 10.0, 2.0, None, None),
            ("kunit", "UML kunit", 1, 400, 200.0, 0.5, 50, 350),
            ("total", "", 6, 2417, 1166.0, 0.48, None, None)])

    def test_text_table(self):
        text = report.build_table(stages())
        lines = text.splitlines()
        self.assertEqual(lines[0].split(), ["stage", "build", "runs", "objects", "time",
                                            "s/object", "ccache", "hits", "misses"])
        self.assertEqual(lines[3].split(), ["checks", "W=1", "net/a", "patch", "1", "2", "12",
                                            "0.6", "min", "3.00", "6", "6"])
        self.assertEqual(lines[5].split(), ["kunit", "UML", "kunit", "1", "400*", "3.3", "min",
                                            "0.50", "50", "350"])
        self.assertEqual(lines[6].split(), ["total", "6", "2417*", "19.4", "min", "0.48", "-",
                                            "-"])
        self.assertIn("kunit.py shows no make output", lines[7])

    def test_summary_and_results(self):
        tmp = tempfile.mkdtemp()
        report.write(tmp, "test", {}, stages(), [], {})
        summary = (Path(tmp) / "summary.md").read_text()
        self.assertIn("## Kernel builds", summary)
        self.assertIn("| build-base | base | 1 | 2000 | 15.0 min | 0.45 | 100 | 1900 |", summary)
        self.assertIn("| total |  | 6 | 2417* | 19.4 min | 0.48 | - | - |", summary)
        data = json.loads((Path(tmp) / "results.json").read_text())
        self.assertEqual(data["kernel_builds"][-1]["objects"], 2417)
        report.write(tmp, "test", {}, [Stage("setup", "pass", 5.0)], [], {})
        self.assertNotIn("Kernel builds", (Path(tmp) / "summary.md").read_text())


class ChecksRowTest(unittest.TestCase):
    def test_a_patchs_builds_and_checkers_are_rows_of_their_own(self):
        patch = PatchReport(3, "net-next/mq-bypass", "abc", "net: x")
        self.assertEqual(pipeline_checks.build_row(patch, ["W=1"]),
                         "W=1 net-next/mq-bypass patch 3")
        sparse = ["W=1", "C=2", "CHECK=/c/sparse-0.6/bin/sparse", "net/sched/sch_generic.o"]
        self.assertEqual(pipeline_checks.build_row(patch, sparse),
                         "W=1 net-next/mq-bypass patch 3 sparse")
        self.assertEqual(pipeline_checks.build_row(patch, ["C=2", "CHECK=/t/scripts/coccicheck"]),
                         "W=1 net-next/mq-bypass patch 3 coccicheck")
        self.assertIsNone(pipeline_checks.build_row(None, ["W=1"]))


class PipelineBuildsTest(unittest.TestCase):
    def test_each_stage_gets_the_builds_it_ran(self):
        class Building(Fake):
            def stage_build_base(self, stage):
                self.fake("build_base", stage)
                pipeline_common.BUILDS.append(KernelBuild("base", 2000, 900.0, 1, 1999))

            def stage_checks(self, stage):
                self.fake("checks", stage)
                pipeline_common.BUILDS.append(KernelBuild("patched", 30, 60.0, 0, 30))
        tmp = tempfile.mkdtemp()
        (Path(tmp) / "logs").mkdir()
        out = io.StringIO()
        p = Building(tmp, None)
        with contextlib.redirect_stdout(out):
            self.assertEqual(p.run(), 0)
        by = {s.name: [b.label for b in s.builds] for s in p.stages}
        self.assertEqual(by["build-base"], ["base"])
        self.assertEqual(by["checks"], ["patched"])
        self.assertEqual(by["vm"], [])
        self.assertIn(report.build_table(p.stages), out.getvalue())
        data = json.loads((Path(tmp) / "results.json").read_text())
        self.assertEqual([(r["stage"], r["objects"]) for r in data["kernel_builds"]],
                         [("build-base", 2000), ("checks", 30), ("total", 2030)])
        self.assertIsNotNone(pipeline)


if __name__ == "__main__":
    unittest.main()

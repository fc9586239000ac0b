"""Pipeline driver: a failing stage fails the run and skips what needs it."""

import contextlib
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci import pipeline
from ci import pipeline_submit
from ci.pipeline_state import PRODUCER
from ci.tests.test_pipeline_state import handed_on, sample


class Fake(pipeline.Pipeline):
    PLAN = {"test": ["base", "apply", "userspace", "build_base", "checks", "vm"]}

    def __init__(self, results, fail):
        super().__init__("test", results)
        self.fail, self.ran = fail, []

    def fake(self, name, stage):
        self.ran.append(name)
        for field, by in PRODUCER.items():  # what the stage hands on
            if by == name:
                setattr(self.state, field, sample(self.results)[field])
        stage.cases.append(pipeline.report.Case(name, "case", "pass"))
        if name == self.fail:
            raise pipeline.StageFailed(f"{name} broke\ndetail line")


for _name in Fake.PLAN["test"]:
    setattr(Fake, f"stage_{_name}", lambda self, stage, _n=_name: self.fake(_n, stage))


class PipelineTest(unittest.TestCase):
    def run_fake(self, fail):
        tmp = tempfile.mkdtemp()
        (Path(tmp) / "logs").mkdir()
        p = Fake(tmp, fail)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = p.run()
        return p, code, out.getvalue(), json.loads((Path(tmp) / "results.json").read_text())

    def test_failure_skips_dependents_and_exits_nonzero(self):
        p, code, out, data = self.run_fake("build_base")
        self.assertEqual(code, 1)
        self.assertEqual(p.ran, ["base", "apply", "userspace", "build_base", "checks"])
        status = {s["name"]: s["status"] for s in data["stages"]}
        self.assertEqual(status, {"base": "pass", "apply": "pass", "userspace": "pass",
                                  "build-base": "fail", "checks": "pass", "vm": "skip"})
        vm = next(s for s in data["stages"] if s["name"] == "vm")
        self.assertEqual(vm["summary"], "skipped: needs build_base")
        self.assertFalse(data["ok"])
        self.assertIn("pipeline: FAILED (build-base)", out)
        self.assertIn("build_base broke", out)
        self.assertTrue((Path(p.results) / "junit.xml").read_text().count("<failure") >= 1)

    def test_all_pass(self):
        p, code, out, data = self.run_fake(None)
        self.assertEqual(code, 0)
        self.assertTrue(data["ok"])
        self.assertIn("pipeline: 6 passed, 0 failed, 0 warned, 0 skipped", out)

    def test_warnings_are_counted_and_shown(self):
        # A check's warning counted in no total, and junit.xml showed it as a
        # plain pass.
        class Warned(Fake):
            def stage_checks(self, stage):
                self.fake("checks", stage)
                stage.cases.append(pipeline.report.Case(
                    "checks.net", "01 checkpatch net: x", "warn", "CHECK: line too long"))
        tmp = tempfile.mkdtemp()
        (Path(tmp) / "logs").mkdir()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(Warned(tmp, None).run(), 0)
        self.assertIn("pipeline: 6 passed, 0 failed, 1 warned, 0 skipped", out.getvalue())
        summary = (Path(tmp) / "summary.md").read_text()
        self.assertIn("6 passed, 0 failed, 1 warned, 0 skipped.", summary)
        self.assertIn("- WARN checks.net / 01 checkpatch net: x: CHECK: line too long", summary)
        import xml.etree.ElementTree as ET
        root = ET.parse(Path(tmp) / "junit.xml").getroot()
        suite = next(s for s in root if s.get("name") == "checks")
        self.assertEqual(suite.get("warnings"), "1")
        case = next(c for c in suite if c.get("name") == "01 checkpatch net: x")
        self.assertEqual(case.find("properties/property").attrib,
                         {"name": "status", "value": "warn"})
        self.assertEqual(case.find("system-out").text, "WARN: CHECK: line too long")

    def test_stage_details_reach_the_summary(self):
        class Details(Fake):
            def stage_vm(self, stage):
                stage.details = "peer suite tdc: 2 case(s); regressions 0"
        tmp = tempfile.mkdtemp()
        (Path(tmp) / "logs").mkdir()
        with contextlib.redirect_stdout(io.StringIO()):
            Details(tmp, None).run()
        text = (Path(tmp) / "summary.md").read_text()
        self.assertIn("## vm: details", text)
        self.assertIn("peer suite tdc: 2 case(s); regressions 0", text)

    def test_run_is_stamped_with_the_project_commit(self):
        # main() stamps the results before any stage; the summary names it.
        tmp = Path(tempfile.mkdtemp())
        results = tmp / "results"
        old_cache = pipeline.CACHE
        pipeline.CACHE = tmp / "cache"
        try:
            with mock.patch.object(pipeline.Pipeline, "run", return_value=0):
                self.assertEqual(pipeline.main(["test", "--results", str(results)]), 0)
        finally:
            pipeline.CACHE = old_cache
        stamp = json.loads((results / "source.json").read_text())
        head = pipeline.series.git(pipeline.ROOT, "rev-parse", "HEAD")
        self.assertEqual(stamp["commit"], head)
        # The stages the run runs: every stage of its mode (a --only run, those named).
        self.assertEqual(stamp["stages"], pipeline.Pipeline.PLAN["test"])
        with contextlib.redirect_stdout(io.StringIO()):
            Fake(str(results), None).run()
        data = json.loads((results / "results.json").read_text())
        self.assertEqual(data["source"], stamp)
        self.assertIn(f"Project: `{head[:12]}`", (results / "summary.md").read_text())

    def test_a_partial_run_is_stamped_with_the_stages_it_ran(self):
        # main-vm's command: its record's inputs are those of these stages.
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        old_cache = pipeline.CACHE
        pipeline.CACHE = tmp / "cache"
        only = ["setup", "base", "apply", "userspace", "build-base", "checks", "vm"]
        try:
            with mock.patch.object(pipeline.Pipeline, "run", return_value=0):
                self.assertEqual(pipeline.main(["main", "--only", *only, "--results",
                                                str(tmp / "results")]), 0)
        finally:
            pipeline.CACHE = old_cache
        stamp = json.loads((tmp / "results/source.json").read_text())
        self.assertEqual(stamp["stages"], [o.replace("-", "_") for o in only])

    def test_a_stage_record_is_made_by_the_stages_it_needs(self):
        p = pipeline.Pipeline("main", "results")
        self.assertEqual(p.made_by("vm_debug"),
                         ["setup", "base", "apply", "userspace", "checks", "vm_debug"])
        self.assertEqual(p.made_by("submission"), ["setup", "base", "apply", "submission"])
        p.plan = pipeline.Pipeline.select("main", ["base", "apply", "submission"])
        self.assertEqual(p.made_by("submission"), ["base", "apply", "submission"])

    def test_unstamped_run_has_no_project_line(self):
        p, _, _, data = self.run_fake(None)
        self.assertEqual(data["source"], {})
        self.assertNotIn("Project:", (Path(p.results) / "summary.md").read_text())

    def test_crash_in_stage_is_a_failure(self):
        class Crash(Fake):
            def stage_checks(self, stage):
                raise KeyError("bug")
        tmp = tempfile.mkdtemp()
        (Path(tmp) / "logs").mkdir()
        with contextlib.redirect_stdout(io.StringIO()):
            code = Crash(tmp, None).run()
        self.assertEqual(code, 1)

    def test_a_partial_run_says_so(self):
        # A --only run's report said "# Pipeline main: PASS".
        tmp = tempfile.mkdtemp()
        (Path(tmp) / "logs").mkdir()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = Fake(tmp, None).run(["base", "apply", "userspace"])
        self.assertEqual(code, 0)
        summary = (Path(tmp) / "summary.md").read_text()
        self.assertTrue(summary.startswith("# Pipeline test: PARTIAL\n"), summary[:80])
        self.assertIn("A partial run (--only): the stages that ran are base, apply, userspace; "
                      "not run: build-base, checks, vm. This is no pass of the test command.",
                      summary)
        data = json.loads((Path(tmp) / "results.json").read_text())
        self.assertEqual((data["partial"], data["stages_not_run"]),
                         (True, ["build-base", "checks", "vm"]))
        self.assertIn("pipeline: PARTIAL (--only): 3 of 6 stages ran; not run: build-base, "
                      "checks, vm", out.getvalue())
        # The whole plan: no such line.
        p, _, out, data = self.run_fake(None)
        self.assertFalse(data["partial"])
        self.assertTrue((Path(p.results) / "summary.md").read_text()
                        .startswith("# Pipeline test: PASS\n"))
        self.assertNotIn("PARTIAL", out)

    def test_unknown_only_stage_is_an_error(self):
        with self.assertRaises(pipeline.UsageError) as ctx:
            pipeline.Pipeline.select("test", ["vmm"])
        self.assertIn("unknown stage(s) for test: vmm", str(ctx.exception))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(pipeline.main(["test", "--only", "vmm"]), 2)
        self.assertIn("unknown stage", err.getvalue())

    def test_only_without_prerequisites_is_an_error(self):
        with self.assertRaises(pipeline.UsageError) as ctx:
            pipeline.Pipeline.select("test", ["vm"])
        msg = str(ctx.exception)
        for need in ("base", "apply", "build-base", "checks", "userspace"):
            self.assertIn(need, msg)
        self.assertEqual(pipeline.Pipeline.select("test", ["kunit", "apply", "base"]),
                         ["base", "apply", "kunit"])

    def test_second_run_leaves_the_running_ones_results(self):
        tmp = Path(tempfile.mkdtemp())
        results = tmp / "results"
        (results / "logs").mkdir(parents=True)
        (results / "marker").write_text("running")
        old_cache = pipeline.CACHE
        pipeline.CACHE = tmp / "cache"
        try:
            pipeline.CACHE.mkdir()
            held = open(pipeline.CACHE / "pipeline.lock", "w")
            pipeline.fcntl.flock(held, pipeline.fcntl.LOCK_EX)
            with contextlib.redirect_stderr(io.StringIO()):
                code = pipeline.main(["test", "--results", str(results)])
            held.close()
        finally:
            pipeline.CACHE = old_cache
        self.assertEqual(code, 1)
        self.assertEqual((results / "marker").read_text(), "running")


class SubmissionTest(unittest.TestCase):
    """The submission stage reports the posting order and runs b4 on the
    stack with every prerequisite taken as merged."""

    def test_posting_order_in_the_summary(self):
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        (tmp / "logs").mkdir()
        p = pipeline.Pipeline("test", tmp)
        handed_on(p, "submission", tmp, series_tree=tmp / "tree", base={"BASE_TAG": "base/x"})
        stage = pipeline.Stage("submission")
        with mock.patch.object(pipeline_submit.b4flow, "run_all", autospec=True,
                               return_value=[]) as run_all, \
                mock.patch.object(pipeline_submit.series, "submitter_identity",
                                  side_effect=pipeline_submit.series.SeriesError("unset")), \
                contextlib.redirect_stdout(io.StringIO()):
            p.stage_submission(stage)
        # net-next/dummy-mq builds on drv-net-stats, net-next/qdisc-bypass on net.
        self.assertEqual(run_all.call_args.kwargs["merged"],
                         ["net-next/drv-net-stats", "net/qdisc-bypass"])
        # Taken as merged for b4 only: b4.md gives the posting order as it
        # stands (nothing merged), as the stage summary does.
        self.assertEqual(run_all.call_args.kwargs["stands"], ())
        self.assertEqual(run_all.call_args.kwargs["identity"], pipeline_submit.FALLBACK_SENDER)
        # The report is stamped with the project commit it comes from.
        # It names the stages that made it (ci/tests/test_results_fresh.py):
        # the submission stage, the stages it needs and setup.
        stamp = json.loads((tmp / "b4/source.json").read_text())
        self.assertEqual(set(stamp), {"commit", "dirty", "patches_sha256", "stages"})
        self.assertEqual(stamp["stages"], ["setup", "base", "apply", "submission"])
        self.assertIn("post now: net/qdisc-bypass, net-next/drv-net-stats, "
                      "net-next/netdevsim-qstats; net-next/dummy-mq after "
                      "net-next/drv-net-stats is merged into net-next; "
                      "net-next/qdisc-bypass after net/qdisc-bypass is merged into net-next",
                      stage.summary)
        lines = stage.details.splitlines()
        self.assertEqual(lines[:2], ["posting order:", "1. net/qdisc-bypass: post now"])
        self.assertIn("5. net-next/qdisc-bypass: blocked until net/qdisc-bypass is merged into "
                      "net-next", lines)
        posting = {c.name: c.status for c in stage.cases if c.suite == "posting"}
        self.assertEqual(posting, {"net/qdisc-bypass": "pass", "net-next/drv-net-stats": "pass",
                                   "net-next/dummy-mq": "skip", "net-next/netdevsim-qstats": "pass",
                                   "net-next/qdisc-bypass": "skip"})


if __name__ == "__main__":
    unittest.main()

"""Bench stage: verdicts to cases; only a target not met (or a scenario
error) fails the stage. Icount stage: the kernels and rows per mode, the
guards as cases, the negative-control kernel built, booted, judged and
undone."""

import contextlib
import copy
import io
import json
import re
import subprocess
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

from ci import icount_memo
from ci import pipeline
from ci import pipeline_bench
from ci import pipeline_tree
from ci.tests.test_pipeline_state import handed_on
from common.paths import ROOT
import tools.bench
from tools.bench import bench_config
from tools.bench import bench_stats
from tools.bench import icount


def row(key, verdict, target=">= 0.97", repetitions=7, ratio=1.0, guard=False):
    r = {"key": key, "target": target, "repetitions": repetitions, "verdict": verdict,
         "guard": guard}
    if repetitions:
        r.update(ratio_median=ratio, ratio_ci_low=ratio - 0.02, ratio_ci_high=ratio + 0.02)
    return r


class CasesTest(unittest.TestCase):
    def test_each_verdict(self):
        rows = [row("A", "met"), row("B", "not met", ratio=0.8), row("C", "inconclusive"),
                row("D", None, target="report"), row("E", "inconclusive", repetitions=0)]
        cases, not_met = pipeline_bench.bench_cases(rows)
        self.assertEqual([(c.name, c.status) for c in cases],
                         [("A", "pass"), ("B", "fail"), ("C", "fail"), ("D", "pass"),
                          ("E", "fail")])
        # E, without data, fails the stage too, not just its case.
        self.assertEqual(not_met, ["B", "C", "E"])
        self.assertIn("inconclusive after 7 repetitions", cases[2].message)
        self.assertEqual(cases[1].message, "0.80x, 95% CI 0.780-0.820, target >= 0.97: NOT met")
        self.assertEqual(cases[3].message, "1.00x, 95% CI 0.980-1.020, target report")
        self.assertEqual(pipeline_bench.verdict_counts(rows), "1 met, 1 not met, 2 inconclusive")

    def test_guard_counted_apart(self):
        """An inconclusive guard passes and is not counted with the inconclusive
        targets, which fail; a guard not met fails like a target."""
        rows = [row("G", "inconclusive", guard=True), row("H", "not met", ratio=0.8, guard=True),
                row("C", "inconclusive")]
        cases, not_met = pipeline_bench.bench_cases(rows)
        self.assertEqual([c.status for c in cases], ["pass", "fail", "fail"])
        self.assertEqual(not_met, ["H", "C"])
        self.assertEqual(pipeline_bench.verdict_counts(rows),
                         "0 met, 1 not met, 1 inconclusive, 1 guard(s) inconclusive (pass)")


class RealComparisonsTest(unittest.TestCase):
    """bench_cases on what bench_stats makes of crafted runs with the real comparisons."""

    def runs(self, ratios):
        """Seven repetitions; ratios: {scenario on the patched kernel: [B/A per repetition]}
        against 1 Mpps everywhere else (so S2-restore, >= 1.25x, is not met)."""
        out = []
        for i in range(7):
            rep = {k: {s: {"pps": 1e6}
                       for s in bench_config.scenarios_for(k, bench_config.SCENARIOS)}
                   for k in bench_config.KERNELS}
            for s, r in ratios.items():
                rep["patched"][s] = {"pps": 1e6 * r[i]}
            out.append(rep)
        return out

    def cases(self, ratios):
        rows = bench_stats.summarize(self.runs(ratios))
        cases, not_met = pipeline_bench.bench_cases(rows)
        return {c.name: c for c in cases}, not_met

    def test_s1_without_xps_bimodal_is_a_report_row(self):
        # Flow hash: in some repetitions two threads share a queue (half the pps).
        cases, not_met = self.cases({"s1_nq_mq": [1.0, 0.5, 1.0, 0.5, 0.5, 1.0, 0.5]})
        self.assertEqual(not_met, ["S2-restore"])
        self.assertEqual(cases["S1"].status, "pass")
        self.assertEqual(cases["S1"].message, "0.50x, 95% CI 0.500-1.000, target report")
        self.assertEqual(cases["S1-xps"].status, "pass")

    def test_s1_xps_reports_a_cost_the_design_guard_fails_it(self):
        # S1-xps only reports; the chosen design with XPS is a guard (>= 0.95): a
        # proven slowdown of the series against the base fails it.
        cases, not_met = self.cases({"s1_nq_mq_xps": [0.8] * 7})
        self.assertEqual(not_met, ["S2-restore", "D-xps-atomic"])
        self.assertEqual(cases["S1-xps"].status, "pass")
        self.assertEqual(cases["S1-xps"].message, "0.80x, 95% CI 0.800-0.800, target report")
        self.assertEqual(cases["D-xps-atomic"].status, "fail")
        self.assertEqual(cases["D-xps-lock"].status, "pass")

    def test_default_dummy_guard_fails_on_a_proven_regression(self):
        cases, not_met = self.cases({"s3_default": [0.8] * 7})
        self.assertEqual(not_met, ["S2-restore", "S3"])
        self.assertEqual(cases["S3"].status, "fail")

    def test_inconclusive_guard_passes_an_inconclusive_target_fails(self):
        # S3 straddles 0.97 (a guard: passes); S2-restore straddles 1.25 (a claim: fails).
        # S2-fresh (patched fresh -> patched after filter) stays at 1.
        restore = [1.15, 1.35, 1.2, 1.3, 1.25, 1.17, 1.33]
        cases, not_met = self.cases({"s3_default": [0.9, 1.05, 0.95, 1.0, 0.92, 1.03, 0.96],
                                     "s2_fq_codel_after_filter": restore,
                                     "s2_fq_codel_fresh": restore})
        self.assertEqual(not_met, ["S2-restore"])
        self.assertEqual(cases["S3"].status, "pass")
        self.assertIn("inconclusive, a guard", cases["S3"].message)
        self.assertEqual(cases["S2-restore"].status, "fail")
        self.assertIn("inconclusive after 7 repetitions", cases["S2-restore"].message)
        # The report's summary line counts the guard apart from the failing target.
        from tools.bench import bench_report
        rows = bench_stats.summarize(self.runs({
            "s3_default": [0.9, 1.05, 0.95, 1.0, 0.92, 1.03, 0.96],
            "s2_fq_codel_after_filter": restore, "s2_fq_codel_fresh": restore}))
        line = bench_report.verdict_lines(rows, bench_stats.BOOTSTRAP)[0]
        self.assertIn("1 inconclusive (S2-restore); 1 guard(s) inconclusive, passing (S3)", line)

    def test_a_guard_of_too_few_pairs_fails(self):
        # Two repetitions: S3 inside its bound and S3 wholly past it (0.8 <
        # 0.97) are both "inconclusive"; a guard of so few pairs proves
        # nothing either way, and fails.
        for ratios in ([1.0, 1.0], [0.8, 0.8], [0.8, 0.85]):
            with self.subTest(ratios=ratios):
                rows = bench_stats.summarize(self.runs({"s3_default": ratios + [1.0] * 5})[:2])
                s3 = next(r for r in rows if r["key"] == "S3")
                self.assertEqual((s3["verdict"], s3["repetitions"]), ("inconclusive", 2))
                self.assertFalse(bench_config.passing_guard(s3))
                cases, not_met = pipeline_bench.bench_cases(rows)
                self.assertIn("S3", not_met)
                self.assertEqual(cases[[r["key"] for r in rows].index("S3")].status, "fail")
        self.assertTrue(bench_config.passing_guard(row("G", "inconclusive", guard=True,
                                                       repetitions=3)))
        self.assertFalse(bench_config.passing_guard(row("G", "inconclusive", guard=True,
                                                        repetitions=2)))

    def test_sink_rows_report_whatever_the_ratio(self):
        cases, not_met = self.cases({"sink_veth_mq": [0.3] * 7, "sink_nsim_mq_xps": [0.6] * 7})
        self.assertEqual(not_met, ["S2-restore"])
        for key in ("Sink-veth", "Sink-veth-xps", "Sink-nsim", "Sink-nsim-xps"):
            self.assertEqual(cases[key].status, "pass", key)
        self.assertEqual(cases["Sink-veth"].message, "0.30x, 95% CI 0.300-0.300, target report")


class FakeBench:
    """Stands in for tools/bench/bench.py: writes bench.md, returns rows."""

    def __init__(self, rows, errors=()):
        self.rows, self.errors = rows, list(errors)
        self.module = types.SimpleNamespace(SCENARIOS=["s3_default"], run=self.run)

    def run(self, args):
        self.args = args
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "bench.md").write_text("# bench\n")
        return {"comparisons": self.rows}, [], self.errors


class StageTest(unittest.TestCase):
    def run_stage(self, rows, errors=()):
        fake = FakeBench(rows, errors)
        with tempfile.TemporaryDirectory() as tmp:
            p = pipeline.Pipeline("main", tmp)
            handed_on(p, "bench", tmp)
            stage = pipeline.Stage("bench")
            # The stage imports tools.bench.bench when it runs: the package's
            # attribute stands in for it.
            with mock.patch.object(tools.bench, "bench", fake.module, create=True), \
                    mock.patch.object(pipeline_bench, "sh", lambda *a, **k: (0, "")), \
                    mock.patch("ci.pipeline_tree.git", lambda *a, **k: ""), \
                    mock.patch.object(pipeline_bench, "git", lambda *a, **k: ""), \
                    mock.patch.object(pipeline.Pipeline, "worktree",
                                      lambda self, name, rev: self.state.ws / name / "src"), \
                    contextlib.redirect_stdout(io.StringIO()):
                try:
                    p.stage_bench(stage)
                    err = None
                except pipeline.StageFailed as e:
                    err = str(e)
        return stage, err, fake.args

    def test_inconclusive_at_the_cap_fails(self):
        # A crafted bad run the old stage accepted: a claimed target that
        # stayed inconclusive passed as a skip.
        stage, err, args = self.run_stage([row("A", "met"), row("C", "inconclusive")])
        self.assertIn("targets not met or inconclusive: C", err)
        self.assertIn("targets: 1 met, 0 not met, 1 inconclusive", stage.summary)
        self.assertFalse(args.pin_vcpus)
        self.assertEqual(args.max_repetitions, 15)

    def test_not_met_fails_naming_it(self):
        _, err, _ = self.run_stage([row("A", "met"), row("S2-restore", "not met", ratio=1.1)])
        self.assertIn("targets not met or inconclusive: S2-restore", err)

    def test_scenario_error_fails(self):
        _, err, _ = self.run_stage([row("A", "met")], errors=["rep 0 base s3_default: no pps"])
        self.assertIn("1 scenario error(s)", err)
        self.assertIn("rep 0 base s3_default: no pps", err)


RECORD = ROOT / "Documentation/results/icount/icount.json"


def recorded_runs(labels):
    """The record's runs (2 boots x 3 runs) of base and patched, as labels."""
    runs = json.loads(RECORD.read_text())["runs"]
    return {label: copy.deepcopy(runs[k]) for label, k in labels.items()}


def atomic_runs_label():
    """The record's runs of the atomic counter design: its own label, or the
    patched kernel's in a record of the series when it counted that way."""
    return "atomic" if "atomic" in json.loads(RECORD.read_text())["runs"] else "patched"


class IcountStageTest(unittest.TestCase):
    """stage_icount with icount.run, boot_runs and build_dummy_module, git and
    the kernel build standing in: what each would do is recorded."""

    def setUp(self):
        store = tempfile.TemporaryDirectory()
        self.addCleanup(store.cleanup)
        self.store = Path(store.name)

    def run_stage(self, mode="test", neg_extra=22.0, patched_extra=0.0, apply_code=0,
                  neg_boot_fails=False, drop=None, lock_as="lock", atomic_as=None,
                  base_commit="a" * 40, patched_commit="b" * 40):
        """The negative kernel runs the base's counts plus neg_extra per packet
        on every row; the patched kernel the record's plus patched_extra, its
        start_xmit row the base's (the series' counters cost the base's), the
        row `drop` left out; the lock and atomic kernels the record's runs of
        lock_as and atomic_as. The base and patched builds stamped as built
        from base_commit and patched_commit (None: no stamp); the icount memo
        in self.store."""
        self.calls, self.builds, self.shell, self.modules = [], [], [], []

        def fake_run(kernels, out, reps, boots, scenarios, modules, sources, stages):
            self.calls.append(("run", dict(kernels), reps, boots, list(scenarios)))
            self.sources, self.stages = sources, stages
            runs = recorded_runs({"base": "base", "lock": lock_as,
                                  "atomic": atomic_as or "base", "patched": "patched"})
            # On the start_xmit row the series costs the base's plus 8, the atomic
            # design on its tip plus 13 (Documentation/design.md section 3).
            if atomic_as is None:
                for boot in runs["atomic"]:
                    boot["q2_start_xmit"] = [v + 13.0 for v in boot["q2_start_xmit"]]
            for boot, base_boot in zip(runs["patched"], runs["base"]):
                boot["q2_start_xmit"] = [v + 8.0 for v in base_boot["q2_start_xmit"]]
                for s in boot:
                    boot[s] = [v + patched_extra for v in boot[s]]
                boot.pop(drop, None)
            out.mkdir(parents=True, exist_ok=True)
            (out / "icount.md").write_text("# icount\n")
            data = {"environment": {"source": {"commit": "c0ffee" * 7}}, "runs": runs,
                    "guards": icount.judge(runs)}
            (out / "icount.json").write_text(json.dumps(data))
            return data

        def fake_boot_runs(kernels, out, count, reps, boots, scenarios):
            self.calls.append(("boot_runs", dict(kernels), reps, boots, list(scenarios)))
            if neg_boot_fails:
                raise RuntimeError("xmit-cost boot 0: timed out")
            base = recorded_runs({"base": "base"})["base"][0]
            return {k: [{s: [v + neg_extra for v in base[s]] + [base[s][0] + neg_extra] * 2
                         for s in scenarios}] * boots for k in kernels}

        def fake_module(build, tree, rev, dest, patch=None, log_path=None):
            self.modules.append((dest.name, patch))
            return dest / "dummy.ko"

        def fake_git_run(tree, *args, **kw):
            self.shell.append(["git", *args])
            return subprocess.CompletedProcess(args, apply_code if "apply" in args else 0,
                                               "error: patch failed")

        def fake_build(self_, src, out, label, *a, **kw):
            self.builds.append(label)

        with tempfile.TemporaryDirectory() as tmp:
            p = pipeline.Pipeline(mode, tmp)
            handed_on(p, "icount", tmp)
            for build, commit in ((p.state.base_kernel, base_commit),
                                  (p.state.patched_kernel, patched_commit)):
                Path(build).mkdir(parents=True, exist_ok=True)
                if commit:
                    (Path(build) / "build-source.json").write_text(json.dumps({"commit": commit}))
            (Path(tmp) / "logs").mkdir()
            stage = pipeline.Stage("icount")
            with mock.patch.object(icount, "run", fake_run), \
                    mock.patch.object(icount_memo, "STORE", self.store), \
                    mock.patch.object(icount, "boot_runs", fake_boot_runs), \
                    mock.patch.object(icount, "build_dummy_module", fake_module), \
                    mock.patch.object(pipeline_tree, "git_run", fake_git_run), \
                    mock.patch.object(pipeline_bench, "git",
                                      lambda tree, *a, **k: self.shell.append(["git", *a])), \
                    mock.patch.object(pipeline.Pipeline, "checkout", lambda *a: None), \
                    mock.patch.object(pipeline.Pipeline, "build", fake_build), \
                    contextlib.redirect_stdout(io.StringIO()):
                try:
                    p.stage_icount(stage)
                    err = None
                except pipeline.StageFailed as e:
                    err = str(e)
            self.negative = (json.loads((Path(tmp) / "icount-negative/negative.json").read_text())
                             if (Path(tmp) / "icount-negative/negative.json").is_file() else None)
            stamp = Path(tmp) / "icount-negative/source.json"
            self.stamped = json.loads(stamp.read_text()) if stamp.is_file() else None
        return stage, err

    def test_test_mode_boots_base_lock_and_patched_twice_on_the_guard_rows(self):
        # Never a guard met or missed on one boot.
        stage, err = self.run_stage()
        self.assertIsNone(err)
        _, kernels, reps, boots, scenarios = self.calls[0]
        self.assertEqual(list(kernels), ["base", "lock", "atomic", "patched"])
        self.assertEqual((reps, boots), (5, 2))
        self.assertEqual(scenarios, ["q2_start_xmit", "q1_noqueue", "s2_fq_codel_fresh",
                                     "s2_fq_codel_after_filter", "s2_pfifo_fast"])
        self.assertEqual(self.modules, [("lock", pipeline_bench.LOCK_VARIANT),
                                        ("atomic", ROOT / "tools/bench/variants/"
                                         "dummy-atomic.patch")])
        cases = {c.name: c.status for c in stage.cases}
        self.assertEqual(cases, {"S2-restore": "pass", "S2-fresh": "pass", "S2-bypass": "pass",
                                 "S3": "pass", "counters": "pass",
                                 "counters negative control (lock design)": "pass",
                                 "counters negative control (atomic design)": "pass",
                                 "negative control": "pass"})
        self.assertIn("5/5 guards met; negative control", stage.summary)
        self.assertIn("counters negative controls (lock, atomic designs): caught",
                      stage.summary)
        # The record names the stages that made it and what each module is built from.
        made = ["setup", "base", "apply", "build_base", "checks", "icount"]
        self.assertEqual(self.stages, made)
        self.assertEqual(self.stamped["stages"], made)
        self.assertEqual(self.sources["lock"]["patch"], str(pipeline_bench.LOCK_VARIANT))
        self.assertEqual(len(self.sources["atomic"]["patch_sha256"]), 64)

    def test_a_design_the_counters_guard_misses_fails_the_stage(self):
        """A lock or atomic kernel whose counts are the base's: missed."""
        for label in ("lock", "atomic"):
            with self.subTest(label):
                stage, err = self.run_stage(**{f"{label}_as": "base"})
                self.assertIn(f"counters negative control missed, {label}:", err)
                self.assertEqual({c.name: c.status for c in stage.cases}
                                 [f"counters negative control ({label} design)"], "fail")

    def test_a_patched_dummy_with_shared_counters_fails_the_counters_guard(self):
        # 8 + 5 on start_xmit, over the bound; the other rows +5 each, which
        # the record's own spreads decide for S3 and S2-bypass.
        stage, err = self.run_stage(patched_extra=5.0)
        not_met = re.search(r"^not met: (.*)$", err, re.M)[1].split(", ")
        self.assertIn("counters", not_met)
        self.assertEqual({c.name: c.status for c in stage.cases}["counters"], "fail")

    def test_main_mode_boots_every_kernel_twice_on_every_row(self):
        _, err = self.run_stage("main")
        self.assertIsNone(err)
        _, kernels, reps, boots, scenarios = self.calls[0]
        self.assertEqual(list(kernels), ["base", "lock", "atomic", "series-ext", "patched"])
        self.assertEqual(kernels["lock"][1].endswith("modules/lock/dummy.ko"), True)
        self.assertEqual((reps, boots), (5, 2))
        self.assertEqual(scenarios, list(icount.SCENARIOS))
        self.assertEqual([m for m, _ in self.modules], ["lock", "atomic", "series-ext"])

    def test_negative_kernel_built_booted_and_undone(self):
        _, err = self.run_stage()
        self.assertIsNone(err)
        self.assertEqual(self.shell[0], ["git", "apply", str(pipeline_bench.ICOUNT_NEGATIVE)])
        self.assertEqual(self.shell[1], ["git", "checkout", "-q", "--", "."])
        self.assertEqual(self.builds, ["build-xmit-cost", "build-series"])
        kind, kernels, reps, boots, scenarios = self.calls[1]
        self.assertEqual((kind, list(kernels), reps, boots, scenarios),
                         ("boot_runs", ["xmit-cost"], 5, 2, ["q1_noqueue", "s2_pfifo_fast"]))
        self.assertEqual({g["key"]: g["verdict"] for g in self.negative["guards"]},
                         {"S2-bypass": "not met", "S3": "not met"})
        self.assertIsNotNone(self.stamped)

    def test_a_path_cost_the_guards_miss_fails_the_stage(self):
        """A negative kernel whose counts are the base's: the control missed."""
        stage, err = self.run_stage(neg_extra=0.0)
        self.assertIn("negative control (icount-dummy-xmit-cost.patch): MISSED", err)
        self.assertEqual({c.name: c.status for c in stage.cases}["negative control"], "fail")

    def test_a_guard_not_met_fails_the_stage(self):
        # Seven instructions more on the patched kernel's every row: S3 and
        # S2-bypass beyond 0.2%, the restore still a saving.
        stage, err = self.run_stage(patched_extra=7.0)
        self.assertIn("2/5 guards met", err)  # start_xmit 8 + 7: counters too
        self.assertIn("not met: S2-bypass, S3, counters", err)

    def test_a_guard_without_runs_fails_the_stage(self):
        stage, err = self.run_stage(drop="s2_pfifo_fast")
        self.assertIn("4/5 guards met", err)
        self.assertIn("not met: S2-bypass", err)

    def test_patch_that_does_not_apply_is_named(self):
        _, err = self.run_stage(apply_code=1)
        self.assertIn("icount-dummy-xmit-cost.patch does not apply", err)
        self.assertEqual(self.builds, [])

    def test_a_failed_negative_boot_restores_the_patched_kernel(self):
        _, err = self.run_stage(neg_boot_fails=True)
        self.assertIn("icount negative control: xmit-cost boot 0: timed out", err)
        self.assertEqual(self.builds, ["build-xmit-cost", "build-series"])
        self.assertIn(["git", "checkout", "-q", "--", "."], self.shell)

    def test_a_second_run_of_the_same_kernels_reuses_the_runs(self):
        first, err = self.run_stage()
        self.assertIsNone(err)
        self.assertEqual(len(list(self.store.iterdir())), 1)
        second, err = self.run_stage()
        self.assertIsNone(err)
        # Nothing built or booted; the guards and controls judged again alike.
        self.assertEqual((self.calls, self.builds, self.modules), ([], [], []))
        self.assertEqual([(c.name, c.status) for c in second.cases],
                         [(c.name, c.status) for c in first.cases])
        self.assertIn("runs of c0ffeec0ffee reused", second.summary)
        self.assertNotIn("reused", first.summary)

    def test_a_kernel_built_anew_boots_again(self):
        self.run_stage(base_commit="a" * 40)
        for why, kw in (("another base commit", {"base_commit": "b" * 40}),
                        ("boots wanted afresh", {"base_commit": "a" * 40})):
            with self.subTest(why), mock.patch.dict(
                    "os.environ", {"ICOUNT_FRESH": "1"} if why.startswith("boots") else {}):
                _, err = self.run_stage(**kw)
                self.assertIsNone(err)
                self.assertEqual([c[0] for c in self.calls], ["run", "boot_runs"])
                self.assertEqual(self.builds, ["build-xmit-cost", "build-series"])

    def test_a_patched_kernel_built_anew_or_unstamped_boots_again(self):
        self.run_stage()
        for why, commit in (("another tip", "c" * 40), ("no stamp", None)):
            with self.subTest(why):
                _, err = self.run_stage(patched_commit=commit)
                self.assertIsNone(err)
                self.assertEqual([c[0] for c in self.calls], ["run", "boot_runs"])
        # Nothing kept for a kernel nothing names.
        self.assertEqual(len(list(self.store.iterdir())), 2)

    def test_a_fresh_run_that_fails_drops_what_its_key_held(self):
        self.run_stage()
        self.assertEqual(len(list(self.store.iterdir())), 1)
        with mock.patch.dict("os.environ", {"ICOUNT_FRESH": "1"}):
            _, err = self.run_stage(patched_extra=7.0)
        self.assertIsNotNone(err)
        self.assertEqual(list(self.store.iterdir()), [])
        # And so the next run boots again instead of passing by the old runs.
        _, err = self.run_stage(patched_extra=7.0)
        self.assertIsNotNone(err)
        self.assertEqual(self.calls[0][0], "run")

    def test_a_failing_stage_keeps_nothing(self):
        _, err = self.run_stage(patched_extra=7.0)
        self.assertIsNotNone(err)
        self.assertEqual(list(self.store.iterdir()), [])
        _, err = self.run_stage(neg_extra=0.0)
        self.assertIsNotNone(err)
        self.assertEqual(list(self.store.iterdir()), [])

    def test_caught_only_above_the_bound(self):
        g = {"key": "S3", "verdict": "not met", "ratio": None, "hi": 1.002, "why": "3 runs"}
        self.assertFalse(pipeline_bench.negative_caught(
            [g, {**g, "key": "S2-bypass", "ratio": 1.01}])[0])
        self.assertFalse(pipeline_bench.negative_caught([{**g, "ratio": 1.01}])[0])
        self.assertTrue(pipeline_bench.negative_caught(
            [{**g, "ratio": 1.01}, {**g, "key": "S2-bypass", "ratio": 1.01}])[0])

    def test_in_both_commands_after_the_vm_stage(self):
        for mode in ("main", "test"):
            plan = pipeline.Pipeline.PLAN[mode]
            self.assertEqual(plan[plan.index("vm") + 1], "icount")
        # The base kernel from build-base, the patched one as checks left it.
        self.assertEqual(pipeline.Pipeline.NEEDS["icount"]["build_base"], ("base_kernel",))
        self.assertEqual(pipeline.Pipeline.NEEDS["icount"]["checks"], ("patched_kernel",))

    def test_negative_patch_adds_to_dummy_xmit_only(self):
        text = pipeline_bench.ICOUNT_NEGATIVE.read_text()
        self.assertEqual(text.count("+++ "), 1)
        self.assertIn("+++ b/drivers/net/dummy.c", text)
        self.assertIn(" static netdev_tx_t dummy_xmit(struct sk_buff *skb, struct net_device "
                      "*dev)\n {\n \tdev_lstats_add(dev, skb->len);\n"
                      "+\tskb->hash = jhash_1word(skb->len, 0);\n", text)


if __name__ == "__main__":
    unittest.main()

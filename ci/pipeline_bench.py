"""The bench stage (main mode): UML kernels of the base, the patched tree and
the patched tree with the previous per-queue counter design (LOCK_VARIANT)
built, then tools/bench/bench.py boots them alternately. A target still
inconclusive after the first repetitions gets more, up to a cap
(BENCH_MAX_REPETITIONS); the stage fails on a scenario without result, a
target "not met" with confidence, or one still inconclusive at the cap (a
guard, a bound on code that is the same on both sides, only when not met)."""

import argparse
import os

from common.git import git
from common.programs import CXX_BUILD
from ci.pipeline_common import CONFIGS, ROOT, BuildProgress, StageFailed, log, sh
from ci.pipeline_tree import TreeStages
from ci import report
from tools.bench.bench_config import passing_guard


# The previous design of the dummy series' per-queue counters (not lltx, counters under
# the TX queue's xmit lock), as a patch on the series' tip: the "lock" kernel.
LOCK_VARIANT = ROOT / "tools/bench/variants/dummy-queue-lock.patch"


def bench_cases(comparisons):
    """One case per comparison from bench.json's comparisons, and the keys of
    the targets not met. No data fails; "not met" and "inconclusive" (at the
    repetition cap) fail, but an inconclusive guard (bench_config.Comparison)
    passes; met and report-only comparisons pass."""
    cases, not_met = [], []
    for r in comparisons:
        if not r["repetitions"]:
            cases.append(report.Case("bench", r["key"], "fail", f"no data, target {r['target']}"))
            continue
        text = (f"{r['ratio_median']:.2f}x, 95% CI {r['ratio_ci_low']:.3f}-"
                f"{r['ratio_ci_high']:.3f}, target {r['target']}")
        verdict = r.get("verdict")
        if verdict == "not met":
            not_met.append(r["key"])
            cases.append(report.Case("bench", r["key"], "fail", f"{text}: NOT met"))
        elif passing_guard(r):
            cases.append(report.Case("bench", r["key"], "pass",
                                     f"{text}: inconclusive, a guard of the same code on "
                                     "both sides: only a proven regression fails it"))
        elif verdict == "inconclusive":
            not_met.append(r["key"])
            cases.append(report.Case("bench", r["key"], "fail",
                                     f"{text}: inconclusive after {r['repetitions']} "
                                     "repetitions"))
        else:
            cases.append(report.Case("bench", r["key"], "pass",
                                     f"{text}: met" if verdict == "met" else text))
    return cases, not_met


def verdict_counts(comparisons):
    """"3 met, 1 not met, 2 inconclusive, 1 guard inconclusive (passes)" over
    the comparisons with a target; inconclusive guards are counted apart."""
    verdicts = [r.get("verdict") for r in comparisons
                if r.get("verdict") and not passing_guard(r)]
    guards = sum(1 for r in comparisons if passing_guard(r))
    return (", ".join(f"{verdicts.count(v)} {v}" for v in ("met", "not met", "inconclusive"))
            + (f", {guards} guard(s) inconclusive (pass)" if guards else ""))


class BenchStages(TreeStages):
    def stage_bench(self, stage):
        from tools.bench import bench  # noqa: PLC0415
        uml = CONFIGS / "uml-bench.config"
        kernels = {}
        tip = self.tip
        for label, name, rev, variant in (
                ("base", "base", self.base["BASE_TAG"], None),
                ("patched", "series", tip, None),
                ("lock", "series", tip, LOCK_VARIANT)):
            if name == "base":
                src = self.worktree(name, rev)  # build-base no longer makes it
            else:
                src = self.ws / name / "src"
                self.checkout(src, rev)
            out = self.ws / name / ("build-um-bench" if label != "lock" else "build-um-lock")
            if variant:
                git(src, "apply", str(variant), error=StageFailed)
            try:
                sh(["bash", str(ROOT / "kernel/build.sh"), str(src), str(out), "um", str(uml)],
                   self.logfile(f"build-um-{label}"), env={"KCONFIG_BASE": "defconfig"},
                   progress=BuildProgress(f"UML {label}"))
            finally:
                if variant:
                    git(src, "apply", "-R", str(variant), error=StageFailed)
            kernels[label] = out / "linux"
        args = argparse.Namespace(
            base_kernel=kernels["base"], patched_kernel=kernels["patched"],
            lock_kernel=kernels["lock"],
            mqbench=CXX_BUILD / "tools/bench/mqbench", out=self.results / "bench",
            repetitions=int(os.environ.get("BENCH_REPETITIONS", "7")),
            max_repetitions=int(os.environ.get("BENCH_MAX_REPETITIONS", "15")),
            seconds=float(os.environ.get("BENCH_SECONDS", "3")), cpus=2, timeout=900,
            scenarios=bench.SCENARIOS,
            base_desc=f"{self.base.get('BASE_PACKAGE')} {self.base.get('BASE_VERSION')}",
            devcost=True, pin_vcpus=os.environ.get("BENCH_PIN_VCPUS") == "1")
        log(f"  {args.repetitions} repetitions x {len(args.scenarios)} scenarios x "
            f"{len(kernels)} kernels")
        data, _, errors = bench.run(args, log=log)
        log((self.results / "bench/bench.md").read_text())
        cases, not_met = bench_cases(data["comparisons"])
        stage.cases.extend(cases)
        stage.summary = (f"{args.repetitions} repetitions; targets: "
                         f"{verdict_counts(data['comparisons'])}; "
                         f"report {self.results / 'bench/bench.md'}"
                         + (f"; {len(errors)} scenario error(s)" if errors else ""))
        if errors or not_met:
            raise StageFailed(stage.summary
                              + (f"\ntargets not met or inconclusive: {', '.join(not_met)}"
                                 if not_met else "")
                              + ("\n" + "\n".join(errors[:10]) if errors else ""))

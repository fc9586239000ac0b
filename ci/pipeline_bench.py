"""The icount stage: instructions per packet of the x86 test kernels under
QEMU icount (tools/bench/icount.py), the guards decided by them, and a
kernel with a crafted cost on the default dummy's path that must fail them.

The bench stage (main mode): UML kernels of the base, the patched tree and
the patched tree with the previous per-queue counter design (LOCK_VARIANT)
built, then tools/bench/bench.py boots them alternately. A target still
inconclusive after the first repetitions gets more, up to a cap
(BENCH_MAX_REPETITIONS); the stage fails on a scenario without result, a
target "not met" with confidence, or one still inconclusive at the cap (a
guard, a bound on code that is the same on both sides, only when not met)."""

import argparse
import hashlib
import json
import os
import shutil
import time

from common.git import git
from common.paths import ROOT
from common.stamp import write_source_stamp
from ci.pipeline_common import CONFIGS, BuildProgress, StageFailed, log, sh
from ci.pipeline_tree import TreeStages
from ci import icount_memo, report
from tools.bench.bench_config import (ICOUNT_BOOTS, ICOUNT_COUNTER_GUARD,
                                      ICOUNT_COUNTER_VARIANTS, ICOUNT_GUARDS,
                                      ICOUNT_PATH_GUARDS, failed_targets, passing_guard)


# The previous design of the dummy series' per-queue counters (not lltx, counters under
# the TX queue's xmit lock), as a patch on the series' tip: the "lock" kernel.
LOCK_VARIANT = ROOT / ICOUNT_COUNTER_VARIANTS["lock"]
# Runs per boot: five, so that a median of one boot outlasts two of the occasional
# runs about 25 instructions low (bench_config.ICOUNT_MIN_RUNS).
ICOUNT_REPS = 5
# dummy_xmit with a couple of dozen instructions more per packet, on the patched
# tree: the S3 and S2-bypass guards (ICOUNT_PATH_GUARDS) must fail it.
ICOUNT_NEGATIVE = ROOT / "ci/negative-controls/icount-dummy-xmit-cost.patch"
ICOUNT_NEGATIVE_LABEL = "xmit-cost"


def icount_cases(guards):
    """One case per icount guard: met passes, not met fails."""
    return [report.Case("icount", g["key"], "pass" if g["verdict"] == "met" else "fail",
                        f"{g['why']}: {g['verdict']}") for g in guards]


def negative_caught(guards, keys=ICOUNT_PATH_GUARDS):
    """(caught, why): caught when every guard named in keys is not met because
    B has more instructions than its bound allows (not for want of runs)."""
    judged = {g["key"]: g for g in guards}
    missed = [k for k in keys
              if k not in judged or judged[k]["ratio"] is None
              or judged[k]["ratio"] <= judged[k]["hi"]]
    why = "; ".join(f"{g['key']} {g['verdict']} ({g['why']})" for g in guards)
    return not missed, why or "no guard judged"


def bench_cases(comparisons):
    """One case per comparison from bench.json's comparisons, and the keys of
    the targets not met (bench_config.failed_targets()). No data fails;
    "not met" and "inconclusive" (at the repetition cap) fail, but an
    inconclusive guard (bench_config.Comparison) passes; met and report-only
    comparisons pass."""
    cases, not_met = [], failed_targets(comparisons)
    for r in comparisons:
        if not r["repetitions"]:
            cases.append(report.Case("bench", r["key"], "fail" if r["key"] in not_met else "pass",
                                     f"no data, target {r['target']}"))
            continue
        text = (f"{r['ratio_median']:.2f}x, 95% CI {r['ratio_ci_low']:.3f}-"
                f"{r['ratio_ci_high']:.3f}, target {r['target']}")
        verdict = r.get("verdict")
        if verdict == "not met":
            cases.append(report.Case("bench", r["key"], "fail", f"{text}: NOT met"))
        elif passing_guard(r):
            cases.append(report.Case("bench", r["key"], "pass",
                                     f"{text}: inconclusive, a guard of the same code on "
                                     "both sides: only a proven regression fails it"))
        elif verdict == "inconclusive":
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
    def stage_icount(self, stage):
        """The main command boots every kernel (the counter designs' dummy
        modules built out of tree on the patched build) twice with every
        row; the test command boots base, the counter designs and patched
        twice each with the guards' rows (ICOUNT_BOOTS: every boot on one
        clocksource, icount.CLOCKSOURCE, and a kernel's boots agreeing,
        icount.AGREEMENT, or one boot more; no two agreeing fails the stage).
        Each counter design the series did not choose
        (ICOUNT_COUNTER_VARIANTS) must fail the counters guard; then the
        negative-control kernel, whose path guards must fail."""
        from tools.bench import icount  # noqa: PLC0415
        full = self.mode == "main"
        out = self.results / "icount"
        tree, tip, patched = self.state.series_tree, self.state.tip, self.state.patched_kernel
        self.checkout(tree, tip)
        # The designs not chosen always: the counters guard's negative controls;
        # the series' own dummy.c built the same way in the main command.
        variants = ([(label, ROOT / patch) for label, patch in ICOUNT_COUNTER_VARIANTS.items()]
                    + ([("series-ext", None)] if full else []))
        sources = {label: icount.module_source(tree, tip, patch) for label, patch in variants}
        scenarios = list(icount.SCENARIOS) if full else icount.guard_scenarios()
        parts = icount_memo.key_parts(
            {"base": icount_memo.kernel_part(self.state.base_kernel, None),
             **{label: icount_memo.kernel_part(patched, sources[label]) for label in sources},
             "patched": icount_memo.kernel_part(patched, None)},
            {"patch": hashlib.sha256(ICOUNT_NEGATIVE.read_bytes()).hexdigest(),
             "on": icount_memo.kernel_part(patched, None)},
            scenarios, ICOUNT_REPS, ICOUNT_BOOTS, icount.COUNT)
        memo_key = icount_memo.key(parts)
        try:
            kept = icount_memo.get(memo_key)
            if kept:
                data, negative_runs, made = self.icount_reuse(kept)
                reused = f"; runs of {made} reused (same kernels, modules and icount code)"
                log(f"  icount: the runs of key {kept.name[:12]} reused, made by {made}: the "
                    "same kernels, modules, icount code and tools (ICOUNT_FRESH=1 boots again)")
            else:
                data, reused = self.icount_measure(variants, sources, scenarios), ""
                negative_runs = None
            log((out / "icount.md").read_text())
            guards = data["guards"]
            stage.cases.extend(icount_cases(guards))
            missed_designs = []
            for label in ICOUNT_COUNTER_VARIANTS:
                design_caught, design_why = negative_caught(
                    icount.judge({"base": data["runs"]["base"], "patched": data["runs"][label]},
                                 keys=(ICOUNT_COUNTER_GUARD,)), keys=(ICOUNT_COUNTER_GUARD,))
                log(f"  icount counters negative control ({label} design): {design_why}")
                stage.cases.append(report.Case("icount", f"counters negative control ({label} "
                                               "design)", "pass" if design_caught else "fail",
                                               design_why))
                if not design_caught:
                    missed_designs.append(f"{label}: {design_why}")
            t0 = time.monotonic()
            caught, why = self.icount_negative_control(data["runs"]["base"], negative_runs)
            log(f"  icount negative control in {time.monotonic() - t0:.0f}s: {why}")
            stage.cases.append(report.Case("icount", "negative control",
                                           "pass" if caught else "fail", why))
            # A guard without runs on a side is not judged: the stage counts it not met.
            judged = {g["key"]: g["verdict"] for g in guards}
            not_met = [g.key for g in ICOUNT_GUARDS if judged.get(g.key) != "met"]
            rejected = "".join(f"; {len(b)} boot(s) of {k} left out for disagreeing"
                               for k, b in data.get("rejected", {}).items())
            stage.summary = (f"{len(ICOUNT_GUARDS) - len(not_met)}/{len(ICOUNT_GUARDS)} guards met"
                             f"{rejected}{reused}; "
                             f"negative control ({ICOUNT_NEGATIVE.name}): "
                             f"{'caught' if caught else 'MISSED'}; counters negative controls "
                             f"({', '.join(ICOUNT_COUNTER_VARIANTS)} designs): "
                             f"{'MISSED' if missed_designs else 'caught'}; "
                             f"report {out / 'icount.md'}")
            if not_met or not caught or missed_designs:
                raise StageFailed(stage.summary
                                  + (f"\nnot met: {', '.join(not_met)}" if not_met else "")
                                  + ("" if caught else f"\nnegative control: {why}")
                                  + "".join(f"\ncounters negative control missed, {m}"
                                            for m in missed_designs))
            if not kept:
                icount_memo.put(memo_key, parts, self.results)
        except StageFailed:
            # Kept runs that fail now, or a fresh measurement that failed:
            # the next run must not pass by what this key held.
            icount_memo.drop(memo_key)
            raise

    def icount_measure(self, variants, sources, scenarios):
        """The counter designs' dummy modules built on the patched build,
        every kernel booted ICOUNT_BOOTS times: icount.run()'s data."""
        from tools.bench import icount  # noqa: PLC0415
        tree, tip, patched = self.state.series_tree, self.state.tip, self.state.patched_kernel
        kernels, modules = {"base": (self.state.base_kernel, None)}, {}
        try:
            for label, patch in variants:
                ko = icount.build_dummy_module(
                    patched, tree, tip, self.state.ws / "series/icount-modules" / label,
                    patch, log_path=self.logfile(f"icount-module-{label}"))
                kernels[label] = (patched, str(ko))
                modules[label] = icount.module_note("the series", tip, patch and
                                                    patch.relative_to(ROOT))
            kernels["patched"] = (patched, None)
            t0 = time.monotonic()
            data = icount.run(kernels, self.results / "icount", reps=ICOUNT_REPS,
                              boots=ICOUNT_BOOTS, scenarios=scenarios, modules=modules,
                              sources=sources, stages=self.made_by("icount"))
        except RuntimeError as err:
            raise StageFailed(f"icount: {err}") from err
        log(f"  icount: {len(kernels)} kernels x {ICOUNT_BOOTS} boot(s) x {len(scenarios)} "
            f"scenarios x {ICOUNT_REPS} runs in {time.monotonic() - t0:.0f}s")
        return data

    def icount_reuse(self, kept):
        """The runs kept (icount_memo) copied into the results as they were
        written, the guards judged again from them: (data, the negative
        control's runs, the commit that measured them)."""
        from tools.bench import icount  # noqa: PLC0415
        for name in ("icount", "icount-negative"):
            shutil.rmtree(self.results / name, ignore_errors=True)
            shutil.copytree(kept / name, self.results / name)
        data = json.loads((self.results / "icount/icount.json").read_text())
        data["guards"] = icount.judge(data["runs"])
        negative = json.loads((self.results / "icount-negative/negative.json").read_text())
        made = str(data["environment"]["source"].get("commit"))[:12]
        return data, negative["runs"], made

    def icount_negative_control(self, base_runs, kept_runs=None):
        """ICOUNT_NEGATIVE applied to the series tree, built incrementally in
        the patched kernel's build directory (dummy.c changes), booted
        ICOUNT_BOOTS times with the path guards' rows (agreeing, as every
        kernel's boots must) and judged against the base's runs in the
        patched kernel's place; then the tree and the patched kernel are
        restored. kept_runs: its runs as icount_memo kept them, judged again
        instead. Returns (caught, why); results in results/icount-negative/."""
        from tools.bench import icount  # noqa: PLC0415
        if kept_runs is not None:
            return negative_caught(icount.judge(
                {"base": base_runs, "patched": kept_runs[ICOUNT_NEGATIVE_LABEL]},
                keys=ICOUNT_PATH_GUARDS))
        tree, build = self.apply_to_tip(ICOUNT_NEGATIVE), self.state.patched_kernel
        out = self.results / "icount-negative"
        try:
            self.build(tree, build, f"build-{ICOUNT_NEGATIVE_LABEL}", ["W=1"])
            runs = icount.boot_runs({ICOUNT_NEGATIVE_LABEL: (build, None)}, out, icount.COUNT,
                                    ICOUNT_REPS, ICOUNT_BOOTS,
                                    icount.guard_scenarios(ICOUNT_PATH_GUARDS))
        except RuntimeError as err:
            raise StageFailed(f"icount negative control: {err}") from err
        finally:
            git(tree, "checkout", "-q", "--", ".", error=StageFailed)
            self.build(tree, build, "build-series", ["W=1"], row="patched (rebuilt)")
        guards = icount.judge({"base": base_runs, "patched": runs[ICOUNT_NEGATIVE_LABEL]},
                              keys=ICOUNT_PATH_GUARDS)
        write_source_stamp(out, stages=self.made_by("icount"))
        (out / "negative.json").write_text(json.dumps(
            {"patch": ICOUNT_NEGATIVE.name, "guards": guards, "runs": runs}, indent=2) + "\n")
        return negative_caught(guards)

    def stage_bench(self, stage):
        from tools.bench import bench  # noqa: PLC0415
        uml = CONFIGS / "uml-bench.config"
        kernels = {}
        base, tip = self.state.base, self.state.tip
        for label, name, rev, variant in (
                ("base", "base", base["BASE_TAG"], None),
                ("patched", "series", tip, None),
                ("lock", "series", tip, LOCK_VARIANT)):
            if name == "base":
                src = self.worktree(name, rev)  # build-base no longer makes it
            else:
                src = self.state.series_tree
                self.checkout(src, rev)
            out = self.state.ws / name / ("build-um-bench" if label != "lock"
                                          else "build-um-lock")
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
        icount_json = self.results / "icount/icount.json"  # the icount stage's
        args = argparse.Namespace(
            base_kernel=kernels["base"], patched_kernel=kernels["patched"],
            lock_kernel=kernels["lock"],
            mqbench=self.state.programs / "tools/bench/mqbench", out=self.results / "bench",
            repetitions=int(os.environ.get("BENCH_REPETITIONS", "7")),
            max_repetitions=int(os.environ.get("BENCH_MAX_REPETITIONS", "15")),
            seconds=float(os.environ.get("BENCH_SECONDS", "3")), cpus=2, timeout=900,
            scenarios=bench.SCENARIOS,
            base_desc=f"{base.get('BASE_PACKAGE')} {base.get('BASE_VERSION')}",
            devcost=True, pin_vcpus=os.environ.get("BENCH_PIN_VCPUS") == "1",
            icount=icount_json if icount_json.is_file() else None,
            stages=self.made_by("bench"))
        log(f"  {args.repetitions} repetitions x {len(args.scenarios)} scenarios x "
            f"{len(kernels)} kernels")
        data, _, errors = bench.run(args)
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

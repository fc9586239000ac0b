"""The pipeline: base tree, series, per-patch checks, builds, KUnit, VMs, report.

  pipeline.py test   the test suite: host unit tests, pipeline self-tests,
                     the series checked and run on base and patched kernels
  pipeline.py main   the main job: the same on the pinned base, plus the
                     benchmark, written up as a report

Every stage prints what it does and its time; a failed stage fails the run
(non-zero exit) and skips the stages that need it. Results land in one
folder (RESULTS_DIR, default results/): results.json, summary.md, junit.xml
and the logs, listed in .pipeline-files.json: the next run clears those
files and refuses, by name, anything else there.

This file is the command line and the driver (which stages, in which order,
what each needs from which other). The stages live in one module per job:
  pipeline_common.py  paths, Stage/StageFailed/UsageError, log, sh, BuildProgress
                      (records each kernel build: objects, time, ccache)
  pipeline_state.py   RunState: what the stages hand on, each field's producer
  pipeline_host.py    setup, userspace, host-tests (ctest, self-tests, lint)
  pipeline_tree.py    base, apply, build-base; worktree and build helpers
  pipeline_checks.py  checks: per-patch and series checks, negative control
  pipeline_submit.py  submission: b4 prep, check, send -o, the posting order
  pipeline_mail.py    mailing-list: b4 over SMTP into a public-inbox archive
  pipeline_boot.py    kunit (UML), vm and vm-debug (virtme-ng; the VM matrix: matrix/)
  pipeline_bench.py   icount: instructions per packet, guards, negative control;
                      bench: UML builds, bench.py, verdicts
"""

import argparse
import fcntl
import os
import sys
import time
import traceback
from pathlib import Path

from ci.pipeline_common import (BUILDS, CACHE, EXTRA_FRAGMENTS, KERNEL_CONFIG, Stage, StageFailed,
                                UsageError, clear_results, list_results, log)
from ci.pipeline_state import MissingInput, RunState, missing
from ci.pipeline_bench import BenchStages
from ci.pipeline_boot import BootStages
from ci.pipeline_checks import CheckStages
from ci.pipeline_host import HostStages
from ci.pipeline_mail import MailStages
from ci.pipeline_submit import SubmitStages
from ci import report
from common import logs
from common.cache import claim
from common.paths import ROOT
from common.stamp import write_source_stamp
from tools.series import series


class Pipeline(HostStages, CheckStages, SubmitStages, MailStages, BootStages, BenchStages):
    """Every stage (one base class per job), the run's settings (mode,
    results, kernel_src) and the state the stages hand on (self.state)."""

    def __init__(self, mode, results):
        self.mode = mode
        self.results = Path(results)
        self.kernel_src = os.environ.get("KERNEL_SRC")
        self.stages = []
        self.plan = self.PLAN[mode]  # the stages run() runs
        self.state = RunState()

    PLAN = {
        # The test command stays well inside CI's 90 minutes cold on the
        # slower machine: the mailing-list round trip runs in the main job
        # only (Documentation/pipeline.md).
        "test": ["setup", "base", "apply", "userspace", "host_tests", "build_base", "checks",
                 "submission", "kunit", "vm", "icount"],
        "main": ["setup", "base", "apply", "userspace", "build_base", "checks", "submission",
                 "mailing_list", "kunit", "vm", "icount", "vm_debug", "bench"],
    }
    # What each stage needs: each stage it needs, with the RunState fields
    # it reads that that stage sets (none: a gate). A needed stage must pass
    # first (else this one is skipped) and, with --only, be named too; its
    # fields must be set when this one starts. ws is the workspace the base
    # stage chose; apply also leaves there the tip's kconfig fragments, from
    # which every test kernel is configured. ci/tests/test_pipeline_state.py
    # checks these lists against the stages' code.
    NEEDS = {
        "apply": {"base": ("base", "ws")},
        # against the applied tree's uapi headers
        "userspace": {"base": ("ws",), "apply": ("series_tree", "tip")},
        "host_tests": {"userspace": ("programs",)},
        "build_base": {"base": ("base", "ws"), "apply": ("series_tree",)},
        "checks": {"base": ("base", "ws"), "apply": ("series_tree", "applied", "tip")},
        "submission": {"base": ("base",), "apply": ("series_tree",)},
        "mailing_list": {"base": ("base",), "apply": ("series_tree",)},
        "kunit": {"base": ("ws",), "apply": ("series_tree", "tip")},
        "vm": {"base": ("ws",), "apply": ("series_tree", "applied", "tip"),
               "userspace": ("programs",), "build_base": ("base_kernel",),
               "checks": ("patched_kernel",)},
        # checks: a gate (nothing read): the debug VMs and the benchmark
        # run for a series that passed its checks.
        "vm_debug": {"base": ("ws",), "apply": ("series_tree", "tip"),
                     "userspace": ("programs",), "checks": ()},
        "icount": {"base": ("ws",), "apply": ("series_tree", "tip"),
                   "build_base": ("base_kernel",), "checks": ("patched_kernel",)},
        "bench": {"base": ("base", "ws"), "apply": ("series_tree", "tip"),
                  "userspace": ("programs",), "checks": ()},
    }
    # Read when set, not needed: the list bot quotes the checks stage's
    # build results when that stage ran in the same process, and says it
    # has none otherwise (the workflow's mailing-list job runs without it).
    MAY_READ = {"mailing_list": {"checks": ("patch_reports",)}}

    @classmethod
    def needs(cls, name):
        """The stages `name` needs, in NEEDS order."""
        return list(cls.NEEDS.get(name, {}))

    @classmethod
    def select(cls, mode, only):
        """The stages of `mode` to run: all, or those named in `only`, which
        must exist and include every stage they need."""
        plan = cls.PLAN[mode]
        if not only:
            return plan
        names = [o.replace("-", "_") for o in only]
        unknown = [o for o, n in zip(only, names) if n not in plan]
        if unknown:
            raise UsageError(f"unknown stage(s) for {mode}: {', '.join(unknown)}; "
                             f"the stages are: {', '.join(n.replace('_', '-') for n in plan)}")
        lacking = sorted({d for n in names for d in cls.needs(n)
                          if d in plan and d not in names})
        if lacking:
            raise UsageError(f"--only {' '.join(only)}: also name the stages they need: "
                             f"{', '.join(d.replace('_', '-') for d in lacking)}")
        return [n for n in plan if n in names]

    def run(self, only=None):
        plan = self.plan = self.select(self.mode, only)
        status = {}
        for name in plan:
            stage = Stage(name.replace("_", "-"))
            self.stages.append(stage)
            unmet = [n for n in self.needs(name)
                     if n in self.PLAN[self.mode] and status.get(n) != "pass"]
            if unmet:
                stage.summary = f"skipped: needs {', '.join(unmet)}"
                status[name] = "skip"
                log(f"==> {stage.name}: {stage.summary}")
                continue
            log(f"==> {stage.name}")
            t0, first_build = time.monotonic(), len(BUILDS)
            try:
                self.check_inputs(name)
                getattr(self, f"stage_{name}")(stage)
                stage.status = "pass"
            except (StageFailed, series.SeriesError) as err:
                stage.status, stage.summary = "fail", str(err)
            except Exception:  # a bug in the pipeline itself is a failure too
                stage.status, stage.summary = "fail", traceback.format_exc()
            stage.seconds = time.monotonic() - t0
            stage.builds = BUILDS[first_build:]
            status[name] = stage.status
            log(f"<== {stage.name}: {stage.status.upper()} in {stage.seconds:.0f}s: "
                f"{stage.summary.splitlines()[0] if stage.summary else ''}")
            if stage.status == "fail" and len(stage.summary.splitlines()) > 1:
                log("    " + "\n    ".join(stage.summary.splitlines()[1:20]))
        return self.finish()

    def check_inputs(self, name):
        """Every field stage `name` needs is set (a stage run with --only
        whose producer did not run in this process finds it unset): else
        MissingInput, naming each field and the stage that sets it."""
        unset = [f for fields in self.NEEDS.get(name, {}).values() for f in fields
                 if not self.state.is_set(f)]
        if unset:
            raise MissingInput("; ".join(missing(f) for f in unset))

    def finish(self):
        ok = all(s.status != "fail" for s in self.stages) and self.stages
        # The mode's stages that --only left out: the run is partial, no pass.
        ran = {s.name for s in self.stages}
        left_out = [n.replace("_", "-") for n in self.PLAN[self.mode]
                    if n.replace("_", "-") not in ran]
        # What the stages that ran set; a failed run reports what it has.
        report.write(self.results, mode=self.mode, base=self.state.get("base", {}),
                     stages=self.stages, patches=self.state.get("patch_reports", []),
                     series_results=self.state.get("series_results", {}), left_out=left_out)
        log("")
        log(report.stage_table(self.stages))
        if any(s.builds for s in self.stages):
            log("")
            log(report.build_table(self.stages))
        # A failed stage counts as a failure even when it recorded no case.
        n = report.counts([c for s in self.stages for c in s.cases], self.stages)
        log(f"results: {self.results}/summary.md, results.json, junit.xml")
        log(f"pipeline: {report.count_line(n)}")
        if not ok:
            failed = ", ".join(s.name for s in self.stages if s.status == "fail")
            log(f"pipeline: FAILED ({failed})")
        if left_out:
            log(f"pipeline: PARTIAL (--only): {len(ran)} of {len(self.PLAN[self.mode])} "
                f"stages ran; not run: {', '.join(left_out)}")
        return 0 if ok else 1


@logs.printed
def main(argv=None):
    # Debian's python3 first: kernel scripts (spdxcheck, ynl, tdc) need the
    # modules setup-host.sh installs from Debian, not another python3 in PATH.
    os.environ["PATH"] = "/usr/bin:/bin:" + os.environ.get("PATH", "")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["test", "main"])
    ap.add_argument("--only", nargs="*", help="run only these stages (debugging)")
    ap.add_argument("--results", default=os.environ.get("RESULTS_DIR", ROOT / "results"))
    args = ap.parse_args(argv)
    try:
        Pipeline.select(args.mode, args.only)
        if any(not f.is_file() for f in EXTRA_FRAGMENTS):
            raise UsageError(f"KERNEL_CONFIG={KERNEL_CONFIG}: no {EXTRA_FRAGMENTS[0]}")
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    # Lock first: a second run must not touch the results of the running one.
    claim(CACHE)  # made, or marked as used (what cleanup may remove)
    lock = open(CACHE / "pipeline.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"error: another pipeline run holds {CACHE / 'pipeline.lock'}", file=sys.stderr)
        return 1
    results = Path(args.results)
    try:
        clear_results(results)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        (results / "logs").mkdir()
        # Before any stage: the commit (and local changes) the results are of.
        write_source_stamp(results, stages=Pipeline.select(args.mode, args.only))
        return Pipeline(args.mode, results).run(args.only)
    finally:
        list_results(results)  # what the next run may clear


if __name__ == "__main__":
    sys.exit(main())

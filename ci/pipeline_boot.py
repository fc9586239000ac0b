"""The stages that boot the kernels: KUnit in UML (kunit/uml.py) on the
patched tree, and the selftests with the tree's tc-testing on the base
and the patched kernel under virtme-ng (ci/matrix/), then the
negative-control kernel."""

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from common.git import git
from common.paths import ROOT
from common.tools import iproute2_bin
from ci.pipeline_common import (BRANCH_PREFIX, CONFIGS, BuildProgress, Stage, StageFailed,
                                log)
from ci.pipeline_tree import TreeStages
from ci import report
from ci.matrix import debug_checks
from kunit import uml

if TYPE_CHECKING:
    from ci.matrix import judge


# The patched kernel with sfq's chain_head_change callback removed: a qdisc
# that bypasses and accepts filters without telling cls_api. Its programs
# are judged under this label (selftests/expectations.json).
NO_CALLBACK_PATCH = ROOT / "ci/negative-controls/sfq-without-chain-head-change.patch"
NO_CALLBACK = "no-callback"
NO_CALLBACK_PROGS = [("qdisc_bypass", "ktap")]
# The net fixes alone: the net series' tip, booted with the bypass series'
# programs, which come from the tip's tree (the net-next tests included),
# judged under this label (selftests/expectations.json: what the net fixes
# fix passes, what net-next restores fails).
NET_KERNEL = "net"
NET_PROGS = [("qdisc_bypass", "ktap"), ("net.qdisc_limit_zero.py", "kselftest"),
             ("net.qdisc_bypass.py", "kselftest"), ("tc-testing", "tdc")]
# One debug VM runs the fault injection and then every program but
# tc-testing. Measured on the KASAN kernel under TCG: fault injection 23
# min, the C++ programs 13 min, then net:dummy_queues.py more than 13 min
# (4096 TX queues): the 3600 s that sufficed before the fault injection and
# the in-tree kselftests joined killed the VM in the middle of them.
VM_DEBUG_TIMEOUT = 3 * 3600
# tc-testing in the vm stage, with the kernel's iproute2 (iproute2_bin()):
# the main command runs the whole suite on both kernels; the test command
# expectations.TDC_TEST_CATEGORIES (the qdiscs the series changes) on the
# patched kernel, and on base only the listed cases and those that failed
# on patched (run_matrix()). Seconds
# per VM and for tdc inside it (TCG, 2 vCPUs; measured: pipeline.md).
VM_TIMEOUT = {"main": 2 * 3600, "test": 2700}
TDC_TIMEOUT = {"main": 6000, "test": 1800}


def kunit_cases(prefix: str, res: uml.KunitResult) -> list[report.Case]:
    """report.Cases of a uml result, each suite under prefix."""
    return [report.Case(f"{prefix}.{suite}", case,
                        {"PASS": "pass", "SKIP": "skip"}.get(status, "fail"), status)
            for suite, case, status in res.cases]


class BootStages(TreeStages):
    def stage_kunit(self, stage: Stage) -> None:
        tree, ws = self.state.series_tree, self.state.ws
        self.checkout(tree, self.state.tip)
        with BuildProgress("UML kunit", cc_lines=False) as progress:
            res = uml.run(tree, ws / "series/build-kunit",
                          log_path=self.logfile("kunit"),
                          json_path=self.results / "kunit.json", echo=progress)
        stage.cases.extend(kunit_cases("kunit", res))
        runs = [("normal", res)]
        stage.summary = f"KUnit (UML): {res.summary()}"
        # The series' suite must catch a crafted counter bug (uml.NEGATIVE_CONTROL),
        # built incrementally in the same directory.
        with BuildProgress("UML kunit negative control", cc_lines=False) as progress:
            caught, why = uml.negative_control(tree, ws / "series/build-kunit",
                                               log_path=self.logfile("kunit-negative"),
                                               echo=progress)
        stage.cases.append(report.Case("kunit", "negative control", "pass" if caught else "fail",
                                       why))
        stage.summary += f"; negative control: {'caught' if caught else 'MISSED'}"
        # The KASAN and lockdep run is the main command's.
        if self.mode == "main":
            with BuildProgress("UML kunit (KASAN, lockdep)", cc_lines=False) as progress:
                dbg = uml.run(tree, ws / "series/build-kunit-debug",
                              log_path=self.logfile("kunit-debug"),
                              json_path=self.results / "kunit-debug.json",
                              echo=progress, kconfig_add=uml.DEBUG_KCONFIG)
            stage.cases.extend(kunit_cases("kunit-debug", dbg))
            stage.cases.append(report.Case("kunit-debug", "kernel reports",
                                           "fail" if dbg.splats else "pass",
                                           f"{len(dbg.splats)} KASAN/lockdep/WARNING line(s)",
                                           "\n".join(dbg.splats[:50])))
            stage.summary += f"; with KASAN and lockdep: {dbg.summary()}"
            runs.append(("debug", dbg))
        bad = [f"{name} (kunit.py exit {r.exit_code}; see {r.log_path})"
               for name, r in runs if not r.ok]
        bad += [] if caught else [f"negative control ({why})"]
        if bad:
            raise StageFailed(stage.summary + "; failed: " + ", ".join(bad))

    def stage_vm(self, stage: Stage) -> None:
        from ci.matrix import expectations, run  # noqa: PLC0415
        whole = self.mode == "main"
        try:
            iproute2 = iproute2_bin()
        except FileNotFoundError as e:
            raise StageFailed(str(e)) from e
        tree, patched = self.state.series_tree, self.state.patched_kernel
        outcome = run.run_matrix(
            {"base": self.state.base_kernel, "patched": patched},
            self.results / "vm", bindir=self.state.programs, tree=tree,
            tdc_categories=expectations.TDC_ALL if whole else expectations.TDC_TEST_CATEGORIES,
            tdc_base_all=whole, controls_on_base=whole, iproute2=iproute2,
            timeout=VM_TIMEOUT["main" if whole else "test"],
            tdc_timeout=TDC_TIMEOUT["main" if whole else "test"], stages=self.made_by("vm"))
        log(outcome.matrix)
        try:
            net = self.run_net_kernel(iproute2)
            log(net.matrix)
            neg = self.run_no_callback_kernel()
            log(neg.matrix)
        finally:
            # Both were built in the patched kernel's build directory.
            self.build(tree, patched, "build-series", ["W=1"], row="patched (rebuilt)")
        stage.cases.extend(outcome.cases + net.cases + neg.cases)
        stage.summary = (f"{outcome.summary}; {NET_KERNEL} kernel: {net.summary}; "
                         f"{NO_CALLBACK} kernel: {neg.summary}")
        stage.details = outcome.matrix + "\n\n" + net.matrix + "\n\n" + neg.matrix
        if not (outcome.ok and net.ok and neg.ok):
            raise StageFailed(stage.summary)

    def net_branch(self) -> str:
        """The branch of the one net series (the fixes that go to stable)."""
        nets = sorted({ser.name for ser, _, _ in self.state.applied
                       if ser.name.startswith("net/")})
        if len(nets) != 1:
            raise StageFailed(f"the {NET_KERNEL} kernel needs exactly one net series, "
                              f"found {len(nets)}: {', '.join(nets) or 'none'}")
        return BRANCH_PREFIX + nets[0]

    def run_net_kernel(self, iproute2: Path | None = None) -> "judge.MatrixVerdict":
        """The net series alone, built incrementally in the patched kernel's
        build directory (the checks stage compiled that commit already), then
        booted with NET_PROGS from the tip's tree: a net-next test that says
        it fails with the net fixes alone must fail there, and the net tests
        pass. The caller rebuilds the patched kernel."""
        from ci.matrix import run  # noqa: PLC0415
        tree, out = self.state.series_tree, self.state.patched_kernel
        self.checkout(tree, self.net_branch())
        try:
            self.build(tree, out, f"build-{NET_KERNEL}", ["W=1"])
        finally:
            self.checkout(tree, self.state.tip)
        return run.run_matrix({NET_KERNEL: out}, self.results / f"vm-{NET_KERNEL}",
                              bindir=self.state.programs, tree=tree, progs=NET_PROGS,
                              tdc_listed=(NET_KERNEL,), iproute2=iproute2,
                              stages=self.made_by("vm"))

    def run_no_callback_kernel(self) -> "judge.MatrixVerdict":
        """tc_new_tfilter()'s locked clear is the safety net for a qdisc that
        bypasses and accepts filters but registers no chain_head_change
        callback: the patched tree with NO_CALLBACK_PATCH applied must still
        enqueue sfq's packets once it has a filter. Built incrementally in the
        patched kernel's build directory (one module changes); the tree is
        left clean, the caller rebuilds the patched kernel."""
        from ci.matrix import run  # noqa: PLC0415
        tree, out = self.apply_to_tip(NO_CALLBACK_PATCH), self.state.patched_kernel
        try:
            self.build(tree, out, f"build-{NO_CALLBACK}", ["W=1"])
            return run.run_matrix({NO_CALLBACK: out}, self.results / f"vm-{NO_CALLBACK}",
                                  bindir=self.state.programs, tree=tree,
                                  progs=NO_CALLBACK_PROGS, stages=self.made_by("vm"))
        finally:
            git(tree, "checkout", "-q", "--", ".", error=StageFailed)

    def stage_vm_debug(self, stage: Stage) -> None:
        """The patched kernel built with kernel/configs/debug.config (KASAN,
        lockdep, PROVE_RCU, UBSAN, kmemleak with a scan at the end, fault
        injection) and with kcsan.config, each booted with the judged
        programs, churn included (tc-testing is the vm stage's). A splat, a
        KCSAN report or a kmemleak object fails the kernel's run; so does an
        instrument that was absent or turned itself off
        (debug_checks.check_instruments). The debug kernel first
        runs fault_inject (selftests/fault-inject.sh): each request of
        debug_checks.FAULT_REQUESTS must pass."""
        from ci.matrix import expectations, read, run  # noqa: PLC0415
        progs = [(p, k) for p, k in expectations.programs() if k != "tdc"]
        tree = self.state.series_tree
        self.checkout(tree, self.state.tip)
        summaries, ok, details = [], True, []
        bindir = self.state.programs
        for cfg in ("debug", "kcsan"):
            out = self.state.ws / "series" / f"build-x86-{cfg}"
            self.build(tree, out, f"build-{cfg}",
                       fragments=self.test_fragments([CONFIGS / f"{cfg}.config"]))
            outdir = self.results / f"vm-{cfg}"
            faults = cfg == "debug"
            res = run.run_matrix(
                {"patched": out}, outdir, bindir=bindir, tree=tree,
                progs=progs, timeout=VM_DEBUG_TIMEOUT, churn_seconds=60,
                before=(lambda shared_dir:
                        f"bash {ROOT}/selftests/fault-inject.sh {shared_dir} {bindir}")
                if faults else None,
                after=lambda shared_dir: f"bash {ROOT}/selftests/instruments.sh {shared_dir}",
                stages=self.made_by("vm_debug"))
            stage.cases.extend(dataclasses.replace(c, suite=f"{cfg}.{c.suite}") for c in res.cases)
            shared_dir = outdir / "patched"
            inst = debug_checks.instrument_cases(cfg, shared_dir, outdir / "patched-console.log")
            stage.cases.extend(inst)
            bad = [f"{c.name}: {c.message}" for c in inst if c.status != "pass"]
            summary = f"{cfg}: {res.summary}; instruments " + (
                "; ".join(bad) if bad else ", ".join(c.name for c in inst) + " on throughout")
            if faults:
                cases, probs = debug_checks.judge_fault_injection(
                    read.read_program(shared_dir, debug_checks.FAULT_PROGRAM, "ktap",
                                      tree))
                stage.cases.extend(cases)
                bad += probs
                summary += ("; fault injection: " + ("; ".join(probs[:3]) if probs else
                            f"{len(debug_checks.FAULT_REQUESTS)} requests, all consistent"))
                table = shared_dir / "fault-table.md"
                if table.is_file():
                    details.append(f"fault injection ({cfg} kernel):\n{table.read_text()}")
            summaries.append(summary)
            log(res.matrix)
            details.append(f"{cfg} kernel:\n{res.matrix}")
            ok = ok and res.ok and not bad
        stage.summary = "; ".join(summaries)
        stage.details = "\n\n".join(details)
        if not ok:
            raise StageFailed(stage.summary)

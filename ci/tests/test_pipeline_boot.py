"""The main command's vm-debug stage: the patched kernel built with each
debug config and booted with the judged programs (no tc-testing), its cases
named after the config, and a failing config failing the stage."""

import contextlib
import io
import subprocess
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

from ci import kconfig_tree
from ci import pipeline
from ci import pipeline_boot
from ci import pipeline_tree
from ci import report
from ci.matrix import debug_checks, expectations, run
from ci.tests import test_debug_checks
from ci.tests.test_pipeline_state import handed_on


# What a good run leaves: the console lines of each kernel's instruments, the
# state instruments.sh dumps at the end, fault_inject's results (debug only).
GOOD_RUN = {
    "debug": {
        "patched-console.log": test_debug_checks.DEBUG_CONSOLE,
        "patched/instruments": test_debug_checks.DEBUG_DUMP,
        "patched/fault_inject.out": test_debug_checks.fault_ktap(
            [(n, True) for n in debug_checks.FAULT_REQUESTS]),
        "patched/fault_inject.rc": "0\n",
        "patched/fault-table.md": "| request | sites |\n",
    },
    "kcsan": {
        "patched-console.log": test_debug_checks.KCSAN_CONSOLE,
        "patched/instruments": test_debug_checks.KCSAN_DUMP,
    },
}


class VmDebugTest(unittest.TestCase):
    def run_stage(self, ok_by_cfg, files=None):
        """files: {cfg: {path under results/vm-<cfg>: text}} replacing GOOD_RUN's
        (None: the file is left out)."""
        calls = []

        def fake_matrix(kernels, outdir, **kw):
            cfg = Path(outdir).name.removeprefix("vm-")
            calls.append((cfg, kernels, kw))
            for name, text in {**GOOD_RUN[cfg], **(files or {}).get(cfg, {})}.items():
                if text is not None:
                    (Path(outdir) / name).parent.mkdir(parents=True, exist_ok=True)
                    (Path(outdir) / name).write_text(text)
            return types.SimpleNamespace(
                ok=ok_by_cfg[cfg], summary=f"{cfg} summary", matrix="",
                cases=[report.Case("vm.patched", "boot and run", "pass")])

        builds = []
        with tempfile.TemporaryDirectory() as tmp:
            p = pipeline.Pipeline("main", tmp)
            handed_on(p, "vm_debug", tmp)
            for coll in kconfig_tree.collections():  # as the apply stage leaves them
                frag = kconfig_tree.fragment_path(p.state.ws, coll)
                frag.parent.mkdir(parents=True, exist_ok=True)
                frag.write_text("CONFIG_NET=y\n")
            stage = pipeline.Stage("vm_debug")
            with mock.patch.object(run, "run_matrix", fake_matrix), \
                    mock.patch.object(expectations, "programs",
                                      lambda: [("churn", "ktap"), ("tc-testing", "tdc")]), \
                    mock.patch.object(pipeline.Pipeline, "checkout", lambda *a: None), \
                    mock.patch.object(pipeline.Pipeline, "build",
                                      lambda self, src, out, label, **kw:
                                      builds.append((out.name, kw["fragments"]))), \
                    contextlib.redirect_stdout(io.StringIO()):
                try:
                    p.stage_vm_debug(stage)
                    failed = None
                except pipeline.StageFailed as e:
                    failed = str(e)
        return stage, calls, builds, failed

    def test_both_configs_built_and_booted(self):
        stage, calls, builds, failed = self.run_stage({"debug": True, "kcsan": True})
        self.assertIsNone(failed)
        self.assertEqual([b[0] for b in builds], ["build-x86-debug", "build-x86-kcsan"])
        self.assertEqual([f.name for f in builds[0][1]],
                         ["vng.config", "defconfig-net.config", "net.config",
                          "drivers-net.config", "drivers-net-netdevsim.config",
                          "tc-testing.config", "net-tests.config", "debug.config"])
        self.assertEqual([c[0] for c in calls], ["debug", "kcsan"])
        for _, kernels, kw in calls:
            self.assertEqual(list(kernels), ["patched"])
            self.assertEqual(kw["progs"], [("churn", "ktap")])  # no tc-testing
            self.assertEqual(kw["churn_seconds"], 60)
        self.assertEqual([c.suite for c in stage.cases if c.suite.endswith("vm.patched")],
                         ["debug.vm.patched", "kcsan.vm.patched"])
        self.assertEqual({c.suite for c in stage.cases if c.status != "pass"}, set())
        self.assertEqual([c.name for c in stage.cases if c.suite.endswith(".instruments")],
                         ["kasan", "lockdep", "kmemleak", "kcsan"])
        # The debug kernel runs fault_inject first; both dump their instruments at the end.
        debug_kw, kcsan_kw = calls[0][2], calls[1][2]
        self.assertIn("fault-inject.sh /x", debug_kw["before"](Path("/x")))
        self.assertIsNone(kcsan_kw["before"])
        for kw in (debug_kw, kcsan_kw):
            self.assertIn("instruments.sh /x", kw["after"](Path("/x")))
        self.assertIn("fault injection", stage.details)

    # Crafted bad runs: each passed the stage before instruments and fault
    # injection were checked (the programs' matrix is good in all of them).
    def test_lockdep_turned_off_fails_the_stage(self):
        _, _, _, failed = self.run_stage({"debug": True, "kcsan": True}, {"debug": {
            "patched/instruments": test_debug_checks.DEBUG_DUMP.replace("locks 1", "locks 0")}})
        self.assertIn("lockdep: lockdep off at the end of the run (debug_locks 0)", failed)

    def test_kmemleak_absent_fails_the_stage(self):
        _, _, _, failed = self.run_stage({"debug": True, "kcsan": True}, {"debug": {
            "patched-console.log": "KernelAddressSanitizer initialized (generic)\n",
            "patched/instruments": "lockdep: debug_locks 1\nkmemleak: absent\n"}})
        self.assertIn("kmemleak: no /sys/kernel/debug/kmemleak", failed)

    def test_no_instrument_dump_fails_the_stage(self):
        _, _, _, failed = self.run_stage({"debug": True, "kcsan": True},
                                         {"kcsan": {"patched/instruments": None}})
        self.assertIn("kcsan: KCSAN not enabled", failed)

    def test_kcsan_selftest_missing_fails_the_stage(self):
        _, _, _, failed = self.run_stage({"debug": True, "kcsan": True},
                                         {"kcsan": {"patched-console.log": "booted\n"}})
        self.assertIn("kcsan: no \"kcsan: selftest: N/N tests passed\"", failed)

    def test_a_fault_injection_failure_fails_the_stage(self):
        results = [(n, n != "limit0_codel") for n in debug_checks.FAULT_REQUESTS]
        _, _, _, failed = self.run_stage({"debug": True, "kcsan": True}, {"debug": {
            "patched/fault_inject.out": test_debug_checks.fault_ktap(results),
            "patched/fault_inject.rc": "1\n"}})
        self.assertIn("fault_inject: limit0_codel on patched: control, got fail", failed)

    def test_fault_injection_that_never_ran_fails_the_stage(self):
        _, _, _, failed = self.run_stage({"debug": True, "kcsan": True}, {"debug": {
            "patched/fault_inject.out": None, "patched/fault_inject.rc": None}})
        self.assertIn("fault injection: fault_inject on patched: no exit code recorded", failed)

    def test_a_failing_config_fails_the_stage(self):
        _, calls, _, failed = self.run_stage({"debug": True, "kcsan": False})
        self.assertEqual(len(calls), 2)
        self.assertIn("kcsan summary", failed)

    def test_stage_is_in_main_only(self):
        self.assertIn("vm_debug", pipeline.Pipeline.PLAN["main"])
        self.assertNotIn("vm_debug", pipeline.Pipeline.PLAN["test"])
        self.assertIs(pipeline.Pipeline.stage_vm_debug, pipeline_boot.BootStages.stage_vm_debug)


class KunitStageTest(unittest.TestCase):
    """The KASAN/lockdep KUnit run is the main command's; the test command
    runs the tree's suites once, and the series' suite on its negative
    control, which it must catch."""

    def run_stage(self, mode, caught=True):
        calls = []
        controls = []

        def fake_control(tree, build, **kw):
            controls.append(build)
            return caught, "dummy.dummy_test_senders failed" if caught else "missed"

        def fake_run(tree, build, **kw):
            calls.append(kw.get("kconfig_add"))
            return types.SimpleNamespace(cases=[("s", "c", "PASS")], ok=True, splats=[],
                                         exit_code=0, log_path="x",
                                         summary=lambda: "1 passed")

        with tempfile.TemporaryDirectory() as tmp:
            p = pipeline.Pipeline(mode, tmp)
            handed_on(p, "kunit", tmp)
            stage = pipeline.Stage("kunit")
            with mock.patch.object(pipeline_boot.uml, "run", fake_run), \
                    mock.patch.object(pipeline_boot.uml, "negative_control", fake_control), \
                    mock.patch.object(pipeline.Pipeline, "checkout", lambda *a: None), \
                    contextlib.redirect_stdout(io.StringIO()):
                p.stage_kunit(stage)
        self.assertEqual(len(controls), 1)
        self.assertEqual(controls[0], Path(tmp) / "ws/series/build-kunit")
        self.assertIn(("negative control", "pass"),
                      [(c.name, c.status) for c in stage.cases])
        return calls

    def test_test_mode_runs_once(self):
        self.assertEqual(self.run_stage("test"), [None])

    def test_a_missed_negative_control_fails_the_stage(self):
        with self.assertRaisesRegex(pipeline_boot.StageFailed, "negative control \\(missed\\)"):
            self.run_stage("test", caught=False)

    def test_main_mode_adds_the_debug_run(self):
        calls = self.run_stage("main")
        self.assertEqual(len(calls), 2)
        self.assertIn("CONFIG_KASAN=y", calls[1])


class NoCallbackKernelTest(unittest.TestCase):
    """The vm stage's extra kernels: the net series alone, and the
    negative-control kernel (the patch applied to the series tree), each
    built, its programs judged under its own label, the tree and the build
    restored, and a failure of any matrix failing the stage."""

    NET = pipeline_boot.NET_KERNEL

    def run_stage(self, ok_by_label, apply_code=0, build_fails=(),
                  nets=("net/qdisc-bypass",), mode="test", kws=None):
        calls, builds, shell = [], [], []
        checkouts = []
        ok_by_label = {self.NET: True, **ok_by_label}

        def fake_build(self_, src, out, label, *a, **kw):
            builds.append(label)
            if label in build_fails:
                raise pipeline.StageFailed(f"{label} failed")

        def fake_matrix(kernels, outdir, **kw):
            label = list(kernels)[0]
            calls.append((list(kernels), kw.get("progs")))
            if kws is not None:
                kws.append(kw)
            return types.SimpleNamespace(
                ok=ok_by_label[label], summary=f"{label} summary", matrix="",
                cases=[report.Case(f"vm.{label}", "boot and run", "pass")])

        def fake_git_run(tree, *args, **kw):
            cmd = ["git", "-C", str(tree), *args]
            shell.append(cmd)
            return subprocess.CompletedProcess(cmd, apply_code if "apply" in cmd else 0,
                                               "error: patch failed")

        def fake_git(tree, *args, **kw):
            shell.append(["git", "-C", str(tree), *args])
            return ""

        with tempfile.TemporaryDirectory() as tmp:
            p = pipeline.Pipeline(mode, tmp)
            handed_on(p, "vm", tmp, applied=[
                (types.SimpleNamespace(name=n), None, None)
                for n in (*nets, "net-next/qdisc-bypass", "net-next/qdisc-bypass")])
            stage = pipeline.Stage("vm")
            with mock.patch.object(run, "run_matrix", fake_matrix), \
                    mock.patch.object(pipeline_boot, "iproute2_bin", lambda: Path("/ip2/bin")), \
                    mock.patch.object(pipeline_tree, "git_run", fake_git_run), \
                    mock.patch.object(pipeline_boot, "git", fake_git), \
                    mock.patch.object(pipeline.Pipeline, "checkout",
                                      staticmethod(lambda tree, rev: checkouts.append(rev))), \
                    mock.patch.object(pipeline.Pipeline, "build", fake_build), \
                    contextlib.redirect_stdout(io.StringIO()):
                try:
                    p.stage_vm(stage)
                    failed = None
                except pipeline.StageFailed as e:
                    failed = str(e)
        self.checkouts = checkouts
        return stage, calls, builds, shell, failed

    def test_negative_kernel_runs_after_base_and_patched(self):
        stage, calls, builds, shell, failed = self.run_stage(
            {"base": True, pipeline_boot.NO_CALLBACK: True})
        self.assertIsNone(failed)
        self.assertEqual(calls[0][0], ["base", "patched"])
        self.assertEqual(calls[2], ([pipeline_boot.NO_CALLBACK], pipeline_boot.NO_CALLBACK_PROGS))
        self.assertEqual(builds, [f"build-{self.NET}", f"build-{pipeline_boot.NO_CALLBACK}",
                                  "build-series"])
        self.assertIn(str(pipeline_boot.NO_CALLBACK_PATCH), shell[0])
        self.assertTrue(any("checkout" in c and "--" in c for c in shell[1:]))
        self.assertIn(pipeline_boot.NO_CALLBACK, stage.summary)

    def test_net_kernel_is_the_net_series_with_the_tips_tests(self):
        stage, calls, builds, _, failed = self.run_stage(
            {"base": True, pipeline_boot.NO_CALLBACK: True})
        self.assertIsNone(failed)
        self.assertEqual(calls[1], ([self.NET], pipeline_boot.NET_PROGS))
        # Built from the net branch; the programs then run from the tip's tree.
        self.assertEqual(self.checkouts[:2], ["ci/net/qdisc-bypass", "abc"])
        self.assertIn(f"{self.NET} kernel: {self.NET} summary", stage.summary)

    def test_net_kernel_failing_fails_the_stage(self):
        _, _, builds, _, failed = self.run_stage(
            {"base": True, self.NET: False, pipeline_boot.NO_CALLBACK: True})
        self.assertIn(f"{self.NET} summary", failed)
        self.assertEqual(builds[-1], "build-series")

    def test_net_kernel_build_failure_restores_the_patched_kernel(self):
        _, calls, builds, _, failed = self.run_stage(
            {"base": True, pipeline_boot.NO_CALLBACK: True}, build_fails=(f"build-{self.NET}",))
        self.assertIn(f"build-{self.NET} failed", failed)
        self.assertEqual(builds, [f"build-{self.NET}", "build-series"])
        self.assertEqual(self.checkouts[-1], "abc")
        self.assertEqual(len(calls), 1)

    def test_net_kernel_needs_one_net_series(self):
        for nets in ((), ("net/a", "net/b")):
            with self.subTest(nets=nets):
                _, _, builds, _, failed = self.run_stage(
                    {"base": True, pipeline_boot.NO_CALLBACK: True}, nets=nets)
                self.assertIn("exactly one net series", failed)
                self.assertEqual(builds, ["build-series"])

    def test_net_kernel_expectations_are_stated(self):
        """Every case of the net kernel's programs that differs between the
        base and the patched kernel states what the net fixes alone give."""
        expect = expectations.load_expectations()
        unstated = [f"{prog}: {case}" for prog, _ in pipeline_boot.NET_PROGS
                    for case, entry in expect[prog].items()
                    if entry.get("base", "pass") != entry.get("patched", "pass")
                    and self.NET not in entry]
        self.assertEqual(unstated, [])

    def test_tc_testing_per_command(self):
        """The main command runs the whole tc-testing suite on both kernels,
        the test command its categories (the base only reruns), both with
        the kernel's iproute2."""
        for mode, cats, base_all in (("main", expectations.TDC_ALL, True),
                                     ("test", expectations.TDC_TEST_CATEGORIES, False)):
            kws = []
            self.run_stage({"base": True, pipeline_boot.NO_CALLBACK: True}, mode=mode, kws=kws)
            with self.subTest(mode=mode):
                self.assertEqual((kws[0]["tdc_categories"], kws[0]["tdc_base_all"],
                                  kws[0]["iproute2"]), (cats, base_all, Path("/ip2/bin")))

    def test_negative_kernel_failing_fails_the_stage(self):
        _, _, builds, _, failed = self.run_stage({"base": True, pipeline_boot.NO_CALLBACK: False})
        self.assertIn("no-callback summary", failed)
        self.assertEqual(builds[-1], "build-series")  # restored even so

    def test_patch_that_does_not_apply_is_named(self):
        _, calls, builds, _, failed = self.run_stage(
            {"base": True, pipeline_boot.NO_CALLBACK: True}, apply_code=1)
        self.assertIn(pipeline_boot.NO_CALLBACK_PATCH.name, failed)
        self.assertEqual(len(calls), 2)
        self.assertEqual(builds, [f"build-{self.NET}", "build-series"])

    def test_patch_removes_sfqs_callback_only(self):
        text = pipeline_boot.NO_CALLBACK_PATCH.read_text()
        self.assertIn("+++ b/net/sched/sch_sfq.c", text)
        self.assertEqual(text.count("+++ "), 1)
        self.assertIn("-\terr = tcf_block_get_ext(&q->block, sch, &q->block_info, extack);", text)
        self.assertIn("+\terr = tcf_block_get(&q->block, &q->filter_list, sch, extack);", text)


if __name__ == "__main__":
    unittest.main()

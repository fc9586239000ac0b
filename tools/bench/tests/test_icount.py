"""tools/bench/icount.py: the guest protocol, the summary and the driver,
with run_vm standing in for the VM; the guards on recorded and crafted
counts; the out-of-tree dummy module."""

import contextlib
import copy
import hashlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from common import stamp
from common.vm import VmResult
from common.paths import ROOT
from tools.bench import bench_config, icount


def fake_vm(usec, clocksource="tsc"):
    """A run_vm that writes, for each scenario of the guest command, usec[kernel
    build][scenario] as every run's result, and the clocksource it ran on, at
    its start and after every run. A list of usec values or of clocksources
    gives one per boot of the build, the last for the boots after;
    a clocksource "tsc,hpet": tsc at the start, hpet after every run."""
    calls = []

    def nth(value, n):
        return value[min(n, len(value) - 1)] if isinstance(value, list) else value

    def run_vm(build, command, rwdir, **kw):
        n = sum(1 for c in calls if c[0] == build)
        calls.append((build, command, kw))
        start, _, after = nth(clocksource, n).partition(",")
        (Path(rwdir) / "clocksource").write_text(f"{start}\n")
        words = command.split()
        reps = int(words[4])
        scenarios = words[5:words.index("--")] if "--" in words else words[5:]
        for s in scenarios:
            for i in range(1, reps + 1):
                (Path(rwdir) / f"{s}.{i}").write_text(f"{nth(usec[build][s], n)}\n")
                (Path(rwdir) / f"{s}.{i}.clocksource").write_text(f"{after or start}\n")
        return VmResult(kernel=build, command=command, exit_code=0, timed_out=False,
                        seconds=1.0)
    return calls, run_vm


class IcountTest(unittest.TestCase):
    def test_guest_command(self):
        self.assertEqual(icount.guest_command(Path("/o"), 20000, 3, ["q2_mq"], None),
                         f"bash {icount.GUEST} /o 20000 3 q2_mq")
        self.assertTrue(icount.guest_command(Path("/o"), 1, 1, ["a", "b"], "/m/dummy.ko")
                        .endswith(" 1 1 a b -- /m/dummy.ko"))

    def test_run_alternates_kernels_and_counts_instructions(self):
        usec = {"B": {"q2_start_xmit": 36580, "q1_noqueue": 44484},
                "P": {"q2_start_xmit": 36780, "q1_noqueue": 44484}}
        calls, run_vm = fake_vm(usec)
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(icount, "run_vm", run_vm):
            data = icount.run({"base": ("B", None), "lock": ("P", "/l/dummy.ko"),
                               "patched": ("P", None)}, Path(tmp), count=20000, reps=2,
                              boots=2, scenarios=["q2_start_xmit", "q1_noqueue"])
            self.assertTrue((Path(tmp) / "icount.md").is_file())
            md = (Path(tmp) / "icount.md").read_text()
        self.assertEqual([c[0] for c in calls], ["B", "P", "P", "P", "P", "B"])
        self.assertTrue(calls[1][1].endswith("-- /l/dummy.ko"))
        # The lock design's module: the dummy scenarios only.
        self.assertEqual(icount.kernel_scenarios("/l/dummy.ko", ["s2_pfifo_fast", "q2_mq"]),
                         ["q2_mq"])
        self.assertEqual(icount.kernel_scenarios(None, ["s2_pfifo_fast", "q2_mq"]),
                         ["s2_pfifo_fast", "q2_mq"])
        self.assertEqual(calls[0][2]["qemu_opts"], icount.QEMU_OPTS)
        self.assertEqual(calls[0][2]["cpus"], 1)
        self.assertEqual(calls[0][2]["append"], "clocksource=tsc tsc=reliable")
        rows = {(r["scenario"], r["kernel"]): r for r in data["rows"]}
        # usec x 1000 / packets
        self.assertEqual(rows[("q2_start_xmit", "base")]["median"], 1829.0)
        self.assertEqual(rows[("q2_start_xmit", "patched")]["delta"], 10.0)
        self.assertEqual(rows[("q1_noqueue", "patched")]["delta"], 0.0)
        self.assertEqual(rows[("q1_noqueue", "lock")]["n"], 4)
        self.assertIn("| q2_start_xmit | patched | 1839.0 | 1839.0-1839.0 | 0.00% | +10.0 |", md)

    def test_the_record_names_each_kernel_by_the_tree_commit_built(self):
        from common.stamp import write_build_source
        from common.tests.test_stamp import tree
        with tempfile.TemporaryDirectory() as tmp:
            src, build = Path(tmp) / "src", Path(tmp) / "build"
            _, run_vm = fake_vm({str(build): {"q1_noqueue": 44484},
                                 str(Path(tmp) / "old"): {"q1_noqueue": 44484}})
            commit = tree(src)
            build.mkdir()
            write_build_source(src, build)
            patch = Path(tmp) / "lock.patch"
            patch.write_text("lock\n")
            module = icount.module_source(src, "HEAD", patch)
            kernels = {"base": (str(build), None), "lock": (str(build), "/l/dummy.ko"),
                       "old": (str(Path(tmp) / "old"), None)}
            with mock.patch.object(icount, "run_vm", run_vm):
                data = icount.run(kernels, Path(tmp) / "out", reps=1, boots=1,
                                  scenarios=["q1_noqueue"], sources={"lock": module})
            stamp = json.loads((Path(tmp) / "out/source.json").read_text())
        builds = data["environment"]["kernel_builds"]
        self.assertEqual((builds["base"]["commit"], builds["base"]["dirty"]), (commit, False))
        self.assertEqual(builds["lock"]["module"]["commit"], commit)
        self.assertEqual(builds["lock"]["module"]["patch_sha256"],
                         hashlib.sha256(b"lock\n").hexdigest())
        # A build directory stamped by no build: its path alone, as before.
        self.assertEqual(builds["old"], {"dir": str(Path(tmp) / "old"), "commit": None})
        self.assertEqual(data["environment"]["kernels"]["base"], str(build))
        self.assertEqual(stamp["stages"], ["tools.bench.icount"])
        self.assertEqual(data["environment"]["source"], stamp)

    def test_a_boot_on_another_clocksource_is_an_error(self):
        # hpet costs about 27 instructions per packet more than tsc: such a
        # boot's counts would read as a change of the path. Booted again
        # once, then an error.
        calls, run_vm = fake_vm({"B": {"q1_noqueue": 44484}}, clocksource="hpet")
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(icount, "run_vm", run_vm):
            with self.assertRaisesRegex(RuntimeError, "base boot 0: clocksource hpet at boot, "
                                        "hpet after q1_noqueue.1, not tsc.*and so again"):
                icount.run({"base": ("B", None)}, Path(tmp), reps=1, boots=1,
                           scenarios=["q1_noqueue"])
        self.assertEqual(len(calls), 2)

    def test_a_switch_of_clocksource_during_the_runs_boots_again(self):
        # On tsc at boot, on hpet after the runs: that boot is not counted.
        usec = {"B": {"q1_noqueue": [44999, 44484]}}
        calls, run_vm = fake_vm(usec, clocksource=["tsc,hpet", "tsc"])
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(icount, "run_vm", run_vm), self.assertLogs(icount.logger) as log:
            runs = icount.boot_runs({"base": ("B", None)}, Path(tmp), 20000, 2, 1,
                                    ["q1_noqueue"])
        self.assertEqual([c[2]["log_path"].name for c in calls],
                         ["boot0-base.log", "boot0-base-again.log"])
        self.assertEqual(runs, {"base": [{"q1_noqueue": [2224.2, 2224.2]}]})
        self.assertIn("clocksource hpet after q1_noqueue.1, hpet after q1_noqueue.2, not tsc",
                      "\n".join(log.output))

    def boots(self, usec_per_boot, boots=2):
        """boot_runs() of one kernel whose boots give usec_per_boot in turn:
        (runs, rejected, number of boots)."""
        calls, run_vm = fake_vm({"B": {"s2_pfifo_fast": usec_per_boot}})
        rejected = {}
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(icount, "run_vm", run_vm):
            runs = icount.boot_runs({"patched": ("B", None)}, Path(tmp), 20000, 3, boots,
                                    ["s2_pfifo_fast"], rejected=rejected)
        return runs, rejected, len(calls)

    def test_two_agreeing_boots(self):
        # 2372.2 and 2373.2 instructions a packet: 0.04% apart.
        runs, rejected, n = self.boots([47444, 47464])
        self.assertEqual(n, 2)
        self.assertEqual(rejected, {})
        self.assertEqual([b["s2_pfifo_fast"][0] for b in runs["patched"]], [2372.2, 2373.2])

    def test_an_outlier_boot_is_booted_again(self):
        # The outlier of the issue: 2398.2 against 2372.2 (1.1%); a third
        # boot agrees with the first, the outlier is left out and kept apart.
        with self.assertLogs(icount.logger) as log:
            runs, rejected, n = self.boots([47444, 47964, 47446])
        self.assertEqual(n, 3)
        self.assertEqual([b["s2_pfifo_fast"][0] for b in runs["patched"]], [2372.2, 2372.3])
        self.assertEqual([b["s2_pfifo_fast"][0] for b in rejected["patched"]], [2398.2])
        self.assertIn("s2_pfifo_fast 2372.2 vs 2398.2", "\n".join(log.output))

    def test_boots_that_never_agree_fail_naming_the_medians(self):
        with self.assertRaisesRegex(RuntimeError, r"patched: no 2 of its 3 boots agree within "
                                    r"0\.1%: s2_pfifo_fast 2372\.2 vs 2398\.2 vs 2424\.2"):
            self.boots([47444, 47964, 48484])

    def test_a_guard_needs_two_boots_a_side(self):
        runs = recorded_runs()
        one = {k: [{s: v * 2 for s, v in b.items()} for b in boots[:1]]
               for k, boots in runs.items()}  # one boot of six runs
        self.assertEqual({g["verdict"] for g in icount.judge(one)}, {"not met"})
        self.assertIn("1 boot(s) of a side, fewer than 2", icount.judge(one)[0]["why"])

    def test_command_line_fails_unless_every_guard_is_met(self):
        data = json.loads(RECORD.read_text())
        # The record's patched kernel counted with the atomic design: its
        # start_xmit row as the series' counters cost it, the base's.
        for boot, base_boot in zip(data["runs"]["patched"], data["runs"]["base"]):
            boot["q2_start_xmit"] = list(base_boot["q2_start_xmit"])
        data["guards"] = icount.judge(scaled(data["runs"], "patched", "q1_noqueue", 1.003))
        err = io.StringIO()
        with mock.patch.object(icount, "run", lambda *a, **kw: data), \
                contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            self.assertEqual(icount.main(["--kernel", "base=/b"]), 1)
        self.assertIn("guards not met: S3: not met (2248.2 -> 2255.0", err.getvalue())
        data["guards"] = [g for g in icount.judge(data["runs"]) if g["key"] != "counters"]
        err = io.StringIO()
        with mock.patch.object(icount, "run", lambda *a, **kw: data), \
                contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            self.assertEqual(icount.main(["--kernel", "base=/b"]), 1)
        self.assertIn("counters: not judged: its rows did not run on base and patched",
                      err.getvalue())
        data["guards"] = icount.judge(data["runs"])
        with mock.patch.object(icount, "run", lambda *a, **kw: data), \
                contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(icount.main(["--kernel", "base=/b"]), 0)

    def test_a_failed_boot_is_an_error(self):
        def run_vm(build, command, rwdir, **kw):
            return VmResult(kernel=build, command=command, exit_code=1, timed_out=False,
                            seconds=1.0)
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(icount, "run_vm", run_vm):
            with self.assertRaisesRegex(RuntimeError, "base boot 0: command exited 1"):
                icount.run({"base": ("B", None)}, Path(tmp))

    def test_arguments(self):
        with self.assertRaises(SystemExit):
            icount.main(["--kernel", "patched=/b"])  # no base
        with self.assertRaises(SystemExit):
            icount.main(["--kernel", "base=/b", "--scenarios", "q9"])
        with self.assertRaises(SystemExit):
            icount.main(["--kernel", "base"])


# The record of c802371 (2 boots x 3 runs per kernel), kept as test data: the
# cases below are built on its run counts, which a new record may change.
RECORD = Path(__file__).resolve().parent / "data/icount/icount-c802371.json"
CURRENT = ROOT / "Documentation/results/icount/icount.json"


def recorded_runs():
    """The runs of the icount record of c802371 (2 boots x 3 runs per kernel)."""
    return json.loads(RECORD.read_text())["runs"]


def scaled(runs, kernel, scenario, factor):
    """runs with every run of (kernel, scenario) multiplied by factor."""
    runs = copy.deepcopy(runs)
    for boot in runs[kernel]:
        boot[scenario] = [v * factor for v in boot[scenario]]
    return runs


class GuardTest(unittest.TestCase):
    def verdicts(self, runs, keys=None):
        return {g["key"]: g["verdict"] for g in icount.judge(runs, keys)}

    def test_the_record_meets_every_guard(self):
        """c802371's patched kernel counted with the previous atomic design,
        seven instructions on the start_xmit path: within the counters guard,
        as the series' eight are (a locked add is one instruction; what sets
        that design apart is a shared cache line, which icount cannot show)."""
        self.assertEqual(self.verdicts(recorded_runs()),
                         {"S2-restore": "met", "S2-fresh": "met", "S2-bypass": "met",
                          "S3": "met", "counters": "met"})

    def test_the_designs_not_chosen_fail_the_counters_guard(self):
        """The lock design's runs (a 2-queue dummy that is not lltx) and the
        atomic design's in the patched kernel's place: not met."""
        # The project's record: its base boots ran on the tsc clocksource too
        # (c802371's base on hpet, 27 instructions more per packet).
        runs = json.loads(CURRENT.read_text())["runs"]
        v = self.verdicts({"base": runs["base"], "patched": runs["lock"]}, keys=("counters",))
        self.assertEqual(v, {"counters": "not met"})
        # The atomic design on the series' tip: its two locked adds on top of the
        # series' 8 (Documentation/design.md section 3: +13.0 in all).
        atomic = copy.deepcopy(runs["base"])
        for boot in atomic:
            boot["q2_start_xmit"] = [v + 13.0 for v in boot["q2_start_xmit"]]
        v = self.verdicts({"base": runs["base"], "patched": atomic}, keys=("counters",))
        self.assertEqual(v, {"counters": "not met"})
        series = copy.deepcopy(runs["base"])
        for boot in series:
            boot["q2_start_xmit"] = [v + 8.0 for v in boot["q2_start_xmit"]]
        v = self.verdicts({"base": runs["base"], "patched": series}, keys=("counters",))
        self.assertEqual(v, {"counters": "met"})

    def test_reports_have_no_verdict_of_a_guard(self):
        runs = recorded_runs()
        rows = icount.judge(runs, guards=bench_config.ICOUNT_REPORTS)
        self.assertEqual({r["key"]: r["verdict"] for r in rows},
                         {"S2-floor": "report", "S2-floor-base": "report",
                          "dummy-counters": "report"})  # the record has no sink rows
        floor = next(r for r in rows if r["key"] == "S2-floor")
        self.assertGreater(floor["ratio"], 1.0)  # pfifo_fast costs more than noqueue
        md = icount.guard_lines(rows, reports=True)
        self.assertTrue(any(line.startswith("| S2-floor | patched: noqueue floor") for line in md))

    def test_three_per_mille_more_on_s3_is_not_met(self):
        v = self.verdicts(scaled(recorded_runs(), "patched", "q1_noqueue", 1.003))
        self.assertEqual(v["S3"], "not met")
        self.assertEqual(v["S2-bypass"], "met")
        # ... and fewer instructions by as much is not the same code either.
        v = self.verdicts(scaled(recorded_runs(), "patched", "q1_noqueue", 0.997))
        self.assertEqual(v["S3"], "not met")

    def test_five_instructions_more_on_the_bypass_is_not_met(self):
        runs = recorded_runs()
        for boot in runs["patched"]:
            boot["s2_pfifo_fast"] = [v + 5 for v in boot["s2_pfifo_fast"]]
        self.assertEqual(self.verdicts(runs)["S2-bypass"], "not met")

    def test_one_low_run_per_boot_leaves_the_median(self):
        """The occasional run about 25 instructions lower, once in each boot
        (the base's runs have none; two of six is as many as the median takes)."""
        runs = recorded_runs()
        for boot in runs["base"]:
            boot["q1_noqueue"][0] -= 25
        self.assertEqual(self.verdicts(runs)["S3"], "met")
        runs["base"][0]["q1_noqueue"][1] -= 25
        self.assertEqual(self.verdicts(runs)["S3"], "not met")

    def test_no_saving_without_the_restore(self):
        runs = recorded_runs()
        for pb, bb in zip(runs["patched"], runs["base"]):
            pb["s2_fq_codel_after_filter"] = list(bb["s2_fq_codel_after_filter"])
        self.assertEqual(self.verdicts(runs)["S2-restore"], "not met")

    def test_too_few_runs_is_not_met(self):
        runs = recorded_runs()
        runs = {k: v[:1] for k, v in runs.items()}  # one boot of 3 runs
        self.assertEqual(set(self.verdicts(runs).values()), {"not met"})

    def test_only_the_guards_whose_rows_ran(self):
        runs = {"base": recorded_runs()["base"]}
        self.assertEqual(icount.judge(runs), [])
        self.assertEqual(list(self.verdicts(recorded_runs(), keys=("S3",))), ["S3"])
        runs = recorded_runs()
        for k in runs:
            runs[k] = [{"q1_noqueue": boot["q1_noqueue"]} for boot in runs[k] if
                       "q1_noqueue" in boot]
        self.assertEqual(self.verdicts(runs), {"S3": "met"})

    def test_the_bound_is_stated_and_used(self):
        self.assertEqual(bench_config.ICOUNT_BOUND, 0.002)
        for g in bench_config.ICOUNT_GUARDS:
            if g.key not in ("S2-restore", "counters"):
                self.assertEqual((g.lo, g.hi), (0.998, 1.002), g.key)
        counters = next(g for g in bench_config.ICOUNT_GUARDS if g.key == "counters")
        self.assertEqual((counters.lo, counters.hi), (None, 1.0055))
        self.assertEqual(icount.guard_scenarios(bench_config.ICOUNT_PATH_GUARDS),
                         ["q1_noqueue", "s2_pfifo_fast"])
        self.assertEqual(icount.guard_scenarios(),
                         ["q2_start_xmit", "q1_noqueue", "s2_fq_codel_fresh",
                          "s2_fq_codel_after_filter", "s2_pfifo_fast"])

    def test_report_shows_the_verdicts(self):
        data = json.loads(RECORD.read_text())
        data["guards"] = icount.judge(scaled(data["runs"], "patched", "q1_noqueue", 1.003))
        md = icount.markdown(data)
        self.assertIn("| S2-bypass | pfifo_fast bypass, one sender: base -> patched | 2397.5 |", md)
        self.assertRegex(md, r"\| S3 \|.*\| \*\*NOT MET\*\* \(2248\.2 -> 2255\.0")


FAKE_MAKE = """#!/bin/sh
for a; do case $a in M=*) m=${a#M=} ;; esac; done
[ -z "$FAIL_MAKE" ] || { echo "make: error" ; exit 2; }
echo "$@" > "$m/make.args"
cp "$m/dummy.c" "$m/dummy.ko"
"""


class DummyModuleTest(unittest.TestCase):
    """build_dummy_module: dummy.c from a git tree's revision, the patch
    applied, make M=... against the build, in the tree the build was made
    from; `make` is a script that copies the source to dummy.ko."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)
        self.tree = self.tmp / "src"
        (self.tree / "drivers/net").mkdir(parents=True)
        (self.tree / "drivers/net/dummy.c").write_text("static int x;\nint dummy_xmit(void)\n"
                                                       "{\n\treturn 0;\n}\n")
        for cmd in (["init", "-q"], ["add", "."],
                    ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
            subprocess.run(["git", "-C", str(self.tree), *cmd], check=True)
        # The build directory: kernel/build.sh's source link and stamp.
        (self.tmp / "build").mkdir()
        (self.tmp / "build/source").symlink_to(self.tree)
        stamp.write_build_source(self.tree, self.tmp / "build")
        self.patch = self.tmp / "x.patch"
        self.patch.write_text("about the patch\n\n--- a/drivers/net/dummy.c\n"
                              "+++ b/drivers/net/dummy.c\n@@ -2,4 +2,4 @@\n int dummy_xmit(void)\n"
                              " {\n-\treturn 0;\n+\treturn 1;\n }\n")
        bindir = self.tmp / "bin"
        bindir.mkdir()
        (bindir / "make").write_text(FAKE_MAKE)
        (bindir / "make").chmod(0o755)
        env = mock.patch.dict(os.environ, {"PATH": f"{bindir}:{os.environ['PATH']}"})
        env.start()
        self.addCleanup(env.stop)

    def test_built_from_the_revision_with_the_patch(self):
        ko = icount.build_dummy_module(self.tmp / "build", self.tree, "HEAD",
                                       self.tmp / "m" / "lock", self.patch)
        self.assertEqual(ko, self.tmp / "m/lock/dummy.ko")
        self.assertIn("return 1;", ko.read_text())
        self.assertEqual((self.tmp / "m/lock/Kbuild").read_text(), "obj-m := dummy.o\n")
        ko = icount.build_dummy_module(self.tmp / "build", self.tree, "HEAD",
                                       self.tmp / "m" / "atomic")
        self.assertIn("return 0;", ko.read_text())

    def test_made_in_the_builds_tree_with_the_build_as_output(self):
        # A copied build directory's Makefile names the one it was copied
        # from: make runs in the source tree with O= the build.
        ko = icount.build_dummy_module(self.tmp / "build", self.tree, "HEAD", self.tmp / "m")
        args = (ko.parent / "make.args").read_text().split()
        self.assertEqual(args[:3], ["-C", str(self.tree.resolve()),
                                    f"O={(self.tmp / 'build').resolve()}"])

    def test_a_tree_moved_since_the_build_is_refused_before_anything_is_written(self):
        (self.tree / "drivers/net/dummy.c").write_text("changed\n")
        with self.assertRaisesRegex(RuntimeError, "built from [0-9a-f]{12} of .*which now "
                                    "holds [0-9a-f]{12} with local changes"):
            icount.build_dummy_module(self.tmp / "build", self.tree, "HEAD", self.tmp / "m")
        self.assertFalse((self.tmp / "m").exists())
        subprocess.run(["git", "-C", str(self.tree), "-c", "user.name=t", "-c", "user.email=t@t",
                        "commit", "-qam", "d"], check=True)
        with self.assertRaisesRegex(RuntimeError, "check out [0-9a-f]{12} there"):
            icount.build_dummy_module(self.tmp / "build", self.tree, "HEAD", self.tmp / "m")

    def test_a_directory_without_the_builds_stamp_is_refused(self):
        (self.tmp / "build" / stamp.BUILD_SOURCE).unlink()
        with self.assertRaisesRegex(RuntimeError, "not a kernel build directory"):
            icount.build_dummy_module(self.tmp / "build", self.tree, "HEAD", self.tmp / "m")

    def test_a_failed_step_is_an_error(self):
        with self.assertRaisesRegex(RuntimeError, "git exited"):
            icount.build_dummy_module(self.tmp / "build", self.tree, "nosuchrev",
                                      self.tmp / "m")
        bad = self.tmp / "bad.patch"
        bad.write_text(self.patch.read_text().replace("return 0", "return 7"))
        with self.assertRaisesRegex(RuntimeError, "patch exited"):
            icount.build_dummy_module(self.tmp / "build", self.tree, "HEAD", self.tmp / "m", bad)
        with mock.patch.dict(os.environ, {"FAIL_MAKE": "1"}), \
                self.assertRaisesRegex(RuntimeError, "make exited 2"):
            icount.build_dummy_module(self.tmp / "build", self.tree, "HEAD", self.tmp / "m")
        self.assertIn("make: error", (self.tmp / "m/build.log").read_text())

    def test_command_line_builds_the_module_then_boots(self):
        calls = []

        def fake_run(kernels, out, *a, modules, sources):
            calls.append((kernels, modules))
            self.sources = sources
            self.assertIn("return 1;", Path(kernels["lock"][1]).read_text())
            raise RuntimeError("stop here")
        with mock.patch.object(icount, "run", fake_run), \
                contextlib.redirect_stderr(io.StringIO()):
            code = icount.main(["--kernel", "base=/b", "--kernel", f"lock={self.tmp}/build",
                                "--dummy-module", f"lock={self.tree}@HEAD:{self.patch}",
                                "--out", str(self.tmp / "out")])
        self.assertEqual(code, 1)
        (kernels, modules), = calls
        self.assertEqual(kernels["base"], ("/b", None))
        self.assertEqual(kernels["lock"][0], f"{self.tmp}/build")
        self.assertTrue(kernels["lock"][1].endswith("/lock/dummy.ko"))
        # Built for the boots only, said in the record by where it came from.
        self.assertFalse(Path(kernels["lock"][1]).exists())
        self.assertEqual(modules, {"lock": f"dummy.c of {self.tree}@HEAD + {self.patch}, "
                                           "built out of tree"})
        # and by the commit HEAD was.
        head = subprocess.run(["git", "-C", str(self.tree), "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        self.assertEqual(self.sources["lock"]["commit"], head)
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            icount.main(["--kernel", "base=/b", "--dummy-module", "lock=/t@HEAD"])


if __name__ == "__main__":
    unittest.main()

"""The tree's Python kselftests as the kselftest runner runs them
(programs.txt kind "kselftest"): crafted run_kselftest.sh outputs, judged
case by case from the test's KTAP nested in the runner's, and by the
runner's own result line. A clean run passes; a test the installed list
lacks, one the runner killed at its settings timeout, a nested not-ok, a
crash, and a runner result that contradicts its exit code each fail, named.
"""

import tempfile
import unittest
from pathlib import Path

from ci.matrix import expectations, judge, read, runner_parse
from ci.tests.test_matrix import kernel_tree

# run-in-vm.sh's outputs of net:qdisc_limit_zero.py on the base kernel, as
# recorded (the install's path shortened to /install).
RECORDED = Path(__file__).resolve().parent / "data/kselftest"

PROG, TEST = "net.x.py", "net:x.py"
EXPECT = {PROG: {"x.a": {"base": "pass", "patched": "pass", "why": "control: a"},
                 "x.b": {"base": "pass", "patched": "pass", "why": "control: b"}}}
CLEAN = ["TAP version 13", "1..2", "ok 1 x.a", "ok 2 x.b",
         "# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0"]


def runner_out(nested, result="ok", directive="", test=TEST, timeout=45):
    """run_kselftest.sh -t test's stdout (kselftest/runner.sh run_one()):
    the test's output nested under "# ", then the runner's result line."""
    coll, name = test.split(":")
    lines = ["TAP version 13", "1..1", f"# timeout set to {timeout}",
             f"# selftests: {coll}: {name}", *(f"# {ln}" for ln in nested),
             f"{result} 1 selftests: {coll}: {name}" + (f" # {directive}" if directive else ""),
             f"# Totals: pass:{int(result == 'ok')} fail:{int(result != 'ok')} xfail:0 "
             "xpass:0 skip:0 error:0"]
    return "\n".join(lines) + "\n"


class RunnerTest(unittest.TestCase):
    trees = ["", *([kernel_tree()] if kernel_tree() else [])]

    def judge(self, out, rc, stderr="", test=TEST):
        """(MatrixVerdict, ProgramRun) of one runner output on both kernels,
        read with the small parser and the tree's kunit_parser alike."""
        verdicts = []
        for tree in self.trees:
            run = read.read_kselftest(out, stderr, rc, test, tree)
            res = judge.judge({"base": {PROG: run}, "patched": {PROG: run}}, EXPECT,
                              [(PROG, "kselftest")], ["base", "patched"])
            verdicts.append((res, run))
        for res, _ in verdicts[1:]:
            self.assertEqual(res.problems, verdicts[0][0].problems)
        return verdicts[0]

    def test_clean_run_passes(self):
        res, run = self.judge(runner_out(CLEAN), 0)
        self.assertTrue(res.ok, res.problems)
        self.assertEqual(run.rc, 0)
        self.assertEqual([n for n, _ in run.ktap.results], ["x.a", "x.b"])
        self.assertIn("2 case(s) (2 controls) x 2 kernels, all as expected", res.summary)

    def test_the_runner_reads_from_a_file_too(self):
        # run-in-vm.sh's OUT/<name>.{ktap,stderr,rc,seconds}
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / f"{PROG}.out").write_text(runner_out(CLEAN))
            (Path(tmp) / f"{PROG}.rc").write_text("0\n")
            (Path(tmp) / f"{PROG}.seconds").write_text("7\n")
            run = read.read_program(tmp, PROG, "kselftest", "", TEST)
        self.assertEqual((run.rc, run.seconds, run.runner), (0, 7, []))
        self.assertEqual(len(run.ktap.results), 2)

    def test_test_absent_from_the_list_fails(self):
        # Not in its Makefile's TEST_PROGS: not in kselftest-list.txt, and
        # run_kselftest.sh refuses it before any KTAP.
        res, run = self.judge("", 1, "No such test 'net:x.py'\n")
        self.assertFalse(res.ok)
        self.assertEqual(res.problems[0],
                         "net.x.py on base: not in the installed kselftest-list.txt: "
                         "run_kselftest.sh: No such test 'net:x.py' (exit 1); its Makefile "
                         "does not list it (TEST_PROGS)")
        self.assertIn("net.x.py: x.a on base: control, never ran, expected pass: a", res.problems)

    def test_runner_timeout_fails(self):
        # Every case reported and passed, then the test hung until the
        # runner killed it at its settings timeout.
        res, run = self.judge(runner_out(CLEAN[:-1], "not ok", "TIMEOUT 45 seconds"), 1)
        self.assertFalse(res.ok)
        self.assertEqual(res.problems, [
            "net.x.py on base: net:x.py timed out: run_kselftest.sh killed it after 45 s, "
            "the timeout of net/settings",
            "net.x.py on patched: net:x.py timed out: run_kselftest.sh killed it after 45 s, "
            "the timeout of net/settings"])
        self.assertIsNone(run.rc)

    def test_timeout_before_the_last_case_names_the_missing_cases(self):
        res, _ = self.judge(runner_out(CLEAN[:3], "not ok", "TIMEOUT 45 seconds"), 1)
        self.assertFalse(res.ok)
        self.assertIn("net.x.py on base: plan 1..2 but 1 result(s) (missing cases)",
                      res.problems)
        self.assertIn("net.x.py: x.b on base: control, never ran, expected pass: b", res.problems)

    def test_nested_not_ok_fails(self):
        nested = ["TAP version 13", "1..2", "ok 1 x.a", "# Exception| EINVAL",
                  "not ok 2 x.b", "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0"]
        res, run = self.judge(runner_out(nested, "not ok", "exit=1"), 1)
        self.assertFalse(res.ok)
        self.assertEqual(run.rc, 1)
        self.assertEqual(res.problems[0], "net.x.py: x.b on base: control, got fail, expected "
                                          "pass: b [Exception| EINVAL]")

    def test_crash_fails(self):
        # Killed by SIGSEGV after its first case: the runner's exit=139.
        res, run = self.judge(runner_out(CLEAN[:3], "not ok", "exit=139"), 1)
        self.assertFalse(res.ok)
        self.assertEqual(res.problems[0], "net.x.py on base: crashed: exit 139 (killed by "
                                          "signal 11)")

    def test_exit_its_cases_do_not_imply_fails(self):
        # Every case passed, yet the test exited 1.
        res, _ = self.judge(runner_out(CLEAN, "not ok", "exit=1"), 1)
        self.assertEqual(res.problems[0], "net.x.py on base: unexpected exit 1: its results "
                                          "imply exit 0")

    def test_runner_exit_code_must_match_its_result(self):
        res, _ = self.judge(runner_out(CLEAN), 1)
        self.assertEqual(res.problems[0], "net.x.py on base: run_kselftest.sh exit 1, its "
                                          "result (ok) implies exit 0")

    def test_missing_file_fails(self):
        # Listed, but the install has no such file: the runner says so.
        out = runner_out(["Warning: file x.py is missing!"], "not ok")
        res, _ = self.judge(out, 1)
        self.assertEqual(res.problems[0], "net.x.py on base: run_kselftest.sh could not run "
                                          "net:x.py: Warning: file x.py is missing!")

    def test_another_test_or_no_result_fails(self):
        res, _ = self.judge(runner_out(CLEAN, test="net:y.py"), 0)
        self.assertIn("net.x.py on base: run_kselftest.sh ran net:y.py, not net:x.py",
                      res.problems)
        self.assertIn("net.x.py on base: run_kselftest.sh gave no result for net:x.py "
                      "(exit 0)", res.problems)
        # killed from outside (run-in-vm.sh's limit) before its result line
        out = "\n".join(runner_out(CLEAN[:3]).splitlines()[:6])
        res, _ = self.judge(out, 124, "Terminated\n")
        self.assertIn("net.x.py on base: run_kselftest.sh gave no result for net:x.py (it "
                      "started, its result never came) (exit 124 (killed by run-in-vm.sh, a "
                      "minute past the settings timeout): Terminated)", res.problems)

    def test_recorded_base_run(self):
        # The base kernel's run, judged with the project's expectations:
        # codel and fq_codel with a zero limit fail as declared.
        prog = "net.qdisc_limit_zero.py"
        expect = {prog: expectations.load_expectations()[prog]}
        for tree in self.trees:
            run = read.read_program(RECORDED, prog, "kselftest", tree,
                                    "net:qdisc_limit_zero.py")
            res = judge.judge({"base": {prog: run}}, expect, [(prog, "kselftest")],
                              ["base"])
            self.assertTrue(res.ok, res.problems)
            self.assertEqual(run.rc, 1)
            self.assertEqual([r.status for _, r in run.ktap.results],
                             ["pass", "fail", "fail"])

    def test_runner_lines_written_over_the_test_fail(self):
        # The runner's stdout in a file opened without O_APPEND: its own
        # lines (offset 0 on) land over the test's, which it appends through
        # a second open of /dev/stdout; the nested KTAP is gone, and the
        # program fails.
        prog = "net.qdisc_limit_zero.py"
        text = (RECORDED / f"{prog}.out").read_text()
        lines = text.splitlines(keepends=True)
        mine = [not ln.startswith("# ") or ln.startswith(("# selftests:", "# Totals"))
                for ln in lines]
        own = "".join(ln for ln, m in zip(lines, mine) if m)
        appended = "".join(ln for ln, m in zip(lines, mine) if not m)
        garbled = own + appended[len(own):]
        expect = {prog: expectations.load_expectations()[prog]}
        run = read.read_kselftest(garbled, "", 1, "net:qdisc_limit_zero.py")
        res = judge.judge({"base": {prog: run}}, expect, [(prog, "kselftest")], ["base"])
        self.assertFalse(res.ok)
        self.assertIn(f"{prog} on base: no KTAP plan", res.problems)
        self.assertIn(f"{prog}: qdisc_limit_zero.codel_limit_zero_drops on base: never ran, "
                      "expected fail", "\n".join(res.problems))

    def test_nested_lines_are_the_tests_own(self):
        r = runner_parse.parse_runner(runner_out(CLEAN, "ok", "SKIP"))
        self.assertEqual(r.plan, 1)
        t, = r.tests
        self.assertEqual((t.test, t.ok, t.directive, t.lines), (TEST, True, "SKIP", CLEAN))


if __name__ == "__main__":
    unittest.main()


class ShellTestTest(unittest.TestCase):
    """A test that prints no KTAP of its own (netdevsim's peer.sh) is one
    case named after its file, judged by the runner's result: it passes,
    fails or skips (exit 4) as the runner says, never as a missing plan."""

    PROG, TEST = "netdevsim.peer.sh", "drivers/net/netdevsim:peer.sh"

    def judge(self, result, directive, rc, want):
        expect = {self.PROG: {"peer.sh": {"base": want, "patched": want,
                                          "why": "control: x" if want == "pass" else "base: x"}}}
        run = read.read_kselftest(
            runner_out(["PASSED all 3 checks"], result, directive, self.TEST, 600), "", rc,
            self.TEST)
        res = judge.judge({"base": {self.PROG: run}, "patched": {self.PROG: run}},
                          expect, [(self.PROG, "kselftest")], ["base", "patched"])
        return res, run

    def test_pass(self):
        res, run = self.judge("ok", "", 0, "pass")
        self.assertTrue(res.ok, res.problems)
        self.assertEqual(run.ktap.plan, 1)
        self.assertEqual([(n, r.status, r.diag) for n, r in run.ktap.results],
                         [("peer.sh", "pass", ["PASSED all 3 checks"])])

    def test_failure_fails(self):
        res, run = self.judge("not ok", "exit=1", 1, "pass")
        self.assertFalse(res.ok)
        self.assertEqual(run.ktap.results[0][1].status, "fail")
        self.assertTrue(any("peer.sh on base" in p or "peer.sh: peer.sh on base" in p
                            for p in res.problems), res.problems)

    def test_skip_is_not_a_pass(self):
        res, run = self.judge("ok", "SKIP", 4, "pass")
        self.assertFalse(res.ok)
        self.assertEqual(run.ktap.results[0][1].status, "skip")

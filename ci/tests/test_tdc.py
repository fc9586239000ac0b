"""tc-testing judged case by case (kind "tdc"): tdc's TAP read by
parse_tdc(), the series' cases as expectations.json says, every other case
passing on every kernel, and the runner as a whole (plan, exit code, all
cases skipped).

Each crafted run below is one the old peer rule ("what passes on base
passes on patched") accepted."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci.matrix import expectations, read, run, runner_parse
from common import vm
from ci.matrix import judge as matrix_judge
from common.paths import ROOT


LABELS = ["base", "patched"]
PROGS = [("tc-testing", "tdc")]
EXPECT = {"tc-testing": {
    "d351": {"base": "fail", "patched": "pass",
             "why": "base: the filter's deletion leaves the flag cleared",
             "shows": {"base": {"counter": "new_flow_count: 0 != 5"}}},
    "24f9": {"base": "pass", "patched": "pass", "why": "control: fresh qdisc bypasses"}}}

# tdc's stdout as tc-testing.sh leaves it: progress, then the TAP.
HEAD = "considering category fq_codel\nSent 5 packets.\n\nAll test results: \n\n"


def tap(*results):
    return HEAD + f"1..{len(results)}\n" + "".join(results) + "\n\n\n"


def ok(n, tid, name="a case"):
    return f"ok {n} {tid} - {name}\n"


def failed(n, tid, msg):
    return (f"not ok {n} {tid} - a case\tCommands executed in this test case:\n"
            f"\t\t$TC qdisc add dev $DUMMY root fq_codel\n\t{msg}\n"
            "Matching against output: {'kind': 'fq_codel', 'packets': 5}\n")


def skipped(n, tid):
    return f"ok {n} {tid} - a case # skipped - no netdevsim\n"


D351_BASE = "Value doesn't match: new_flow_count: 0 != 5"
GOOD = {"base": (1, tap(ok(1, "24f9"), failed(2, "d351", D351_BASE), ok(3, "82d9"))),
        "patched": (0, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9")))}


def judge(outputs, expect=EXPECT):
    runs = {label: {"tc-testing": read.ProgramRun(
        "tdc", rc, runner_parse.parse_tdc(text))} for label, (rc, text) in outputs.items()}
    return matrix_judge.judge(runs, expect, PROGS, LABELS)


class ParseTdcTest(unittest.TestCase):
    def test_cases_by_id_with_what_follows_them(self):
        k = runner_parse.parse_tdc(GOOD["base"][1])
        self.assertEqual((k.plan, k.problems), (3, []))
        self.assertEqual([(n, r.status) for n, r in k.results],
                         [("24f9", "pass"), ("d351", "fail"), ("82d9", "pass")])
        self.assertEqual(k.cases["d351"].diag, [
            "Commands executed in this test case:", "$TC qdisc add dev $DUMMY root fq_codel",
            D351_BASE, "Matching against output: {'kind': 'fq_codel', 'packets': 5}"])
        self.assertEqual(k.cases["24f9"].diag, [])

    def test_skip_and_numbering(self):
        k = runner_parse.parse_tdc(tap(skipped(1, "9178"), ok(3, "983a")))
        self.assertEqual((k.cases["9178"].status, k.cases["9178"].reason),
                         ("skip", "no netdevsim"))
        self.assertEqual(k.problems, ["983a: Expected test number 2 but found 3"])

    def test_several_runs_are_one(self):
        text = ("### tdc run: qdiscs/fq_codel.json\n" + tap(ok(1, "24f9"), ok(2, "d351"))
                + "### tdc run: qdiscs/fq_codel.json exit 0\n"
                + "### tdc run: qdiscs/cake.json\n" + HEAD + "Traceback (most recent call last):\n"
                + "### tdc run: qdiscs/cake.json exit 1\n"
                + "### tdc run: filters/u32.json\n" + tap(failed(1, "82d9", "exited 2"))
                + "### tdc run: filters/u32.json exit 1\n")
        k = runner_parse.parse_tdc(text)
        self.assertEqual(k.plan, 3)
        self.assertEqual([(n, r.status) for n, r in k.results],
                         [("24f9", "pass"), ("d351", "pass"), ("82d9", "fail")])
        self.assertEqual(k.problems, ["qdiscs/cake.json: tdc exited 1 before its results"])
        # The next run's progress is no case's diagnostics.
        self.assertNotIn("Sent 5 packets.", k.cases["d351"].diag)

    def test_each_run_judged_by_its_own_exit_code(self):
        # The htb run fails by design (exit 1); a later run crashes after
        # printing all its results: the whole script's exit code (the first
        # failing run's, 1) would imply nothing wrong.
        text = ("### tdc run: qdiscs/htb.json\n" + tap(failed(1, "bbb1", "exited 2"))
                + "### tdc run: qdiscs/htb.json exit 1\n"
                + "### tdc run: qdiscs/fq.json\n" + tap(ok(1, "24f9"), ok(2, "d351"))
                + "### tdc run: qdiscs/fq.json exit 139\n"
                + "### tdc run: qdiscs/sfq.json\n" + tap(ok(1, "aaa1"))
                + "### tdc run: qdiscs/sfq.json exit 1\n"
                + "### tdc run: qdiscs/red.json\n" + tap(ok(1, "aaa2"))
                + "### tdc run: qdiscs/red.json exit 0\n")
        k = runner_parse.parse_tdc(text)
        self.assertEqual(k.problems, [
            "qdiscs/fq.json: tdc exited 139 (killed by signal 11), its results imply exit 0",
            "qdiscs/sfq.json: tdc exited 1, its results imply exit 0"])

    def test_no_plan_no_results(self):
        k = runner_parse.parse_tdc(HEAD + ok(1, "24f9"))
        self.assertEqual((k.plan, k.results), (None, []))


class JudgeTdcTest(unittest.TestCase):
    def test_as_expected(self):
        out = judge(GOOD)
        self.assertEqual(out.problems, [])
        self.assertTrue(out.ok)
        self.assertIn("tc-testing: 1 other case(s) without an entry, each passing on base, "
                      "patched", out.matrix)
        cases = {(c.suite, c.name): c for c in out.cases}
        self.assertIn("showing counter 'new_flow_count: 0 != 5'",
                      cases["selftests.base", "tc-testing: d351"].message)

    def test_own_case_failing_on_both_kernels(self):
        bad = dict(GOOD, patched=(1, tap(ok(1, "24f9"), failed(2, "d351", D351_BASE),
                                         ok(3, "82d9"))))
        out = judge(bad)
        self.assertFalse(out.ok)
        self.assertEqual(out.problems, [
            "tc-testing: d351 on patched: got fail, expected pass: base: the filter's deletion "
            "leaves the flag cleared [Commands executed in this test case: | $TC qdisc add dev "
            "$DUMMY root fq_codel | Value doesn't match: new_flow_count: 0 != 5 | Matching "
            "against output: {'kind': 'fq_codel', 'packets': 5}]"])

    def test_own_case_failing_on_base_for_another_reason(self):
        bad = dict(GOOD, base=(1, tap(ok(1, "24f9"), failed(2, "d351", "Command exited with 2"),
                                      ok(3, "82d9"))))
        self.assertIn("tc-testing: d351 on base: failed for another reason",
                      "\n".join(judge(bad).problems))

    def test_other_case_failing_on_patched(self):
        bad = dict(GOOD, patched=(1, tap(ok(1, "24f9"), ok(2, "d351"),
                                         failed(3, "82d9", "Value doesn't match: packets"))))
        out = judge(bad)
        self.assertEqual(len(out.problems), 1)
        self.assertTrue(out.problems[0].startswith("tc-testing: 82d9 on patched: got fail, "
                                                   "expected pass"), out.problems)
        self.assertIn("tc-testing: 82d9", out.matrix)

    def test_other_case_skipped_on_patched(self):
        bad = dict(GOOD, patched=(0, tap(ok(1, "24f9"), ok(2, "d351"), skipped(3, "82d9"))))
        self.assertEqual(judge(bad).problems, [
            "tc-testing: 82d9 on patched: got skip, expected pass [no netdevsim] "
            "(a regression: it passes on base)"])

    def test_all_skipped(self):
        bad = dict(GOOD, patched=(0, tap(skipped(1, "24f9"), skipped(2, "d351"),
                                         skipped(3, "82d9"))))
        text = "\n".join(judge(bad).problems)
        self.assertIn("tc-testing on patched: all 3 case(s) skipped", text)

    def test_runner_crash_without_plan(self):
        crash = HEAD + ("Traceback (most recent call last):\n"
                        "pyroute2.netlink.exceptions.NetlinkError: (34, 'Numerical result "
                        "out of range')\n")
        out = judge(dict(GOOD, patched=(1, crash)))
        text = "\n".join(out.problems)
        self.assertIn("tc-testing on patched: unexpected exit 1: its results imply exit 4", text)
        self.assertIn("tc-testing on patched: no KTAP plan", text)
        self.assertIn("tc-testing: d351 on patched: never ran, expected pass", text)

    def test_runner_killed_after_some_results(self):
        out = judge(dict(GOOD, patched=(124, HEAD + "1..3\n" + ok(1, "24f9"))))
        text = "\n".join(out.problems)
        self.assertIn("tc-testing on patched: crashed: exit 124 (killed by the 900 s timeout)",
                      text)
        self.assertIn("tc-testing on patched: plan 1..3 but 1 result(s) (missing cases)", text)

    def test_exit_code_not_explained_by_the_cases(self):
        out = judge(dict(GOOD, patched=(1, GOOD["patched"][1])))
        self.assertEqual(out.problems, [
            "tc-testing on patched: unexpected exit 1: its results imply exit 0"])

    def test_listed_case_missing(self):
        bad = {k: (rc, text.replace("24f9", "24f8")) for k, (rc, text) in GOOD.items()}
        text = "\n".join(judge(bad).problems)
        self.assertIn("tc-testing: 24f9 on base: control, never ran, expected pass", text)


class ExpectationsTdcTest(unittest.TestCase):
    """selftests/expectations.json lists the series' tc-testing cases: the
    ids of the tc-testing patch of patches/net-next/qdisc-bypass, which must
    pass on patched; any other case listed fails on both kernels alike, for
    the VM, the test kernels' configuration or tdc itself, with what it
    shows (ENVIRONMENT)."""

    # 2334, e939: no action-ebpf object; the htb cases: no high-resolution
    # timers in the test kernels; the flower cases: skipped without a
    # physical NIC; the mirred block and tunnel_key nofrag cases: skipped by
    # their probe, which tdc runs in a namespace not made yet.
    ENVIRONMENT = {"2334", "e939",
                   "b924", "4359", "9048", "4994", "9523", "346a",
                   "e41d", "6f52", "c9da", "14be", "0c44", "ab62", "6e8f", "2ff3", "d052",
                   "4cbd", "7c65", "d45e",
                   "456d", "2358", "fdb1", "20cc", "e739", "3188", "83cc", "6bda"}

    @staticmethod
    def series_ids():
        patch = next((ROOT / "patches/net-next/qdisc-bypass").glob("*-selftests-tc-testing-*"))
        return set(re.findall(r'^\+\s+"id": "(\w+)"', patch.read_text(), re.M))

    def test_the_series_cases_are_listed(self):
        ids = self.series_ids()
        # 8e8d and ce5f: a filter on chain 1 alone, and one that chain 0 goes to
        self.assertEqual(len(ids), 11)
        self.assertLessEqual({"8e8d", "ce5f"}, ids)
        listed = expectations.load_expectations()["tc-testing"]
        self.assertEqual(set(listed), ids | self.ENVIRONMENT)
        for tid, entry in listed.items():
            with self.subTest(tid=tid):
                if tid in self.ENVIRONMENT:
                    self.assertEqual((entry["base"], entry["patched"]), ("fail", "fail"))
                    self.assertRegex(entry["why"],
                                     r"^base: (fails|skipped), as on the patched kernel, for the "
                                     r"(VM|test kernels' configuration|tdc runner), not the series")
                    self.assertEqual(entry["shows"]["base"], entry["shows"]["patched"])
                else:
                    self.assertEqual(entry["patched"], "pass")
                    self.assertIn("the series' case", entry["why"])

    def test_stable_trees_lack_the_series_cases(self):
        # The stable trees have none of the series' tc-testing cases: each is
        # listed in selftests/stable.json, so their VMs do not require it.
        plan = json.loads((ROOT / "selftests/stable.json").read_text())
        self.assertEqual(set(plan["not_in_stable"]["tc-testing"]), self.series_ids())


class ListedOnlyOnBaseTest(unittest.TestCase):
    """The base kernel runs only the listed cases (tdc_subset()): an
    unlisted case is judged on the patched kernel alone, and still fails
    there when it fails or is missing."""

    SUBSET = {"base": (1, tap(ok(1, "24f9"), failed(2, "d351", D351_BASE))),
              "patched": GOOD["patched"]}

    def judge(self, outputs):
        runs = {label: {"tc-testing": read.ProgramRun(
            "tdc", rc, runner_parse.parse_tdc(text))} for label, (rc, text) in outputs.items()}
        return matrix_judge.judge(runs, EXPECT, PROGS, LABELS, listed_only=["base"])

    def test_subset_on_base_only_beside_patched(self):
        self.assertEqual(run.tdc_subset(EXPECT, PROGS, "base", LABELS),
                         "TDC_IDS='24f9 d351' ")
        self.assertEqual(run.tdc_subset(EXPECT, PROGS, "patched", LABELS), "")
        self.assertEqual(run.tdc_subset(EXPECT, PROGS, "base", ["base"]), "")

    def test_unlisted_case_not_run_on_base_passes(self):
        out = self.judge(self.SUBSET)
        self.assertTrue(out.ok, out.problems)

    def test_unlisted_case_failing_on_patched_still_fails(self):
        bad = dict(self.SUBSET, patched=(1, tap(ok(1, "24f9"), ok(2, "d351"),
                                                failed(3, "82d9", "packets: 3 != 0"))))
        out = self.judge(bad)
        self.assertFalse(out.ok)
        self.assertTrue(any("82d9 on patched" in p for p in out.problems), out.problems)

    def test_listed_case_missing_on_base_still_fails(self):
        bad = dict(self.SUBSET, base=(0, tap(ok(1, "24f9"))))
        out = self.judge(bad)
        self.assertFalse(out.ok)
        self.assertTrue(any("d351 on base" in p for p in out.problems), out.problems)


def setup_failed(n, tid):
    return (f"not ok {n} {tid} - a case\n\tsetup failed: Command exited with 2\n")


def not_run(n, tid, after):
    return f"ok {n} {tid} - a case # skipped - skipped - previous setup failed {n - 1} {after}\n"


class WholeRunTest(unittest.TestCase):
    """The judging of tc-testing's whole categories: a case tdc never ran
    after a failed setup fails, every case the tree has in the categories
    run must be reported, and a failure on the patched kernel is a
    regression when the base passes it, listed with its reason when both
    fail."""

    def test_skipped_after_a_failed_setup_fails(self):
        bad = dict(GOOD, patched=(1, tap(ok(1, "24f9"), setup_failed(2, "d351"),
                                         not_run(3, "82d9", "d351"))))
        out = judge(bad)
        self.assertFalse(out.ok)
        text = "\n".join(out.problems)
        self.assertIn('tc-testing on patched: 1 case(s) never ran: tdc reported them "ok # '
                      'skipped" after the setup of case d351 failed (82d9)', text)
        self.assertIn("tc-testing: 82d9 on patched: got fail, expected pass", text)

    def test_skipped_after_a_failed_setup_fails_even_if_listed(self):
        # An entry cannot make a case that never ran count: the run fails.
        listed = {"tc-testing": dict(EXPECT["tc-testing"], **{"82d9": {
            "base": "fail", "patched": "fail", "why": "both: crafted",
            "shows": {"base": {"skip": "previous setup failed"},
                      "patched": {"skip": "previous setup failed"}}}})}
        runs = {label: (1, tap(ok(1, "24f9"), setup_failed(2, "d351"), not_run(3, "82d9", "d351")))
                for label in LABELS}
        out = judge(runs, listed)
        self.assertFalse(out.ok)
        self.assertTrue(any("never ran: tdc reported them" in p for p in out.problems),
                        out.problems)

    def test_missing_tree_case_fails(self):
        out = matrix_judge.judge(
            {label: {"tc-testing": read.ProgramRun("tdc", rc, runner_parse.parse_tdc(t))}
             for label, (rc, t) in GOOD.items()},
            EXPECT, PROGS, LABELS,
            required={label: {"tc-testing": {"24f9", "d351", "82d9", "f00d"}}
                      for label in LABELS})
        self.assertFalse(out.ok)
        self.assertIn("tc-testing: f00d on patched: never ran, expected pass", out.problems)

    def test_regression(self):
        bad = dict(GOOD, patched=(1, tap(ok(1, "24f9"), ok(2, "d351"),
                                         failed(3, "82d9", "Value doesn't match: qlen"))))
        out = judge(bad)
        self.assertFalse(out.ok)
        self.assertEqual(len(out.problems), 1)
        self.assertIn("82d9 on patched: got fail, expected pass", out.problems[0])
        self.assertTrue(out.problems[0].endswith("(a regression: it passes on base)"))
        self.assertRegex(out.matrix, r"tc-testing: 82d9 .*REGRESSION")

    def test_failure_on_both_listed_with_its_reason_passes(self):
        listed = {"tc-testing": dict(EXPECT["tc-testing"], **{"82d9": {
            "base": "fail", "patched": "fail", "why": "both: the VM's qlen",
            "shows": {"base": {"counter": "qlen"}, "patched": {"counter": "qlen"}}}})}
        runs = {label: (1, tap(ok(1, "24f9"),
                               failed(2, "d351", D351_BASE) if label == "base" else ok(2, "d351"),
                               failed(3, "82d9", "Value doesn't match: qlen")))
                for label in LABELS}
        out = judge(runs, listed)
        self.assertTrue(out.ok, out.problems)

    def test_unlisted_failure_on_both_fails(self):
        runs = {label: (1, tap(ok(1, "24f9"),
                               failed(2, "d351", D351_BASE) if label == "base" else ok(2, "d351"),
                               failed(3, "82d9", "Value doesn't match: qlen")))
                for label in LABELS}
        out = judge(runs)
        self.assertFalse(out.ok)
        mine = [p for p in out.problems if "82d9 on patched" in p]
        self.assertEqual(len(mine), 1, out.problems)
        self.assertTrue(mine[0].startswith("tc-testing: 82d9 on patched: got fail, expected pass"))
        self.assertTrue(mine[0].endswith(
            "(it fails on base too: list it in expectations.json with its reason)"), mine[0])
        self.assertRegex(out.matrix, r"tc-testing: 82d9 .*UNLISTED")


class NotRunTest(unittest.TestCase):
    def test_listed_not_run_is_counted_so(self):
        # 2334 fails on both kernels for a missing eBPF object: as listed,
        # but no test of the kernel, so not run rather than as expected.
        entry = {"base": "fail", "patched": "fail", "why": "base: no object",
                 "not_run": "its eBPF object is never built",
                 "shows": {k: {"extack": "Cannot initialize ELF context!"} for k in LABELS}}
        text = tap(failed(1, "2334", "Cannot initialize ELF context!"))
        runs = {k: {"tc-testing": read.ProgramRun("tdc", 1, runner_parse.parse_tdc(text))}
                for k in LABELS}
        out = matrix_judge.judge(runs, {"tc-testing": {"2334": entry}}, PROGS, LABELS)
        self.assertTrue(out.ok, out.problems)
        cases = [(c.suite, c.status, c.message) for c in out.cases if c.name.endswith("2334")]
        self.assertEqual([s for _, s, _ in cases], ["skip", "skip"])
        self.assertTrue(cases[0][2].startswith("not run: its eBPF object is never built (got "
                                               "fail, expected fail"), cases[0][2])
        self.assertIn("1 not run (listed): tc-testing: 2334", out.summary)
        self.assertRegex(out.matrix, r"tc-testing: 2334 .*NOT RUN")
        # One that fails for another reason is a failure as before.
        text = tap(failed(1, "2334", "Segmentation fault"))
        runs["patched"]["tc-testing"] = read.ProgramRun("tdc", 1, runner_parse.parse_tdc(text))
        out = matrix_judge.judge(runs, {"tc-testing": {"2334": entry}}, PROGS, LABELS)
        self.assertFalse(out.ok)
        self.assertEqual(out.not_run, [])

    def test_the_bpf_cases_are_listed_not_run(self):
        expect = expectations.load_expectations()["tc-testing"]
        for case in ("2334", "e939"):
            self.assertIn("eBPF object", expect[case]["not_run"])


def write_tree(root, cases):
    """A kernel tree holding tc-testing cases {file: [(id, [category...])]},
    an item's third element, if any, more of the case's fields."""
    for name, items in cases.items():
        f = Path(root) / expectations.TDC_TESTS / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps([{"id": item[0], "name": "a case", "category": item[1],
                                  **(item[2] if len(item) > 2 else {})} for item in items]))


class RunMatrixTdcTest(unittest.TestCase):
    """run_matrix() with the VM replaced: the categories' tree cases are
    required of the patched kernel, which runs first; the base kernel reruns
    the listed cases and those that failed on patched."""

    TREE = {"qdiscs/fq_codel.json": [("24f9", ["qdisc", "fq_codel"]),
                                     ("d351", ["qdisc", "fq_codel"]),
                                     ("82d9", ["qdisc", "codel"])],
            "filters/basic.json": [("f00d", ["filter", "basic"])],
            "actions/gact.json": [("a001", ["actions", "gact"]), ("c797", ["actions"])]}

    def run_matrix(self, outputs, categories=("qdisc", "filter"), base_all=False, dead=()):
        """outputs: {label: function of the TDC_IDS asked (None: the
        categories) giving (rc, TAP)}; dead: the results directories whose
        VM is killed at its timeout."""
        commands = []

        def fake_run_vm(build, command, rwdir, timeout, log_path):
            label = Path(build).name
            commands.append((label, command))
            if Path(rwdir).name in dead:
                return vm.VmResult(kernel=str(build), command=command, exit_code=None,
                                   timed_out=True, seconds=2700.0, log_path=str(log_path))
            m = re.search(r"TDC_IDS='([^']*)'", command)
            rc, text = outputs[label](m[1].split() if m else None)
            Path(rwdir).mkdir(parents=True, exist_ok=True)
            (Path(rwdir) / "tc-testing.rc").write_text(f"{rc}\n")
            (Path(rwdir) / "tc-testing.out").write_text(text)
            (Path(rwdir) / "complete").write_text("done\n")
            return vm.VmResult(kernel=str(build), command=command, exit_code=0,
                               timed_out=False, seconds=1.0, log_path=str(log_path))

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(run.vm, "run_vm", fake_run_vm):
            write_tree(Path(tmp) / "tree", self.TREE)
            expect = {"tc-testing": dict(EXPECT["tc-testing"], c797={
                "base": "fail", "patched": "fail", "why": "both: exits 2",
                "shows": {k: {"extack": "exited with 2"} for k in LABELS}})}
            out = run.run_matrix(
                {label: Path(tmp) / label for label in LABELS}, Path(tmp) / "out",
                bindir="/nonexistent", tree=str(Path(tmp) / "tree"),
                expect=expect, progs=PROGS, tdc_categories=categories, tdc_base_all=base_all,
                iproute2="/ip2/bin")
        return out, commands

    def test_tree_ids_of_the_categories(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(tmp, self.TREE)
            self.assertEqual(expectations.tdc_tree_ids(tmp, ("qdisc", "filter")),
                             {"24f9", "d351", "82d9", "f00d"})
            self.assertEqual(expectations.tdc_tree_ids(tmp, ("codel",)), {"82d9"})
            self.assertEqual(len(expectations.tdc_tree_ids(tmp)), 6)

    def test_categories_must_hold_the_series_own_cases(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(tmp, self.TREE)
            ids = {"tc-testing": expectations.tdc_tree_ids(tmp, ("codel",))}
            # d351 the tree has and codel leaves out; 0000 the tree lacks.
            self.assertEqual(run.own_tdc_not_run({"82d9", "d351", "0000"}, tmp, ids), ["d351"])
            self.assertEqual(run.own_tdc_not_run({"82d9", "0000"}, tmp, ids), [])
            with self.assertRaisesRegex(ValueError, "leave out the series' own cases d351"):
                run.run_matrix({"patched": Path(tmp) / "patched"}, Path(tmp) / "out",
                               bindir="/nonexistent", tree=tmp, expect={}, progs=PROGS,
                               tdc_categories=("codel",), own=(set(), {"d351"}))

    def test_the_test_command_runs_the_series_own_cases(self):
        own = expectations.series_cases()[1]
        self.assertTrue(own)
        # Every case the series adds is in a category the test command runs.
        for patch in sorted((ROOT / "patches").rglob("*.patch")):
            text = patch.read_text()
            for case_id in own:
                if f'"id": "{case_id}"' in text:
                    cats = re.search(r'"id": "' + case_id + r'".*?"category": \[(.*?)\]',
                                     text, re.S)
                    self.assertTrue(cats, case_id)
                    names = set(re.findall(r'"([^"]+)"', cats[1]))
                    self.assertTrue(names & set(expectations.TDC_TEST_CATEGORIES),
                                    f"{case_id}: {names}")

    PATCHED = (0, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9"), ok(4, "f00d")))

    def base(self, ids):
        """The base kernel's run of ids: d351 fails as listed, the rest pass."""
        return (1, tap(*[failed(n, t, D351_BASE) if t == "d351" else ok(n, t)
                         for n, t in enumerate(ids or [], 1)]))

    def test_patched_first_base_reruns_listed(self):
        out, commands = self.run_matrix({"patched": lambda ids: self.PATCHED,
                                         "base": self.base})
        self.assertTrue(out.ok, out.problems)
        self.assertEqual([label for label, _ in commands], ["patched", "base"])
        self.assertIn("TDC_CATEGORIES='qdisc filter'", commands[0][1])
        self.assertIn("TDC_IPROUTE2=/ip2/bin", commands[0][1])
        self.assertNotIn("TDC_IDS", commands[0][1])
        # c797 is listed but of a category not run: not asked for.
        self.assertIn("TDC_IDS='24f9 d351' ", commands[1][1])

    def test_patched_tap_lacking_a_tree_case_fails(self):
        short = (0, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9")))
        out, _ = self.run_matrix({"patched": lambda ids: short, "base": self.base})
        self.assertFalse(out.ok)
        self.assertIn("tc-testing: f00d on patched: never ran, expected pass", out.problems)

    def test_failure_on_patched_rerun_on_base_is_a_regression(self):
        # A real regression: f00d keeps failing on patched and passing on
        # base, through every rerun.
        bad = (1, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9"),
                      failed(4, "f00d", "Command exited with 2")))
        out, commands = self.run_matrix(
            {"patched": lambda ids: bad if ids is None else
             (1, tap(failed(1, "f00d", "Command exited with 2"))), "base": self.base})
        self.assertIn("TDC_IDS='24f9 d351 f00d' ", commands[1][1])
        # Rerun alone, on patched and base alternating, three more pairs.
        self.assertEqual([label for label, _ in commands],
                         ["patched", "base"] + ["patched", "base"] * run.RERUN_PAIRS)
        for _, command in commands[2:]:
            self.assertIn("TDC_IDS='f00d' ", command)
            self.assertIn(" --only=tc-testing", command)
        self.assertFalse(out.ok)
        self.assertEqual(len(out.problems), 1, out.problems)
        self.assertIn("(a regression: patched 4/4 failed, base 0/4 failed)", out.problems[0])
        self.assertRegex(out.matrix, r"tc-testing: f00d .*REGRESSION")
        self.assertEqual(out.flaky, [])

    def test_flaky_peer_case_is_reported_not_failed(self):
        # d3da's way: f00d fails once on patched, then passes.
        bad = (1, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9"),
                      failed(4, "f00d", "Value doesn't match: packets: 4 != 3")))
        out, commands = self.run_matrix(
            {"patched": lambda ids: bad if ids is None else (0, tap(ok(1, "f00d"))),
             "base": self.base})
        # Once it passed on patched it is no regression: one pair is enough.
        self.assertEqual([label for label, _ in commands], ["patched", "base"] * 2)
        self.assertTrue(out.ok, out.problems)
        self.assertEqual(out.flaky, ["tc-testing: f00d: patched 1/2 failed, base 0/2 failed"])
        self.assertIn("1 flaky: tc-testing: f00d: patched 1/2 failed, base 0/2 failed",
                      out.summary)
        self.assertRegex(out.matrix, r"tc-testing: f00d .*FLAKY")
        self.assertIn("flaky (failed on patched and passed on base, then rerun on both, "
                      "alternating): tc-testing: f00d", out.matrix)
        case = [c for c in out.cases
                if c.name == "tc-testing: f00d" and c.suite.endswith("patched")]
        self.assertEqual([c.status for c in case], ["warn"])
        self.assertTrue(case[0].message.startswith("flaky: patched 1/2 failed, base 0/2 failed; "
                                                   "the first run: got fail"), case[0].message)

    def test_case_failing_on_base_in_a_rerun_is_flaky(self):
        bad = (1, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9"),
                      failed(4, "f00d", "Command exited with 2")))
        out, commands = self.run_matrix(
            {"patched": lambda ids: bad if ids is None else
             (1, tap(failed(1, "f00d", "Command exited with 2"))),
             "base": lambda ids: self.base(ids) if ids != ["f00d"] else
             (1, tap(failed(1, "f00d", "Command exited with 2")))})
        self.assertEqual(len(commands), 4)
        self.assertTrue(out.ok, out.problems)
        self.assertEqual(out.flaky, ["tc-testing: f00d: patched 2/2 failed, base 1/2 failed"])

    def test_rerun_that_does_not_report_the_case_fails(self):
        bad = (1, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9"),
                      failed(4, "f00d", "Command exited with 2")))
        out, _ = self.run_matrix({"patched": lambda ids: bad if ids is None else (4, ""),
                                  "base": self.base})
        self.assertFalse(out.ok)
        self.assertIn("tc-testing: f00d: not reported by rerun 1 on patched", out.problems)

    def test_rerun_whose_vm_fails_fails_the_stage(self):
        bad = (1, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9"),
                      failed(4, "f00d", "Command exited with 2")))
        out, _ = self.run_matrix({"patched": lambda ids: bad, "base": self.base},
                                 dead=("patched-rerun1",))
        self.assertFalse(out.ok)
        self.assertTrue(any(p.startswith("rerun 1 of the flaky suspects on patched: VM killed "
                                         "after 2700s timeout (console: ") and
                            p.endswith("patched-rerun1-console.log)") for p in out.problems),
                        out.problems)

    def test_series_own_case_keeps_one_run(self):
        # 24f9 is the series' own (patches/ adds it): judged on its one run.
        bad = (1, tap(failed(1, "24f9", "Command exited with 2"), ok(2, "d351"),
                      ok(3, "82d9"), ok(4, "f00d")))
        out, commands = self.run_matrix({"patched": lambda ids: bad, "base": self.base})
        self.assertEqual(len(commands), 2)
        self.assertFalse(out.ok)
        self.assertIn("tc-testing: 24f9 on patched: control, got fail", out.problems[0])

    def test_rerun_case_missing_on_base_fails(self):
        bad = (1, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9"),
                      failed(4, "f00d", "Command exited with 2")))
        out, _ = self.run_matrix({"patched": lambda ids: bad,
                                  "base": lambda ids: self.base([i for i in ids if i != "f00d"])})
        self.assertFalse(out.ok)
        self.assertIn("tc-testing: f00d on base: never ran, expected pass", out.problems)

    def test_main_runs_the_whole_suite_on_both(self):
        every = (1, tap(ok(1, "24f9"), ok(2, "d351"), ok(3, "82d9"), ok(4, "f00d"),
                        ok(5, "a001"), failed(6, "c797", "Command exited with 2")))
        base_every = (1, tap(ok(1, "24f9"), failed(2, "d351", D351_BASE), ok(3, "82d9"),
                             ok(4, "f00d"), ok(5, "a001"),
                             failed(6, "c797", "Command exited with 2")))
        out, commands = self.run_matrix({"patched": lambda ids: every,
                                         "base": lambda ids: base_every},
                                        categories=expectations.TDC_ALL, base_all=True)
        self.assertEqual([label for label, _ in commands], ["base", "patched"])
        self.assertFalse(any("TDC_IDS" in c for _, c in commands))
        self.assertIn("TDC_CATEGORIES='all'", commands[0][1])
        self.assertTrue(out.ok, out.problems)


FAKE_TDC = '''import os, sys, time
# A tree whose tdc.py has --multiprocess names its devices per case.
args = sys.argv[1:]
f = ",".join(args[args.index("-f") + 1:args.index("-e")])
ids = args[args.index("-e") + 1:]
log = os.environ.get("FAKE_TDC_LOG")
if log:
    # Which runs overlap, and whether a run sees another's namespaces.
    seen = sorted(os.listdir("/run/netns"))
    open("/run/netns/" + ids[0], "w").close()
    with open(log, "a") as out:
        print("start", f, *ids, "sees", *seen, file=out, flush=True)
    time.sleep(0.5)
    with open(log, "a") as out:
        print("end", f, *ids, file=out)
if "crash" in f:
    sys.exit("Traceback: NetlinkError (34)")
if "hang" in f:
    time.sleep(30)
print("considering the cases")
print("1..%d" % len(ids))
for n, i in enumerate(ids, 1):
    print(("not ok" if i == "bad1" else "ok") + " %d %s - a case" % (n, i))
sys.exit(1 if "bad1" in ids else 0)
'''


class TcTestingScriptTest(unittest.TestCase):
    """selftests/tc-testing.sh on a scratch tree whose tdc.py prints the
    ids it is given: one run per file, the categories' cases or TDC_IDS,
    and a file whose run crashes or hangs costs that file only."""

    def run_script(self, files, *cats, env=None, multiprocess=True, log=None, tdc_sh=None):
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(Path(tmp) / "tree", files)
            tdc = Path(tmp) / "tree/tools/testing/selftests/tc-testing"
            fake_tdc = FAKE_TDC if multiprocess else FAKE_TDC.replace("--multiprocess", "")
            (tdc / "tdc.py").write_text(fake_tdc)
            env = {**(env or {}), **({"FAKE_TDC_LOG": str(log)} if log else {})}
            if tdc_sh is not None:
                (tdc / "tdc.sh").write_text(tdc_sh)
            fake = Path(tmp) / "bin"
            fake.mkdir()
            # Stand-ins that log their arguments: the host's kernel stays as it is.
            for tool in ("modprobe", "sysctl"):
                (fake / tool).write_text(f'#!/bin/sh\necho "$*" >> {fake}/{tool}.log\n')
                (fake / tool).chmod(0o755)
            res = subprocess.run(
                ["bash", str(ROOT / "selftests/tc-testing.sh"), str(Path(tmp) / "tree"), *cats],
                env={"PATH": "/usr/bin:/bin", "MODPROBE": str(fake / "modprobe"),
                     "SYSCTL": str(fake / "sysctl"), **env},
                capture_output=True, text=True, timeout=60)
            self.calls = {tool: (fake / f"{tool}.log").read_text().splitlines()
                          for tool in ("modprobe", "sysctl")}
        return res.returncode, runner_parse.parse_tdc(res.stdout), res.stdout

    FILES = {"qdiscs/a.json": [("aaa1", ["qdisc", "fq_codel"]), ("aaa2", ["qdisc", "sfq"])],
             "filters/b.json": [("bad1", ["filter"]), ("bbb2", ["filter"])],
             "actions/c.json": [("ccc1", ["actions"])]}

    def test_categories_one_run_per_file(self):
        rc, k, out = self.run_script(self.FILES, "qdisc", "filter", env={"TDC_BATCH": "1"})
        self.assertEqual(rc, 1)
        self.assertEqual(k.plan, 4)
        self.assertEqual(sorted(k.cases), ["aaa1", "aaa2", "bad1", "bbb2"])
        self.assertEqual(k.cases["bad1"].status, "fail")
        self.assertEqual(out.count("### tdc run: ") // 2, 2)

    def test_modules_and_sysctls(self):
        """The modules tc-testing needs and every one the tree's tdc.sh
        loads; no IPv6 traffic of their own from the devices tdc makes."""
        tdc_sh = "#!/bin/sh\ntry_modprobe() {\n  modprobe \"$1\"\n}\ntry_modprobe sch_teql\n" \
                 "modprobe act_gact\n./tdc.py\n"
        self.run_script(self.FILES, "qdisc", tdc_sh=tdc_sh)
        self.assertEqual(self.calls["modprobe"], [
            "-a netdevsim sch_codel sch_fq_codel sch_sfq sch_tbf", "-q sch_teql", "-q act_gact"])
        self.assertEqual(self.calls["sysctl"], [
            "-qw net.core.devconf_inherit_init_net=1 net.ipv6.conf.default.addr_gen_mode=1 "
            "net.ipv6.conf.default.router_solicitations=0"])

    def test_iproute2_copied_out_of_the_host_tree(self):
        """A TDC_IPROUTE2 of setup-host.sh's layout (DIR/../root, here the
        host's own loader, ip and tc) runs from copies in the script's
        tmpfs, with every library they load, and tdc's commands get tc's
        plugin directory there (ENVIR): tdc is given those, and they run."""
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "iproute2/root"
            lib = root / "usr/lib/x86_64-linux-gnu"
            (lib / "tc").mkdir(parents=True)
            (root / "usr/sbin").mkdir(parents=True)
            shutil.copy("/lib64/ld-linux-x86-64.so.2", lib)
            for tool in ("ip", "tc"):
                shutil.copy(shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin"), root / "usr/sbin")
                (Path(tmp) / "iproute2/bin").mkdir(exist_ok=True)
                (Path(tmp) / f"iproute2/bin/{tool}").write_text("#!/bin/sh\nexit 1\n")
                (Path(tmp) / f"iproute2/bin/{tool}").chmod(0o755)
            tdc_py = FAKE_TDC.replace("import os, sys, time", "import os, subprocess, sys, time\n"
                                      "from tdc_config_local import EXTRA_NAMES as N, ENVIR\n"
                                      "print('tc at', N['TC'], 'plugins at', ENVIR['TC_LIB_DIR'])\n"
                                      "subprocess.run([N['TC'], '-V'], check=True, env=ENVIR)")
            with mock.patch(f"{__name__}.FAKE_TDC", tdc_py):
                rc, k, out = self.run_script(self.FILES, "qdisc",
                                             env={"TDC_IPROUTE2": str(Path(tmp) / "iproute2/bin")})
        self.assertEqual((rc, len(k.cases)), (0, 2))
        tc, plugins = re.search(r"^tc at (\S+) plugins at (\S+)", out, re.M).groups()
        self.assertFalse(tc.startswith(tmp), tc)
        self.assertTrue(plugins.startswith(str(Path(tc).parent)), plugins)
        self.assertIn("tc utility, iproute2", out)

    def test_all_and_ids(self):
        self.assertEqual(len(self.run_script(self.FILES, "all")[1].results), 5)
        rc, k, _ = self.run_script(self.FILES, "qdisc", env={"TDC_IDS": "aaa2 ccc1"})
        self.assertEqual((rc, sorted(k.cases)), (0, ["aaa2", "ccc1"]))

    def test_selection_agrees_with_the_host(self):
        """The script's plan and expectations.tdc_tree_ids() (the cases the
        host requires of a run) pick the same cases: a case of several
        categories, one of none asked, "all"."""
        files = {**self.FILES, "qdiscs/m.json": [("mmm1", ["qdisc", "filter"]),
                                                 ("mmm2", ["actions", "filter"]),
                                                 ("mmm3", [])]}
        for cats in (("qdisc",), ("filter",), ("qdisc", "filter"), ("actions",),
                     expectations.TDC_ALL):
            with self.subTest(cats=cats), tempfile.TemporaryDirectory() as tmp:
                write_tree(tmp, files)
                host = expectations.tdc_tree_ids(tmp, cats)
                self.assertEqual(set(self.run_script(files, *cats)[1].cases), host)

    def test_crashed_and_hung_files_cost_only_themselves(self):
        files = {"qdiscs/crash.json": [("ddd1", ["qdisc"])],
                 "qdiscs/hang.json": [("eee1", ["qdisc"])],
                 "qdiscs/z.json": [("fff1", ["qdisc"])]}
        rc, k, _ = self.run_script(files, "qdisc", env={"TDC_FILE_TIMEOUT": "2", "TDC_BATCH": "1"})
        self.assertEqual(rc, 1)
        self.assertEqual(sorted(k.cases), ["fff1"])
        self.assertEqual(k.problems, [
            "tc-tests/qdiscs/crash.json: tdc exited 1 before its results",
            "tc-tests/qdiscs/hang.json: tdc exited 124 before its results"])

    NS = {"plugins": {"requires": "nsPlugin"}}
    NETDEVSIM = {"plugins": {"requires": ["nsPlugin"]},
                 "setup": ["echo 1 1 4 > /sys/bus/netdevsim/new_device"]}
    LANES = {"qdiscs/a.json": [("aaa1", ["qdisc"], NS), ("aaa2", ["qdisc"], NS)],
             "qdiscs/b.json": [("bbb1", ["qdisc"], NS), ("bbb2", ["qdisc"], NS)],
             "qdiscs/c.json": [("ccc1", ["qdisc"]), ("ccc2", ["qdisc"], NETDEVSIM),
                               ("ccc3", ["qdisc"], NS)],
             "filters/d.json": [("ddd1", ["filter"])]}

    @staticmethod
    def runs(log):
        """[(ids, ids of the runs it overlapped, namespaces it saw)] of a
        FAKE_TDC_LOG."""
        active, out = set(), []
        for line in log.read_text().splitlines():
            what, _, *rest = line.split()
            ids = tuple(rest[:rest.index("sees")] if what == "start" else rest)
            if what == "start":
                out.append((ids, set(active), rest[rest.index("sees") + 1:]))
                for other in active:
                    next(r for r in out if r[0] == other)[1].add(ids)
                active.add(ids)
            else:
                active.remove(ids)
        return out

    def requires_root(self):
        if os.geteuid() != 0:
            self.skipTest("tc-testing.sh mounts a tmpfs in a mount namespace: root only")

    def test_lanes(self):
        """Runs go at once in their lanes, each seeing only its own
        /run/netns; the cases tdc runs serially (no nsPlugin, a netdevsim
        device) are one lane's and never overlap; the output is whole per run."""
        self.requires_root()
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "log"
            rc, k, out = self.run_script(self.LANES, "qdisc", "filter",
                                         env={"TDC_LANES": "3", "TDC_BATCH": "1"}, log=log)
            runs = self.runs(log)
        self.assertEqual((rc, k.problems), (0, []))
        self.assertEqual(sorted(k.cases), ["aaa1", "aaa2", "bbb1", "bbb2", "ccc1", "ccc2",
                                           "ccc3", "ddd1"])
        self.assertEqual(sorted(ids for ids, _, _ in runs),
                         [("aaa1", "aaa2"), ("bbb1", "bbb2"), ("ccc1", "ccc2"), ("ccc3",),
                          ("ddd1",)])
        self.assertEqual([seen for _, _, seen in runs], [[]] * 5)
        overlaps = {ids: others for ids, others, _ in runs}
        self.assertNotIn(("ddd1",), overlaps[("ccc1", "ccc2")])
        self.assertTrue(any(overlaps.values()))
        self.assertEqual(out.count("### tdc run: tc-tests/qdiscs/c.json exit 0"), 2)

    def test_one_lane_without_multiprocess(self):
        """A tdc.py without -J (6.1) names its devices once for every case:
        its runs go one after the other."""
        self.requires_root()
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "log"
            rc, k, _ = self.run_script(self.LANES, "qdisc", log=log, multiprocess=False,
                                       env={"TDC_LANES": "3", "TDC_BATCH": "1"})
            runs = self.runs(log)
        self.assertEqual((rc, len(k.cases)), (0, 7))
        self.assertEqual([others for _, others, _ in runs], [set()] * 3)

    def test_small_files_run_together(self):
        """A lane runs its files together up to TDC_BATCH cases, each file
        named once in the run's label."""
        self.requires_root()
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "log"
            rc, k, out = self.run_script(self.LANES, "qdisc", "filter",
                                         env={"TDC_LANES": "2", "TDC_BATCH": "4"}, log=log)
            runs = sorted(tuple(sorted(ids)) for ids, _, _ in self.runs(log))
        self.assertEqual((rc, k.problems, len(k.cases)), (0, [], 8))
        # Lane 0: c.json's serial cases, then the rest of c.json and d.json;
        # lane 1: a.json and b.json.
        self.assertEqual(runs, [("aaa1", "aaa2", "bbb1", "bbb2"),
                                ("ccc1", "ccc2", "ccc3", "ddd1")])
        self.assertIn("### tdc run: tc-tests/qdiscs/c.json tc-tests/filters/d.json exit 0", out)
        self.assertIn("### tdc run: tc-tests/qdiscs/a.json tc-tests/qdiscs/b.json exit 0", out)

    def test_exit_code_of_the_first_failed_run_in_file_order(self):
        """The hung run ends last, yet comes first: its 124 is the exit code."""
        self.requires_root()
        files = {"qdiscs/a-hang.json": [("eee1", ["qdisc"], self.NS)],
                 "qdiscs/b.json": [("bad1", ["qdisc"], self.NS)]}
        rc, k, _ = self.run_script(files, "qdisc",
                                   env={"TDC_LANES": "2", "TDC_FILE_TIMEOUT": "2"})
        self.assertEqual(rc, 124)
        self.assertEqual(sorted(k.cases), ["bad1"])


if __name__ == "__main__":
    unittest.main()

"""The VM stage's judging (ci/matrix/): KTAP parsing and run_matrix on
recorded outputs in data/matrix/.

good/ holds outputs of a VM run as they were recorded (lib/py's
dummy_queues.py cut to its first two cases, from when it lived in
selftests/drivers/net: the fixtures keep that program name, and
data/matrix/expectations.json is theirs, not selftests/expectations.json).
bad/ breaks one rule per program and kernel:

| program | base | patched |
|---|---|---|
| dummy_channels | killed by SIGSEGV after 5 of its 8 results | as recorded |
| qdisc_bypass | codel_limit0_drops fails for another reason | every case passes, exit 1 |
| net.qdisc_limit_zero.py | a sixth result past the plan, no entry for it | numbered 1 2 3 5 5 |
| drivers.net.dummy_queues.py | never started: no output, exit 127 | as recorded |
"""

import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci.matrix import judge, ktap_parse, read, run
from common import vm
from ci.matrix.case import not_shown
from ci.matrix.expectations import series_cases
from common.paths import ROOT
from common.programs import read_programs


DATA = Path(__file__).resolve().parent / "data/matrix"
LABELS = ["base", "patched"]
PROGS = [("dummy_channels", "ktap"), ("qdisc_bypass", "ktap"),
         ("net.qdisc_limit_zero.py", "ktap"), ("drivers.net.dummy_queues.py", "ktap")]


def kernel_tree():
    """A kernel tree with tools/testing/kunit/kunit_parser.py: KERNEL_SRC, else
    the pipeline's patched worktree; "" if there is none."""
    cache = Path(os.environ.get("PROJECT_CACHE", Path.home() / ".cache/mqbypass"))
    for tree in (os.environ.get("KERNEL_SRC"), cache / "ws/series/src"):
        if tree and (Path(tree) / "tools/testing/kunit/kunit_parser.py").is_file():
            return str(tree)
    return ""


TREE = kernel_tree()


def expectations():
    return json.loads((DATA / "expectations.json").read_text())


def runs(scenario, tree=""):
    return {label: {prog: read.read_program(DATA / scenario / label, prog, kind, tree)
                    for prog, kind in PROGS}
            for label in LABELS}


def ktap_files():
    return sorted(DATA.glob("*/*/*.out"))


class ParseTest(unittest.TestCase):
    """parse_ktap_without_tree(), and the tree's kunit_parser where a tree is at hand."""

    def parsers(self):
        yield "small", ""
        if TREE:
            yield "kunit_parser", TREE

    def parse(self, text):
        return [ktap_parse.parse_results(text, tree) for _, tree in self.parsers()]

    def test_recorded_cxx_program(self):
        text = (DATA / "good/base/dummy_channels.out").read_text()
        for k in self.parse(text):
            with self.subTest(parser=k.parser):
                self.assertEqual(k.plan, 8)
                self.assertEqual(len(k.results), 8)
                self.assertEqual(k.problems, [])
                self.assertEqual({r.status for _, r in k.results}, {"fail"})
                self.assertEqual(k.cases["reject_zero_tx"].diag, [
                    "ETHTOOL_MSG_CHANNELS_SET tx 0: expected EINVAL, got EOPNOTSUPP "
                    "(Operation not supported)"])

    def test_diagnostics_are_the_lines_before_the_result(self):
        text = (DATA / "good/patched/dummy_channels.out").read_text()
        for k in self.parse(text):
            with self.subTest(parser=k.parser):
                self.assertEqual(len(k.cases["set_within_bounds"].diag), 3)
                self.assertTrue(k.cases["set_within_bounds"].diag[0].startswith("set tx 2 rx 1:"))
                self.assertEqual(k.cases["mq_follows"].diag[-1],
                                 "after tx 4: children at 1:1 1:2 1:3 1:4")
                # "# Totals" follows the last result: nobody's diagnostics.
                self.assertFalse(any("Totals" in ln for _, r in k.results for ln in r.diag))

    def test_recorded_lib_py_exception(self):
        text = (DATA / "good/base/drivers.net.dummy_queues.py.out").read_text()
        for k in self.parse(text):
            with self.subTest(parser=k.parser):
                self.assertEqual([n for n, _ in k.results],
                                 ["dummy_queues.channels_get", "dummy_queues.channels_set"])
                diag = k.cases["dummy_queues.channels_get"].diag
                self.assertTrue(diag[0].startswith("Exception| Traceback"))
                self.assertIn("NlError: Netlink error: Operation not supported", diag[-2])
                self.assertEqual(diag[-1], "Exception|")

    def test_skip_xfail_and_colour(self):
        text = ("TAP version 13\n1..4\n"
                "\x1b[32mok 1 dummy_queues.channels_get\x1b[0m\n"
                "# Check failed 1 != 2\n"
                "not ok 2 dummy_queues.qstats_per_queue\n"
                "ok 3 dummy_queues.qstats_queue_count.txqs_64 # SKIP netdevsim not available\n"
                "ok 4 dummy_queues.channels_set # XFAIL known\n")
        for k in self.parse(text):
            with self.subTest(parser=k.parser):
                self.assertEqual([(n, r.status, r.reason) for n, r in k.results], [
                    ("dummy_queues.channels_get", "pass", ""),
                    ("dummy_queues.qstats_per_queue", "fail", ""),
                    ("dummy_queues.qstats_queue_count.txqs_64", "skip", "netdevsim not available"),
                    ("dummy_queues.channels_set", "xfail", "known")])
                self.assertEqual(k.cases["dummy_queues.qstats_per_queue"].diag,
                                 ["Check failed 1 != 2"])

    def test_truncated_output(self):
        for k in self.parse((DATA / "bad/base/dummy_channels.out").read_text()):
            with self.subTest(parser=k.parser):
                self.assertEqual((k.plan, len(k.results)), (8, 5))

    def test_results_past_the_plan(self):
        for k in self.parse((DATA / "bad/base/net.qdisc_limit_zero.py.out").read_text()):
            with self.subTest(parser=k.parser):
                self.assertEqual((k.plan, len(k.results)), (5, 6))
                new = k.cases["qdisc_limit_zero.pfifo_limit_raised_sends"]
                self.assertEqual(new.status, "pass")

    def test_numbering(self):
        for k in self.parse((DATA / "bad/patched/net.qdisc_limit_zero.py.out").read_text()):
            with self.subTest(parser=k.parser):
                self.assertEqual(k.problems, ["qdisc_limit_zero.codel_limit_raised_sends: "
                                              "Expected test number 4 but found 5"])

    def test_no_output(self):
        for k in self.parse(""):
            with self.subTest(parser=k.parser):
                self.assertEqual((k.plan, k.results), (None, []))
                self.assertEqual(k.problems, ["no KTAP version line"])

    @unittest.skipUnless(TREE, "no kernel tree with tools/testing/kunit")
    def test_parsers_agree_on_every_fixture(self):
        for path in ktap_files():
            with self.subTest(path=str(path.relative_to(DATA))):
                text = path.read_text()
                small = ktap_parse.parse_results(text, "")
                kunit = ktap_parse.parse_results(text, TREE)
                self.assertEqual((small.plan, small.results, small.problems),
                                 (kunit.plan, kunit.results, kunit.problems))


class ShowsTest(unittest.TestCase):
    def diag(self, scenario, label, prog, case):
        path = DATA / scenario / label / f"{prog}.out"
        return ktap_parse.parse_results(path.read_text()).cases[case].diag

    def test_errno_is_its_strerror_text(self):
        diag = self.diag("good", "base", "dummy_channels", "reject_zero_tx")
        self.assertEqual(not_shown({"errno": "EOPNOTSUPP"}, diag), [])
        # "expected EINVAL, got EOPNOTSUPP (...)" does not show EINVAL.
        self.assertEqual(not_shown({"errno": "EINVAL"}, diag), ["errno 'EINVAL'"])
        py = self.diag("good", "base", "drivers.net.dummy_queues.py", "dummy_queues.channels_get")
        self.assertEqual(not_shown({"errno": "EOPNOTSUPP"}, py), [])
        self.assertEqual(not_shown({"errno": "ENOTANERRNO"}, py),
                         ["errno 'ENOTANERRNO'"])

    def test_extack_and_counters(self):
        diag = self.diag("good", "patched", "dummy_channels", "reject_zero_tx")
        shows = {"errno": "EINVAL", "extack": "requested channel counts would result in "
                                              "no RX or TX channel being configured"}
        self.assertEqual(not_shown(shows, diag), [])
        self.assertEqual(not_shown({"extack": "exceeds maximum"}, diag),
                         ["extack 'exceeds maximum'"])
        diag = self.diag("good", "base", "net.qdisc_limit_zero.py",
                         "qdisc_limit_zero.codel_limit_zero_drops")
        self.assertEqual(not_shown(
            {"counter": ["10 != 0 packets sent", "0 != 10 packets dropped"]}, diag), [])
        self.assertEqual(not_shown({"counter": "0 != 10 packets sent"}, diag),
                         ["counter '0 != 10 packets sent'"])


class ShowsByTokenTest(unittest.TestCase):
    """Crafted diagnostics the substring search accepted."""

    def test_counter_is_matched_by_whole_tokens(self):
        diag = ["link tx_packets +1000, qdisc drops +0"]
        self.assertEqual(not_shown({"counter": "link tx_packets +100"}, diag),
                         ["counter 'link tx_packets +100'"])
        self.assertEqual(not_shown({"counter": "qdisc drops +0"}, diag), [])
        self.assertEqual(not_shown({"counter": "new_flow_count: 0 != 5"},
                                   ["new_flow_count: 0 != 50"]),
                         ["counter 'new_flow_count: 0 != 5'"])
        self.assertEqual(not_shown({"counter": "10 != 0"}, ["Check failed 110 != 0"]),
                         ["counter '10 != 0'"])
        # Whitespace and punctuation around a token do not matter.
        self.assertEqual(not_shown({"counter": "10 != 0"},
                                   ["Check failed  10 != 0."]), [])

    def test_errno_only_in_what_was_got(self):
        for line in ("set tx 0: expected EOPNOTSUPP (Operation not supported), got EINVAL "
                     "(Invalid argument)",
                     "expected EOPNOTSUPP \"Unknown device type\", got EINVAL",
                     "got EINVAL (Invalid argument), expected EOPNOTSUPP "
                     "(Operation not supported)"):
            with self.subTest(line=line):
                self.assertEqual(not_shown({"errno": "EOPNOTSUPP"}, [line]),
                                 ["errno 'EOPNOTSUPP'"])
                self.assertEqual(not_shown({"errno": "EINVAL"}, [line]), [])

    def test_errno_by_name_or_text(self):
        for line in ("got EOPNOTSUPP [attribute at offset 20]",
                     "QSTATS_GET: EOPNOTSUPP (Operation not supported)",
                     "NlError: Netlink error: Operation not supported"):
            with self.subTest(line=line):
                self.assertEqual(not_shown({"errno": "EOPNOTSUPP"}, [line]), [])
        self.assertEqual(not_shown({"errno": "EINVAL"}, ["got EINVALID"]),
                         ["errno 'EINVAL'"])

    def test_errno_with_its_operation(self):
        # An unrelated line with the errno's text met an errno alone.
        shows = {"errno": "EOPNOTSUPP", "operation": "ethnl.channels_get"}
        unrelated = ["RTNETLINK answers: Operation not supported",
                     'File "dummy_queues.py", line 189, in channels_get']
        self.assertEqual(not_shown({"errno": "EOPNOTSUPP"}, unrelated), [])
        self.assertEqual(not_shown(shows, unrelated), ["operation 'ethnl.channels_get'"])
        traceback = ["Exception|     channels = cfg.ethnl.channels_get({'header':",
                     "Exception| net.ynl.pyynl.lib.ynl.NlError: Netlink error: "
                     "Operation not supported"]
        self.assertEqual(not_shown(shows, traceback), [])
        # A name, not part of a longer one.
        self.assertEqual(not_shown(shows, ["cfg.myethnl.channels_get_all(x): Operation not "
                                           "supported"]), ["operation 'ethnl.channels_get'"])
        self.assertEqual(not_shown({"errno": "EOPNOTSUPP", "operation": "ethtool -L"},
                                   ["CMD: ip netns exec n ethtool  -L d0 tx 2",
                                    "STDERR: netlink error: Operation not supported"]), [])

    def test_skip_reason_only_of_a_skip(self):
        shows = {"skip": "qstats not supported by the device"}
        self.assertEqual(not_shown(shows, [], "qstats not supported by the device"),
                         [])
        self.assertEqual(not_shown(shows, ["qstats not supported by the device"]),
                         ["skip 'qstats not supported by the device'"])


class ErrnoKeyTest(unittest.TestCase):
    """The C++ programs name a failure's errno by a "# errno: NAME" line
    (selftests/lib KtapWriter::result()); the judge reads it alone there."""

    PROSE = "QSTATS_GET scope queue for qs0: EOPNOTSUPP (Operation not supported)"

    def test_key_is_read(self):
        diag = [self.PROSE, "errno: EOPNOTSUPP"]
        self.assertEqual(not_shown({"errno": "EOPNOTSUPP"}, diag, errno_key=True), [])
        self.assertEqual(not_shown({"errno": ["EOPNOTSUPP", "EINVAL"]},
                                   diag + ["errno: EINVAL"], errno_key=True), [])

    def test_prose_without_the_key_shows_nothing(self):
        # The key missing where an errno is expected fails the case.
        self.assertEqual(not_shown({"errno": "EOPNOTSUPP"}, [self.PROSE], errno_key=True),
                         ["errno 'EOPNOTSUPP'"])
        # ... which the prose fallback (the tree's programs) would have taken.
        self.assertEqual(not_shown({"errno": "EOPNOTSUPP"}, [self.PROSE]), [])

    def test_key_not_prose(self):
        diag = ["set tx 0: expected EINVAL, got EOPNOTSUPP (Operation not supported)",
                "errno: EOPNOTSUPP"]
        self.assertEqual(not_shown({"errno": "EINVAL"}, diag, errno_key=True),
                         ["errno 'EINVAL'"])
        self.assertEqual(not_shown({"errno": "EOPNOTSUPP"}, ["see errno: EOPNOTSUPP"],
                                   errno_key=True), ["errno 'EOPNOTSUPP'"])

    def test_both_parsers_keep_the_key(self):
        text = (f"TAP version 13\n1..1\n# {self.PROSE}\n# errno: EOPNOTSUPP\nnot ok 1 q\n"
                "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n")
        for tree in ("", TREE) if TREE else ("",):
            with self.subTest(tree=tree):
                self.assertEqual(ktap_parse.parse_results(text, tree).cases["q"].diag,
                                 [self.PROSE, "errno: EOPNOTSUPP"])

    ENTRY = {"q": {"base": "fail", "why": "base: no qstats",
                   "shows": {"base": {"errno": "EOPNOTSUPP"}}}}

    def judge(self, text, keyed):
        ktap = ktap_parse.parse_results(f"TAP version 13\n1..1\n{text}not ok 1 q\n")
        return judge.judge({"base": {"p": read.ProgramRun("ktap", 1, ktap)}}, {"p": self.ENTRY},
                           [("p", "ktap")], ["base"], errno_keyed=keyed)

    def test_judged_by_the_key(self):
        with_key = f"# {self.PROSE}\n# errno: EOPNOTSUPP\n"
        self.assertEqual(self.judge(with_key, {"p"}).problems, [])
        self.assertEqual(self.judge(f"# {self.PROSE}\n", {"p"}).problems, [
            f"p: q on base: failed for another reason: {self.PROSE} "
            "(expected to show errno 'EOPNOTSUPP')"])
        self.assertEqual(self.judge(f"# {self.PROSE}\n", set()).problems, [])

    def test_keyed_programs_are_the_cxx_ones(self):
        listed = [("a", "ktap"), ("k", "kselftest"), ("t", "tdc")]
        self.assertEqual(judge.errno_keyed_programs(
            listed + [("other", "ktap")], listed), {"a"})
        # programs.txt's kind ktap: the C++ programs, built from selftests/
        # with selftests/lib's KTAP writer.
        for prog in read_programs():
            if prog.kind == "ktap":
                with self.subTest(prog=prog.name):
                    self.assertTrue(prog.command.startswith("@BIN@/selftests/"), prog.command)
        keyed = judge.errno_keyed_programs([(p.name, p.kind) for p in read_programs()])
        self.assertIn("dummy_qstats", keyed)
        self.assertIn("churn", keyed)
        self.assertNotIn("net.dummy_queues.py", keyed)


class StatusTest(unittest.TestCase):
    """XFAIL and skip results against the entries."""

    KTAP = ("TAP version 13\n1..3\n# known: the base dummy has no channels\n"
            "ok 1 t.xf # XFAIL no channels\n"
            "ok 2 t.sk # SKIP qstats not supported by the device\n"
            "ok 3 t.ok\n")

    def judge(self, entries, text=KTAP, tree=""):
        run = read.ProgramRun("ktap", 0, ktap_parse.parse_results(text, tree))
        return judge.judge({"base": {"t.py": run}}, {"t.py": entries},
                           [("t.py", "ktap")], ["base"])

    GOOD = {"t.xf": {"base": "xfail", "why": "base: x",
                     "shows": {"base": {"counter": "no channels"}}},
            "t.sk": {"base": "fail", "why": "base: s",
                     "shows": {"base": {"skip": "qstats not supported by the device"}}},
            "t.ok": {"base": "pass", "why": "control: c"}}

    def test_as_expected(self):
        for tree in ("", TREE) if TREE else ("",):
            with self.subTest(tree=tree):
                self.assertEqual(self.judge(self.GOOD, tree=tree).problems, [])

    def test_xfail_is_not_a_pass(self):
        entries = dict(self.GOOD, **{"t.xf": {"base": "pass", "why": "control: x"}})
        self.assertEqual(self.judge(entries).problems, [
            "t.py: t.xf on base: control, got xfail, expected pass: x [no channels]"])

    def test_xfail_needs_what_it_shows(self):
        entries = dict(self.GOOD, **{"t.xf": {"base": "xfail", "why": "base: x"}})
        self.assertEqual(self.judge(entries).problems, [
            "t.py: t.xf on base: got xfail, expected xfail, but expectations.json names "
            "nothing it must show"])

    def test_skip_is_not_an_allowed_expectation(self):
        entries = dict(self.GOOD, **{"t.sk": {"base": "skip", "why": "base: s"}})
        self.assertEqual(self.judge(entries).problems, [
            "t.py: t.sk on base: expectations.json expects 'skip', which is not one of "
            "pass, fail, xfail"])

    def test_skip_for_another_reason(self):
        text = self.KTAP.replace("qstats not supported by the device", "No ifindex supports "
                                 "qstats")
        self.assertEqual(self.judge(self.GOOD, text).problems, [
            "t.py: t.sk on base: skipped for another reason: No ifindex supports qstats "
            "(expected to show skip 'qstats not supported by the device')"])

    def test_a_skip_is_not_an_expected_failure(self):
        entries = dict(self.GOOD, **{"t.sk": {"base": "fail", "why": "base: s", "shows": {
            "base": {"errno": "EOPNOTSUPP"}}}})
        text = self.KTAP.replace("qstats not supported by the device", "EOPNOTSUPP")
        self.assertEqual(self.judge(entries, text).problems, [
            "t.py: t.sk on base: got skip, expected fail showing errno 'EOPNOTSUPP', not a skip:"
            " base: s [EOPNOTSUPP]"])

    def test_a_failure_is_not_an_expected_skip(self):
        text = self.KTAP.replace("ok 2 t.sk # SKIP qstats not supported by the device",
                                 "# qstats not supported by the device\nnot ok 2 t.sk")
        self.assertEqual(self.judge(self.GOOD, text).problems[0],
                         "t.py on base: unexpected exit 0: its results imply exit 1")
        self.assertIn("t.py: t.sk on base: got fail, expected a skip showing skip 'qstats not "
                      "supported by the device': base: s", self.judge(self.GOOD, text).problems)


class JudgeTest(unittest.TestCase):
    def judge(self, scenario, tree=""):
        return judge.judge(runs(scenario, tree), expectations(), PROGS, LABELS)

    def test_recorded_run_is_as_expected(self):
        out = self.judge("good")
        self.assertEqual(out.problems, [])
        self.assertTrue(out.ok)
        self.assertIn("programs: 4 x 2 kernel(s), exit codes and KTAP plans", out.matrix)
        cases = {(c.suite, c.name): c for c in out.cases}
        self.assertEqual({c.status for c in cases.values()}, {"pass"})
        self.assertEqual(cases["selftests.base", "dummy_channels: exit code and plan"].message,
                         "exit 1, plan 1..8, 8 result(s)")
        self.assertIn("got fail, expected fail, showing errno 'EOPNOTSUPP'",
                      cases["selftests.base", "dummy_channels: get_channels"].message)
        self.assertIn("showing counter '200 of 200 packets were enqueued'",
                      cases["selftests.base", "qdisc_bypass: sfq_filter_removed_restores_bypass"]
                      .message)

    def test_controls_are_labelled(self):
        out = self.judge("good")
        expect = expectations()
        controls = {(p, c) for p, cases in expect.items() for c, e in cases.items()
                    if e.get("base", "pass") == e.get("patched", "pass") == "pass"}
        self.assertEqual(len(controls), 10)  # qdisc_bypass 7, qdisc_limit_zero.py 3
        self.assertIn("(10 controls)", out.summary)
        rows = {ln.split("  ")[0]: ln.split() for ln in out.matrix.splitlines()[1:]}
        for prog, case in controls:
            self.assertIn("control", rows[f"{prog}: {case}"])
            for c in out.cases:
                if c.name == f"{prog}: {case}":
                    self.assertTrue(c.message.startswith("control, got pass, expected pass"))
        self.assertNotIn("control", rows["dummy_channels: get_channels"])

    def problems(self, tree=""):
        out = self.judge("bad", tree)
        self.assertFalse(out.ok)
        return out, "\n".join(out.problems)

    def test_crash_plan_and_cases_never_run(self):
        _, text = self.problems()
        self.assertIn("dummy_channels on base: crashed: exit 139 (killed by signal 11)", text)
        self.assertIn("dummy_channels on base: plan 1..8 but 5 result(s) (missing cases)", text)
        for case in ("reject_above_max_rx", "reject_combined", "mq_follows"):
            self.assertIn(f"dummy_channels: {case} on base: never ran, expected fail", text)
        self.assertNotIn("dummy_channels: reject_above_max_tx on base", text)
        self.assertNotIn("dummy_channels on patched", text)

    def test_failed_for_another_reason(self):
        out, text = self.problems()
        self.assertIn(
            "qdisc_bypass: codel_limit0_drops on base: failed for another reason: qdisc change "
            "codel limit 0 on dqb171_8: EINVAL (Invalid argument): Exceeded the limit "
            "(expected to show counter 'link tx_packets +100', counter 'qdisc drops +0')", text)
        self.assertIn("qdisc_bypass: codel_limit0_drops  ", out.matrix)
        row = [ln for ln in out.matrix.splitlines() if ln.startswith("qdisc_bypass: codel_limit0")]
        self.assertTrue(row[0].endswith("OTHER REASON"))
        # The other expected failures of that run still show what they must.
        self.assertNotIn("fq_codel_limit0_drops on base", text)

    def test_exit_code_the_results_do_not_imply(self):
        _, text = self.problems()
        self.assertIn("qdisc_bypass on patched: unexpected exit 1: its results imply exit 0", text)

    def test_result_past_the_plan_without_an_entry(self):
        _, text = self.problems()
        self.assertIn("net.qdisc_limit_zero.py on base: plan 1..5 but 6 result(s)", text)
        self.assertIn("net.qdisc_limit_zero.py: qdisc_limit_zero.pfifo_limit_raised_sends on "
                      "base: no entry in expectations.json (got pass)", text)
        # Judged where it ran, not once more for the kernel that never saw it.
        self.assertNotIn("pfifo_limit_raised_sends on patched", text)

    def test_numbering(self):
        _, text = self.problems()
        self.assertIn("net.qdisc_limit_zero.py on patched: qdisc_limit_zero.codel_limit_raised_"
                      "sends: Expected test number 4 but found 5", text)

    def test_program_that_never_started(self):
        _, text = self.problems()
        for p in ("crashed: exit 127 (command not found)", "no KTAP plan", "no KTAP version line"):
            self.assertIn(f"drivers.net.dummy_queues.py on base: {p}", text)
        self.assertIn("drivers.net.dummy_queues.py: dummy_queues.channels_get on base: never ran",
                      text)

    def test_every_rule_is_counted_once(self):
        out, _ = self.problems()
        self.assertEqual(len(out.problems), 15, "\n".join(out.problems))
        self.assertEqual(len(out.problems), len(set(out.problems)))

    @unittest.skipUnless(TREE, "no kernel tree with tools/testing/kunit")
    def test_same_judgement_with_kunit_parser(self):
        self.assertEqual(self.judge("good", TREE).problems, [])
        self.assertEqual(self.problems(TREE)[0].problems, self.problems("")[0].problems)

    def test_expected_fail_naming_nothing(self):
        expect = expectations()
        del expect["dummy_channels"]["get_channels"]["shows"]
        out = judge.judge(runs("good"), expect, PROGS, LABELS)
        self.assertEqual(out.problems, ["dummy_channels: get_channels on base: got fail, expected "
                                        "fail, but expectations.json names nothing it must show"])

    def test_unexpected_results(self):
        expect = expectations()
        expect["qdisc_bypass"]["pfifo_idle_bypass"]["patched"] = "fail"
        expect["qdisc_bypass"]["pfifo_idle_bypass"]["shows"] = {"patched": {"counter": "x"}}
        expect["dummy_channels"]["get_channels"]["base"] = "pass"
        out = judge.judge(runs("good"), expect, PROGS, LABELS)
        text = "\n".join(out.problems)
        self.assertIn("qdisc_bypass: pfifo_idle_bypass on patched: got pass, expected fail", text)
        # Expected to pass on both kernels, get_channels is now a control.
        self.assertIn("dummy_channels: get_channels on base: control, got fail, expected pass: "
                      "base: "
                      "CHANNELS_GET fails with EOPNOTSUPP (the base dummy has no get_channels) "
                      "[ETHTOOL_MSG_CHANNELS_GET dc156_0: EOPNOTSUPP (Operation not supported)]",
                      text)


class ThirdKernelTest(unittest.TestCase):
    """A kernel beside base and patched (the net fixes alone) is judged by
    its own column: a wrong expectation there fails, naming the kernel."""

    ENTRY = {"c": {"base": "pass", "net": "fail", "patched": "pass",
                   "why": "net: the net fixes leave the flag clear",
                   "shows": {"net": {"counter": "Check failed 10 != 0"}}}}

    def verdict(self, status, diag, entry=None):
        ktap = ktap_parse.Ktap(plan=1, results=[
            ("c", ktap_parse.CaseResult(status=status, diag=diag))])
        rc = 0 if status == "pass" else 1
        runs = {"net": {"p": read.ProgramRun("ktap", rc, ktap)}}
        return judge.judge(runs, {"p": entry or self.ENTRY}, [("p", "ktap")], ["net"])

    def test_expected_failure_with_its_diagnostic_passes(self):
        out = self.verdict("fail", ["Check failed 10 != 0"])
        self.assertTrue(out.ok, out.problems)

    def test_pass_where_net_must_fail_is_a_mismatch(self):
        out = self.verdict("pass", [])
        self.assertFalse(out.ok)
        self.assertIn("p: c on net: got pass, expected fail", "\n".join(out.problems))

    def test_failure_for_another_reason_is_named(self):
        out = self.verdict("fail", ["Check failed 3 != 0"])
        self.assertFalse(out.ok)
        self.assertIn("failed for another reason", "\n".join(out.problems))

    def test_a_crafted_wrong_net_column_fails(self):
        wrong = {"c": {**self.ENTRY["c"], "net": "pass"}}
        out = self.verdict("fail", ["Check failed 10 != 0"], wrong)
        self.assertFalse(out.ok)


class TimesTest(unittest.TestCase):
    def test_seconds_per_program_and_kernel(self):
        runs = {"base": {"a": read.ProgramRun("ktap", 0, seconds=12),
                         "bb": read.ProgramRun("ktap", 0)},
                "patched": {"a": read.ProgramRun("ktap", 0, seconds=130)}}
        table = judge.times_table(runs, [("a", "ktap"), ("bb", "ktap")],
                                  ["base", "patched"])
        self.assertEqual(table.splitlines(), ["seconds  base  patched",
                                              "a          12      130",
                                              "bb          -        -",
                                              "total      12      130"])

    def test_runner_refuses_to_run_without_the_kernel_named(self):
        import subprocess
        env = {k: v for k, v in os.environ.items() if k != "SELFTEST_KERNEL"}
        for value in (None, "no-callback"):
            if value:
                env["SELFTEST_KERNEL"] = value
            with tempfile.TemporaryDirectory() as tmp:
                res = subprocess.run(["bash", str(ROOT / "selftests/run-in-vm.sh"), tmp, tmp],
                                     env=env, capture_output=True, text=True)
                self.assertEqual(res.returncode, 2)
                self.assertIn("SELFTEST_KERNEL must be base or patched", res.stderr)
                self.assertEqual(list(Path(tmp).iterdir()), [])

    def test_kernel_labels_name_their_tree(self):
        self.assertEqual([run.selftest_kernel(k)
                          for k in ("base", "patched", "no-callback")],
                         ["base", "patched", "patched"])


class RunMatrixTest(unittest.TestCase):
    """run_matrix() with the VM replaced by the recorded results: the "build
    directory" of each kernel is the folder of its recorded outputs."""

    def run_matrix(self, scenario, fail=(), no_timers=(), hang=None, stale=False, expect=None,
                   **kw):
        self.commands = {}

        def fake_run_vm(build, command, rwdir, timeout, log_path):
            # run_matrix() starts each kernel from an empty results directory.
            self.assertFalse(Path(rwdir).exists())
            self.assertIn("selftests/run-in-vm.sh", command)
            label = Path(build).name
            # The tree each kernel is built from, told to the programs.
            self.assertTrue(command.startswith(f"SELFTEST_KERNEL={label} "), command)
            shutil.copytree(build, rwdir, dirs_exist_ok=True)
            self.commands[label] = command
            if " --only=" in command:
                # run-in-vm.sh runs only those: the others leave nothing.
                only = command.split(" --only=")[1].split()[0].split(",")
                for f in Path(rwdir).iterdir():
                    if f.name.rsplit(".", 1)[0] not in only:
                        f.unlink()
            Path(log_path).write_text("console\n")
            if hang and label == "patched":
                # The VM is stopped while program `hang` runs: it and those
                # after it left no .rc, it left the start of its output.
                started = [p for p, _ in PROGS]
                for prog in started[started.index(hang):]:
                    for ext in ("rc", "out"):
                        (Path(rwdir) / f"{prog}.{ext}").unlink()
                ktap = (Path(build) / f"{hang}.out").read_text().splitlines(keepends=True)
                (Path(rwdir) / f"{hang}.out").write_text("".join(ktap[:hang_lines]))
                return vm.VmResult(kernel=str(build), command=command, exit_code=None,
                                   timed_out=True, seconds=1800.0, log_path=str(log_path))
            # The results are stamped with the project's commit before any kernel boots.
            stamp = json.loads((Path(rwdir).parent / "source.json").read_text())
            self.assertEqual(set(stamp), {"commit", "dirty", "patches_sha256"})
            if label not in fail:
                (Path(rwdir) / "complete").write_text("done\n")
            if label in no_timers:
                (Path(rwdir) / "no-timers").write_text("timeout 1 sleep 3 exited 0, not 124\n")
            return vm.VmResult(kernel=str(build), command=command,
                               exit_code=1 if label in fail else 0, timed_out=False,
                               seconds=1.0, log_path=str(log_path))

        hang_lines = 6
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(run.vm, "run_vm", fake_run_vm):
            kernels = {label: DATA / scenario / label for label in LABELS}
            if stale:
                # What an earlier run left: a complete run of every program.
                for label in LABELS:
                    shutil.copytree(DATA / scenario / label, Path(tmp) / label)
                    (Path(tmp) / label / "complete").write_text("done\n")
            return run.run_matrix(kernels, tmp, bindir="/nonexistent", tree="",
                                  expect=expect or expectations(), progs=PROGS, **kw)

    def control_expectations(self):
        """expectations() with drivers.net.dummy_queues.py a control program:
        every case passing on both kernels."""
        expect = expectations()
        expect["drivers.net.dummy_queues.py"] = {
            case: {"why": "control"} for case in expect["drivers.net.dummy_queues.py"]}
        return expect

    def test_control_program_that_passed_on_patched_not_rerun_on_base(self):
        expect = self.control_expectations()
        out = self.run_matrix("good", expect=expect, controls_on_base=False)
        self.assertTrue(out.ok, out.summary)
        self.assertIn("x 2 kernels, 1 control program(s) not rerun on base, all as expected",
                      out.summary)
        self.assertNotIn("drivers.net.dummy_queues.py", self.commands["base"])
        self.assertIn("--only=dummy_channels,qdisc_bypass,net.qdisc_limit_zero.py",
                      self.commands["base"])
        self.assertIn("drivers.net.dummy_queues.py", self.commands["patched"])
        rows = [r.split() for r in out.matrix.splitlines()
                if r.startswith("drivers.net.dummy_queues.py: ")]
        self.assertEqual([r[2:] for r in rows],
                         [["control", "not", "run", "(control)", "pass", "(pass)", "ok"]] * 2)
        # The same run with the controls rerun: the base runs everything, and
        # fails this made-up control (the recorded base has no channels).
        out = self.run_matrix("good", expect=expect)
        self.assertFalse(out.ok)
        self.assertIn("dummy_queues.channels_get on base: control, got fail", out.summary)
        self.assertIn("drivers.net.dummy_queues.py", self.commands["base"])

    def test_control_program_failing_on_patched_reruns_on_base(self):
        expect = self.control_expectations()
        run = read.read_program(DATA / "good" / "patched", "drivers.net.dummy_queues.py",
                                "ktap")
        self.assertEqual(judge.patched_only(expect, PROGS, LABELS,
                                            {"drivers.net.dummy_queues.py": run}),
                         {"drivers.net.dummy_queues.py"})
        failing = read.read_program(DATA / "good" / "base",
                                    "drivers.net.dummy_queues.py", "ktap")
        self.assertEqual(judge.patched_only(expect, PROGS, LABELS,
                                            {"drivers.net.dummy_queues.py": failing}),
                         set())
        # Without a base beside the patched kernel, nothing is left out.
        self.assertEqual(judge.patched_only(expect, PROGS, ["patched"],
                                            {"drivers.net.dummy_queues.py": run}), set())

    def test_a_program_judging_by_kernel_is_no_control(self):
        # bad_input checks each row for the kernel it runs on (SELFTEST_KERNEL):
        # every entry says "pass" on both, yet its base rows show the base's
        # behaviour (kNoChannelsOps). It runs on base, its rows are no controls.
        from ci.matrix.expectations import kernel_judged, load_expectations, programs
        progs = programs()
        # dummy_qstats' one_queue_no_qstats too (the 2-queue dummy's entry).
        self.assertEqual(kernel_judged(progs), {"bad_input", "dummy_qstats"})
        expect = load_expectations()
        self.assertTrue(all(e.get(k, "pass") == "pass" for e in expect["bad_input"].values()
                            for k in LABELS))
        self.assertNotIn("bad_input", judge.control_programs(expect, progs, LABELS))
        self.assertIn("dummy_queues", judge.control_programs(expect, progs, LABELS))
        run_ = read.ProgramRun("ktap", 0, ktap_parse.Ktap(plan=1, results=[
            ("kernel_matches_label", ktap_parse.CaseResult("pass"))]))
        self.assertEqual(judge.patched_only(expect, progs, LABELS, {"bad_input": run_}), set())
        out = judge.judge({k: {"bad_input": run_} for k in LABELS},
                          {"bad_input": {"kernel_matches_label": {"why": "control: x"}}},
                          [("bad_input", "ktap")], LABELS)
        self.assertIn("1 case(s) (0 controls)", out.summary)

    def test_kernel_judged_by_its_source(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "a").mkdir()
            (Path(tmp) / "a/x.cpp").write_text('getenv("SELFTEST_KERNEL")\n')
            (Path(tmp) / "b.cpp").write_text('getenv("SELFTEST_KERNEL")\n')
            (Path(tmp) / "c.cpp").write_text("int main() {}\n")
            from ci.matrix.expectations import kernel_judged
            self.assertEqual(kernel_judged([("a", "ktap"), ("b", "ktap"), ("c", "ktap"),
                                            ("a", "kselftest")], tmp), {"a", "b"})

    def test_control_programs_are_those_without_new_behaviour(self):
        expect = self.control_expectations()
        self.assertEqual(judge.control_programs(expect, PROGS, LABELS),
                         {"drivers.net.dummy_queues.py"})
        self.assertEqual(judge.control_programs(
            {"tc-testing": {"0321": {"why": "control"}}}, [("tc-testing", "tdc")], LABELS),
            set())

    def test_recorded_run(self):
        out = self.run_matrix("good")
        self.assertTrue(out.ok, out.summary)
        self.assertTrue(out.summary.startswith("26 case(s) (10 controls) x 2 kernels, all as "
                                               "expected"), out.summary)
        self.assertEqual([c.name for c in out.cases[:2]], ["boot and run", "boot and run"])
        header = out.matrix.splitlines()[0].split()
        self.assertEqual(header, ["test", "role", "base", "(want)", "patched", "(want)",
                                  "verdict"])

    def test_kernel_without_timers_fails_the_stage(self):
        out = self.run_matrix("good", no_timers=("patched",))
        self.assertFalse(out.ok)
        self.assertEqual(out.problems, [
            "patched VM: the kernel has no POSIX timers (timeout 1 sleep 3 exited 0, not 124): "
            "the runner's 900 s limit per program and ping's -W never fire "
            "(CONFIG_POSIX_TIMERS, kernel/configs/vng.config)"])

    def test_broken_rules_fail_the_stage(self):
        out = self.run_matrix("bad")
        self.assertFalse(out.ok)
        self.assertIn("15 problem(s): dummy_channels on base: crashed: exit 139", out.summary)

    def test_vm_failure(self):
        out = self.run_matrix("good", fail=("patched",))
        self.assertFalse(out.ok)
        self.assertEqual(out.problems, ["patched VM: command exited 1"])
        boot = [c for c in out.cases if c.name == "boot and run"]
        self.assertEqual([c.status for c in boot], ["pass", "fail"])
        # What finished before the VM failed is judged.
        self.assertIn(("selftests.patched", "dummy_channels: get_channels", "pass"),
                      [(c.suite, c.name, c.status) for c in out.cases])

    def test_hung_program_is_named(self):
        out = self.run_matrix("good", hang="qdisc_bypass")
        self.assertFalse(out.ok)
        problems = "\n".join(out.problems)
        self.assertEqual(out.problems[0].split("\n")[0],
                         "patched VM: VM killed after 1800s timeout; qdisc_bypass never "
                         "finished: still running when the VM stopped, its last result "
                         "'pfifo_idle_bypass'")
        cases = [(c.suite, c.name, c.status) for c in out.cases]
        self.assertIn(("selftests.patched", "qdisc_bypass: exit code and plan", "fail"), cases)
        # Those before it are judged; its cases and those of later programs never ran.
        self.assertIn(("selftests.patched", "dummy_channels: get_channels", "pass"), cases)
        self.assertIn("qdisc_bypass: fq_codel_limit0_drops on patched: never ran", problems)
        self.assertIn("net.qdisc_limit_zero.py: qdisc_limit_zero.codel_limit_zero_drops on "
                      "patched: never ran", problems)
        self.assertNotIn("on base", problems)

    def test_earlier_results_are_not_read(self):
        # A results directory left by an earlier run is emptied before the
        # VM boots (fake_run_vm checks it), so its files cannot stand in
        # for programs that did not run this time.
        out = self.run_matrix("good", stale=True)
        self.assertTrue(out.ok, out.summary)


class FlakySuspectsTest(unittest.TestCase):
    """Which cases that failed on patched and passed on base are rerun."""

    PROGS = [("net.nl_netdev.py", "kselftest"), ("net.qdisc_bypass.py", "kselftest"),
             ("qdisc_bypass", "ktap"), ("tc-testing", "tdc")]
    TESTS = {"net.nl_netdev.py": "net:nl_netdev.py", "net.qdisc_bypass.py": "net:qdisc_bypass.py"}

    @staticmethod
    def prog(kind, **cases):
        return read.ProgramRun(kind, 1, ktap_parse.Ktap(
            plan=len(cases), results=[(c, ktap_parse.CaseResult(s)) for c, s in cases.items()]))

    def test_peer_cases_only(self):
        runs = {label: {"net.nl_netdev.py": self.prog("kselftest", a=st, b="fail"),
                        "net.qdisc_bypass.py": self.prog("kselftest", c=st),
                        "qdisc_bypass": self.prog("ktap", d=st),
                        "tc-testing": self.prog("tdc", x=st, y=st, z=st)}
                for label, st in (("patched", "fail"), ("base", "pass"))}
        expect = {"net.nl_netdev.py": {"a": {"why": "control"}, "b": {"why": "control"}},
                  "net.qdisc_bypass.py": {"c": {"why": "control"}},
                  "qdisc_bypass": {"d": {"why": "control"}},
                  "tc-testing": {"y": {"base": "pass", "patched": "fail", "why": "w"}}}
        own = ({"net:qdisc_bypass.py"}, {"z"})
        # a: the tree's kselftest; x: a tree tdc case without an entry. Not:
        # b (fails on base too), c (the series' own kselftest), d (a C++
        # program), y (expected to fail on patched), z (the series' own tdc case).
        self.assertEqual(run.flaky_suspects(runs, expect, self.PROGS, self.TESTS, own),
                         {"net.nl_netdev.py": {"a"}, "tc-testing": {"x"}})

    def test_series_own_cases_from_the_patches(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "t").mkdir()
            (Path(tmp) / "t/0001-a.patch").write_text(
                "--- a/tools/testing/selftests/drivers/net/stats.py\n"
                "+++ b/tools/testing/selftests/drivers/net/stats.py\n"
                "+++ b/tools/testing/selftests/tc-testing/tc-tests/qdiscs/fq_codel.json\n"
                '+        "id": "24f9",\n'
                '         "id": "0001",\n')
            self.assertEqual(series_cases(tmp)[1], {"24f9"})
            self.assertIn("drivers/net:stats.py", series_cases(tmp)[0])
        ksft, _ = series_cases()
        self.assertIn("net:qdisc_bypass.py", ksft)
        self.assertNotIn("net:nl_netdev.py", ksft)

    def test_judged_by_every_run(self):
        counts = {"patched": ["fail", "pass", "fail", "fail"], "base": ["pass"] * 4}
        self.assertEqual(judge.rerun_counts(counts), "patched 3/4 failed, base 0/4 failed")
        self.assertFalse(judge.regression_kept(counts))
        self.assertTrue(judge.regression_kept({"patched": ["fail"] * 4, "base": ["pass"] * 4}))
        self.assertFalse(judge.regression_kept({"patched": ["fail"] * 4,
                                                "base": ["pass", "skip", "pass", "pass"]}))


class KunitApiTest(unittest.TestCase):
    def test_older_tree_parser_is_not_used(self):
        # 6.12's kunit_parser.parse_test() takes no printer: its KTAP is read
        # by parse_ktap_without_tree() instead of failing with a TypeError.
        import types
        old = types.SimpleNamespace(parse_test=lambda lines, expected_num, log, is_subtest: None)
        new = types.SimpleNamespace(
            parse_test=lambda lines, expected_num, log, is_subtest, printer: None)
        printer = types.SimpleNamespace(Printer=object)
        self.assertFalse(ktap_parse.kunit_api_fits((old, printer)))
        self.assertTrue(ktap_parse.kunit_api_fits((new, printer)))
        self.assertFalse(ktap_parse.kunit_api_fits(None))


if __name__ == "__main__":
    unittest.main()

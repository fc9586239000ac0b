"""Per-patch check helpers that need no kernel tree."""

import os
import subprocess
import tempfile
import unittest
from collections import Counter
from pathlib import Path

import checks
import selftests_run

ENV = {"GIT_AUTHOR_NAME": "A U", "GIT_AUTHOR_EMAIL": "a@example.invalid",
       "GIT_COMMITTER_NAME": "A U", "GIT_COMMITTER_EMAIL": "a@example.invalid"}


class WarningTest(unittest.TestCase):
    def test_new_warnings_ignore_line_moves(self):
        before = checks.warnings_of("drivers/net/dummy.c:10:5: warning: unused variable 'x'\n")
        after = checks.warnings_of("drivers/net/dummy.c:12:5: warning: unused variable 'x'\n"
                                   "drivers/net/dummy.c:40:1: warning: no previous prototype\n"
                                   "  CC [M]  drivers/net/dummy.o\n")
        self.assertEqual(checks.new_warnings(before, after),
                         ["drivers/net/dummy.c: warning: no previous prototype"])

    def test_duplicates_count(self):
        w = "a.c:1:1: warning: same\n"
        new = checks.new_warnings(checks.warnings_of(w), checks.warnings_of(w * 3))
        self.assertEqual(len(new), 2)

    def test_sparse_split(self):
        self.assertTrue(checks.is_sparse("a.c: warning: incorrect type in assignment"))
        self.assertFalse(checks.is_sparse("a.c: warning: unused variable 'x'"))


class CommitChecksTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = Path(self.tmp.name)
        self.git("init", "-q")
        (self.repo / "f.c").write_text("int a;\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "net: base thing")
        self.base = self.git("rev-parse", "HEAD").strip()

    def tearDown(self):
        self.tmp.cleanup()

    def git(self, *args):
        return subprocess.run(["git", "-C", str(self.repo), *args], check=True, text=True,
                              capture_output=True, env={**os.environ, **ENV}).stdout

    def commit(self, msg):
        (self.repo / "f.c").write_text((self.repo / "f.c").read_text() + "int b;\n")
        self.git("commit", "-q", "-a", "-m", msg)
        return self.git("rev-parse", "HEAD").strip()

    def test_signoff(self):
        sha = self.commit("x: y\n\nSigned-off-by: A U <a@example.invalid>")
        self.assertEqual(checks.signoff(self.repo, sha).status, "pass")
        sha = self.commit("x: y\n\nSigned-off-by: Other <o@example.invalid>")
        self.assertEqual(checks.signoff(self.repo, sha).status, "fail")
        sha = self.commit("x: y")
        self.assertEqual(checks.signoff(self.repo, sha).status, "fail")

    def test_fixes_verified_against_history_and_list(self):
        good = f'Fixes: {self.base[:12]} ("net: base thing")'
        sha = self.commit(f"x: fix\n\n{good}\nSigned-off-by: A U <a@example.invalid>")
        self.assertEqual(checks.fixes(self.repo, sha, "net", {}).status, "pass")
        sha = self.commit(f'x: fix\n\nFixes: {self.base[:12]} ("net: other thing")')
        res = checks.fixes(self.repo, sha, "net", {})
        self.assertEqual(res.status, "fail")
        self.assertIn("subject mismatch", res.message)
        sha = self.commit('x: fix\n\nFixes: 0123456789ab ("net: listed")')
        self.assertEqual(checks.fixes(self.repo, sha, "net", {}).status, "fail")
        self.assertEqual(checks.fixes(self.repo, sha, "net",
                                      {"0123456789abcdef": "net: listed"}).status, "pass")
        sha = self.commit("x: fix\n\nFixes: 0123456 net: short")
        self.assertIn("malformed", checks.fixes(self.repo, sha, "net", {}).message)
        sha = self.commit("x: no tag")
        self.assertEqual(checks.fixes(self.repo, sha, "net", {}).status, "fail")
        self.assertEqual(checks.fixes(self.repo, sha, "net-next", {}).status, "pass")

    def test_net_selftest_patch_needs_no_fixes_tag(self):
        d = self.repo / "tools/testing/selftests/net"
        d.mkdir(parents=True)
        (d / "t.py").write_text("pass\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "selftests: net: a test")
        sha = self.git("rev-parse", "HEAD").strip()
        res = checks.fixes(self.repo, sha, "net", {})
        self.assertEqual(res.status, "pass")
        self.assertIn("only adds or changes selftests", res.message)
        # A fix touching code and its test still needs the tag.
        (d / "t.py").write_text("pass  # more\n")
        (self.repo / "f.c").write_text("int c;\n")
        self.git("commit", "-q", "-a", "-m", "net: fix and test")
        sha = self.git("rev-parse", "HEAD").strip()
        self.assertEqual(checks.fixes(self.repo, sha, "net", {}).status, "fail")

    def test_series_checks(self):
        res = checks.series_checks([("net/x", "net", ["[PATCH net] a: b"], False),
                                    ("net-next/y", "net-next",
                                     ["[PATCH net-next 1/3] a", "[PATCH net-next 2/3] b",
                                      "[PATCH 3/3] c"], False),
                                    ("net-next/z", "net-next", ["[PATCH net] q"] * 16, True)])
        self.assertEqual(res["net/x:cover"].status, "pass")
        self.assertEqual(res["net-next/y:cover"].status, "fail")
        self.assertEqual(res["net-next/y:prefix"].status, "fail")
        self.assertIn("[PATCH 3/3] c", res["net-next/y:prefix"].message)
        self.assertEqual(res["net-next/z:size"].status, "fail")
        self.assertEqual(res["net-next/z:prefix"].status, "fail")

    def test_table_names_failing_patch(self):
        r = checks.PatchReport(2, "net-next", "abc", "net: dummy: broken")
        r.results = {c: checks.Result("pass") for c in checks.CHECKS}
        r.results["build"] = checks.Result("fail", "build broken: dummy.c:3: error: x")
        text = checks.table([r])
        self.assertIn("FAIL", text)
        self.assertIn("patch 2 build: build broken", text)
        self.assertFalse(r.ok)


class KtapTest(unittest.TestCase):
    def test_parse(self):
        res = selftests_run.parse_ktap(
            "TAP version 13\n1..3\nok 1 a\nnot ok 2 b\nok 3 c # SKIP no module\n"
            "  ok 1 nested\n# Totals: pass:1 fail:1\n")
        self.assertEqual(res, {"a": ("pass", ""), "b": ("fail", ""), "c": ("skip", "no module")})

    def test_expectations_default_to_pass(self):
        exp = {"p": {"c": {"base": "fail", "why": "feature missing"}}}
        self.assertEqual(selftests_run.expected(exp, "p", "c", "base"), ("fail", "feature missing"))
        self.assertEqual(selftests_run.expected(exp, "p", "c", "patched")[0], "pass")
        self.assertEqual(selftests_run.expected(exp, "p", "other", "base")[0], "pass")

    def test_parse_tdc_tap(self):
        res = selftests_run.parse_ktap(
            "Sent 1 packets.\n1..3\nok 1 983a - Create CODEL\n"
            "not ok 2 38aa - Change CODEL\tCommands executed in this test case:\n"
            "\t\t$TC qdisc add\nok 3 9178 - Create mq # skipped - no netdevsim\n")
        self.assertEqual(res, {"983a - Create CODEL": ("pass", ""),
                               "38aa - Change CODEL": ("fail", ""),
                               "9178 - Create mq": ("skip", "- no netdevsim")})


class PeerTest(unittest.TestCase):
    LABELS = ["base", "patched"]

    def judge(self, base, patched):
        return selftests_run.judge_peer("tdc", {"base": base, "patched": patched}, self.LABELS)

    def test_same_results_pass(self):
        per = {"a": ("pass", ""), "b": ("fail", "")}
        cases, problems, line = self.judge(per, dict(per))
        self.assertEqual(problems, [])
        self.assertEqual(len(cases), 2)
        self.assertIn("not passing on base either: b", line)

    def test_regression_is_named(self):
        cases, problems, _ = self.judge({"a": ("pass", "")}, {"a": ("fail", "")})
        self.assertEqual(problems, ["tdc: regression a (patched: fail)"])
        self.assertEqual([c.status for c in cases], ["fail"])

    def test_missing_on_patched_is_a_regression(self):
        _, problems, _ = self.judge({"a": ("pass", ""), "b": ("pass", "")}, {"a": ("pass", "")})
        self.assertEqual(problems, ["tdc: regression b (patched: missing)"])

    def test_skip_where_base_passes_is_a_regression(self):
        _, problems, _ = self.judge({"a": ("pass", "")}, {"a": ("skip", "x")})
        self.assertTrue(problems)

    def test_fixed_on_patched_is_fine(self):
        _, problems, _ = self.judge({"a": ("fail", "")}, {"a": ("pass", "")})
        self.assertEqual(problems, [])

    def test_no_results_fails(self):
        _, problems, _ = self.judge({}, {"a": ("pass", "")})
        self.assertEqual(problems, ["tdc: no results on the base kernel"])


class KunitJsonTest(unittest.TestCase):
    def test_walk_counts_exactly(self):
        import run as kunit_run
        data = {"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
            {"name": "dummy_qstats", "test_cases": [{"name": "a", "status": "PASS"},
                                                    {"name": "b", "status": "FAIL"}],
             "sub_groups": []},
            {"name": "net", "test_cases": [{"name": "c", "status": "SKIP"},
                                           {"name": "d", "status": "ERROR"}], "sub_groups": []}]}
        res = kunit_run.KunitResult(cases=kunit_run.walk(data))
        self.assertEqual(Counter(c[2] for c in res.cases),
                         Counter({"PASS": 1, "FAIL": 1, "SKIP": 1, "ERROR": 1}))
        self.assertEqual(res.summary(), "1 passed, 2 failed, 1 skipped")
        self.assertFalse(res.ok)
        self.assertFalse(kunit_run.KunitResult(cases=[]).ok)

    def test_series_suite_must_run(self):
        import run as kunit_run
        self.assertEqual(kunit_run.SERIES_SUITES, ("dummy_qstats",))
        other = [("netdev_addr_list", "a", "PASS")]
        res = kunit_run.KunitResult(cases=other, required=kunit_run.SERIES_SUITES)
        self.assertFalse(res.ok)
        self.assertEqual(res.missing(), ["dummy_qstats"])
        self.assertIn("suite(s) not run: dummy_qstats", res.summary())
        res.cases.append(("dummy_qstats", "dummy_test_stats", "PASS"))
        self.assertTrue(res.ok)
        self.assertEqual(res.summary(), "2 passed, 0 failed, 0 skipped")

    def test_kernel_report_fails_a_passing_run(self):
        # KASAN or lockdep may report while every case passes: the run fails.
        import run as kunit_run
        import vm
        log = ("[09:01:02]     ok 1 dummy_test_stats\n"
               "BUG: KASAN: slab-out-of-bounds in dummy_get_stats64+0x1c/0x40\n"
               "WARNING: possible circular locking dependency detected\n")
        res = kunit_run.KunitResult(cases=[("dummy_qstats", "a", "PASS")],
                                    splats=vm.find_splats(log))
        self.assertEqual(len(res.splats), 2)
        self.assertFalse(res.ok)
        self.assertIn("2 kernel report line(s): BUG: KASAN", res.summary())
        self.assertIn("CONFIG_KASAN=y", kunit_run.DEBUG_KCONFIG)
        self.assertIn("CONFIG_PROVE_LOCKING=y", kunit_run.DEBUG_KCONFIG)

    def test_series_kunitconfig_names_only_existing_suites(self):
        text = (Path(__file__).resolve().parents[2] / "kunit/series.kunitconfig").read_text()
        self.assertIn("CONFIG_DUMMY_KUNIT_TEST=y", text)
        self.assertNotIn("BYPASS_KUNIT", text)


if __name__ == "__main__":
    unittest.main()

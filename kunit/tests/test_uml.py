"""kunit/uml.py: reading KUnit's results and the kernel's whole log, the
series' suites and its config (the kunit stage's judge)."""

import tempfile
import unittest
from collections import Counter
from pathlib import Path

from common.paths import ROOT


class KunitJsonTest(unittest.TestCase):
    def test_kunit_cases_counted_exactly(self):
        from kunit import uml
        data = {"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
            {"name": "netdev_addr_list", "test_cases": [{"name": "a", "status": "PASS"},
                                                        {"name": "b", "status": "FAIL"}],
             "sub_groups": []},
            {"name": "net", "test_cases": [{"name": "c", "status": "SKIP"},
                                           {"name": "d", "status": "ERROR"}], "sub_groups": []}]}
        res = uml.KunitResult(cases=uml.kunit_cases(data), kernel_log="build/test.log")
        self.assertEqual(Counter(c[2] for c in res.cases),
                         Counter({"PASS": 1, "FAIL": 1, "SKIP": 1, "ERROR": 1}))
        self.assertEqual(res.summary(), "1 passed, 2 failed, 1 skipped")
        self.assertFalse(res.ok)
        self.assertFalse(uml.KunitResult(cases=[]).ok)

    def test_required_suite_must_run(self):
        # The mechanism behind SERIES_SUITES, for a series that adds a suite.
        from kunit import uml
        other = [("netdev_addr_list", "a", "PASS")]
        res = uml.KunitResult(cases=other, required=("dummy_example",),
                              kernel_log="build/test.log")
        self.assertFalse(res.ok)
        self.assertEqual(res.missing(), ["dummy_example"])
        self.assertIn("suite(s) not run: dummy_example", res.summary())
        res.cases.append(("dummy_example", "dummy_example_test", "PASS"))
        self.assertTrue(res.ok)
        self.assertEqual(res.summary(), "2 passed, 0 failed, 0 skipped")

    def test_suite_of_parameterized_cases_ran(self):
        # net_core's cases are all parameterized: kunit.py nests them in a
        # group per case, with no case directly under the suite.
        import json
        import tempfile
        from kunit import uml
        data = {"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
            {"name": "net_core", "test_cases": [], "sub_groups": [
                {"name": "gso_test_func", "sub_groups": [],
                 "test_cases": [{"name": "no_gso", "status": "PASS"}]}]},
            {"name": "dev-addr-list-test", "sub_groups": [],
             "test_cases": [{"name": "a", "status": "PASS"}]},
            {"name": "empty_suite", "test_cases": [], "sub_groups": []}]}
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "k.json").write_text(json.dumps(data))
            Path(tmp, "test.log").write_text("ok\n")
            res = uml.result([], 0, Path(tmp, "k.json"), Path(tmp, "test.log"),
                             required=uml.NET_SUITES)
            self.assertEqual(res.missing(), [])
            self.assertTrue(res.ok, res.summary())
            res = uml.result([], 0, Path(tmp, "k.json"), Path(tmp, "test.log"),
                             required=("empty_suite",))
            self.assertEqual(res.missing(), ["empty_suite"])

    def test_series_suite_required(self):
        # The series adds the dummy suite: the net suites and it run together,
        # and a run without it fails even when every case that ran passed.
        from kunit import uml
        self.assertEqual(uml.SERIES_SUITES, ("dummy",))
        self.assertEqual(uml.default_configs(), [uml.NET_CONFIG, uml.SERIES_CONFIG])
        res = uml.KunitResult(cases=[("netdev_addr_list", "a", "PASS")],
                              required=uml.SERIES_SUITES, kernel_log="build/test.log")
        self.assertFalse(res.ok)
        self.assertEqual(res.missing(), ["dummy"])
        res.cases.append(("dummy", "dummy_test_senders", "PASS"))
        self.assertTrue(res.ok)
        self.assertFalse(uml.KunitResult(cases=[], required=uml.SERIES_SUITES).ok)

    def fake_kunit(self, uml, suites):
        """run() with kunit.py replaced: its command lines, and the JSON it
        writes naming suites."""
        import json
        from unittest import mock
        from common.proc import Finished
        calls = []
        data = {"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
            {"name": s, "test_cases": [{"name": "a", "status": "PASS"}], "sub_groups": []}
            for s in suites]}

        def run_tee(cmd, **_):
            calls.append(cmd)
            json_path = next(a for a in cmd if a.startswith("--json="))[len("--json="):]
            Path(json_path).write_text(json.dumps(data))
            build = next(a for a in cmd if a.startswith("--build_dir="))[len("--build_dir="):]
            (Path(build) / "test.log").write_text("KTAP version 1\n")
            return Finished(0, raw=["[00:00:00] fake kunit.py\n"])

        return calls, mock.patch.object(uml, "run_tee", run_tee)

    def test_run_with_the_default_configs(self):
        from kunit import uml
        from unittest import mock
        with tempfile.TemporaryDirectory() as tmp:
            # Today: net.kunitconfig and series.kunitconfig, the net suites and
            # the dummy suite required, booted with the series' kernel
            # arguments (UML SMP).
            net = list(uml.NET_SUITES)
            calls, popen = self.fake_kunit(uml, net + ["dummy"])
            with popen:
                res = uml.run(tmp, Path(tmp) / "build")
            self.assertTrue(res.ok, res.summary())
            self.assertEqual(res.required, ("net_core", "dev-addr-list-test", "dummy"))
            self.assertEqual([a for a in calls[0] if a.startswith("--kunitconfig=")],
                             [f"--kunitconfig={uml.NET_CONFIG}",
                              f"--kunitconfig={uml.SERIES_CONFIG}"])
            self.assertEqual([a for a in calls[0] if a.startswith("--kernel_args=")],
                             ["--kernel_args=seccomp=on", "--kernel_args=ncpus=2"])
            # The net suites alone: no series arguments, the net suites required.
            calls, popen = self.fake_kunit(uml, net)
            with popen:
                res = uml.run(tmp, Path(tmp) / "build", configs=[uml.NET_CONFIG])
            self.assertTrue(res.ok, res.summary())
            self.assertEqual(res.required, uml.NET_SUITES)
            self.assertFalse([a for a in calls[0] if a.startswith("--kernel_args=")])
            # A series that adds a suite: its config is merged in, and a run
            # without that suite fails, one with it passes.
            series = Path(tmp) / "series.kunitconfig"
            series.write_text("# a suite\nCONFIG_DUMMY_EXAMPLE_TEST=y\n")
            with mock.patch.object(uml, "SERIES_CONFIG", series), \
                    mock.patch.object(uml, "SERIES_SUITES", ("dummy_example",)):
                calls, popen = self.fake_kunit(uml, net)
                with popen:
                    res = uml.run(tmp, Path(tmp) / "build")
                self.assertEqual([a for a in calls[0] if a.startswith("--kunitconfig=")],
                                 [f"--kunitconfig={uml.NET_CONFIG}",
                                  f"--kunitconfig={series}"])
                self.assertFalse(res.ok)
                self.assertIn("suite(s) not run: dummy_example", res.summary())
                calls, popen = self.fake_kunit(uml, net + ["dummy_example"])
                with popen:
                    self.assertTrue(uml.run(tmp, Path(tmp) / "build").ok)
                # Configs given: the suites of those configs are required.
                calls, popen = self.fake_kunit(uml, net)
                with popen:
                    res = uml.run(tmp, Path(tmp) / "build", configs=[uml.NET_CONFIG])
                self.assertEqual(res.required, uml.NET_SUITES)
                self.assertTrue(res.ok)
                # Configs of no project kunitconfig: nothing is required.
                calls, popen = self.fake_kunit(uml, ["other"])
                with popen:
                    res = uml.run(tmp, Path(tmp) / "build", configs=[series.parent / "x"])
                self.assertEqual(res.required, ())
                self.assertTrue(res.ok)

    def test_nothing_passed_fails(self):
        # A JSON of skipped cases only, or of no case, is no pass.
        import json
        from kunit import uml
        skipped = {"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
            {"name": s, "test_cases": [{"name": f"c{i}", "status": "SKIP"} for i in range(12)],
             "sub_groups": []} for s in uml.NET_SUITES]}
        with tempfile.TemporaryDirectory() as tmp:
            data, log = Path(tmp) / "kunit.json", Path(tmp) / "test.log"
            data.write_text(json.dumps(skipped))
            log.write_text("KTAP version 1\n")
            res = uml.result([], 0, data, log, required=uml.NET_SUITES)
            self.assertEqual(res.count("SKIP"), 24)
            self.assertFalse(res.ok)
            self.assertIn("no case passed", res.summary())
            # One pass in one suite: the other's cases all skipped, and the
            # first skipped some: neither is proven run.
            skipped["sub_groups"][0]["test_cases"][0]["status"] = "PASS"
            data.write_text(json.dumps(skipped))
            res = uml.result([], 0, data, log, required=uml.NET_SUITES)
            self.assertFalse(res.ok)
            self.assertIn("required suite(s) without a pass or with a skip: net_core (1 passed, "
                          "11 skipped), dev-addr-list-test (0 passed, 12 skipped)", res.summary())
            for group in skipped["sub_groups"]:
                for c in group["test_cases"]:
                    c["status"] = "PASS"
            data.write_text(json.dumps(skipped))
            self.assertTrue(uml.result([], 0, data, log, required=uml.NET_SUITES).ok)

    def test_a_skip_in_a_nested_group_of_a_required_suite_fails(self):
        # net_core's cases are parameterized, nested a group below the suite.
        import json
        from kunit import uml
        nested = {"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
            {"name": "net_core", "test_cases": [], "sub_groups": [
                {"name": "gso_test_func", "sub_groups": [],
                 "test_cases": [{"name": "a", "status": "PASS"},
                                {"name": "b", "status": "SKIP"}]}]},
            {"name": "dev-addr-list-test", "sub_groups": [],
             "test_cases": [{"name": "a", "status": "PASS"}]}]}
        with tempfile.TemporaryDirectory() as tmp:
            data, log = Path(tmp) / "kunit.json", Path(tmp) / "test.log"
            data.write_text(json.dumps(nested))
            log.write_text("KTAP version 1\n")
            res = uml.result([], 0, data, log, required=uml.NET_SUITES)
            self.assertEqual(res.unproven(), ["net_core (1 passed, 1 skipped)"])
            self.assertFalse(res.ok)

    def test_net_suites_required_by_name(self):
        # One passing case of one suite is no run of the net suites.
        from kunit import uml
        res = uml.KunitResult(cases=[("net_core", "a", "PASS")], kernel_log="build/test.log",
                              required=uml.default_required(uml.default_configs()))
        self.assertFalse(res.ok)
        self.assertEqual(res.missing(), ["dev-addr-list-test", "dummy"])
        self.assertEqual(uml.default_required(uml.default_configs(), "dummy*"), ("dummy",))

    def test_negative_control(self):
        # The crafted counter bug is applied for the runs and reverted after;
        # the stage passes only when the named case failed on it in one of
        # up to NEGATIVE_ATTEMPTS runs (the race needs both vCPUs at once).
        import subprocess
        from unittest import mock
        from kunit import uml
        patch, suite, case = uml.NEGATIVE_CONTROL
        self.assertTrue(patch.is_file())
        self.assertEqual((suite, case), ("dummy", "dummy_test_senders"))
        self.assertEqual(uml.NEGATIVE_ATTEMPTS, 3)

        def control(statuses, apply_code=0):
            seen, gits = [], []

            def fake_run(tree, build_dir, **kw):
                seen.append(kw.get("filter_glob"))
                return uml.KunitResult(cases=[(suite, case, statuses[len(seen) - 1])],
                                       kernel_log="test.log")

            def fake_git_run(tree, *args, **kw):
                gits.append(list(args))
                return subprocess.CompletedProcess(args, apply_code, "", "error: patch failed")

            with mock.patch.object(uml, "run", fake_run), \
                    mock.patch.object(uml, "git_run", fake_git_run), \
                    mock.patch.object(uml, "git", lambda tree, *a, **k: gits.append(list(a))):
                caught, why = uml.negative_control("tree", "build")
            return caught, why, seen, gits

        caught, why, seen, gits = control(["FAIL"])
        self.assertTrue(caught, why)
        self.assertEqual(seen, ["dummy*"])
        self.assertEqual(gits, [["apply", str(patch)], ["apply", "-R", str(patch)]])
        # Missed twice (the vCPUs took turns), caught on the third run.
        caught, why, seen, gits = control(["PASS", "PASS", "FAIL"])
        self.assertTrue(caught, why)
        self.assertIn("run 3 of up to 3", why)
        self.assertEqual(gits[-1], ["apply", "-R", str(patch)])
        # A crash or timeout (ERROR) is not the case catching the bug.
        caught, why, seen, _ = control(["ERROR", "FAIL"])
        self.assertFalse(caught, why)
        self.assertEqual(len(seen), 1)
        self.assertIn("dummy.dummy_test_senders ERROR in 1 run(s)", why)
        # The case passed on the bug every time: the control fails, naming it.
        caught, why, seen, _ = control(["PASS", "PASS", "PASS"])
        self.assertFalse(caught)
        self.assertEqual(len(seen), 3)
        self.assertIn("dummy.dummy_test_senders PASS, PASS, PASS in 3 run(s)", why)
        self.assertIn("misses the bug", why)
        # A patch that does not apply is named, and nothing runs.
        caught, why, seen, _ = control(["FAIL"], apply_code=1)
        self.assertFalse(caught)
        self.assertEqual(seen, [])
        self.assertIn("does not apply: error: patch failed", why)

    def test_kernel_report_fails_a_passing_run(self):
        # KASAN or lockdep may report while every case passes: the run fails.
        from kunit import uml
        from common import splats
        log = ("[09:01:02]     ok 1 netdev_addr_list_test\n"
               "BUG: KASAN: slab-out-of-bounds in dummy_get_stats64+0x1c/0x40\n"
               "WARNING: possible circular locking dependency detected\n")
        res = uml.KunitResult(cases=[("netdev_addr_list", "a", "PASS")],
                              splats=splats.find_splats(log))
        self.assertEqual(len(res.splats), 2)
        self.assertFalse(res.ok)
        self.assertIn("2 kernel report line(s): BUG: KASAN", res.summary())
        self.assertIn("CONFIG_KASAN=y", uml.DEBUG_KCONFIG)
        self.assertIn("CONFIG_PROVE_LOCKING=y", uml.DEBUG_KCONFIG)

    def test_series_kunitconfig_and_suites_agree(self):
        # series.kunitconfig sets an option exactly when run.py names a suite
        # the series adds; the suites dropped from the series are gone from it.
        from kunit import uml
        options = uml.kconfig_options(uml.SERIES_CONFIG)
        self.assertEqual(bool(options), bool(uml.SERIES_SUITES), options)
        self.assertIn("CONFIG_DUMMY_KUNIT_TEST=y", options)
        # SMP under UML boots only with seccomp=on, and needs the CPUs.
        self.assertIn("CONFIG_SMP=y", options)
        self.assertEqual(uml.SERIES_KERNEL_ARGS, ("seccomp=on", "ncpus=2"))
        text = uml.SERIES_CONFIG.read_text()
        for dropped in ("BYPASS_KUNIT",):
            self.assertNotIn(dropped, text)
        self.assertEqual(uml.kconfig_options(uml.NET_CONFIG)[0], "CONFIG_KUNIT=y")

    def test_kconfig_options(self):
        from kunit import uml
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "x.kunitconfig"
            path.write_text("# comment naming CONFIG_FOO=y\n\nCONFIG_A=y\n"
                            "# CONFIG_B is not set\n  CONFIG_C=m  \n")
            self.assertEqual(uml.kconfig_options(path),
                             ["CONFIG_A=y", "# CONFIG_B is not set", "CONFIG_C=m"])


if __name__ == "__main__":
    unittest.main()


class KunitWholeLogTest(unittest.TestCase):
    """kunit.py prints a case's kernel log only when the case fails: a passing
    case that warns shows nothing in its output. run.result() scans the
    kernel's whole log (test.log) instead."""

    STDOUT = ["[20:05:01] Starting KUnit Kernel (1/1)...",
              "[20:05:02] ============ dev-addr-list-test (2 subtests) ============",
              "[20:05:02] [PASSED] dev_addr_test_warn_but_pass",
              "[20:05:02] [PASSED] dev_addr_test_basic",
              "[20:05:02] Testing complete. Ran 2 tests: passed: 2"]
    TEST_LOG = ("KTAP version 1\n1..1\n    # Subtest: dev-addr-list-test\n    1..2\n"
                "------------[ cut here ]------------\n"
                "WARNING: CPU: 0 PID: 31 at net/core/dev_addr_lists_test.c:608 "
                "dev_addr_test_warn_but_pass+0x12/0x20\n"
                "    ok 1 dev_addr_test_warn_but_pass\n    ok 2 dev_addr_test_basic\n"
                "ok 1 dev-addr-list-test\n")
    JSON = {"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
        {"name": "dev-addr-list-test", "sub_groups": [],
         "test_cases": [{"name": "dev_addr_test_warn_but_pass", "status": "PASS"},
                        {"name": "dev_addr_test_basic", "status": "PASS"}]}]}

    def result(self, test_log):
        import json
        from kunit import uml
        with tempfile.TemporaryDirectory() as tmp:
            js = Path(tmp) / "kunit.json"
            js.write_text(json.dumps(self.JSON))
            log = Path(tmp) / "test.log"
            if test_log is not None:
                log.write_text(test_log)
            return uml.result(self.STDOUT, 0, js, log)

    def test_kunit_output_alone_shows_no_report(self):
        # What run() scanned before: kunit.py's output, which passes.
        from common import splats
        self.assertEqual(splats.find_splats("\n".join(self.STDOUT)), [])

    def test_a_warning_in_a_passing_case_fails_the_run(self):
        res = self.result(self.TEST_LOG)
        self.assertEqual(res.count("PASS"), 2)
        self.assertFalse(res.ok)
        self.assertIn("WARNING: CPU: 0 PID: 31 at net/core/dev_addr_lists_test.c:608",
                      res.summary())

    def test_a_clean_log_passes(self):
        res = self.result(self.TEST_LOG.replace("WARNING: CPU: 0 PID: 31 at", "note: at"))
        self.assertTrue(res.ok, res.summary())

    def test_no_kernel_log_fails(self):
        res = self.result(None)
        self.assertFalse(res.ok)
        self.assertIn("no kernel log (test.log)", res.summary())

    def test_the_negative_control_patch(self):
        patch = (ROOT / "ci/negative-controls/kunit-warn-in-passing-case.patch").read_text()
        self.assertIn("+\tWARN_ON(1);", patch)
        self.assertIn("+\tKUNIT_CASE(dev_addr_test_warn_but_pass),", patch)
        self.assertIn("+\tKUNIT_EXPECT_TRUE(test, true);", patch)

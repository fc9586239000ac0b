"""Host tests stage: ctest's JUnit file, the flake8 file list, clang-tidy."""

import contextlib
import io
import json
import os
import stat
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci import pipeline
from ci import pipeline_host
from ci.tests.test_pipeline_state import handed_on

# As ctest 3.25 writes it (--output-junit).
CTEST_JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="4" failures="1" disabled="1" skipped="1" hostname="" time="0">
  <testcase name="ok" classname="ok" time="0.1" status="run"><system-out></system-out></testcase>
  <testcase name="bad" classname="bad" time="0.1" status="fail">
    <failure message=""/>
    <system-out>boom
</system-out>
  </testcase>
  <testcase name="skipme" classname="skipme" time="0.1" status="notrun">
    <skipped message="SKIP_RETURN_CODE=77"/><system-out></system-out>
  </testcase>
  <testcase name="off" classname="off" time="0" status="disabled">
    <system-out>Disabled</system-out>
  </testcase>
</testsuite>
"""

TIDY_OUT = """\
{root}/lib/netutil/nl.hpp:12:5: warning: use 'using' instead of 'typedef' [modernize-use-using]
    typedef int x;
    ^~~~~~~
{root}/lib/netutil/nl.hpp:12:5: warning: use 'using' instead of 'typedef' [modernize-use-using]
/usr/include/foo.h:3:1: error: unknown type name 'bar' [clang-diagnostic-error]
{root}/tools/bench/run.cpp:7:1: note: expanded from here
2 warnings generated.
Suppressed 3340 warnings (3340 in non-user code).
"""


class CtestJunitTest(unittest.TestCase):
    def test_statuses(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "ctest.xml"
            path.write_text(CTEST_JUNIT)
            cases = pipeline_host.ctest_cases(path)
        got = {c.name: (c.suite, c.status) for c in cases}
        self.assertEqual(got, {"ok": ("host.ctest", "pass"), "bad": ("host.ctest", "fail"),
                               "skipme": ("host.ctest", "skip"), "off": ("host.ctest", "skip")})
        bad = next(c for c in cases if c.name == "bad")
        self.assertEqual((bad.message, bad.details), ("boom", "boom"))
        self.assertEqual(next(c for c in cases if c.name == "skipme").message,
                         "SKIP_RETURN_CODE=77")

    def test_missing_or_broken_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIsNone(pipeline_host.ctest_cases(Path(tmp) / "none.xml"))
            (Path(tmp) / "cut.xml").write_text(CTEST_JUNIT[:200])
            self.assertIsNone(pipeline_host.ctest_cases(Path(tmp) / "cut.xml"))


class LintInputsTest(unittest.TestCase):
    def test_python_files_leave_out_the_patches(self):
        files = ["ci/pipeline.py", "patches/net/x.py", "tools/bench/bench.py", "README.md",
                 "ci/tests/data/matrix/good/base/net.qdisc_limit_zero.py.rc"]
        self.assertEqual(pipeline_host.python_files(files),
                         ["ci/pipeline.py", "tools/bench/bench.py"])

    def test_flake8_config_matches_the_line_length(self):
        text = (pipeline.ROOT / ".flake8").read_text()
        self.assertIn("max-line-length = 100", text)

    def test_tidy_findings_once_each_relative(self):
        root = "/src/proj"
        got = pipeline_host.tidy_findings(TIDY_OUT.format(root=root), root=root)
        self.assertEqual(got, [
            "/usr/include/foo.h:3:1: error: unknown type name 'bar' [clang-diagnostic-error]",
            "lib/netutil/nl.hpp:12:5: warning: use 'using' instead of 'typedef' "
            "[modernize-use-using]"])


class ClangTidyRunTest(unittest.TestCase):
    def test_runs_every_file_and_names_the_broken_ones(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / "clang-tidy"
            # Prints one finding per file; fails on files named broken*.
            fake.write_text("#!/bin/sh\nf=\"$4\"\necho \"$f:1:1: warning: w [bugprone-x]\"\n"
                            "case \"$f\" in *broken*) exit 1;; esac\n")
            fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
            log = Path(tmp) / "log"
            with mock.patch.dict(os.environ, {"PATH": f"{tmp}:{os.environ['PATH']}"}):
                findings, seconds, broken = pipeline_host.run_clang_tidy(
                    ["/x/a.cpp", "/x/broken.cpp", "/x/b.cpp"], Path(tmp), 2, log)
            self.assertEqual(findings, ["/x/a.cpp:1:1: warning: w [bugprone-x]",
                                        "/x/b.cpp:1:1: warning: w [bugprone-x]",
                                        "/x/broken.cpp:1:1: warning: w [bugprone-x]"])
            self.assertEqual(broken, ["/x/broken.cpp"])
            self.assertGreaterEqual(seconds, 0)
            self.assertIn("clang-tidy -p", log.read_text())


class HostStagesTest(unittest.TestCase):
    def stages(self, tmp, stage="host_tests"):
        p = pipeline.Pipeline("test", tmp)
        handed_on(p, stage, tmp)
        (Path(tmp) / "logs").mkdir(exist_ok=True)
        return p

    def test_userspace_exports_compile_commands(self):
        cmds = []
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(pipeline_host, "sh", lambda cmd, *a, **k: cmds.append(cmd)), \
                mock.patch.object(pipeline.Pipeline, "checkout", lambda *a: None):
            p = self.stages(tmp, "userspace")
            stage = pipeline.Stage("userspace")
            p.stage_userspace(stage)
        # The patched tree's uapi headers first, then the build against them.
        khdr = Path(tmp) / "ws/series/khdr"
        self.assertEqual(cmds[0][:3], ["make", "-C", str(Path(tmp) / "src")])
        self.assertIn(f"INSTALL_HDR_PATH={khdr / 'usr'}", cmds[0])
        self.assertIn("-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", cmds[1])
        self.assertIn(f"-DKHDR_INCLUDES={khdr / 'usr/include'}", cmds[1])
        self.assertEqual(cmds[1][:5], ["cmake", "-S", str(pipeline.ROOT), "-B",
                                       str(pipeline_host.BUILD)])
        self.assertEqual(p.state.programs, pipeline_host.BUILD)
        self.assertIn(f"against {khdr / 'usr/include'}", stage.summary)

    def test_userspace_compiles_through_ccache_relative_to_the_checkout(self):
        envs = []
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(pipeline_host, "sh",
                                  lambda cmd, *a, **k: envs.append(k.get("env"))), \
                mock.patch.object(pipeline.Pipeline, "checkout", lambda *a: None):
            self.stages(tmp, "userspace").stage_userspace(pipeline.Stage("userspace"))
        # The cmake runs (after the headers' make): a clone elsewhere must hit.
        for env in envs[1:]:
            self.assertEqual(env["CCACHE_BASEDIR"], str(pipeline.ROOT))

    def test_lint_runs_flake8_and_clang_tidy(self):
        cmds = []

        def sh(cmd, *a, **k):
            cmds.append(cmd)
            return (1, "E501 line too long") if cmd[0] == "flake8" else (0, "")

        tidy = mock.Mock(return_value=(["a.cpp:1:1: warning: w [x]"], 3.0, []))
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(pipeline_host, "CACHE", Path(tmp)), \
                mock.patch.object(pipeline_host, "sh", sh), \
                mock.patch.object(pipeline_host, "run_clang_tidy", tidy):
            stage = pipeline.Stage("host-tests")
            failed = self.stages(tmp).lint(stage)
        self.assertEqual(failed, ["flake8", "clang-tidy"])
        flake8 = next(c for c in cmds if c[0] == "flake8")
        self.assertIn("ci/pipeline.py", flake8)
        self.assertFalse([f for f in flake8[1:] if f.startswith("patches/")])
        sources = tidy.call_args[0][0]
        self.assertTrue(sources and all(f.endswith(".cpp") for f in sources))
        self.assertEqual(tidy.call_args[0][1], pipeline_host.BUILD)
        cases = {c.name: c for c in stage.cases}
        names = ("shellcheck", "clang-format", "flake8", "clang-tidy")
        self.assertEqual([cases[n].status for n in names], ["pass", "pass", "fail", "fail"])
        self.assertIn("1 finding(s)", cases["clang-tidy"].message)

    def test_clean_clang_tidy_run_is_not_repeated(self):
        tidy = mock.Mock(return_value=([], 3.0, []))
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(pipeline_host, "CACHE", Path(tmp) / "cache"), \
                mock.patch.object(pipeline_host, "sh", lambda *a, **k: (0, "v14")), \
                mock.patch.object(pipeline_host, "run_clang_tidy", tidy):
            cpp = Path(tmp) / "a.cpp"
            cpp.write_text("int a;\n")
            p = self.stages(tmp)
            results = []
            for change in (None, None, "int b;\n"):
                if change:
                    cpp.write_text(change)
                stage = pipeline.Stage("host-tests")
                results.append(p.clang_tidy(stage, [str(cpp)]))
                results.append(stage.cases[0].message)
        self.assertEqual(tidy.call_count, 2)
        self.assertEqual(results, [True, "0 finding(s) in 1 files, 3s", True,
                                   "no C++ change since the last clean run", True,
                                   "0 finding(s) in 1 files, 3s"])

    def test_tidy_key(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "a.hpp"
            f.write_text("x")
            key = pipeline_host.tidy_key([f], tmp, "14")
            self.assertEqual(pipeline_host.tidy_key([f], tmp, "14"), key)
            self.assertNotEqual(pipeline_host.tidy_key([f], tmp, "15"), key)
            (Path(tmp) / "compile_commands.json").write_text("[]")
            self.assertNotEqual(pipeline_host.tidy_key([f], tmp, "14"), key)

    def test_tidy_key_is_the_same_in_another_build_dir(self):
        """A fresh clone builds elsewhere: same sources, same key; another
        compile flag, another key."""
        keys = []
        for flags in ("-O2", "-O2", "-O0"):
            with tempfile.TemporaryDirectory() as build:
                cc = [{"directory": build, "file": str(pipeline_host.ROOT / "x.cpp"),
                       "command": f"c++ {flags} -I{build}/gen -c x.cpp"}]
                (Path(build) / "compile_commands.json").write_text(json.dumps(cc))
                keys.append(pipeline_host.tidy_key([], build, "19"))
        self.assertEqual(keys[0], keys[1])
        self.assertNotEqual(keys[0], keys[2])

    def test_host_tests_read_ctest_junit(self):
        def sh(cmd, *a, **k):
            if cmd[0] == "ctest":
                junit = Path(cmd[cmd.index("--output-junit") + 1])
                junit.write_text(CTEST_JUNIT)
                return 8, "Errors while running CTest"
            return 0, "Ran 3 tests in 0.1s\n\nOK\n"

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(pipeline_host, "sh", sh), \
                mock.patch.object(pipeline_host, "shard_names",
                                  lambda n: pipeline_host.test_shards(SUITE, n)), \
                mock.patch.object(pipeline_host.HostStages, "lint", lambda self, stage: []):
            stage = pipeline.Stage("host-tests")
            with self.assertRaises(pipeline.StageFailed), \
                    contextlib.redirect_stdout(io.StringIO()):
                self.stages(tmp).stage_host_tests(stage)
        self.assertTrue(stage.summary.startswith("ctest: 1/2 passed (2 skipped); "), stage.summary)
        self.assertEqual(sorted(c.name for c in stage.cases if c.suite == "host.ctest"),
                         ["bad", "off", "ok", "skipme"])

    def python_tests(self, outputs):
        """python_tests() with each shard's sh() giving the next of outputs
        ((exit code, text)); returns (result, the shards' names, cases)."""
        names, outputs = [], list(outputs)

        def sh(cmd, *a, **k):
            names.append(cmd[cmd.index("-v") + 1:])
            return outputs.pop(0)
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(pipeline_host, "sh", sh), \
                mock.patch.object(pipeline_host, "shard_names",
                                  lambda n: pipeline_host.test_shards(SUITE, n)), \
                mock.patch.object(pipeline_host, "SHARDS_PER_CPU", 1), \
                mock.patch.object(pipeline_host.os, "cpu_count", lambda: 2):
            stage = pipeline.Stage("host-tests")
            result = self.stages(tmp).python_tests(stage)
        return result, names, {c.name: c.status for c in stage.cases}

    def test_python_tests_in_shards_every_test_once(self):
        # Python 3.11's -v: the test's name, then its id.
        ok = "test_a (m.C.test_a) ... ok\n\nRan 2 tests in 0.1s\n\nOK\n"
        result, names, cases = self.python_tests([(0, ok), (0, ok.replace("_a", "_b"))])
        self.assertEqual(result, (0, 4))
        # Dealt in turn, each class whole.
        self.assertEqual(sorted(n for shard in names for n in shard),
                         [f"{__name__}.sample_suite.<locals>.{c}" for c in ("Alone", "Whole")])
        self.assertEqual(len(names), 2)
        self.assertEqual(cases, {"m.C.test_a": "pass", "m.C.test_b": "pass"})

    def test_shards_of_the_project_name_every_test_once(self):
        """Discovered in a child process; a class whole; a module that does
        not import by its full name."""
        shards = pipeline_host.shard_names(8)
        names = [n for shard in shards for n in shard]
        self.assertEqual(len(shards), 8)
        self.assertEqual(len(names), len(set(names)))
        self.assertIn("ci.tests.test_pipeline_host.HostStagesTest", names)
        with tempfile.TemporaryDirectory() as tmp:
            for rel, text in (("pkg/__init__.py", ""), ("pkg/tests/__init__.py", ""),
                              ("pkg/tests/test_broken.py", "import no_such_module\n")):
                (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
                (Path(tmp) / rel).write_text(text)
            broken = unittest.TestLoader().discover(tmp, "test_*.py", tmp)
            self.assertEqual(pipeline_host.test_shards(broken, 2), [["pkg.tests.test_broken"]])

    def test_python_tests_a_failing_or_silent_shard_fails(self):
        ok = "Ran 2 tests in 0.1s\n\nOK\n"
        self.assertEqual(self.python_tests([(0, ok), (1, "Ran 2 tests\nFAILED\n")])[0], (1, 4))
        self.assertEqual(self.python_tests([(0, ok), (0, "Killed\n")])[0], (-1, 2))


def sample_suite():
    """Sample tests for the shards, out of discovery's sight."""
    class Alone(unittest.TestCase):
        def test_0(self):
            pass

        def test_1(self):
            pass

        def test_2(self):
            pass

    class Whole(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            pass

        def test_0(self):
            pass

        def test_1(self):
            pass
    return unittest.TestSuite([unittest.defaultTestLoader.loadTestsFromTestCase(c)
                               for c in (Alone, Whole)])


SUITE = sample_suite()


if __name__ == "__main__":
    unittest.main()

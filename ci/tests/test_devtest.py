"""ci/devtest.py, the one-liners of README's "Working on the series": the
commands it prints are the ones it runs (vng, make, kunit.py replaced by
recorders in PATH: no kernel is built or booted), --dry-run runs nothing,
and the arguments name what the project runs."""

import contextlib
import io
import os
import re
import shlex
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci import devtest
from common.paths import ROOT
from kunit import uml
from tools.series import cleanup

RECORDER = '#!/bin/sh\nprintf "%s\\n" "$(basename "$0") $*" >> "$RECORD"\n'


class DevTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.record = self.tmp / "record"
        bindir = self.tmp / "bin"
        bindir.mkdir()
        for name in ("vng", "make", "install", "unshare", "env"):
            (bindir / name).write_text(RECORDER)
            (bindir / name).chmod(0o755)
        env = mock.patch.dict(os.environ, {"PATH": f"{bindir}:{os.environ['PATH']}",
                                           "RECORD": str(self.record)})
        env.start()
        self.addCleanup(env.stop)
        self.tree = self.tmp / "linux"
        (self.tree / "tools/testing/selftests").mkdir(parents=True)
        (self.tree / "tools/testing/kunit").mkdir(parents=True)
        (self.tree / "tools/testing/kunit/kunit.py").write_text(
            "import os, sys\nopen(os.environ['RECORD'], 'a').write("
            "'kunit.py ' + ' '.join(sys.argv[1:]) + ' cwd=' + os.getcwd() + '\\n')\n")
        self.build = self.tmp / "build"
        (self.build / "arch/x86/boot").mkdir(parents=True)
        (self.build / "arch/x86/boot/bzImage").write_text("kernel")

    def devtest(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = devtest.main(list(map(str, args)))
            except SystemExit as e:
                code = e.code
        return code, out.getvalue(), err.getvalue()

    def ran(self):
        return self.record.read_text().splitlines() if self.record.exists() else []

    def test_dry_run_prints_the_commands_and_runs_nothing(self):
        for args in (("kernel", self.tree, self.build), ("kselftest", self.tree, self.build),
                     ("kunit", self.tree), ("progs", "--bin", self.build)):
            for where in ("before", "after"):  # the subcommand, as users type it
                argv = ("--dry-run", *args) if where == "before" else (*args, "--dry-run")
                code, out, err = self.devtest(*argv)
                self.assertEqual(code, 0, err)
                self.assertTrue(out.strip(), argv)
        self.assertEqual(self.ran(), [])

    def test_readme_lines_work_as_printed(self):
        """Each README line of devtest, with the user's paths replaced."""
        lines = [ln.strip().split("  #")[0].strip()
                 for ln in (ROOT / "README.md").read_text().splitlines()
                 if ln.strip().startswith("python3 -m ci.devtest ")]
        self.assertEqual({shlex.split(ln)[3] for ln in lines},
                         {"kernel", "kselftest", "kunit", "progs"}, lines)
        values = {"~/work/linux": str(self.tree), "~/work/build": str(self.build)}
        for line in lines:
            argv = [values.get(w, w) for w in shlex.split(line)[3:]]
            code, out, err = self.devtest(*argv, "--dry-run")
            self.assertEqual(code, 0, f"{line}: {err}")
            if argv[0] == "kunit":
                self.assertEqual(re.findall(r"--kunitconfig=(\S+)", out),
                                 [str(c) for c in uml.default_configs()])

    def test_kunit_composes_what_the_series_suites_depend_on(self):
        """series.kunitconfig sets only what the series adds: alone, kunit.py
        config stops on CONFIG_DUMMY, ETHTOOL_NETLINK, DUMMY_KUNIT_TEST and
        KUNIT_UML_PCI (7.3.4). Their dependencies come from net.kunitconfig."""
        code, out, err = self.devtest("kunit", self.tree, "--dry-run")
        self.assertEqual(code, 0, err)
        configs = [Path(c) for c in re.findall(r"--kunitconfig=(\S+)", out)]
        self.assertEqual(configs, uml.default_configs())
        options = {o for c in configs for o in uml.kconfig_options(c)}
        for dep in ("CONFIG_KUNIT=y", "CONFIG_NET=y", "CONFIG_NETDEVICES=y",
                    "CONFIG_NET_CORE=y"):
            self.assertIn(dep, options)
        self.assertNotIn("CONFIG_KUNIT=y", uml.kconfig_options(uml.SERIES_CONFIG))

    def test_kernel_is_built_with_the_selftests_fragments(self):
        for coll in ("net", "drivers/net"):  # no netdevsim fragment in this tree
            (self.tree / f"tools/testing/selftests/{coll}").mkdir(parents=True, exist_ok=True)
            (self.tree / f"tools/testing/selftests/{coll}/config").write_text("CONFIG_NET=y\n")
        build = self.tmp / "kbuild"
        code, out, err = self.devtest("kernel", self.tree, build)
        self.assertEqual(code, 0, err)
        self.assertTrue(build.is_dir())
        self.assertEqual(self.ran(), [
            f"vng --build --config tools/testing/selftests/net/config "
            f"--config tools/testing/selftests/drivers/net/config O={build}"])
        self.assertIn(f"cd {self.tree} && vng --build --config", out)

    def test_what_is_missing_says_how_to_get_it(self):
        code, _, err = self.devtest("kselftest", self.tree, self.tmp / "nowhere")
        self.assertEqual(code, 2)
        self.assertIn("python3 -m ci.devtest kernel TREE BUILD", err)
        code, _, err = self.devtest("progs", "--bin", self.tmp / "nowhere")
        self.assertEqual(code, 2)
        self.assertIn("cmake -S . -B build/cxx", err)

    def test_help_keeps_every_line_of_the_description(self):
        code, out, _ = self.devtest("--help")
        self.assertEqual(code, 0)
        for line in devtest.__doc__.splitlines():
            self.assertIn(line.strip(), out)

    def test_kselftest_runs_what_it_prints(self):
        code, out, err = self.devtest("kselftest", self.tree, self.build,
                                      "-t", "net:qdisc_bypass.py", "--out", self.tmp / "ksft")
        self.assertEqual(code, 0, err)
        printed = [shlex.split(line) for line in out.splitlines()]
        ran = [line.split() for line in self.ran()]
        self.assertEqual([[Path(c[0]).name, *c[1:]] for c in printed],
                         [r for r in ran])
        install = self.tmp / "ksft/install"
        self.assertIn(f"INSTALL_PATH={install}", out)
        self.assertIn("TARGETS=net", out)
        self.assertIn(f"vng --run {self.build} --user root -- {install}/run_kselftest.sh "
                      "-t net:qdisc_bypass.py", out)

    def test_kselftest_default_is_the_series_kselftests(self):
        code, out, _ = self.devtest("--dry-run", "kselftest", self.tree, self.build)
        self.assertEqual(code, 0)
        self.assertIn("'TARGETS=net drivers/net drivers/net/netdevsim'", out)
        for test in ("net:dummy_queues.py", "net:qdisc_limit_zero.py", "net:qdisc_bypass.py"):
            self.assertIn(f"-t {test}", out)
        # drivers/net on a dummy with programs.txt's queue counts, in a netns.
        self.assertRegex(out, r"unshare --net --mount .*drv-net-dummy.sh \S+ "
                         r"drivers/net:queues.py 4 2\n")
        self.assertRegex(out, r"drv-net-dummy.sh \S+ drivers/net:stats.py 4\n")

    def test_kselftest_out_defaults_to_the_cache_which_cleanup_empties(self):
        cache = self.tmp / "cache"
        with mock.patch.dict(os.environ, {"PROJECT_CACHE": str(cache)}):
            os.environ.pop("KERNEL_SRC", None)
            code, out, _ = self.devtest("--dry-run", "kselftest", self.tree, self.build)
            self.assertEqual(code, 0)
            out_dir = cache / "kselftest/dev"
            self.assertIn(f"INSTALL_PATH={out_dir}/install", out)
            self.assertIn(f"O={out_dir}/build", out)
            (out_dir / "install").mkdir(parents=True)  # as the install leaves it
            with contextlib.redirect_stdout(io.StringIO()) as said:
                self.assertEqual(cleanup.main([]), 0)
        self.assertIn("removing kselftest (", said.getvalue())
        self.assertFalse((cache / "kselftest").exists())

    def test_kselftest_refuses_a_test_not_named_by_collection(self):
        code, _, err = self.devtest("--dry-run", "kselftest", self.tree, self.build,
                                    "-t", "qdisc_bypass.py")
        self.assertEqual(code, 2)
        self.assertIn("not COLLECTION:TEST", err)

    def test_missing_build_runs_nothing(self):
        code, _, err = self.devtest("kselftest", self.tree, self.tmp / "nowhere")
        self.assertEqual(code, 2)
        self.assertIn("bzImage", err)
        self.assertEqual(self.ran(), [])

    def test_kunit_runs_the_trees_kunit_py_with_the_series_config_and_smp_args(self):
        code, out, err = self.devtest("kunit", self.tree, "--build-dir", self.tmp / "kb")
        self.assertEqual(code, 0, err)
        ran = self.ran()
        self.assertEqual(len(ran), 1)
        self.assertIn(f"--kunitconfig={uml.NET_CONFIG} --kunitconfig={uml.SERIES_CONFIG}",
                      ran[0])
        for arg in uml.SERIES_KERNEL_ARGS:
            self.assertIn(f"--kernel_args={arg}", ran[0])
        self.assertIn(f"--build_dir={self.tmp / 'kb'}", ran[0])
        self.assertTrue(ran[0].endswith(f"cwd={self.tree}"), ran[0])
        self.assertIn(f"cd {self.tree} && python3 tools/testing/kunit/kunit.py run", out)

    def test_progs_each_in_a_namespace_with_the_kernel_named(self):
        (self.build / "selftests").mkdir()
        code, out, err = self.devtest("progs", "churn", "bad_input", "--bin", self.build,
                                      "--kernel", "base")
        self.assertEqual(code, 0, err)
        ran = self.ran()
        self.assertEqual(len(ran), 2)
        self.assertTrue(ran[0].startswith("env SELFTEST_KERNEL=base unshare --net --mount"))
        self.assertTrue(ran[0].endswith(f"{self.build}/selftests/churn --seconds 20"), ran[0])
        self.assertTrue(ran[1].endswith(f"{self.build}/selftests/bad_input"), ran[1])

    def test_progs_refuses_an_unknown_program(self):
        code, _, err = self.devtest("--dry-run", "progs", "no_such")
        self.assertEqual(code, 2)
        self.assertIn("no C++ program no_such (known: dummy_queues", err)


if __name__ == "__main__":
    unittest.main()

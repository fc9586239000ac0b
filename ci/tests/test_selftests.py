"""The selftest list, the expectations and the programs agree; KTAP as the
tree's Python kselftests print it is read case by case."""

import errno
import re
import tempfile
import unittest
from pathlib import Path

from ci import pipeline_boot
from ci.matrix import debug_checks, expectations, kselftests
from common.paths import ROOT
from common.programs import read_programs


STATES = set(expectations.EXPECTED)  # "skip" is not one


def cxx_source(prog):
    """The C++ source of a selftest program: selftests/progs/<prog>.cpp, or the
    .cpp files of selftests/progs/<prog>/; None when there is neither."""
    progs = ROOT / "selftests/progs"
    if (progs / f"{prog}.cpp").is_file():
        return (progs / f"{prog}.cpp").read_text()
    if (progs / prog).is_dir():
        return "\n".join(p.read_text() for p in sorted((progs / prog).glob("*.cpp")))
    return None


def cxx_cases(prog):
    """Case names a C++ selftest program registers (selftests/lib/harness.hpp):
    TEST/TEST_RESULT(name), TEST_F(fixture, test) once per FIXTURE_VARIANT_ADD
    of the fixture ("<variant>_<test>"), ksft::add_case/add_step("name"), the
    rows of a catalogue that open a line with {"area.request", (bad_input), and
    a numbered family of steps (churn's phases)."""
    text = cxx_source(prog)
    cases = re.findall(r'^TEST(?:_RESULT)?(?:_OPTS)?\((\w+)', text, re.M)
    variants = {}
    for fixture, variant in re.findall(r'^FIXTURE_VARIANT_ADD\((\w+), (\w+)\)', text, re.M):
        variants.setdefault(fixture, []).append(variant)
    for fixture, test in re.findall(r'^TEST_F(?:_OPTS)?\((\w+), (\w+)', text, re.M):
        cases += [f"{v}_{test}" for v in variants.get(fixture, [])] or [test]
    cases += re.findall(r'add_case\(\s*"(\w+)"', text)
    cases += re.findall(r'add_step\(\s*"\w+",\s*"(\w+)"', text)
    cases += re.findall(r'^\s*\{"(\w+\.\w+)",', text, re.M)
    # A numbered family: for (...; i < NS::kCount; ...) add_step(..., concat("prefix_", i + 1),
    # with kCount a constexpr in one of the program's headers (churn's phases).
    family = re.search(r'i < (?:\w+::)?(k\w+);[^)]*\)\s*ksft::add_step\(\s*"\w+",\s*'
                       r'concat\("(\w+)", i \+ 1\)', text)
    if family:
        count, prefix = family.groups()
        headers = " ".join(p.read_text() for p in (ROOT / "selftests/progs").rglob("*.hpp"))
        n = int(re.search(rf"constexpr \w+ {count} = (\d+);", headers).group(1))
        cases = [f"{prefix}{i}" for i in range(1, n + 1)] + cases
    return cases


# The kernels the VM stage boots: base, patched and the negative control.
KERNELS = ("base", pipeline_boot.NET_KERNEL, "patched", pipeline_boot.NO_CALLBACK)


class ExpectationsTest(unittest.TestCase):
    def setUp(self):
        self.expect = expectations.load_expectations()
        self.progs = dict(expectations.programs())

    def test_every_program_is_listed(self):
        # fault_inject runs on the debug kernel alone, before the programs
        # (selftests/fault-inject.sh), judged by ci/matrix/debug_checks.py.
        self.assertEqual(set(self.expect) - set(self.progs), {debug_checks.FAULT_PROGRAM},
                         "expectations for programs that programs.txt does not run")
        self.assertEqual({k for k in self.progs.values()}, {"ktap", "kselftest", "tdc"})

    def test_entries_are_well_formed(self):
        for prog, cases in self.expect.items():
            for case, entry in cases.items():
                with self.subTest(prog=prog, case=case):
                    self.assertLessEqual(set(entry), {*KERNELS, "why", "shows", "not_run"})
                    if "not_run" in entry:
                        # A case that cannot run here fails for that on every kernel.
                        self.assertEqual({entry.get(k, "pass") for k in ("base", "patched")},
                                         {"fail"})
                    self.assertIn(entry.get("base", "pass"), STATES)
                    self.assertIn(entry.get("patched", "pass"), STATES)
                    if entry.get("base", "pass") != "pass":
                        # What the base kernel shows, not just that it differs.
                        self.assertTrue(entry.get("why", "").startswith("base: "), entry)
                    if entry.get(pipeline_boot.NET_KERNEL, "pass") != "pass":
                        self.assertIn(f"{pipeline_boot.NET_KERNEL}: ", entry.get("why", ""))

    def test_expected_failures_name_what_they_show(self):
        # What the case must show where it is expected to fail, and only there.
        for prog, cases in self.expect.items():
            for case, entry in cases.items():
                with self.subTest(prog=prog, case=case):
                    failing = {k for k in KERNELS if entry.get(k, "pass") != "pass"}
                    shows = entry.get("shows", {})
                    self.assertEqual(set(shows), failing)
                    for kinds in shows.values():
                        self.assertTrue(kinds)
                        self.assertLessEqual(set(kinds), set(expectations.SHOW_KINDS))
                        for kind, values in kinds.items():
                            values = [values] if isinstance(values, str) else values
                            self.assertTrue(values)
                            for v in values:
                                self.assertIsInstance(v, str)
                                self.assertTrue(v.strip())
                                if kind == "errno":
                                    self.assertTrue(v.isupper() and hasattr(errno, v), v)
                        # An errno alone is met by any line with its text
                        # (an unrelated "RTNETLINK answers: Operation not
                        # supported"): the request it comes from is named too.
                        if "errno" in kinds:
                            self.assertIn("operation", kinds)

    def test_controls_say_so(self):
        # Controls (pass on every kernel) are labelled in the matrix and the
        # report; their "why" says what they control, the others' does not.
        for prog, cases in self.expect.items():
            for case, entry in cases.items():
                with self.subTest(prog=prog, case=case):
                    control = expectations.is_control(entry, ["base", "patched"])
                    self.assertEqual(entry.get("why", "").startswith("control: "), control)

    def test_cxx_cases_match_the_programs(self):
        # Every case of a C++ program declares both kernels, and every listed
        # case exists: a renamed case cannot silently lose its expectation.
        for prog, kind in self.progs.items():
            if kind != "ktap" or cxx_source(prog) is None:
                continue
            with self.subTest(prog=prog):
                cases = cxx_cases(prog)
                self.assertTrue(cases)
                self.assertEqual(len(cases), len(set(cases)))
                self.assertEqual(set(cases), set(self.expect.get(prog, {})))
                for case in cases:
                    entry = self.expect[prog][case]
                    self.assertIn("base", entry, case)
                    self.assertIn("patched", entry, case)

    def test_python_kselftest_case_names(self):
        # lib/py prints "<script stem>.<function>" for each case, and
        # "<script stem>.<function>.<variant>" for ksft_variants.
        for prog, kind in self.progs.items():
            if not prog.endswith(".py"):
                continue
            with self.subTest(prog=prog):
                self.assertEqual(kind, "kselftest")
                stem = prog[:-3].rsplit(".", 1)[-1]
                self.assertTrue(self.expect.get(prog))
                for case in self.expect[prog]:
                    self.assertRegex(case, rf"^{re.escape(stem)}\.\w+(\.\w+)?$")

    def test_series_python_kselftest_cases_exist(self):
        # A case expectations.json lists for a Python kselftest the series
        # adds is a function of that test as the patches leave it: a case
        # renamed in a patch and not here would be judged "never ran".
        funcs = {}
        for patch in sorted(ROOT.glob("patches/*/*/0*.patch")):
            path = None
            for line in patch.read_text().splitlines():
                if line.startswith("+++ "):
                    m = re.match(r"\+\+\+ b/tools/testing/selftests/(.+)/(\w+\.py)$", line)
                    path = m and f"{m[1].replace('/', '.')}.{m[2]}"
                elif path and (m := re.match(r"\+def (\w+)\(", line)):
                    funcs.setdefault(path, set()).add(m[1])
        checked = 0
        for prog in self.progs:
            name = prog.split("-")[0]
            if name not in funcs:
                continue
            checked += 1
            with self.subTest(prog=prog):
                for case in self.expect.get(prog, {}):
                    self.assertIn(case.split(".")[1], funcs[name], case)
        self.assertGreater(checked, 0)

    def test_python_kselftest_commands(self):
        # The tree's Python kselftests run through the kselftest runner, as
        # COLLECTION:TEST of their name ("drivers.net.stats.py-txq4":
        # drivers/net:stats.py); the drivers/net ones on a dummy or netdevsim.
        for prog in read_programs():
            name, cmd = prog.name, prog.command
            if ".py" not in name:
                continue
            with self.subTest(prog=name):
                path, script = name.split(".py")[0].rsplit(".", 1)
                test = f"{path.replace('.', '/')}:{script}.py"
                self.assertEqual(prog.kselftest, test)
                # drivers/net on a dummy, or on the netdevsim NetDrvEnv makes
                # without NETIF ("-nsim")
                if path.startswith("drivers.") and not name.endswith("-nsim"):
                    self.assertTrue(cmd.startswith(f"@SELFTESTS@/drv-net-dummy.sh @KSFT@ {test} "),
                                    cmd)
                else:
                    self.assertEqual(cmd, f"@KSFT@/run_kselftest.sh -t {test}")

    def test_programs_txt_kinds(self):
        # ktap, kselftest and tdc only: a program of another kind (the old
        # "exit"), one without a command, or a kselftest program naming no
        # COLLECTION:TEST is refused, naming the line.
        self.assertEqual({p.kind for p in read_programs()}, {"ktap", "kselftest", "tdc"})
        with tempfile.TemporaryDirectory() as tmp:
            for bad in ("legacy.sh exit ./legacy.sh\n", "a ktap\n",
                        "x.py kselftest @KSFT@/run_kselftest.sh -t x.py\n"):
                with self.subTest(bad=bad):
                    f = Path(tmp) / "programs.txt"
                    f.write_text("# comment\n\nok ktap ./ok\n" + bad)
                    with self.assertRaisesRegex(ValueError, r"programs.txt:4: "):
                        read_programs(f)
            f.write_text("k kselftest @SELFTESTS@/wrap.sh @KSFT@ drivers/net:s.py 4\n")
            self.assertEqual(read_programs(f)[0].kselftest, "drivers/net:s.py")

    def test_listed_cases_of_judged_programs(self):
        progs = [("a", "ktap"), ("t", "tdc")]
        expect = {"a": {"x": {}, "y": {}}, "t": {"z": {}}, "gone": {"w": {}}}
        self.assertEqual(expectations.expected_cases(expect, progs),
                         {("a", "x"), ("a", "y"), ("t", "z")})


FAKE_TOP_MAKEFILE = """\
install:
\tmkdir -p $(O) $(INSTALL_PATH)/net
\techo '$(TARGETS) $(TEST_GEN_PROGS)' > $(INSTALL_PATH)/targets
\ttouch $(INSTALL_PATH)/run_kselftest.sh
"""
FAKE_LIB_MAKEFILE = """\
$(OUTPUT)/xdp_helper:
\tmkdir -p $(OUTPUT) && echo helper > $@
"""


class KselftestInstallTest(unittest.TestCase):
    """The tree's selftests are installed on the host by the kselftest make,
    outside the tree; the lean install builds no C program but the helpers
    the tests run; a failing make is named."""

    def fake_tree(self, tmp, top=FAKE_TOP_MAKEFILE):
        sdir = Path(tmp) / "tree" / kselftests.SELFTESTS_DIR
        (sdir / "net/lib").mkdir(parents=True)
        (sdir / "Makefile").write_text(top)
        (sdir / "net/lib/Makefile").write_text(FAKE_LIB_MAKEFILE)
        return Path(tmp) / "tree"

    def test_commands(self):
        full, = kselftests.kselftest_install_commands("/t", "/b", "/d", ["net", "drivers/net"],
                                                      lean=False)
        self.assertEqual(full, ["make", "-C", "/t/tools/testing/selftests", "O=/b",
                                "TARGETS=net drivers/net", "INSTALL_PATH=/d", "install"])
        lean = kselftests.kselftest_install_commands("/t", "/b", "/d", ["net"])
        self.assertEqual(lean[0], [*full[:4], "TARGETS=net", "INSTALL_PATH=/d",
                                   *kselftests.LEAN_INSTALL, "install"])
        self.assertIn("TEST_GEN_PROGS=", lean[0])
        out = "/b/kselftest/net/lib"
        self.assertEqual(lean[1], ["make", "-C", "/t/tools/testing/selftests/net/lib",
                                   f"OUTPUT={out}", f"{out}/xdp_helper"])
        self.assertEqual(lean[2][-1], "/d/net/lib/xdp_helper")
        # no net/lib without net or drivers/net
        self.assertEqual(len(kselftests.kselftest_install_commands("/t", "/b", "/d", ["mm"])), 1)

    def test_install_outside_the_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree = self.fake_tree(tmp)
            before = sorted(p for p in tree.rglob("*"))
            with self.assertLogs("ci.matrix.kselftests", "INFO") as logged:
                dest, secs = kselftests.install_kselftests(tree, Path(tmp) / "root",
                                                           ["net", "drivers/net"])
            self.assertEqual(logged.output, [
                "INFO:ci.matrix.kselftests:  installing the tree's selftests (net drivers/net) "
                f"into {dest}"])
            self.assertEqual(dest, Path(tmp) / "root/install")
            self.assertEqual((dest / "targets").read_text().strip(), "net drivers/net")
            self.assertEqual((dest / "net/lib/xdp_helper").read_text(), "helper\n")
            self.assertEqual(sorted(p for p in tree.rglob("*")), before)
            self.assertGreaterEqual(secs, 0)
            # a second install starts from an empty directory
            (dest / "stale.py").write_text("")
            kselftests.install_kselftests(tree, Path(tmp) / "root", ["net"])
            self.assertFalse((dest / "stale.py").exists())

    def test_failures_are_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree = self.fake_tree(tmp, "install:\n\t@echo no rule for net >&2; false\n")
            with self.assertRaisesRegex(RuntimeError, r"selftests install: make -C .* exited 2: "
                                                      r".*no rule for net"):
                kselftests.install_kselftests(tree, Path(tmp) / "root", ["net"])
            tree2 = Path(tmp) / "t2"
            tree = self.fake_tree(tree2, "install:\n\tmkdir -p $(INSTALL_PATH)\n")
            with self.assertRaisesRegex(RuntimeError, "no run_kselftest.sh"):
                kselftests.install_kselftests(tree, Path(tmp) / "root", ["net"])

    def test_collections_of_the_programs(self):
        tests = {"a.py": "net:a.py", "b": "drivers/net:b.py", "c": "net:c.py"}
        progs = [("x", "ktap"), ("a.py", "kselftest"), ("b", "kselftest"), ("c", "kselftest"),
                 ("t", "tdc")]
        self.assertEqual(kselftests.kselftest_collections(progs, tests), ["net", "drivers/net"])
        self.assertEqual(kselftests.kselftest_collections([("x", "ktap")], tests), [])


if __name__ == "__main__":
    unittest.main()

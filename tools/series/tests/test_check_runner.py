"""The checks' registry and runner (tools/series/checks/runner.py): one list
of names for the stage, the bot and the report; one signature; build checks
skip, named, without a build; imports from tools/series into checks/ only."""

import ast
import unittest

from ci import report
from common.paths import ROOT
from tools.series import listbot
from tools.series.checks import patchwork, per_series, runner


class RegistryTest(unittest.TestCase):
    def test_one_list_of_names(self):
        self.assertEqual(len(runner.CHECKS), len(set(runner.CHECKS)))
        self.assertEqual(report.SERIES_ORDER, per_series.SERIES_CHECKS)
        self.assertEqual(runner.SERIES_CHECKS, tuple(per_series.SERIES_FUNCS))
        self.assertEqual(set(listbot.CHECKS), {"checkpatch", "verify_signedoff",
                                               "verify_fixes", "kdoc"})
        self.assertTrue(set(listbot.CHECKS) <= set(runner.CHECKS))
        for name in ("CHECKS", "NIPA_CHECKS", "SERIES_CHECKS"):
            self.assertFalse(hasattr(patchwork, name), name)

    def test_run_order_keeps_what_a_check_reads(self):
        order = [c.name for c in runner.run_order(runner.CHECKS)]
        self.assertEqual(sorted(order), sorted(runner.CHECKS))
        for check in runner.REGISTRY:
            for first in check.after:
                self.assertLess(order.index(first), order.index(check.name), check.name)
        # cocci compiles at the parent in the build directory: after xmit_disasm
        self.assertLess(order.index("xmit_disasm"), order.index("cocci"))

    def test_mode_gates(self):
        self.assertEqual(runner.mode_gates("main"), {})
        gates = runner.mode_gates("test")
        self.assertEqual(gates["build_tools"], "build_tools: main mode only")
        self.assertEqual(set(gates), {"build_32bit", "build_clang", "build_allmodconfig_warn",
                                      "build_tools", "cocci"})
        self.assertNotIn("build", runner.names("local", build=False))
        self.assertIn("checkpatch", runner.names("local", build=False))

    def test_without_builds_the_build_checks_skip_and_the_rest_run(self):
        called = []

        def fake(name):
            return lambda tree, commit, ctx: called.append(name) or patchwork.Result("pass", name)

        checks = [runner.Check(c.name, fake(c.name), c.modes, c.needs_build, c.after,
                               c.broken_skip) if c.run is not runner.sparse else c
                  for c in runner.REGISTRY]
        saved = runner.REGISTRY, runner.BY_NAME
        runner.REGISTRY, runner.BY_NAME = tuple(checks), {c.name: c for c in checks}
        try:
            r = runner.check_patch(".", patchwork.PatchReport(1, "net", "abc", "s"),
                                   runner.Context())
        finally:
            runner.REGISTRY, runner.BY_NAME = saved
        self.assertEqual(list(r.results), list(runner.CHECKS))
        for name in ("build", "sparse", "build_32bit", "cocci", "xmit_disasm"):
            self.assertEqual((r.results[name].status, r.results[name].message),
                             ("skip", "no build"), name)
            self.assertNotIn(name, called)
        self.assertIn("checkpatch", called)

    def test_a_broken_build_skips_what_reads_its_objects(self):
        ctx = runner.Context(builds={
            "build": lambda c: (patchwork.Result("fail", "build broken: x.c:1: error"),
                                patchwork.Result("skip", "no build")),
            "xmit_disasm": lambda c: self.fail("xmit_disasm ran without objects")})
        r = runner.check_patch(".", patchwork.PatchReport(1, "net", "abc", "s"), ctx,
                               ("build", "sparse", "xmit_disasm", "cocci"))
        self.assertEqual(r.results["xmit_disasm"].message, "no build")
        self.assertEqual(r.results["cocci"].message, "build failed")
        self.assertEqual(r.results["sparse"].status, "skip")

    def test_a_crash_fails_the_check_when_the_run_says_so(self):
        ctx = runner.Context(crash_fails=True)
        r = runner.check_patch("/nonexistent", patchwork.PatchReport(1, "net", "abc", "s"),
                               ctx, ("verify_signedoff",))
        self.assertEqual(r.results["verify_signedoff"].status, "fail")
        self.assertIn("crashed", r.results["verify_signedoff"].message)
        with self.assertRaises(Exception):
            runner.check_patch("/nonexistent", patchwork.PatchReport(1, "net", "abc", "s"),
                               runner.Context(), ("verify_signedoff",))


class ImportDirectionTest(unittest.TestCase):
    def test_checks_import_nothing_of_tools_series_above_them(self):
        for path in sorted((ROOT / "tools/series/checks").glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                        else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                for mod in mods:
                    if mod.startswith("tools.series"):
                        names = ([] if isinstance(node, ast.Import)
                                 else [a.name for a in node.names])
                        self.assertTrue(mod.startswith("tools.series.checks")
                                        or (mod == "tools.series" and names == ["checks"]),
                                        f"{path.name} imports {mod} {names}")


if __name__ == "__main__":
    unittest.main()

"""ci/kconfig_tree.py: the test kernels take the tree's selftest fragments as
the series' tip has them; a line of the project's fragments that copies a
tree fragment, or a "defconfig" value that is not defconfig's, fails by its
name."""

import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from ci import kconfig_tree
from common.paths import ROOT

DEFCONFIG = "CONFIG_NET=y\nCONFIG_INET=y\n# CONFIG_USER_NS is not set\nCONFIG_IPV6=y\n"
TREE = {"net": "CONFIG_DUMMY=y\nCONFIG_NET_SCH_SFQ=m\nCONFIG_USER_NS=y\n",
        "tc-testing": "CONFIG_NET_SCH_FQ_CODEL=m\nCONFIG_DUMMY=y\n"}


class CheckTest(unittest.TestCase):
    def test_own_lines_the_tree_does_not_have(self):
        # A module where the tree builds it in is the project's own choice.
        own = "CONFIG_DUMMY=m\n# a comment\nCONFIG_NET_SCH_MULTIQ=m\n"
        self.assertEqual(kconfig_tree.check(own, "CONFIG_NET=y\n", TREE, DEFCONFIG), [])

    def test_copy_of_a_tree_line(self):
        self.assertEqual(kconfig_tree.check("CONFIG_DUMMY=y\nCONFIG_NET_SCH_SFQ=m\n", "",
                                            TREE, DEFCONFIG),
                         ["net-tests.config: CONFIG_DUMMY=y (copies net, tc-testing)",
                          "net-tests.config: CONFIG_NET_SCH_SFQ=m (copies net)"])

    def test_defaults_not_defconfig(self):
        # Not set in defconfig, or set to another value there.
        self.assertEqual(kconfig_tree.check("", "CONFIG_NET=y\nCONFIG_USER_NS=y\nCONFIG_IPV6=m\n",
                                            TREE, DEFCONFIG),
                         ["defconfig-net.config: CONFIG_USER_NS=y (defconfig: not set)",
                          "defconfig-net.config: CONFIG_IPV6=m (defconfig: y)"])

    def test_report_names_the_options(self):
        msg = kconfig_tree.report(["net-tests.config: CONFIG_A=y (copies net)"],
                                  ["net", "tc-testing"])
        self.assertIn("1 problem(s)", msg)
        self.assertIn("CONFIG_A=y (copies net)", msg)
        self.assertIn("tools/testing/selftests/tc-testing/config",
                      kconfig_tree.report([], ["net", "tc-testing"]))

    def test_project_files(self):
        # What the project keeps of its own: dummy as a module (module_devices).
        # Event tracing for qdisc_bypass comes from the series' net/config:
        # check() refuses a line a tree fragment already sets.
        own = kconfig_tree.options(kconfig_tree.OWN.read_text())
        self.assertEqual(own, {"CONFIG_DUMMY": "m"})
        self.assertTrue(kconfig_tree.options(kconfig_tree.FIRST[1].read_text()))

    def test_own_copies_nothing_the_series_add(self):
        # The checks stage compares with the tree's fragments at the series'
        # tip; the options the committed patches add to them are known here
        # already (net-next/qdisc-bypass's net/config asks for event tracing).
        added = {}
        for patch in sorted(ROOT.glob("patches/*/*/0*.patch")):
            frag = None
            for line in patch.read_text().splitlines():
                if line.startswith("+++ "):
                    m = re.match(r"\+\+\+ b/tools/testing/selftests/(.+)/config$", line)
                    frag = m and m[1]
                elif frag and line.startswith("+CONFIG_"):
                    added.setdefault(frag, []).append(line[1:])
        self.assertIn("net", added)
        tree = {frag: "\n".join(lines) for frag, lines in added.items()}
        self.assertEqual(kconfig_tree.copies(kconfig_tree.OWN.read_text(), tree), [])


class FragmentsTest(unittest.TestCase):
    def test_extracted_at_the_tip_in_merge_order(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree, ws = Path(tmp) / "src", Path(tmp) / "ws"
            for coll in ("net", "drivers/net"):
                path = tree / kconfig_tree.SELFTESTS / coll / "config"
                path.parent.mkdir(parents=True)
                path.write_text(f"CONFIG_{coll.upper().replace('/', '_')}_TIP=y\n")
            run = {"cwd": tree, "check": True, "capture_output": True}
            subprocess.run(["git", "init", "-q"], **run)
            subprocess.run(["git", "add", "."], **run)
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm",
                            "tip"], **run)
            # The working tree moves on (a patch of the series checked out): the tip counts.
            (tree / kconfig_tree.SELFTESTS / "net" / "config").write_text("CONFIG_OLD=y\n")
            with self.assertRaises(kconfig_tree.MissingFragments):
                kconfig_tree.test_fragments(ws)
            got = kconfig_tree.extract(tree, "HEAD", ws, ["net", "drivers/net"])
            self.assertEqual(got, {"net": "CONFIG_NET_TIP=y",
                                   "drivers/net": "CONFIG_DRIVERS_NET_TIP=y"})
            self.assertEqual(kconfig_tree.fragment_path(ws, "drivers/net").read_text(),
                             "CONFIG_DRIVERS_NET_TIP=y\n")
            with self.assertRaises(kconfig_tree.GitError):
                kconfig_tree.extract(tree, "HEAD", ws, ["tc-testing"])
            for coll in ("drivers/net/netdevsim", "tc-testing"):
                kconfig_tree.fragment_path(ws, coll).write_text("CONFIG_X=y\n")
            extra = Path(tmp) / "debug.config"
            frags = kconfig_tree.test_fragments(ws, [extra])
            self.assertEqual([f.name for f in frags],
                             ["vng.config", "defconfig-net.config", "net.config",
                              "drivers-net.config", "drivers-net-netdevsim.config",
                              "tc-testing.config", "net-tests.config", "debug.config"])


class CollectionsTest(unittest.TestCase):
    def test_of_the_vm_programs(self):
        with tempfile.TemporaryDirectory() as tmp:
            progs = Path(tmp) / "programs.txt"
            progs.write_text(
                "a ktap @BIN@/a\n"
                "net.x.py kselftest @KSFT@/run_kselftest.sh -t net:x.py\n"
                "d kselftest @SELFTESTS@/drv.sh @KSFT@ drivers/net:stats.py 4\n"
                "net.y.py kselftest @KSFT@/run_kselftest.sh -t net:y.py\n"
                "tc-testing tdc @SELFTESTS@/tc-testing.sh @TREE@ fq_codel\n")
            self.assertEqual(kconfig_tree.collections(progs), ["net", "drivers/net", "tc-testing"])

    def test_of_the_project(self):
        self.assertEqual(kconfig_tree.collections(),
                         ["net", "drivers/net", "drivers/net/netdevsim", "tc-testing"])


if __name__ == "__main__":
    unittest.main()

"""ci/kconfig_tree.py: an option of the test kernel's fragment that neither
x86_64 defconfig nor the tree's fragment of a collection the VM runs names
fails, by its name."""

import tempfile
import unittest
from pathlib import Path

from ci import kconfig_tree

DEFCONFIG = "CONFIG_NET=y\nCONFIG_INET=y\n# CONFIG_USER_NS is not set\nCONFIG_IPV6=y\n"
TREE = {"net": "CONFIG_DUMMY=y\nCONFIG_NET_SCH_SFQ=m\nCONFIG_USER_NS=y\n",
        "tc-testing": "CONFIG_NET_SCH_FQ_CODEL=m\nCONFIG_DUMMY=y\n"}


class UntrackedTest(unittest.TestCase):
    def test_named_by_the_tree_or_defconfig(self):
        frag = ("CONFIG_NET=y\nCONFIG_NET_SCH_SFQ=m\nCONFIG_NET_SCH_FQ_CODEL=m\n"
                "CONFIG_USER_NS=y\n# a comment\n")
        self.assertEqual(kconfig_tree.untracked(frag, TREE, DEFCONFIG), [])

    def test_module_where_the_tree_builds_it_in(self):
        self.assertEqual(kconfig_tree.untracked("CONFIG_DUMMY=m\n", TREE, DEFCONFIG), [])

    def test_named_by_no_one(self):
        self.assertEqual(kconfig_tree.untracked("CONFIG_NET_SCH_MULTIQ=m\n", TREE, DEFCONFIG),
                         ["CONFIG_NET_SCH_MULTIQ=m (no fragment, not in defconfig)"])

    def test_other_value_than_the_tree(self):
        # Built in where the tree builds a module; off where defconfig has it.
        self.assertEqual(kconfig_tree.untracked("CONFIG_NET_SCH_SFQ=y\nCONFIG_IPV6=n\n",
                                                TREE, DEFCONFIG),
                         ["CONFIG_NET_SCH_SFQ=y (net=m)",
                          "CONFIG_IPV6=n (defconfig=y)"])

    def test_report_names_the_options(self):
        msg = kconfig_tree.report(["CONFIG_A=y (net=m)"], "kernel/configs/net-tests.config",
                                  ["net", "tc-testing"])
        self.assertIn("1 option(s)", msg)
        self.assertIn("CONFIG_A=y (net=m)", msg)
        self.assertIn("tools/testing/selftests/tc-testing/config", msg)


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
        self.assertEqual(kconfig_tree.collections(), ["net", "drivers/net", "tc-testing"])


if __name__ == "__main__":
    unittest.main()

"""An RFC series: series.conf's SERIES_RFC_<TREE>_<TOPIC> sets the subjects'
prefix export writes and b4 prep is given."""

import unittest
from pathlib import Path

from common.paths import ROOT
from tools.series import model


class RfcTest(unittest.TestCase):
    def test_prefix_follows_the_conf(self):
        conf = {"SERIES_RFC_NET_NEXT_DUMMY_MQ": "1"}
        self.assertEqual(model.subject_prefix(conf, "net-next", "dummy-mq"),
                         "RFC PATCH net-next")
        self.assertEqual(model.subject_prefix(conf, "net-next", "qdisc-bypass"),
                         "PATCH net-next")
        self.assertFalse(model.is_rfc({"SERIES_RFC_NET_NEXT_DUMMY_MQ": "0"}, "net-next",
                                      "dummy-mq"))

    def test_committed_subjects_agree_with_the_conf(self):
        """Every patch file of patches/ carries the prefix series.conf gives its
        series: a series made an RFC, or no longer one, is exported again."""
        conf = model.load_conf()
        for tree in model.TREES:
            for d in sorted((ROOT / "patches" / tree).iterdir()):
                want = "[" + model.subject_prefix(conf, tree, d.name) + " "
                for f in sorted(Path(d).glob("*.patch")):
                    subject = next(ln for ln in f.read_text().splitlines()
                                   if ln.startswith("Subject: "))
                    with self.subTest(f.name):
                        self.assertTrue(subject.removeprefix("Subject: ").startswith(want),
                                        f"{subject!r} does not start with {want!r}")


if __name__ == "__main__":
    unittest.main()

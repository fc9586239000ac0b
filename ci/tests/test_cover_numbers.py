"""The cover letters' numbers: every measured number a cover letter
quotes is a claim bound to its record's row by key (ci/tests/doc_claims.py,
checked by test_doc_numbers.py), each number to its own row: a ratio or an
instruction count that matches some other row of the record does not
pass. Cover letters name no file of the project (no "bench.md of project
commit ..."): a reviewer cannot open one."""

import re
import unittest

from ci.tests.doc_claims import CLAIMS, documents
from common.paths import ROOT

PRIVATE = re.compile(r"bench\.md of project commit|Documentation/results/")


def covers(root=ROOT):
    return sorted(root.glob("patches/*/*/0000-cover-letter.patch"))


def problems(text):
    """Why a cover letter names what a reviewer cannot open; [] if it does not."""
    return [f"names a project file: {m.group(0)}" for m in PRIVATE.finditer(text)]


class CoverNumbersTest(unittest.TestCase):
    def test_cover_letters_name_no_project_file(self):
        self.assertTrue(covers())
        for cover in covers():
            with self.subTest(cover=str(cover.relative_to(ROOT))):
                self.assertEqual(problems(cover.read_text()), [])

    def test_every_cover_letter_is_checked(self):
        checked = set(documents(ROOT))
        for cover in covers():
            self.assertIn(str(cover.relative_to(ROOT)), checked)

    def test_the_quoting_covers_have_claims(self):
        bound = {c.doc for c in CLAIMS}
        self.assertIn("patches/net-next/dummy-mq/0000-cover-letter.patch", bound)
        self.assertIn("patches/net-next/qdisc-bypass/0000-cover-letter.patch", bound)

    def test_a_project_file_is_named(self):
        self.assertEqual(len(problems("(bench.md of project commit abc, 7 repetitions)\n")), 1)


if __name__ == "__main__":
    unittest.main()

"""The series commands as a user types them: errors are one line that
names what to fix (not git's), with exit status 1 and nothing written;
--help explains every argument; send-prep writes the mbox the README's
check line reads."""

import contextlib
import io
import mailbox
import re
import unittest
from pathlib import Path

from common.paths import ROOT
from tools.series import series
from tools.series.tests.test_keep_work import run
from tools.series.tests.test_series import Workspace


class Errors(Workspace):

    def one_line(self, argv, want):
        out = self.tmp / "out"
        code, _, err = run(argv + ["--out", str(out)])
        self.assertEqual(code, 1, err)
        self.assertEqual(err.strip().count("\n"), 0, err)
        self.assertIn(want, err)
        self.assertNotIn("fatal:", err)
        self.assertFalse(out.exists())

    def test_missing_tree(self):
        for cmd in ("export", "send-prep"):
            self.one_line([cmd, str(self.tmp / "no-such-tree"), "base"],
                          f"error: {self.tmp / 'no-such-tree'}: no such directory")

    def test_not_a_git_tree(self):
        (self.tmp / "plain").mkdir()
        for cmd in ("export", "send-prep"):
            self.one_line([cmd, str(self.tmp / "plain"), "base"],
                          f"error: {self.tmp / 'plain'}: not a git work tree")

    def test_missing_base(self):
        for cmd in ("export", "send-prep"):
            self.one_line([cmd, str(self.dev), "no-such-base"],
                          f"error: base no-such-base: no such commit in {self.dev}; "
                          "nothing was written")


class Help(unittest.TestCase):

    def help(self, *argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit):
            series.main([*argv, "--help"])
        return re.sub(r"\s+", " ", out.getvalue())

    def test_export_and_send_prep_explain_their_arguments(self):
        for cmd in ("export", "send-prep"):
            text = self.help(cmd)
            self.assertRegex(text, r"tree +a kernel work tree holding the series/<tree>/<topic> "
                             "branches")
            self.assertRegex(text, r"base +the commit or tag the series apply to")
            self.assertRegex(text, r"--out OUT +")
        self.assertIn("(default: patches/ of this repository)", self.help("export"))
        self.assertIn("one directory per series, <tree>/<topic>/, and its mbox",
                      self.help("send-prep"))


class SendPrepMbox(Workspace):
    """README's check line reads outgoing/net/<topic>/v1.mbox: send-prep
    writes it (it wrote only the patch files, so the line failed)."""

    def test_the_mbox_is_the_series_files_in_order(self):
        out = self.tmp / "outgoing"
        code, printed, err = run(["send-prep", str(self.dev), "base", "--out", str(out)])
        self.assertEqual(code, 0, err)
        box = out / "net/drv-fix/v1.mbox"
        self.assertIn(f"wrote {box}", printed)
        files = sorted((out / "net/drv-fix").glob("*.patch"))
        self.assertEqual(box.read_text(), "".join(f.read_text() for f in files))
        mails = mailbox.mbox(str(box))
        subjects = [m["Subject"] for m in mails]
        mails.close()
        self.assertEqual(subjects, ["[PATCH net] drv: fix line one"])
        # -vN: the version of series.conf (drv-features is blocked; zz-more is v1).
        self.assertTrue((out / "net-next/zz-more/v1.mbox").is_file())

    def test_readme_check_line_reads_what_send_prep_writes(self):
        readme = (ROOT / "README.md").read_text()
        prep = re.search(r"series send-prep ~/work/linux \$base --out (\S+)/", readme)[1]
        check = re.search(r"tools\.series\.check ~/work/linux --base \$base (\S+)", readme)[1]
        self.assertTrue(check.startswith(prep + "/"), (prep, check))
        rel = check[len(prep) + 1:]
        self.assertRegex(rel, r"^net/[\w-]+/v\d+\.mbox$")
        topic = rel.split("/")[1]
        self.assertTrue((ROOT / "patches/net" / topic).is_dir(), rel)
        want = series.mbox_path(Path(prep, "net", topic), "net", topic)
        self.assertEqual(check, str(want))


if __name__ == "__main__":
    unittest.main()

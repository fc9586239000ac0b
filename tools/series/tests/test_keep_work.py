"""The four ways the series commands lost a user's work, each made for real
in a scratch repository: the command refuses, names what would be lost and
leaves every file and branch as it was."""

import contextlib
import io
import unittest

from tools.series import series
from tools.series.tests.test_series import Workspace, git, make_base
from tools.series.tests.test_series_safety import state


def run(argv):
    """series.main(argv): (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = series.main(argv)
    return code, out.getvalue(), err.getvalue()


class ApplyKeepsEditedMessages(Workspace):
    """apply judged "in patches/" by patch-id, which ignores the message and
    the author: an amended message was reset without --force."""

    def applied_tree(self, name):
        tree = make_base(self.tmp / name)
        series.apply(tree, "base", conf=self.conf, patches=self.patches)
        git(tree, "checkout", "-q", "series/net/drv-fix")
        return tree

    def refused(self, tree, what):
        before = state(tree)
        code, _, err = run(["apply", str(tree), "base", "--patches", str(self.patches)])
        self.assertEqual(code, 1, err)
        self.assertRegex(err, r"series/net/drv-fix: 1 commit\(s\) in neither patches/ nor the "
                         rf"last apply: \w+ {what}")
        self.assertIn("nothing was changed", err)
        self.assertEqual(state(tree), before)

    def test_amended_message_is_refused(self):
        tree = self.applied_tree("reworded")
        git(tree, "commit", "-q", "--amend", "-m", "drv: fix line one, my wording",
            "-m", "A reason only I wrote.")
        self.refused(tree, "drv: fix line one, my wording")

    def test_amended_body_is_refused(self):
        tree = self.applied_tree("body")
        msg = git(tree, "log", "-1", "--format=%B")
        git(tree, "commit", "-q", "--amend", "-m", msg.replace("Why:", "Because:"))
        self.refused(tree, "drv: fix line one")

    def test_amended_author_is_refused(self):
        tree = self.applied_tree("author")
        git(tree, "commit", "-q", "--amend", "--no-edit", "--author", "Ann Dev <ann@example.org>")
        self.refused(tree, "drv: fix line one")

    def test_exported_message_is_not_refused(self):
        # The loop: amend, export, apply again: the new message is in patches/.
        tree = self.applied_tree("exported")
        git(tree, "commit", "-q", "--amend", "-m", "drv: fix line one, my wording",
            "-m", "Why: mine.\n\nSigned-off-by: Role Identity <role@example.invalid>")
        git(tree, "rebase", "-q", "--onto", "series/net/drv-fix", "HEAD@{1}",
            "series/net-next/drv-features")
        series.export(tree, "base", self.patches, conf=self.conf)
        code, _, err = run(["apply", str(tree), "base", "--patches", str(self.patches)])
        self.assertEqual(code, 0, err)
        self.assertEqual(git(tree, "log", "-1", "--format=%s", "series/net/drv-fix").strip(),
                         "drv: fix line one, my wording")


if __name__ == "__main__":
    unittest.main()

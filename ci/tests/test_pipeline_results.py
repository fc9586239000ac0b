"""The results directory (--results, RESULTS_DIR): a run clears only what
an earlier run wrote there, listed in its manifest; anything else there
(a user's file, a run killed before it listed its files) is refused by
name, before anything is removed."""

import contextlib
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci import pipeline, pipeline_common


def fake_run(self, only=None):
    """A run whose stages wrote a summary and a log."""
    (self.results / "summary.md").write_text("# Pipeline test: PASS\n")
    (self.results / "logs" / "base.log").write_text("base\n")
    return 0


class ResultsDir(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.results = self.tmp / "results"
        cache = mock.patch.object(pipeline, "CACHE", self.tmp / "cache")
        cache.start()
        self.addCleanup(cache.stop)

    def main(self, run=fake_run):
        err = io.StringIO()
        with mock.patch.object(pipeline.Pipeline, "run", run), \
                contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = pipeline.main(["test", "--results", str(self.results)])
        return code, err.getvalue()

    def tree(self):
        return sorted(str(p.relative_to(self.results)) for p in self.results.rglob("*"))

    def test_a_users_files_are_refused_and_kept(self):
        self.results.mkdir()
        (self.results / "notes.txt").write_text("my notes\n")
        (self.results / "mine").mkdir()
        (self.results / "mine/data.csv").write_text("1,2\n")
        code, err = self.main()
        self.assertEqual(code, 2)
        self.assertIn(f"{self.results} holds files no earlier run wrote", err)
        self.assertIn("mine/data.csv, notes.txt", err)
        self.assertEqual(self.tree(), ["mine", "mine/data.csv", "notes.txt"])

    def test_an_earlier_runs_files_go_and_a_file_added_since_is_refused(self):
        self.assertEqual(self.main()[0], 0)
        self.assertTrue((self.results / "logs/base.log").is_file())
        first = self.tree()
        self.assertEqual(self.main()[0], 0)  # only the run's own files: cleared, written again
        self.assertEqual(self.tree(), first)
        (self.results / "logs/my-grep.txt").write_text("mine\n")
        (self.results / "summary.md").write_text("edited by me\n")
        code, err = self.main()
        self.assertEqual(code, 2)
        self.assertIn("logs/my-grep.txt, summary.md (changed since the run)", err)
        self.assertEqual((self.results / "summary.md").read_text(), "edited by me\n")
        self.assertTrue((self.results / "logs/base.log").is_file())

    def test_a_run_that_raised_lists_its_files(self):
        def crash(self, only=None):
            (self.results / "partial.json").write_text("{}")
            raise KeyboardInterrupt
        with self.assertRaises(KeyboardInterrupt):
            self.main(crash)
        listed = json.loads((self.results / pipeline_common.MANIFEST).read_text())
        self.assertIn("partial.json", listed["files"])
        self.assertEqual(self.main()[0], 0)
        self.assertFalse((self.results / "partial.json").exists())

    def test_a_killed_run_is_refused(self):
        self.results.mkdir()
        (self.results / pipeline_common.MANIFEST).write_text('{"files": null}\n')
        (self.results / "summary.md").write_text("half\n")
        code, err = self.main()
        self.assertEqual(code, 2)
        self.assertIn("a run that ended before listing its files", err)
        self.assertTrue((self.results / "summary.md").is_file())


if __name__ == "__main__":
    unittest.main()

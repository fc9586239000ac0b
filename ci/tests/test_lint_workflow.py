"""ci/lint-workflow.sh rejects a crafted bad workflow for each of its rules
and passes the project's own."""

import subprocess
import tempfile
import unittest
from pathlib import Path

from common.paths import ROOT

LINT = ROOT / "ci/lint-workflow.sh"

GOOD = """name: t
on: push
jobs:
  setup:
    runs-on: ubuntu-latest
    steps:
      - run: python3 -m ci.pipeline test --only setup
  apply:
    needs: setup
    runs-on: ubuntu-latest
    steps:
      - run: |
          python3 -m ci.pipeline test --only setup base apply
          python3 -m ci.stable_vm 6.12
"""


def lint(text):
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "w.yml"
        f.write_text(text)
        return subprocess.run(["bash", str(LINT), str(f)], text=True, capture_output=True,
                              timeout=300)


class LintWorkflowTest(unittest.TestCase):
    def test_project_workflow_passes(self):
        res = subprocess.run(["bash", str(LINT)], text=True, capture_output=True, timeout=300)
        self.assertEqual(res.returncode, 0, res.stderr)

    def test_good_passes(self):
        # A command on the line after an --only list is not taken for stages.
        res = lint(GOOD)
        self.assertEqual(res.returncode, 0, res.stderr)

    def test_each_rule_rejects(self):
        bad = {
            "unknown job in needs": GOOD.replace("needs: setup", "needs: nosuch"),
            "stage lacking what it needs": GOOD.replace("--only setup base apply",
                                                        "--only setup apply"),
            "unknown stage": GOOD.replace("--only setup\n", "--only setup nosuch\n"),
            "shellcheck": GOOD.replace("- run: python3 -m ci.pipeline test --only setup\n",
                                       "- run: cd $HOME/x; python3 -m ci.pipeline test "
                                       "--only setup\n"),
            "schema": GOOD.replace("runs-on: ubuntu-latest\n    steps:", "steps:", 1),
            "pipeline run by its path": GOOD.replace("python3 -m ci.pipeline test --only setup\n",
                                                     "python3 ci/pipeline.py test --only setup\n"),
        }
        for why, text in bad.items():
            with self.subTest(why):
                self.assertNotEqual(lint(text).returncode, 0, why)


if __name__ == "__main__":
    unittest.main()

"""mypy over the Python (mypy.ini: ci, common, kunit, tools), from Debian's
python3-mypy (ci/setup-host.sh): any error fails."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from common.paths import ROOT


def mypy(*args):
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=600)


class MypyTest(unittest.TestCase):
    def test_package_is_clean(self):
        res = mypy()
        self.assertNotIn("No module named mypy", res.stderr,
                         "mypy is missing: ci/setup-host.sh installs python3-mypy")
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("Success: no issues found", res.stdout)

    def test_a_type_error_fails(self):
        # The same configuration on a crafted file: an error is found.
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "bad.py"
            bad.write_text("def f(n: int) -> str:\n    return n\n")
            res = mypy("--config-file", str(ROOT / "mypy.ini"), str(bad))
        self.assertNotEqual(res.returncode, 0, res.stdout)
        self.assertIn("Incompatible return value type", res.stdout)


if __name__ == "__main__":
    unittest.main()

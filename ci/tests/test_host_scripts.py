"""Shell entry points fail loudly: checksum mismatch, unreachable registry,
missing packages without root."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from common.paths import ROOT


def run(cmd, env, user=None):
    if user:
        cmd = ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups", *cmd]
    return subprocess.run(cmd, env={**os.environ, **env}, text=True, capture_output=True,
                          timeout=120)


class FetchTest(unittest.TestCase):
    def setUp(self):
        self.cache = Path(tempfile.mkdtemp())
        os.chmod(self.cache, 0o755)

    def tearDown(self):
        shutil.rmtree(self.cache)

    def test_checksum_mismatch(self):
        lines = (ROOT / "kernel/base.env").read_text().splitlines()
        env = dict(line.split("=", 1) for line in lines
                   if line and not line.startswith("#") and "=" in line)
        name = f"{env['BASE_PACKAGE']}_{env['BASE_VERSION'].replace('~', '_')}.tar.xz"
        (self.cache / "tarballs").mkdir()
        (self.cache / "tarballs" / name).write_text("not the kernel\n")
        res = run(["bash", str(ROOT / "kernel/fetch-base.sh")], {"PROJECT_CACHE": str(self.cache)})
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("checksum mismatch", res.stderr)
        self.assertNotIn("BASE_TARBALL=", res.stdout)

    def test_registry_unreachable(self):
        res = run(["bash", str(ROOT / "kernel/fetch-base.sh")],
                  {"PROJECT_CACHE": str(self.cache),
                   "APT_PRIVATE_URI": "http://127.0.0.1:9/debian"})
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("registry unreachable", res.stderr)
        self.assertNotIn("BASE_TARBALL=", res.stdout)


class SetupTest(unittest.TestCase):
    @unittest.skipUnless(os.geteuid() == 0 and shutil.which("setpriv"), "needs root to drop")
    def test_missing_package_without_root(self):
        res = run(["bash", str(ROOT / "ci/setup-host.sh")],
                  {"SETUP_EXTRA_PACKAGES": "mqbypass-no-such-package",
                   "PROJECT_CACHE": "/tmp/mqbypass-setup-test", "HOME": "/tmp"}, user="nobody")
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("not root", res.stderr)
        self.assertIn("mqbypass-no-such-package", res.stderr)

    @unittest.skipUnless(os.geteuid() == 0, "installs as root")
    def test_unknown_package_as_root_names_it(self):
        res = run(["bash", str(ROOT / "ci/setup-host.sh")],
                  {"SETUP_EXTRA_PACKAGES": "mqbypass-no-such-package"})
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("mqbypass-no-such-package", res.stderr)


if __name__ == "__main__":
    unittest.main()

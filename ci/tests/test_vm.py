"""VM runner with a stand-in for vng: timeout, splats, exit codes."""

import os
import stat
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import vm


def fake_vng(tmp, body):
    path = Path(tmp) / "vng"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


class VmTest(unittest.TestCase):
    def run_with(self, body, timeout=20):
        with tempfile.TemporaryDirectory() as tmp:
            with mock.patch.object(vm, "VNG", fake_vng(tmp, body)), \
                    mock.patch.dict(os.environ, {"VNG": "fake"}):
                return vm.run_vm(tmp, "true", Path(tmp) / "rw", timeout=timeout,
                                 log_path=Path(tmp) / "console.log")

    def test_hang_is_killed_at_timeout(self):
        res = self.run_with("echo booting; sleep 60", timeout=2)
        self.assertTrue(res.timed_out)
        self.assertFalse(res.ok)
        self.assertLess(res.seconds, 15)
        self.assertIn("timeout", res.reason())

    def test_splat_fails_a_passing_command(self):
        res = self.run_with('echo "[ 1.0] WARNING: CPU: 1 PID: 7 at net/core/dev.c:42 f+0x1"; exit 0')
        self.assertEqual(res.exit_code, 0)
        self.assertFalse(res.ok)
        self.assertIn("splat", res.reason())

    def test_lockdep_and_kasan_are_splats(self):
        for line in ("WARNING: possible circular locking dependency detected",
                     "BUG: KASAN: slab-use-after-free in foo", "Kernel panic - not syncing: x",
                     "unreferenced object 0xffff888 (size 64):"):
            self.assertTrue(vm.find_splats(line), line)
        self.assertFalse(vm.find_splats("ok 1 default_tx_queues"))

    def test_command_failure(self):
        res = self.run_with("echo hi; exit 3")
        self.assertEqual(res.exit_code, 3)
        self.assertFalse(res.ok)

    def test_clean_run(self):
        res = self.run_with("echo all good")
        self.assertTrue(res.ok, res.reason())


if __name__ == "__main__":
    unittest.main()

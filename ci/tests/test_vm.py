"""VM runner with a stand-in for vng: timeout, splats, exit codes."""

import os
import stat
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from common import vm
from common import splats


def fake_vng(tmp, body):
    path = Path(tmp) / "vng"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


class VmTest(unittest.TestCase):
    def run_with(self, body, timeout=20, command="true"):
        with tempfile.TemporaryDirectory() as tmp:
            with mock.patch.object(vm, "VNG", fake_vng(tmp, body)), \
                    mock.patch.dict(os.environ, {"VNG": "fake"}):
                return vm.run_vm(tmp, command, Path(tmp) / "rw", timeout=timeout,
                                 log_path=Path(tmp) / "console.log")

    def test_hang_is_killed_at_timeout(self):
        res = self.run_with("echo booting; sleep 60", timeout=2)
        self.assertTrue(res.timed_out)
        self.assertFalse(res.ok)
        self.assertLess(res.seconds, 15)
        self.assertIn("timeout", res.reason())

    def test_splat_fails_a_passing_command(self):
        res = self.run_with('echo "[ 1.0] WARNING: CPU: 1 PID: 7 at net/core/dev.c:42 f+0x1"; '
                            'eval "$(eval echo \\${$#})"; exit 0')
        self.assertEqual(res.exit_code, 0)
        self.assertFalse(res.ok)
        self.assertIn("splat", res.reason())

    def test_lockdep_and_kasan_are_splats(self):
        for line in ("WARNING: possible circular locking dependency detected",
                     "BUG: KASAN: slab-use-after-free in foo", "Kernel panic - not syncing: x",
                     "unreferenced object 0xffff888 (size 64):"):
            self.assertTrue(splats.find_splats(line), line)
        self.assertFalse(splats.find_splats("ok 1 default_tx_queues"))

    def test_command_failure(self):
        # The stand-in runs the wrapped command like the guest would.
        res = self.run_with('eval "$(eval echo \\${$#})"; exit 0',
                            command="false")
        self.assertEqual(res.exit_code, 1)
        self.assertFalse(res.ok)

    def test_guest_status_wins_over_vng_status(self):
        res = self.run_with('eval "$(eval echo \\${$#})"; exit 255', command="true")
        self.assertEqual(res.exit_code, 0)
        self.assertTrue(res.ok, res.reason())

    def test_guest_that_never_finishes_the_command(self):
        res = self.run_with("echo booted; exit 0")
        self.assertFalse(res.ok)


if __name__ == "__main__":
    unittest.main()


class BootArgsTest(unittest.TestCase):
    def test_guest_boots_with_four_level_paging(self):
        # The debug kernel's boot-time KASAN report under 5-level paging
        # (vm.BOOT_ARGS): every VM gets no5lvl on its command line.
        with tempfile.TemporaryDirectory() as tmp:
            args = Path(tmp) / "args"
            body = f'printf "%s\\n" "$@" > {args}; eval "$(eval echo \\${{$#}})"; exit 0'
            with mock.patch.object(vm, "VNG", fake_vng(tmp, body)), \
                    mock.patch.dict(os.environ, {"VNG": "fake"}):
                res = vm.run_vm(tmp, "true", Path(tmp) / "rw", timeout=20)
            self.assertTrue(res.ok, res.reason())
            got = args.read_text().splitlines()
            self.assertEqual(got[got.index("--append") + 1], "no5lvl")

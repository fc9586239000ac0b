"""tools/bench/icount.py: the guest protocol, the summary and the driver,
with run_vm standing in for the VM."""

import tempfile
import unittest
from pathlib import Path
from unittest import mock

from ci.vm import VmResult
from tools.bench import icount


def fake_vm(usec):
    """A run_vm that writes, for each scenario of the guest command, usec[kernel
    build][scenario] as every run's result."""
    calls = []

    def run_vm(build, command, rwdir, **kw):
        calls.append((build, command, kw))
        words = command.split()
        reps = int(words[4])
        scenarios = words[5:words.index("--")] if "--" in words else words[5:]
        for s in scenarios:
            for i in range(1, reps + 1):
                (Path(rwdir) / f"{s}.{i}").write_text(f"{usec[build][s]}\n")
        return VmResult(kernel=build, command=command, exit_code=0, timed_out=False,
                        seconds=1.0)
    return calls, run_vm


class IcountTest(unittest.TestCase):
    def test_guest_command(self):
        self.assertEqual(icount.guest_command(Path("/o"), 20000, 3, ["q2_mq"], None),
                         f"bash {icount.GUEST} /o 20000 3 q2_mq")
        self.assertTrue(icount.guest_command(Path("/o"), 1, 1, ["a", "b"], "/m/dummy.ko")
                        .endswith(" 1 1 a b -- /m/dummy.ko"))

    def test_run_alternates_kernels_and_counts_instructions(self):
        usec = {"B": {"q2_start_xmit": 36580, "q1_noqueue": 44484},
                "P": {"q2_start_xmit": 36780, "q1_noqueue": 44484}}
        calls, run_vm = fake_vm(usec)
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(icount, "run_vm", run_vm):
            data = icount.run({"base": ("B", None), "lock": ("P", "/l/dummy.ko"),
                               "patched": ("P", None)}, Path(tmp), count=20000, reps=2,
                              boots=2, scenarios=["q2_start_xmit", "q1_noqueue"],
                              log=lambda m: None)
            self.assertTrue((Path(tmp) / "icount.md").is_file())
            md = (Path(tmp) / "icount.md").read_text()
        self.assertEqual([c[0] for c in calls], ["B", "P", "P", "P", "P", "B"])
        self.assertTrue(calls[1][1].endswith("-- /l/dummy.ko"))
        # The lock design's module: the dummy scenarios only.
        self.assertEqual(icount.kernel_scenarios("/l/dummy.ko", ["s2_pfifo_fast", "q2_mq"]),
                         ["q2_mq"])
        self.assertEqual(icount.kernel_scenarios(None, ["s2_pfifo_fast", "q2_mq"]),
                         ["s2_pfifo_fast", "q2_mq"])
        self.assertEqual(calls[0][2]["qemu_opts"], icount.QEMU_OPTS)
        self.assertEqual(calls[0][2]["cpus"], 1)
        rows = {(r["scenario"], r["kernel"]): r for r in data["rows"]}
        # usec x 1000 / packets
        self.assertEqual(rows[("q2_start_xmit", "base")]["median"], 1829.0)
        self.assertEqual(rows[("q2_start_xmit", "patched")]["delta"], 10.0)
        self.assertEqual(rows[("q1_noqueue", "patched")]["delta"], 0.0)
        self.assertEqual(rows[("q1_noqueue", "lock")]["n"], 4)
        self.assertIn("| q2_start_xmit | patched | 1839.0 | 1839.0-1839.0 | 0.00% | +10.0 |", md)

    def test_a_failed_boot_is_an_error(self):
        def run_vm(build, command, rwdir, **kw):
            return VmResult(kernel=build, command=command, exit_code=1, timed_out=False,
                            seconds=1.0)
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(icount, "run_vm", run_vm):
            with self.assertRaisesRegex(RuntimeError, "base boot 0: command exited 1"):
                icount.run({"base": ("B", None)}, Path(tmp), log=lambda m: None)

    def test_arguments(self):
        with self.assertRaises(SystemExit):
            icount.main(["--kernel", "patched=/b"])  # no base
        with self.assertRaises(SystemExit):
            icount.main(["--kernel", "base=/b", "--scenarios", "q9"])
        with self.assertRaises(SystemExit):
            icount.main(["--kernel", "base"])


if __name__ == "__main__":
    unittest.main()

"""vCPU pinning of UML on a fake /proc tree, and the order of the boots."""

import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from tools.bench import bench_pinning
from tools.bench import bench_runner


def stat_line(tid, comm, start):
    # Fields 3..52 after the command name; field 22 (starttime) is the 20th of them.
    fields = ["S", "1", str(tid)] + ["0"] * 16 + [str(start)] + ["0"] * 30
    return f"{tid} ({comm}) " + " ".join(fields) + "\n"


def fake_proc(root, pid, threads, children=None):
    """threads: {tid: starttime}; children: {tid: [child pids]}."""
    for tid, start in threads.items():
        task = Path(root) / str(pid) / "task" / str(tid)
        task.mkdir(parents=True, exist_ok=True)
        (task / "stat").write_text(stat_line(tid, "linux", start))
        (task / "children").write_text(" ".join(map(str, (children or {}).get(tid, []))))
    return Path(root)


class ThreadSelectionTest(unittest.TestCase):
    def test_main_thread_then_the_earliest_threads(self):
        with tempfile.TemporaryDirectory() as tmp:
            # 700: main (vCPU 0); 701: vCPU 1; 705: a helper started later.
            proc = fake_proc(tmp, 700, {700: 100, 705: 300, 701: 120})
            self.assertEqual(bench_pinning.vcpu_threads(700, 2, proc), [700, 701])
            self.assertEqual(bench_pinning.vcpu_threads(700, 1, proc), [700])

    def test_not_yet_brought_up(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = fake_proc(tmp, 700, {700: 100})
            self.assertIsNone(bench_pinning.vcpu_threads(700, 2, proc))
            self.assertIsNone(bench_pinning.vcpu_threads(999, 1, proc))

    def test_start_time_orders_before_thread_id(self):
        with tempfile.TemporaryDirectory() as tmp:
            # Thread ids wrapped: 12 started before 900.
            proc = fake_proc(tmp, 800, {800: 50, 900: 61, 12: 60, 901: 61})
            self.assertEqual(bench_pinning.vcpu_threads(800, 3, proc), [800, 12, 900])

    def test_command_name_with_parentheses_and_spaces(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = fake_proc(tmp, 5, {5: 1})
            stat = Path(tmp) / "5/task/5/stat"
            stat.write_text(stat_line(5, "a) (b c", 4242))
            self.assertEqual(bench_pinning.start_time(5, 5, proc), 4242)
            self.assertIsNone(bench_pinning.start_time(5, 6, proc))

    def test_children_of_every_thread(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = fake_proc(tmp, 700, {700: 1, 701: 2}, {700: [710], 701: [711, 712]})
            self.assertEqual(bench_pinning.children(700, proc), {710, 711, 712})
            self.assertEqual(bench_pinning.children(1, proc), set())

    def test_plan(self):
        self.assertEqual(bench_pinning.pin_plan([10, 11], [3, 1]), [(10, 1), (11, 3)])
        self.assertEqual(bench_pinning.pin_plan([10, 11, 12], [0, 1]),
                         [(10, 0), (11, 1), (12, 0)])


class PinnerTest(unittest.TestCase):
    def run_pinner(self, proc, pid, cpus, settle=5.0, fail=False, until=None):
        calls = []

        def setaffinity(tid, cpus_):
            if fail:
                raise PermissionError(1, "Operation not permitted")
            calls.append((tid, set(cpus_)))

        p = bench_pinning.Pinner(pid, cpus, host_cpus=[0, 1], proc=proc,
                                 setaffinity=setaffinity, interval=0.01, settle=settle)
        p.start()
        # Without a condition: until the pinner gives up by itself.
        done = until or (lambda _: not p.is_alive())
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not done(calls):
            time.sleep(0.01)
        return p.stop(), calls

    def test_pins_vcpus_and_widens_stubs(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = fake_proc(tmp, 700, {700: 1, 701: 2}, {701: [710]})
            record, calls = self.run_pinner(proc, 700, 2, until=lambda c: len(c) >= 3)
            self.assertEqual(calls, [(700, {0}), (701, {1}), (710, {0, 1})])
            self.assertTrue(record["pinned"])
            self.assertEqual(record["vcpus"], [{"tid": 700, "host_cpu": 0},
                                               {"tid": 701, "host_cpu": 1}])
            self.assertEqual(record["widened"], 1)

    def test_gives_up_without_all_vcpu_threads(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = fake_proc(tmp, 700, {700: 1})
            record, calls = self.run_pinner(proc, 700, 2, settle=0.05)
            self.assertFalse(record["pinned"])
            self.assertIn("fewer than 2 vCPU threads", record["note"])
            self.assertEqual(calls, [])

    def test_affinity_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = fake_proc(tmp, 700, {700: 1, 701: 2})
            record, _ = self.run_pinner(proc, 700, 2, fail=True, settle=0.2)
            self.assertFalse(record["pinned"])
            self.assertIn("Operation not permitted", record["note"])

    def test_real_process_with_a_stub(self):
        """A stand-in for UML: a process with a second thread which, once
        pinned, starts a child (the stub). The pinner pins both threads and
        widens the child back to all CPUs."""
        host = sorted(os.sched_getaffinity(0))
        with tempfile.TemporaryDirectory() as tmp:
            go, child = Path(tmp) / "go", Path(tmp) / "child"
            fake = subprocess.Popen([sys.executable, "-c", FAKE_UML, str(go), str(child)])
            try:
                p = bench_pinning.Pinner(fake.pid, 2, interval=0.01, settle=10)
                p.start()
                deadline = time.monotonic() + 10
                while not p.record["pinned"] and time.monotonic() < deadline:
                    time.sleep(0.01)
                go.write_text("go")
                while not child.exists() and time.monotonic() < deadline:
                    time.sleep(0.01)
                stub = int(child.read_text() or 0) if child.exists() else 0
                while p.record["widened"] < 1 and time.monotonic() < deadline:
                    time.sleep(0.01)
                record = p.stop()
                self.assertTrue(record["pinned"], record)
                for v in record["vcpus"]:
                    self.assertEqual(os.sched_getaffinity(v["tid"]), {v["host_cpu"]})
                self.assertEqual([v["host_cpu"] for v in record["vcpus"]],
                                 [host[0], host[1 % len(host)]])
                self.assertGreaterEqual(record["widened"], 1)
                self.assertEqual(os.sched_getaffinity(stub), set(host))
            finally:
                fake.kill()
                fake.wait()


# The stand-in: main thread plus one thread; the thread starts a child
# (sleep) once told to, after the pinner has pinned it.
FAKE_UML = r"""
import os, subprocess, sys, threading, time
go, out = sys.argv[1], sys.argv[2]
def vcpu1():
    while not os.path.exists(go):
        time.sleep(0.01)
    child = subprocess.Popen(["sleep", "30"])
    open(out + ".tmp", "w").write(str(child.pid))
    os.rename(out + ".tmp", out)
    time.sleep(30)
threading.Thread(target=vcpu1, daemon=True).start()
time.sleep(30)
"""


class BootOrderTest(unittest.TestCase):
    def test_alternates_kernels_and_scenario_order(self):
        self.assertEqual(bench_runner.boot_order(0), (("base", "lock", "patched"), 1))
        self.assertEqual(bench_runner.boot_order(1), (("patched", "lock", "base"), -1))
        self.assertEqual(bench_runner.boot_order(2), (("base", "lock", "patched"), 1))


if __name__ == "__main__":
    unittest.main()

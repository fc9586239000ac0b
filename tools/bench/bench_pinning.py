"""Pinning the virtual CPUs of a UML kernel to host CPUs (bench.py --pin-vcpus).

UML SMP (arch/um/os-Linux/smp.c) runs each virtual CPU as a host thread of
the `linux` process: vCPU 0 on the process's main thread (thread id == pid),
vCPUs 1..n-1 on threads the boot CPU creates in CPU order at SMP bring-up,
before the initcalls that may start helper threads (ubd's I/O thread, the
SIGIO workaround). So the vCPU threads are the main thread and the n-1
threads that started first after it.

Guest user code does not run on those threads: each guest address space has
a stub process (arch/um/os-Linux/skas/process.c, start_userspace()), a child
of the vCPU thread that created it, and a child inherits its parent's
affinity. Left alone, a guest task's user code would stay on the host CPU of
the vCPU that forked it wherever the guest then schedules the task. The
pinner therefore widens every child of the process it sees back to all the
host CPUs of the run; a stub born between two polls runs pinned for up to
one polling interval.

Pinning needs no privilege for one's own processes (sched_setaffinity). It
is off by default: whether it lowers the spread of the ratios on the CI host
has to be measured (A/A runs with and without) before it is turned on.
"""

import os
import threading
import time
from pathlib import Path

PROC = Path("/proc")


def start_time(pid, tid, proc=PROC):
    """Start time (clock ticks after boot) of a thread from its stat file,
    None if it is gone. The command name may hold spaces and parentheses, so
    the fields are counted after its last ')'."""
    try:
        stat = (proc / str(pid) / "task" / str(tid) / "stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 1:].split()
    # Field 3 (state) is fields[0]; field 22 (starttime) is fields[19].
    return int(fields[19]) if len(fields) > 19 else None


def vcpu_threads(pid, cpus, proc=PROC):
    """Host thread ids of vCPU 0..cpus-1 of the UML process pid, or None
    while the process has fewer threads than that (SMP not brought up yet)."""
    try:
        tids = [int(t) for t in os.listdir(proc / str(pid) / "task") if t.isdigit()]
    except OSError:
        return None
    if pid not in tids:
        return None
    others = []
    for tid in tids:
        if tid != pid:
            start = start_time(pid, tid, proc)
            if start is not None:
                others.append((start, tid))
    if len(others) < cpus - 1:
        return None
    # Ties in start time (ticks are coarse) go by thread id: ids grow with creation.
    return [pid] + [tid for _, tid in sorted(others)[:cpus - 1]]


def children(pid, proc=PROC):
    """Process ids of the children of every thread of pid (the stubs)."""
    found = set()
    try:
        tasks = os.listdir(proc / str(pid) / "task")
    except OSError:
        return found
    for tid in tasks:
        try:
            found |= {int(c) for c in (proc / str(pid) / "task" / tid / "children")
                      .read_text().split()}
        except (OSError, ValueError):
            pass
    return found


def pin_plan(vcpus, host_cpus):
    """(thread id, host CPU) per vCPU: vCPU i on the i-th host CPU, round robin
    when there are more vCPUs than host CPUs."""
    host_cpus = sorted(host_cpus)
    return [(tid, host_cpus[i % len(host_cpus)]) for i, tid in enumerate(vcpus)]


class Pinner(threading.Thread):
    """Watches a booting UML process: pins its vCPU threads once they all
    exist, then widens each new child to all host CPUs until stop().
    record says what was done, for the report."""

    def __init__(self, pid, cpus, host_cpus=None, proc=PROC, setaffinity=os.sched_setaffinity,
                 interval=0.05, settle=60.0):
        super().__init__(daemon=True)
        self.pid, self.cpus, self.proc = pid, cpus, proc
        self.host_cpus = sorted(host_cpus if host_cpus is not None else os.sched_getaffinity(0))
        self.setaffinity, self.interval, self.settle = setaffinity, interval, settle
        self.stopped = threading.Event()
        self.record = {"pinned": False, "vcpus": [], "widened": 0, "note": ""}

    def stop(self):
        self.stopped.set()
        if self.is_alive():
            self.join()
        return self.record

    def pin(self):
        """Pin the vCPU threads if they all exist now; True when done or given up."""
        vcpus = vcpu_threads(self.pid, self.cpus, self.proc)
        if vcpus is None:
            if time.monotonic() > self.deadline:
                self.record["note"] = (f"fewer than {self.cpus} vCPU threads after "
                                       f"{self.settle:.0f}s")
                return True
            return False
        try:
            for tid, cpu in pin_plan(vcpus, self.host_cpus):
                self.setaffinity(tid, {cpu})
                self.record["vcpus"].append({"tid": tid, "host_cpu": cpu})
        except OSError as err:
            self.record["note"] = f"sched_setaffinity: {err.strerror or err}"
            return True
        self.record["pinned"] = True
        if self.cpus > len(self.host_cpus):
            self.record["note"] = f"{self.cpus} vCPUs share {len(self.host_cpus)} host CPUs"
        return True

    def run(self):
        self.deadline = time.monotonic() + self.settle
        settled, seen = False, set()
        while not self.stopped.wait(self.interval):
            if not settled:
                settled = self.pin()
                if settled and not self.record["pinned"]:
                    return
            for child in sorted(children(self.pid, self.proc) - seen):
                seen.add(child)
                try:
                    self.setaffinity(child, set(self.host_cpus))
                    self.record["widened"] += 1
                except OSError:
                    pass  # exited meanwhile

#!/usr/bin/python3
"""What a dummy device costs, by TX queue count: memory per device, the
time of one dev_get_stats() (a read of a statistics file in sysfs) and of
one "ip -s link show". Runs as root in a benchmark guest, in a network
namespace of its own; prints one JSON object.

Usage: devcost.py [--queues 1,32,4096] [--reads N] [--shows N]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# /proc/meminfo fields that grow with a device: its per-CPU allocations,
# slab objects (struct net_device, queues, kobjects) and kvmalloc'ed arrays.
MEM_FIELDS = ("Percpu", "Slab", "VmallocUsed")


def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, val = line.split(":", 1)
            if key in MEM_FIELDS:
                out[key] = int(val.split()[0])  # kB
    return out


def ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def settle():
    # Freed net devices and RCU callbacks finish before the next reading.
    subprocess.run(["sync"], check=False)
    time.sleep(1)


def memory_per_device(queues, count):
    """kB per device of each MEM_FIELDS entry, creating `count` devices."""
    settle()
    before = meminfo()
    for i in range(count):
        ip("link", "add", f"dc{i}", "numtxqueues", str(queues), "type", "dummy")
    settle()
    after = meminfo()
    for i in range(count):
        ip("link", "del", f"dc{i}")
    return {k: round((after[k] - before[k]) / count, 1) for k in MEM_FIELDS}


def stats_read_ns(dev, reads):
    """Nanoseconds per read of a sysfs statistics file: one dev_get_stats()."""
    fd = os.open(f"/sys/class/net/{dev}/statistics/tx_packets", os.O_RDONLY)
    try:
        t0 = time.perf_counter_ns()
        for _ in range(reads):
            os.pread(fd, 64, 0)
        return (time.perf_counter_ns() - t0) / reads
    finally:
        os.close(fd)


def link_show_us(dev, shows):
    """Microseconds per "ip -s link show dev" request, from one ip -batch."""
    with tempfile.NamedTemporaryFile("w", suffix=".batch") as batch:
        batch.write(f"link show dev {dev}\n" * shows)
        batch.flush()
        t0 = time.perf_counter_ns()
        subprocess.run(["ip", "-s", "-batch", batch.name], check=True, stdout=subprocess.DEVNULL)
        return (time.perf_counter_ns() - t0) / shows / 1000


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queues", default="1,32,4096")
    ap.add_argument("--reads", type=int, default=20000)
    ap.add_argument("--shows", type=int, default=500)
    ap.add_argument("--devices", type=int, default=8, help="devices created per memory reading")
    args = ap.parse_args(argv)
    if "DEVCOST_NETNS" not in os.environ:
        # A network namespace of its own, with a sysfs showing its devices.
        os.environ["DEVCOST_NETNS"] = "1"
        return subprocess.run(["unshare", "--net", "--mount", "sh", "-c",
                               'mount -t sysfs sysfs /sys && exec "$@"', "devcost",
                               sys.executable, *sys.argv]).returncode
    rows = []
    for q in (int(x) for x in args.queues.split(",")):
        ip("link", "add", "dcost", "numtxqueues", str(q), "type", "dummy")
        ip("link", "set", "dcost", "up")
        rows.append({"queues": q,
                     "mem_kb": memory_per_device(q, args.devices if q < 1024 else 2),
                     "stats_read_ns": round(stats_read_ns("dcost", args.reads)),
                     "link_show_us": round(link_show_us("dcost", args.shows), 1)})
        ip("link", "del", "dcost")
    json.dump({"cpus": os.cpu_count(), "rows": rows}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

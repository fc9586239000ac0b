"""Booting the UML kernels: the guest protocol (kernel command line in,
one file per scenario out), the order of the boots, the host environment.

The guest (tools/bench/uml-guest.sh, init of a UML kernel with the host's
root over hostfs) reads BENCH_* from the kernel command line, runs the
scenarios into BENCH_OUT (<scenario>.json or <scenario>.err, guest.log,
tracepoints, devcost.json; the sink scenarios' per-queue records, which the
result carries as "records": bench_sinks.py) and writes `complete` last.
"""

import json
import logging
import os
import platform
import subprocess
import time
from pathlib import Path

from common.paths import ROOT
from common.stamp import build_source, source_stamp
from tools.bench.bench_config import KERNELS, scenarios_for
from tools.bench.bench_pinning import Pinner
from tools.bench.bench_sinks import read_records
from tools.bench.bench_stats import pps

logger = logging.getLogger(__name__)

GUEST = ROOT / "tools/bench/uml-guest.sh"
DEVCOST = Path(__file__).resolve().parent / "devcost.py"


def boot(kernel_bin, scenarios, outdir, mqbench, seconds, cpus, timeout, devcost=False,
         pin=False):
    """Boot one UML kernel, run the scenarios; return ({scenario: result},
    what pinning did or None)."""
    outdir.mkdir(parents=True, exist_ok=True)
    for f in outdir.iterdir():
        f.unlink()
    # The guest runs in / of the host's root: paths it is given must be absolute.
    cmd = [str(kernel_bin), "mem=1G", f"ncpus={cpus}", "seccomp=on", "rootfstype=hostfs",
           "rootflags=/", "ro", f"init={GUEST}", "con0=fd:0,fd:1", "con=null",
           f"BENCH_OUT={os.path.abspath(outdir)}", f"BENCH_SCENARIOS={','.join(scenarios)}",
           f"BENCH_BIN={os.path.abspath(mqbench)}", f"BENCH_SECONDS={seconds}"]
    if devcost:
        cmd.append(f"BENCH_DEVCOST={DEVCOST}")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace")
    pinner = Pinner(proc.pid, cpus) if pin else None
    if pinner:
        pinner.start()
    try:
        out, err = proc.communicate(timeout=timeout)
        console = out + err
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired as err:  # a stub still holds the pipe
            out = err.stdout
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        console = f"timeout after {timeout}s\n{out or ''}"
    finally:
        pinned = pinner.stop() if pinner else None
    (outdir.parent / f"{outdir.name}.console").write_text(console)
    if not (outdir / "complete").is_file():
        raise RuntimeError(f"{kernel_bin}: guest did not complete in {time.monotonic() - t0:.0f}s "
                           f"(see {outdir.parent / (outdir.name + '.console')}, "
                           f"{outdir / 'guest.log'})")
    res = {}
    for s in scenarios:
        f = outdir / f"{s}.json"
        try:
            res[s] = json.loads(f.read_text())
        except (OSError, ValueError):
            err_file = outdir / f"{s}.err"
            res[s] = {"error": err_file.read_text().strip() if err_file.is_file()
                      else "no result"}
        records = read_records(outdir, s)
        if records and isinstance(res[s], dict):
            res[s]["records"] = records
    return res, pinned


def read_devcost(outdir):
    """The guest's devcost.py output ({"cpus", "rows"}), or {"error": why}."""
    try:
        return json.loads((outdir / "devcost.json").read_text())
    except (OSError, ValueError):
        err = outdir / "devcost.err"
        return {"error": err.read_text().strip()[-300:] if err.is_file() else "no result"}


def read_tracepoints(outdir):
    """The guest's tracepoints file ("name yes|no" lines) as {name: bool}."""
    try:
        text = (outdir / "tracepoints").read_text()
    except OSError:
        return {}
    return {name: state == "yes" for name, _, state in
            (ln.strip().partition(" ") for ln in text.splitlines()) if name}


def boot_order(rep):
    """The kernels of repetition rep in boot order, and the scenario order
    (1 as listed, -1 reversed). Odd repetitions reverse both, so no kernel
    always boots first and no comparison within a boot (fresh vs after a
    filter, say) is always measured first: base, patched / patched, base /
    base, patched ... Each repetition's two boots are adjacent, and its
    ratios pair them."""
    step = 1 if rep % 2 == 0 else -1
    return KERNELS[::step], step


def run_repetitions(args, kernels, out):
    """Every repetition: each kernel booted once, running its scenarios.
    Returns (runs: [{kernel: {scenario: result}}], first repetition's
    tracepoints per kernel, devcost outputs per kernel, boot order, pinning)."""
    runs, tracepoints, devcost, order = [], {}, {}, []
    pin = getattr(args, "pin_vcpus", False)
    pinning = {"requested": pin, "boots": 0, "pinned": 0, "notes": [], "per_boot": []}
    for rep in range(args.repetitions):
        ks, step = boot_order(rep)
        order.append(list(ks))
        rep_res = {}
        for k in ks:
            t0 = time.monotonic()
            scenarios = scenarios_for(k, args.scenarios)[::step]
            rep_res[k], pinned = boot(kernels[k], scenarios, out / f"rep{rep}-{k}",
                                      args.mqbench, args.seconds, args.cpus, args.timeout,
                                      devcost=args.devcost, pin=pin)
            if pinned is not None:
                pinning["boots"] += 1
                pinning["pinned"] += pinned["pinned"]
                if pinned["note"] and pinned["note"] not in pinning["notes"]:
                    pinning["notes"].append(pinned["note"])
                pinning["per_boot"].append({"repetition": rep, "kernel": k, **pinned})
            if rep == 0:
                tracepoints[k] = read_tracepoints(out / f"rep{rep}-{k}")
            if args.devcost:
                devcost.setdefault(k, []).append(read_devcost(out / f"rep{rep}-{k}"))
            got = {s: pps(r) for s, r in rep_res[k].items()}
            logger.info(f"    repetition {rep + 1}/{args.repetitions} {k}: "
                        f"{time.monotonic() - t0:.0f}s, "
                        + ", ".join(f"{s}={v / 1e6:.2f}M" if v else f"{s}=ERR"
                                    for s, v in got.items()))
        runs.append(rep_res)
    return runs, tracepoints, devcost, order, pinning


def environment(args, base_desc):
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"platform": "UML (ARCH=um), SMP, seccomp=on", "cpus": args.cpus,
            "host_cpus": os.cpu_count(), "cpu_model": model, "host_kernel": platform.release(),
            "base": base_desc, "repetitions": args.repetitions, "seconds": args.seconds,
            "base_kernel": str(args.base_kernel), "patched_kernel": str(args.patched_kernel),
            "lock_kernel": str(args.lock_kernel),
            # Each kernel by the tree commit built in its build directory.
            "kernel_builds": {k: build_source(Path(getattr(args, f"{k}_kernel")).parent)
                              for k in ("base", "patched", "lock")
                              if getattr(args, f"{k}_kernel", None)},
            "note": "absolute numbers are UML numbers, not hardware numbers",
            "source": source_stamp(stages=getattr(args, "stages", None) or
                                   ["tools.bench.bench"])}

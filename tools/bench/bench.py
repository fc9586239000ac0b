#!/usr/bin/env python3
"""A/B benchmark of the base and patched kernels in UML (SMP, pktgen).

Both kernels are booted alternately, repetition after repetition, each boot
running every scenario (tools/bench/uml-guest.sh drives mqbench in the
guest). Comparisons pair A and B within a repetition and report the median
of the per-repetition ratios with its min-max, plus median pps. UML runs
kernel code at native speed but is not hardware: absolute numbers are not
hardware numbers, ratios are what the report leads with.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUEST = ROOT / "tools/bench/uml-guest.sh"


@dataclass
class Comparison:
    key: str
    title: str
    a: tuple  # (kernel, scenario)
    b: tuple
    target: str  # human-readable target
    lo: float | None = None  # ratio bounds the target asks for
    hi: float | None = None


COMPARISONS = [
    Comparison("S1", "one sender per CPU: base default dummy + pfifo_fast -> patched default "
               "dummy + mq", ("base", "s1_default_pfifo_fast"), ("patched", "s1_default_mq"),
               ">= 2.0x (seed: 1.89x)", lo=2.0),
    Comparison("S1-queues-patched", "patched kernel: 1 TX queue + pfifo_fast -> N queues + mq",
               ("patched", "s1_1q_pfifo_fast"), ("patched", "s1_nq_mq"), "report"),
    Comparison("S1-queues-base", "base kernel: 1 TX queue + pfifo_fast -> N queues (hand-set) + mq",
               ("base", "s1_1q_pfifo_fast"), ("base", "s1_nq_mq"), "report"),
    Comparison("S2-restore", "fq_codel after filter add+delete: base -> patched",
               ("base", "s2_fq_codel_after_filter"), ("patched", "s2_fq_codel_after_filter"),
               ">= 1.5x", lo=1.5),
    Comparison("S2-fresh", "patched fq_codel: never filtered -> after filter add+delete",
               ("patched", "s2_fq_codel_fresh"), ("patched", "s2_fq_codel_after_filter"),
               "0.95-1.05", lo=0.95, hi=1.05),
    Comparison("S2-floor", "patched: noqueue floor -> pfifo_fast bypass",
               ("patched", "s2_noqueue"), ("patched", "s2_pfifo_fast"), ">= 0.90", lo=0.90),
    Comparison("S2-tracepoint", "pfifo_fast bypass, tracepoint disabled: base -> patched",
               ("base", "s2_pfifo_fast"), ("patched", "s2_pfifo_fast"), ">= 0.99", lo=0.99),
    Comparison("S3", "default dummy (noqueue), one sender per CPU: base -> patched",
               ("base", "s3_default"), ("patched", "s3_default"), ">= 0.97", lo=0.97),
]
SCENARIOS = sorted({c.a[1] for c in COMPARISONS} | {c.b[1] for c in COMPARISONS})


def scenarios_for(kernel, wanted, comparisons=COMPARISONS):
    """The wanted scenarios some comparison runs on this kernel (mq on the
    base's one-queue default dummy, say, is not one)."""
    used = {s for c in comparisons for k, s in (c.a, c.b) if k == kernel}
    return [s for s in wanted if s in used]


def boot(kernel_bin, scenarios, outdir, mqbench, seconds, cpus, timeout):
    """Boot one UML kernel, run the scenarios, return {scenario: result}."""
    outdir.mkdir(parents=True, exist_ok=True)
    for f in outdir.iterdir():
        f.unlink()
    cmd = [str(kernel_bin), "mem=1G", f"ncpus={cpus}", "seccomp=on", "rootfstype=hostfs",
           "rootflags=/", "ro", f"init={GUEST}", "con0=fd:0,fd:1", "con=null",
           f"BENCH_OUT={outdir}", f"BENCH_SCENARIOS={','.join(scenarios)}",
           f"BENCH_BIN={mqbench}", f"BENCH_SECONDS={seconds}"]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
        console = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as err:
        console = f"timeout after {timeout}s\n{err.stdout or ''}"
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
            err = (outdir / f"{s}.err")
            res[s] = {"error": err.read_text().strip() if err.is_file() else "no result"}
    return res


def pps(result):
    v = result.get("pps") if isinstance(result, dict) else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def summarize(runs, comparisons=COMPARISONS):
    """runs: list of {kernel: {scenario: result}} per repetition."""
    out = []
    for c in comparisons:
        pairs = []
        for rep in runs:
            a = pps(rep.get(c.a[0], {}).get(c.a[1], {}))
            b = pps(rep.get(c.b[0], {}).get(c.b[1], {}))
            if a and b:
                pairs.append((a, b, b / a))
        row = {"key": c.key, "title": c.title, "a": list(c.a), "b": list(c.b),
               "target": c.target, "repetitions": len(pairs)}
        if pairs:
            ratios = [r for _, _, r in pairs]
            row.update(
                a_pps_median=statistics.median(a for a, _, _ in pairs),
                a_pps_min=min(a for a, _, _ in pairs), a_pps_max=max(a for a, _, _ in pairs),
                b_pps_median=statistics.median(b for _, b, _ in pairs),
                b_pps_min=min(b for _, b, _ in pairs), b_pps_max=max(b for _, b, _ in pairs),
                ratio_median=statistics.median(ratios), ratio_min=min(ratios),
                ratio_max=max(ratios), ratios=ratios)
            m = row["ratio_median"]
            row["meets_target"] = (None if c.lo is None and c.hi is None else
                                   (c.lo is None or m >= c.lo) and (c.hi is None or m <= c.hi))
        out.append(row)
    return out


def markdown(summary, env):
    lines = ["# Benchmark: base vs patched kernel (UML, pktgen)", "",
             f"UML (ARCH=um) SMP with {env['cpus']} virtual CPUs on a {env['host_cpus']}-core "
             f"host ({env['cpu_model']}); base {env['base']}; {env['repetitions']} repetitions "
             f"of {env['seconds']} s per scenario, kernels alternating.",
             "",
             "**These are not hardware numbers.** UML runs kernel code natively but its "
             "timers, scheduling and memory are emulated; absolute pps mean little. The "
             "tables lead with paired ratios: B/A within each repetition, median and min-max.",
             "", "| # | comparison | A median pps (min-max) | B median pps (min-max) | "
             "B/A median (min-max) | target |", "|---|---|---|---|---|---|"]
    for r in summary:
        if not r["repetitions"]:
            lines.append(f"| {r['key']} | {r['title']} | - | - | no data | {r['target']} |")
            continue
        verdict = {True: " (met)", False: " (NOT met)", None: ""}[r.get("meets_target")]
        lines.append(
            f"| {r['key']} | {r['title']} | {r['a_pps_median'] / 1e6:.2f}M "
            f"({r['a_pps_min'] / 1e6:.2f}-{r['a_pps_max'] / 1e6:.2f}) | "
            f"{r['b_pps_median'] / 1e6:.2f}M ({r['b_pps_min'] / 1e6:.2f}-"
            f"{r['b_pps_max'] / 1e6:.2f}) | {r['ratio_median']:.2f}x "
            f"({r['ratio_min']:.2f}-{r['ratio_max']:.2f}) | {r['target']}{verdict} |")
    lines += ["", "Seed 1 (2014, trafgen TX_RING, Core i7): 22.86 s -> 12.08 s, 1.89x.",
              "Seed 2 (2009, netperf, 16-cpu P6): +1-2% bandwidth, -15% service demand.", ""]
    return "\n".join(lines)


def plot(summary, outdir):
    """SVG bar chart of median pps per scenario and kernel (gnuplot)."""
    if not shutil.which("gnuplot"):
        return None
    data = outdir / "plot.dat"
    seen = {}
    for r in summary:
        if r["repetitions"]:
            seen[f"{r['a'][0]}:{r['a'][1]}"] = r["a_pps_median"]
            seen[f"{r['b'][0]}:{r['b'][1]}"] = r["b_pps_median"]
    data.write_text("".join(f"\"{k}\" {v / 1e6:.4f}\n" for k, v in sorted(seen.items())))
    svg = outdir / "bench.svg"
    script = (f"set terminal svg size 1000,500; set output '{svg}';"
              "set style fill solid; set boxwidth 0.7; set ylabel 'Mpps (UML, not hardware)';"
              "set xtics rotate by -35; set title 'median pps per kernel:scenario';"
              f"plot '{data}' using 2:xtic(1) with boxes notitle")
    subprocess.run(["gnuplot", "-e", script], check=True)
    return svg


def environment(args, base_desc):
    model = ""
    try:
        model = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                     if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"platform": "UML (ARCH=um), SMP, seccomp=on", "cpus": args.cpus,
            "host_cpus": os.cpu_count(), "cpu_model": model, "host_kernel": platform.release(),
            "base": base_desc, "repetitions": args.repetitions, "seconds": args.seconds,
            "base_kernel": str(args.base_kernel), "patched_kernel": str(args.patched_kernel),
            "note": "absolute numbers are UML numbers, not hardware numbers"}


def run(args, log=print):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kernels = {"base": Path(args.base_kernel), "patched": Path(args.patched_kernel)}
    for k, p in kernels.items():
        if not os.access(p, os.X_OK):
            raise FileNotFoundError(f"{k} UML kernel {p} missing: build it first")
    runs = []
    for rep in range(args.repetitions):
        order = ["base", "patched"] if rep % 2 == 0 else ["patched", "base"]
        rep_res = {}
        for k in order:
            t0 = time.monotonic()
            rep_res[k] = boot(kernels[k], scenarios_for(k, args.scenarios), out / f"rep{rep}-{k}",
                              args.mqbench, args.seconds, args.cpus, args.timeout)
            got = {s: pps(r) for s, r in rep_res[k].items()}
            log(f"    repetition {rep + 1}/{args.repetitions} {k}: "
                f"{time.monotonic() - t0:.0f}s, "
                + ", ".join(f"{s}={v / 1e6:.2f}M" if v else f"{s}=ERR" for s, v in got.items()))
        runs.append(rep_res)
    summary = summarize(runs)
    env = environment(args, args.base_desc)
    data = {"environment": env, "comparisons": summary, "runs": runs}
    (out / "bench.json").write_text(json.dumps(data, indent=2) + "\n")
    (out / "bench.md").write_text(markdown(summary, env))
    svg = plot(summary, out)
    errors = [f"rep {i} {k} {s}: {r.get('error')}" for i, rep in enumerate(runs)
              for k, res in rep.items() for s, r in res.items() if pps(r) is None]
    return data, svg, errors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-kernel", required=True, help="UML 'linux' binary of the base")
    ap.add_argument("--patched-kernel", required=True)
    ap.add_argument("--mqbench", required=True, help="path to the mqbench binary")
    ap.add_argument("--out", default="results/bench")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--scenarios", type=lambda s: s.split(","), default=SCENARIOS)
    ap.add_argument("--base-desc", default="unknown")
    args = ap.parse_args(argv)
    if args.repetitions < 1 or args.seconds <= 0:
        ap.error("repetitions >= 1 and seconds > 0")
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        ap.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    try:
        data, svg, errors = run(args)
    except (FileNotFoundError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print((Path(args.out) / "bench.md").read_text())
    if errors:
        print("errors:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A/B benchmark of the base and patched kernels in UML (SMP, pktgen, user-space senders).

Both kernels are booted alternately, repetition after repetition, each boot
running every scenario (tools/bench/uml-guest.sh drives mqbench in the
guest). Comparisons pair A and B within a repetition and report the median
of the per-repetition ratios with its min-max, plus median pps and CPU time
per packet. The sweep (queues x senders, both kernels) feeds the plot. UML
runs kernel code at native speed but is not hardware: absolute numbers are
not hardware numbers, ratios are what the report leads with.
"""

import argparse
import json
import os
import platform
import re
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


# S1 sets up what users get on either kernel (the series leaves dummy's default
# of one TX queue alone): numtxqueues N (one per CPU) with an mq root. Each S1
# comparison comes in two forms: as the device comes (no XPS map, the stack
# hashes flows onto queues) and "-xps", with XPS CPU i -> tx-i set by the
# benchmark (pktgen --xps, or xps_cpus for the user-space senders).
COMPARISONS = [
    Comparison("S1", "one pktgen thread per CPU, numtxqueues N + mq, no XPS: base -> patched",
               ("base", "s1_nq_mq"), ("patched", "s1_nq_mq"), ">= 0.97", lo=0.97),
    Comparison("S1-xps", "one pktgen thread per CPU, numtxqueues N + mq, XPS CPU i -> tx-i: "
               "base -> patched", ("base", "s1_nq_mq_xps"), ("patched", "s1_nq_mq_xps"),
               ">= 0.97", lo=0.97),
    Comparison("S1-queues-patched", "patched kernel: 1 TX queue + pfifo_fast -> N queues + mq, "
               "XPS CPU i -> tx-i", ("patched", "s1_1q_pfifo_fast"), ("patched", "s1_nq_mq_xps"),
               "report"),
    Comparison("S1-queues-base", "base kernel: 1 TX queue + pfifo_fast -> N queues + mq, "
               "XPS CPU i -> tx-i", ("base", "s1_1q_pfifo_fast"), ("base", "s1_nq_mq_xps"),
               "report"),
    Comparison("S1-queues-noxps-patched", "patched kernel: 1 TX queue + pfifo_fast -> N queues "
               "+ mq, no XPS (one flow per pktgen thread)", ("patched", "s1_1q_pfifo_fast"),
               ("patched", "s1_nq_mq"), "report"),
    Comparison("S1-flows", "pktgen thread per CPU, 1024 flows each, numtxqueues N + mq, no XPS: "
               "base -> patched", ("base", "s1_flows_nq_mq"), ("patched", "s1_flows_nq_mq"),
               ">= 0.97", lo=0.97),
    Comparison("S1-flows-queues-patched", "patched kernel, 1024 flows per thread, no XPS: "
               "1 TX queue + pfifo_fast -> N queues + mq", ("patched", "s1_flows_1q_pfifo_fast"),
               ("patched", "s1_flows_nq_mq"), "report"),
    Comparison("S1-ring", "TX_RING sender per CPU, numtxqueues N + mq, no XPS: base -> patched",
               ("base", "s1_ring_nq_mq"), ("patched", "s1_ring_nq_mq"), "report"),
    Comparison("S1-ring-xps", "TX_RING sender per CPU, numtxqueues N + mq, XPS CPU i -> tx-i: "
               "base -> patched", ("base", "s1_ring_nq_mq_xps"), ("patched", "s1_ring_nq_mq_xps"),
               "report"),
    Comparison("S1-udp", "UDP socket sender per CPU, numtxqueues N + mq, no XPS: base -> patched",
               ("base", "s1_udp_nq_mq"), ("patched", "s1_udp_nq_mq"), "report"),
    Comparison("S1-udp-xps", "UDP socket sender per CPU, numtxqueues N + mq, XPS CPU i -> tx-i: "
               "base -> patched", ("base", "s1_udp_nq_mq_xps"), ("patched", "s1_udp_nq_mq_xps"),
               "report"),
    Comparison("S2-restore", "fq_codel after filter add+delete: base -> patched",
               ("base", "s2_fq_codel_after_filter"), ("patched", "s2_fq_codel_after_filter"),
               ">= 1.5x", lo=1.5),
    Comparison("S2-fresh", "patched fq_codel: never filtered -> after filter add+delete",
               ("patched", "s2_fq_codel_fresh"), ("patched", "s2_fq_codel_after_filter"),
               "0.95-1.05", lo=0.95, hi=1.05),
    Comparison("S2-floor", "patched: noqueue floor -> pfifo_fast bypass",
               ("patched", "s2_noqueue"), ("patched", "s2_pfifo_fast"), ">= 0.90", lo=0.90),
    Comparison("S3", "default dummy (noqueue), one sender per CPU: base -> patched",
               ("base", "s3_default"), ("patched", "s3_default"), ">= 0.97", lo=0.97),
]
# pps against senders and queues, on both kernels: scenario -> (TX queues, pktgen threads).
SWEEP = {f"sweep_q{q}_t{t}": (q, t) for q in (1, 2) for t in (1, 2)}
SCENARIOS = sorted({c.a[1] for c in COMPARISONS} | {c.b[1] for c in COMPARISONS} | set(SWEEP))
KERNELS = ("base", "patched")
# The guest's tracepoints file names these; the report says which kernel has them
# compiled in (qdisc_enqueue sits on the path a bypass skips).
TRACEPOINTS = ("qdisc/qdisc_enqueue",)


def scenarios_for(kernel, wanted, comparisons=COMPARISONS, sweep=SWEEP):
    """The wanted scenarios some comparison or the sweep runs on this kernel
    (the patched kernel's fq_codel never filtered, say, is not one on the base)."""
    used = {s for c in comparisons for k, s in (c.a, c.b) if k == kernel} | set(sweep)
    return [s for s in wanted if s in used]


DEVCOST = Path(__file__).resolve().parent / "devcost.py"


def boot(kernel_bin, scenarios, outdir, mqbench, seconds, cpus, timeout, devcost=False):
    """Boot one UML kernel, run the scenarios, return {scenario: result}."""
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


def read_devcost(outdir):
    """The guest's devcost.py output ({"cpus", "rows"}), or {"error": why}."""
    try:
        return json.loads((outdir / "devcost.json").read_text())
    except (OSError, ValueError):
        err = outdir / "devcost.err"
        return {"error": err.read_text().strip()[-300:] if err.is_file() else "no result"}


def devcost_summary(samples):
    """Median per kernel and queue count of each devcost figure.

    samples: {kernel: [devcost output per repetition]}.
    """
    out = []
    for kernel, reps in samples.items():
        rows = {}
        for r in reps:
            for row in r.get("rows", []):
                rows.setdefault(row["queues"], []).append(row)
        for q, got in sorted(rows.items()):
            mem = {k: statistics.median(g["mem_kb"][k] for g in got) for k in got[0]["mem_kb"]}
            out.append({"kernel": kernel, "queues": q, "samples": len(got), "mem_kb": mem,
                        "stats_read_ns": statistics.median(g["stats_read_ns"] for g in got),
                        "link_show_us": statistics.median(g["link_show_us"] for g in got)})
    return out


def devcost_lines(rows):
    if not rows:
        return []
    fields = list(rows[0]["mem_kb"])
    lines = ["## What a dummy device costs by TX queue count", "",
             "Medians over the repetitions: kB per device (from /proc/meminfo, creating "
             "several devices), ns per read of statistics/tx_packets (one dev_get_stats()), "
             "us per `ip -s link show` (one ip -batch). Times are UML times.", "",
             "| kernel | TX queues | " + " | ".join(f"{f} kB" for f in fields)
             + " | dev_get_stats ns | ip -s link show us |",
             "|---|---|" + "---|" * (len(fields) + 2)]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['queues']} | "
                     + " | ".join(f"{r['mem_kb'][f]:.1f}" for f in fields)
                     + f" | {r['stats_read_ns']:.0f} | {r['link_show_us']:.1f} |")
    return lines + [""]


def read_tracepoints(outdir):
    """The guest's tracepoints file ("name yes|no" lines) as {name: bool}."""
    try:
        text = (outdir / "tracepoints").read_text()
    except OSError:
        return {}
    return {name: state == "yes" for name, _, state in
            (ln.strip().partition(" ") for ln in text.splitlines()) if name}


def positive(result, key):
    v = result.get(key) if isinstance(result, dict) else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def pps(result):
    return positive(result, "pps")


def cpu_ns(result):
    return positive(result, "cpu_ns_per_pkt")


def paired(runs, a, b, value):
    """(A, B) values of one metric in the repetitions where both have it."""
    pairs = []
    for rep in runs:
        va = value(rep.get(a[0], {}).get(a[1], {}))
        vb = value(rep.get(b[0], {}).get(b[1], {}))
        if va and vb:
            pairs.append((va, vb))
    return pairs


def result_error(result):
    if not isinstance(result, dict):
        return "no result"
    return result.get("error") or "; ".join(result.get("errors") or []) or "no pps"


def summarize(runs, comparisons=COMPARISONS):
    """runs: list of {kernel: {scenario: result}} per repetition."""
    out = []
    for c in comparisons:
        pairs = [(a, b, b / a) for a, b in paired(runs, c.a, c.b, pps)]
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
        row.update(cpu_summary(paired(runs, c.a, c.b, cpu_ns)))
        out.append(row)
    return out


def cpu_summary(pairs):
    """CPU ns per packet of a comparison: medians and the B/A ratio."""
    if not pairs:
        return {"cpu_repetitions": 0}
    ratios = [b / a for a, b in pairs]
    return {"cpu_repetitions": len(pairs),
            "a_cpu_ns_median": statistics.median(a for a, _ in pairs),
            "b_cpu_ns_median": statistics.median(b for _, b in pairs),
            "cpu_ratio_median": statistics.median(ratios), "cpu_ratio_min": min(ratios),
            "cpu_ratio_max": max(ratios)}


def queue_shares(runs, sides):
    """Median share of packets per TX queue of each (kernel, scenario), from
    the results' per_queue counts; the source says where they came from."""
    out = []
    for kernel, scenario in sides:
        results = [rep.get(kernel, {}).get(scenario) for rep in runs]
        results = [r for r in results if isinstance(r, dict) and "error" not in r]
        shares, sources, notes = [], set(), set()
        for r in results:
            sources.add(r.get("per_queue_source") or "unavailable")
            counts = r.get("per_queue") or {}
            total = sum(counts.values())
            if total > 0:
                shares.append({q: n / total for q, n in counts.items()})
            elif r.get("per_queue_note"):
                notes.add(r["per_queue_note"])
        queues = sorted({q for sh in shares for q in sh}, key=int)
        out.append({"kernel": kernel, "scenario": scenario, "sources": sorted(sources),
                    "repetitions": len(shares),
                    "shares": {q: statistics.median(sh.get(q, 0.0) for sh in shares)
                               for q in queues},
                    "note": "; ".join(sorted(notes))})
    return out


def s1_sides(comparisons=COMPARISONS):
    """The (kernel, scenario) sides of the S1 comparisons, in order, once each."""
    sides = [side for c in comparisons if c.key.startswith("S1") for side in (c.a, c.b)]
    return list(dict.fromkeys(sides))


def counter_reasons(note, names):
    """The distinct reasons a counters_note gives for the named counters."""
    return {why for name, why in re.findall(r"([\w-]+) \(([^()]+)\)", note or "")
            if name in names}


def counters_summary(runs):
    """Perf counters over all results: the reasons when none was counted,
    else the median per-packet value of each counted one per (kernel, scenario)."""
    seen = {}
    names, reasons = set(), set()
    for rep in runs:
        for kernel, results in rep.items():
            for scenario, r in results.items():
                if not isinstance(r, dict) or not isinstance(r.get("counters"), dict):
                    continue
                names |= set(r["counters"])
                reasons |= counter_reasons(r.get("counters_note"), r["counters"])
                for name, v in r["counters"].items():
                    if isinstance(v, (int, float)):
                        seen.setdefault((kernel, scenario), {}).setdefault(name, []).append(v)
    if not names:
        return {"available": False, "counters": [], "reasons": ["no counter data in the results"]}
    if not seen:
        return {"available": False, "counters": sorted(names), "reasons": sorted(reasons)}
    return {"available": True, "counters": sorted(names), "reasons": sorted(reasons),
            "per_scenario": [{"kernel": k, "scenario": s,
                              "per_packet": {n: statistics.median(v) for n, v in c.items()}}
                             for (k, s), c in sorted(seen.items())]}


def sweep_summary(runs, sweep=SWEEP, kernels=KERNELS):
    """Median (min-max) pps of each sweep point per kernel."""
    out = []
    for kernel in kernels:
        for scenario, (queues, senders) in sweep.items():
            results = [rep.get(kernel, {}).get(scenario, {}) for rep in runs]
            values = [v for v in map(pps, results) if v]
            cpu = [v for v in map(cpu_ns, results) if v]
            row = {"kernel": kernel, "scenario": scenario, "queues": queues,
                   "senders": senders, "repetitions": len(values)}
            if values:
                row.update(pps_median=statistics.median(values), pps_min=min(values),
                           pps_max=max(values))
            if cpu:
                row["cpu_ns_median"] = statistics.median(cpu)
            out.append(row)
    return out


def mpps(v):
    return f"{v / 1e6:.2f}M"


def markdown(data):
    env, summary = data["environment"], data["comparisons"]
    lines = ["# Benchmark: base vs patched kernel (UML, pktgen and user-space senders)", "",
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
            f"| {r['key']} | {r['title']} | {mpps(r['a_pps_median'])} "
            f"({r['a_pps_min'] / 1e6:.2f}-{r['a_pps_max'] / 1e6:.2f}) | "
            f"{mpps(r['b_pps_median'])} ({r['b_pps_min'] / 1e6:.2f}-"
            f"{r['b_pps_max'] / 1e6:.2f}) | {r['ratio_median']:.2f}x "
            f"({r['ratio_min']:.2f}-{r['ratio_max']:.2f}) | {r['target']}{verdict} |")
    lines += ["", "S1 compares the same setup on both kernels, numtxqueues N (one TX queue per "
              "CPU) with an mq root, as users get it: the series leaves the default of one "
              "TX queue alone. Each S1 comparison comes as the device comes (no XPS map: the "
              "stack hashes flows onto queues) and as -xps (XPS CPU i -> tx-i, set by the "
              "benchmark). S1-queues-* measure one queue against N on each kernel.", "",
              "Seed 1 (2014, trafgen TX_RING, Core i7, one queue -> one per CPU): 22.86 s -> "
              "12.08 s, 1.89x (compare S1-queues-*).",
              "Seed 2 (2009, netperf, 16-cpu P6): +1-2% bandwidth, -15% service demand.", ""]
    lines += tracepoint_lines(env.get("tracepoints", {}))
    lines += cpu_lines(summary)
    lines += queue_lines(data.get("per_queue", []))
    lines += counter_lines(data.get("counters", {}))
    lines += sweep_lines(data.get("sweep", []))
    lines += devcost_lines(data.get("devcost", []))
    return "\n".join(lines)


def tracepoint_lines(tps):
    """Which kernel has the qdisc tracepoints compiled in."""
    lines = ["## Tracepoints", ""]
    for kernel in KERNELS:
        have = tps.get(kernel)
        if not have:
            lines.append(f"- {kernel}: no tracepoints file from the guest")
        elif not have.get("tracefs"):
            lines.append(f"- {kernel}: tracefs not mountable (no tracing support)")
        else:
            lines.append(f"- {kernel}: " + ", ".join(
                f"{name.replace('/', ':')} {'present' if have.get(name) else 'absent'}"
                for name in TRACEPOINTS))
    lines.append("\nThe tracepoints are compiled in and disabled during every measurement.")
    return lines + [""]


def cpu_lines(summary):
    lines = ["## CPU time per packet", "",
             "All CPUs' user + system + softirq time from /proc/stat over the run, per packet "
             "(USER_HZ ticks, coarse for short runs): the analog of the seeds' cycles per "
             "packet and netperf service demand. Lower is cheaper; B/A is the median of the "
             "per-repetition ratios.", "",
             "| # | A ns/pkt median | B ns/pkt median | B/A median (min-max) |",
             "|---|---|---|---|"]
    for r in summary:
        if not r.get("cpu_repetitions"):
            lines.append(f"| {r['key']} | - | - | no data |")
            continue
        lines.append(f"| {r['key']} | {r['a_cpu_ns_median']:.0f} | {r['b_cpu_ns_median']:.0f} | "
                     f"{r['cpu_ratio_median']:.2f}x ({r['cpu_ratio_min']:.2f}-"
                     f"{r['cpu_ratio_max']:.2f}) |")
    return lines + [""]


def queue_lines(shares):
    if not shares:
        return []
    lines = ["## Packets per TX queue (S1)", "",
             "Median share of the packets per TX queue. Source: `qstats` is the driver's "
             "per-queue counters (netdev QSTATS_GET), `qdisc` the mq root's per-queue "
             "children, `unavailable` neither (the base dummy has no per-queue counters).", "",
             "| kernel | scenario | source | shares (median) |", "|---|---|---|---|"]
    for r in shares:
        got = " / ".join(f"tx-{q} {v:.0%}" for q, v in r["shares"].items()) or "-"
        lines.append(f"| {r['kernel']} | {r['scenario']} | {', '.join(r['sources']) or '-'} | "
                     f"{got} |")
    return lines + [""]


def counter_lines(counters):
    lines = ["## Perf counters", ""]
    if not counters.get("available"):
        why = "; ".join(counters.get("reasons") or ["not reported"])
        return lines + [f"No perf counter was counted on either kernel ({why}): UML has no "
                        "perf events, so no hardware counters (cycles, instructions, cache "
                        "references) are reported; CPU time per packet above is the cost "
                        "measure.", ""]
    names = counters["counters"]
    lines += ["Median per packet; `-` not counted.", "",
              "| kernel | scenario | " + " | ".join(names) + " |",
              "|---|---|" + "---|" * len(names)]
    for r in counters["per_scenario"]:
        cells = [f"{r['per_packet'][n]:.1f}" if n in r["per_packet"] else "-" for n in names]
        lines.append(f"| {r['kernel']} | {r['scenario']} | " + " | ".join(cells) + " |")
    return lines + [""]


def sweep_lines(sweep):
    rows = [r for r in sweep if r["repetitions"]]
    if not rows:
        return []
    senders = sorted({r["senders"] for r in sweep})
    lines = ["## Sweep: pps against senders and queues (pktgen, --xps)", "",
             "1 TX queue with a pfifo_fast root, more with an mq root; median pps "
             "(min-max) over the repetitions.", "",
             "| kernel | TX queues | " + " | ".join(f"{t} sender{'s' * (t > 1)}" for t in senders)
             + " |",
             "|---|---|" + "---|" * len(senders)]
    for kernel, queues in dict.fromkeys((r["kernel"], r["queues"]) for r in sweep):
        cells = []
        for t in senders:
            r = next((r for r in rows if (r["kernel"], r["queues"], r["senders"]) ==
                      (kernel, queues, t)), None)
            cells.append(f"{mpps(r['pps_median'])} ({r['pps_min'] / 1e6:.2f}-"
                         f"{r['pps_max'] / 1e6:.2f})" if r else "-")
        qdisc = "pfifo_fast" if queues == 1 else "mq"
        lines.append(f"| {kernel} | {queues} ({qdisc}) | " + " | ".join(cells) + " |")
    return lines + [""]


def gnuplot(script):
    subprocess.run(["gnuplot", "-e", script], check=True)


def plot_sweep(sweep, outdir):
    """SVG of median pps (min-max bars) against senders, one line per kernel and
    queue count; None without sweep data."""
    lines = {}
    for r in sweep:
        if r["repetitions"]:
            lines.setdefault((r["kernel"], r["queues"]), []).append(r)
    if not lines:
        return None
    plots = []
    for (kernel, queues), rows in lines.items():
        data = outdir / f"sweep-{kernel}-q{queues}.dat"
        data.write_text("".join(f"{r['senders']} {r['pps_median'] / 1e6:.4f} "
                                f"{r['pps_min'] / 1e6:.4f} {r['pps_max'] / 1e6:.4f}\n"
                                for r in sorted(rows, key=lambda r: r["senders"])))
        qdisc = "pfifo_fast" if queues == 1 else "mq"
        plots.append(f"'{data}' using 1:2:3:4 with yerrorlines pointtype 7 "
                     f"title '{kernel}, {queues} TX queue(s), {qdisc}'")
    senders = [r["senders"] for r in sweep]
    svg = outdir / "bench.svg"
    gnuplot(f"set terminal svg size 800,500 noenhanced; set output '{svg}';"
            f"set xrange [{min(senders) - 0.2}:{max(senders) + 0.2}]; set xtics 1;"
            "set yrange [0:*]; set key top left; set grid;"
            "set xlabel 'senders (pktgen threads)'; set ylabel 'Mpps (UML, not hardware)';"
            "set title 'median pps against senders, min-max bars';"
            "plot " + ", ".join(plots))
    return svg


def plot_bars(summary, outdir):
    """SVG bar chart of median pps per compared scenario and kernel."""
    seen = {}
    for r in summary:
        if r["repetitions"]:
            seen[f"{r['a'][0]}:{r['a'][1]}"] = r["a_pps_median"]
            seen[f"{r['b'][0]}:{r['b'][1]}"] = r["b_pps_median"]
    if not seen:
        return None
    data = outdir / "plot.dat"
    data.write_text("".join(f"\"{k}\" {v / 1e6:.4f}\n" for k, v in sorted(seen.items())))
    svg = outdir / "bench-bars.svg"
    gnuplot(f"set terminal svg size 1000,500 noenhanced; set output '{svg}';"
            "set style fill solid; set boxwidth 0.7; set ylabel 'Mpps (UML, not hardware)';"
            "set xtics rotate by -35 left; set bmargin 14; set rmargin 12; set yrange [0:*];"
            "set title 'median pps per kernel:scenario';"
            f"plot '{data}' using 2:xtic(1) with boxes notitle")
    return svg


def plot(data, outdir):
    """The SVGs written (gnuplot): pps against senders (bench.svg) and the
    per-scenario bars (bench-bars.svg); none without gnuplot."""
    if not shutil.which("gnuplot"):
        return []
    svgs = [plot_sweep(data["sweep"], outdir), plot_bars(data["comparisons"], outdir)]
    return [s for s in svgs if s]


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
            "note": "absolute numbers are UML numbers, not hardware numbers"}


def run(args, log=print):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kernels = {"base": Path(args.base_kernel), "patched": Path(args.patched_kernel)}
    for k, p in kernels.items():
        if not os.access(p, os.X_OK):
            raise FileNotFoundError(f"{k} UML kernel {p} missing: build it first")
    if not os.access(args.mqbench, os.X_OK):
        raise FileNotFoundError(f"mqbench {args.mqbench} missing: build the C++ tools first")
    runs, tracepoints, devcost = [], {}, {}
    for rep in range(args.repetitions):
        # Odd repetitions reverse the kernel order and the scenario order, so
        # no comparison (fresh vs after a filter inside one boot, say) is
        # always measured first.
        step = 1 if rep % 2 == 0 else -1
        rep_res = {}
        for k in KERNELS[::step]:
            t0 = time.monotonic()
            scenarios = scenarios_for(k, args.scenarios)[::step]
            rep_res[k] = boot(kernels[k], scenarios, out / f"rep{rep}-{k}",
                              args.mqbench, args.seconds, args.cpus, args.timeout,
                              devcost=args.devcost)
            if rep == 0:
                tracepoints[k] = read_tracepoints(out / f"rep{rep}-{k}")
            if args.devcost:
                devcost.setdefault(k, []).append(read_devcost(out / f"rep{rep}-{k}"))
            got = {s: pps(r) for s, r in rep_res[k].items()}
            log(f"    repetition {rep + 1}/{args.repetitions} {k}: "
                f"{time.monotonic() - t0:.0f}s, "
                + ", ".join(f"{s}={v / 1e6:.2f}M" if v else f"{s}=ERR" for s, v in got.items()))
        runs.append(rep_res)
    env = environment(args, args.base_desc)
    env["tracepoints"] = tracepoints
    data = {"environment": env, "comparisons": summarize(runs),
            "per_queue": queue_shares(runs, s1_sides()), "counters": counters_summary(runs),
            "sweep": sweep_summary(runs), "devcost": devcost_summary(devcost), "runs": runs}
    (out / "bench.json").write_text(json.dumps(data, indent=2) + "\n")
    (out / "bench.md").write_text(markdown(data))
    svgs = plot(data, out)
    errors = [f"rep {i} {k} {s}: {result_error(r)}" for i, rep in enumerate(runs)
              for k, res in rep.items() for s, r in res.items() if pps(r) is None]
    errors += [f"rep {i} {k} devcost: {r['error']}" for k, reps in devcost.items()
               for i, r in enumerate(reps) if "error" in r]
    return data, svgs, errors


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
    ap.add_argument("--no-devcost", dest="devcost", action="store_false",
                    help="skip the per-device cost table (devcost.py)")
    args = ap.parse_args(argv)
    if args.repetitions < 1 or args.seconds <= 0:
        ap.error("repetitions >= 1 and seconds > 0")
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        ap.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    try:
        data, svgs, errors = run(args)
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

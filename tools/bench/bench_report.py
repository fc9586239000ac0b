"""bench.md: the headline table of paired ratios with their confidence
intervals and verdicts, then the multi-queue sinks (dummy, veth, netdevsim),
tracepoints, CPU time per packet, per-queue shares, perf counters, the sweep
and the per-device costs."""

from tools.bench.bench_config import KERNELS, SINKS, TRACEPOINTS, passing_guard
from tools.bench.bench_stats import BOOTSTRAP, MIN_REPETITIONS

# Said by every UML report, and again in each section that shows absolute numbers.
UML_CAVEAT = "Absolute numbers under UML mean little; only the paired ratios count."


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


def mpps(v):
    return f"{v / 1e6:.2f}M"


VERDICT_CELL = {"met": "met", "not met": "**NOT MET**", "inconclusive": "inconclusive",
                "report": "report", None: "-"}


def markdown(data):
    env, summary = data["environment"], data["comparisons"]
    boot = data.get("bootstrap", BOOTSTRAP)
    level = f"{boot['confidence']:.0%}"
    lines = ["# Benchmark: base vs patched kernel (UML, pktgen and user-space senders)", "",
             f"UML (ARCH=um) SMP with {env['cpus']} virtual CPUs on a {env['host_cpus']}-core "
             f"host ({env['cpu_model']}); base {env['base']}; {env['repetitions']} repetitions "
             f"of {env['seconds']} s per scenario, kernels alternating.",
             "", *source_lines(env.get("source")), *order_lines(env),
             "**These are not hardware numbers.** UML runs kernel code natively but its "
             "timers, scheduling and memory are emulated. " + UML_CAVEAT + " The tables lead "
             "with them: B/A within each repetition, median and min-max.",
             "", *verdict_lines(summary, boot),
             "| # | comparison | A median pps (min-max) | B median pps (min-max) | "
             f"B/A median (min-max) | B/A {level} CI (width) | target | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for r in summary:
        verdict = VERDICT_CELL[r.get("verdict")]
        if passing_guard(r):
            verdict = "inconclusive (guard: passes)"
        if not r["repetitions"]:
            lines.append(f"| {r['key']} | {r['title']} | - | - | no data | - | {r['target']} | "
                         f"{verdict} |")
            continue
        lines.append(
            f"| {r['key']} | {r['title']} | {mpps(r['a_pps_median'])} "
            f"({r['a_pps_min'] / 1e6:.2f}-{r['a_pps_max'] / 1e6:.2f}) | "
            f"{mpps(r['b_pps_median'])} ({r['b_pps_min'] / 1e6:.2f}-"
            f"{r['b_pps_max'] / 1e6:.2f}) | {r['ratio_median']:.2f}x "
            f"({r['ratio_min']:.2f}-{r['ratio_max']:.2f}) | "
            f"{r['ratio_ci_low']:.3f}-{r['ratio_ci_high']:.3f} ({r['ratio_ci_width']:.3f}) | "
            f"{r['target']} | {verdict} |")
    lines += ["", "S1 compares the same setup on both kernels, numtxqueues N (one TX queue per "
              "CPU) with an mq root, as users get it: the series leaves the default of one "
              "TX queue alone. On the patched kernel such a dummy stays lltx and counts each "
              "packet in its CPU's counters of its queue, which is what S1 measures. Each S1 "
              "comparison comes as the device comes (no XPS map: the stack hashes flows onto "
              "queues, so pktgen's threads share a queue in some repetitions and not in "
              "others) and as -xps (XPS CPU i -> tx-i, set by the benchmark); both only "
              "report. S1-queues-* "
              "measure one queue against N on each kernel. Sink-* compare the dummy with "
              "veth and netdevsim on the patched kernel (below). D-* compare the per-queue "
              "counter designs: base (no per-queue counters), lock (the previous design: "
              "not lltx, counters under the TX queue's xmit lock; "
              "tools/bench/variants/dummy-queue-lock.patch on the series) and the series' "
              "per-CPU per-queue counters (lltx), with XPS, with every sender on queue 0 (pktgen "
              "start_xmit, queue_map 0) and with 1024 flows hashed onto the queues.", "",
              "Seed 1 (2014, trafgen TX_RING, Core i7, one queue -> one per CPU): 22.86 s -> "
              "12.08 s, 1.89x (compare S1-queues-*).",
              "Seed 2 (2009, netperf, 16-cpu P6): +1-2% bandwidth, -15% service demand.", ""]
    lines += icount_lines(summary, data.get("icount"))
    lines += sink_lines(summary, data.get("sinks"))
    lines += tracepoint_lines(env.get("tracepoints", {}))
    lines += cpu_lines(summary)
    lines += queue_lines(data.get("per_queue", []))
    lines += counter_lines(data.get("counters", {}))
    lines += sweep_lines(data.get("sweep", []))
    lines += devcost_lines(data.get("devcost", []))
    return "\n".join(lines)


def icount_lines(summary, icount):
    """The rows the icount guards decide (tools/bench/icount.py), each beside its UML
    comparison, then the instructions per packet of every scenario and kernel."""
    if not icount:
        return []
    uml = {r["key"]: r for r in summary}
    env = icount["environment"]
    lines = ["## Beside the UML rows: instructions per packet (QEMU icount)", "",
             f"The x86 test kernels under QEMU TCG, `{env['qemu_opts']}`, one vCPU: "
             f"{env['count']} packets per run, {env['reps']} runs per boot, {env['boots']} "
             "boot(s) per kernel (tools/bench/icount.py; "
             + ", ".join(f"{k}: {v}" for k, v in (env.get("source") or {}).items()
                         if k == "commit") + "). "
             "UML B/A is packets per second (higher is faster), icount B/A instructions per "
             "packet (lower is cheaper); the icount verdicts decide the path's cost, the UML "
             "rows contention, which one vCPU cannot show.", "",
             "| # | comparison | UML B/A (CI) | UML verdict | icount A | icount B | icount B/A "
             "| icount target | icount verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    for g in icount.get("guards", []) + icount.get("reports", []):
        r = uml.get(g["key"])
        if r and r.get("repetitions"):
            u = (f"{r['ratio_median']:.2f}x ({r['ratio_ci_low']:.3f}-{r['ratio_ci_high']:.3f})",
                 "inconclusive (guard: passes)" if passing_guard(r)
                 else VERDICT_CELL[r.get("verdict")])
        else:
            u = ("-", "-")
        ic = [("-" if v is None else f"{v:.1f}") for v in (g["a_median"], g["b_median"])]
        ratio = "-" if g["ratio"] is None else f"{g['ratio']:.4f}"
        lines.append(f"| {g['key']} | {g['title']} | {u[0]} | {u[1]} | {ic[0]} | {ic[1]} | "
                     f"{ratio} | {g['target']} | {VERDICT_CELL[g['verdict']]} |")
    lines += ["", "| scenario | kernel | instructions/packet (median) | min-max | vs base |",
              "|---|---|---|---|---|"]
    lines += [f"| {r['scenario']} | {r['kernel']} | {r['median']:.1f} | {r['min']:.1f}-"
              f"{r['max']:.1f} | {r['delta']:+.1f} |" for r in icount.get("rows", [])]
    return lines + [""]


def source_lines(src):
    """Which code made these numbers."""
    if not src:
        return ["Source: not recorded (results older than the stamp).", ""]
    return [f"Source: project commit `{src['commit'][:12]}`"
            + (" with local changes" if src.get("dirty") else "")
            + f", patches/ sha256 `{src['patches_sha256'][:16]}`.", ""]


def order_lines(env):
    """How the boots were ordered and whether the vCPU threads were pinned."""
    lines = []
    order = env.get("boot_order")
    if order:
        first = [o[0] for o in order]
        lines.append(f"Boot order: {', '.join('/'.join(o) for o in order)} (each repetition "
                     "pairs one boot of each kernel; every other repetition reverses the "
                     "kernels and the scenarios, so the base boots first "
                     f"{first.count('base')} times, the patched kernel {first.count('patched')}).")
    pin = env.get("vcpu_pinning")
    if pin is not None:
        if not pin.get("requested"):
            lines.append("vCPU threads not pinned: the host schedules them.")
        else:
            notes = "; ".join(pin.get("notes") or [])
            lines.append(f"vCPU threads pinned one to one to host CPUs in {pin['pinned']} of "
                         f"{pin['boots']} boots" + (f" ({notes})" if notes else "") + ".")
    return lines + [""] if lines else []


def verdict_lines(summary, boot):
    """The verdicts in one line, and how they are reached."""
    targeted = [r for r in summary if r.get("verdict")]
    if not targeted:
        return []
    count = {v: [r["key"] for r in targeted if r["verdict"] == v and not passing_guard(r)]
             for v in ("met", "not met", "inconclusive")}
    guards = [r["key"] for r in targeted if passing_guard(r)]
    return [f"Targets: {len(count['met'])} met, {len(count['not met'])} not met"
            + (f" ({', '.join(count['not met'])})" if count["not met"] else "")
            + f", {len(count['inconclusive'])} inconclusive"
            + (f" ({', '.join(count['inconclusive'])})" if count["inconclusive"] else "")
            + (f"; {len(guards)} guard(s) inconclusive, passing ({', '.join(guards)})"
               if guards else "") + ".",
            "",
            f"A target is met when the whole {boot['confidence']:.0%} confidence interval of "
            f"the {boot['statistic']} satisfies it, not met when the whole interval violates "
            f"it, inconclusive when the interval straddles a bound or fewer than "
            f"{MIN_REPETITIONS} repetitions paired. The interval is a {boot['method']} "
            f"bootstrap ({boot['resamples']} resamples, seed {boot['seed']}: the same ratios "
            "give the same interval). Rows without a target (\"report\") only report. A "
            "guard bounds code that is the same on both sides (the default dummy's and "
            "pfifo_fast's transmit path disassemble the same on both kernels, checked per "
            "patch; S2-fresh is one kernel): it fails only when not met, and an "
            "inconclusive guard, whose interval is the benchmark's resolution, passes.", ""]


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


def cell(text):
    """Text for a markdown table cell."""
    return str(text).replace("|", "\\|")


def pct(v):
    return "-" if v is None else f"{v:.1%}"


def sink_pps_cell(v):
    if not v or not v.get("repetitions"):
        return "no data", "-"
    cpu = v.get("cpu_ns_median")
    return (f"{mpps(v['pps_median'])} ({v['pps_min'] / 1e6:.2f}-{v['pps_max'] / 1e6:.2f})",
            f"{cpu:.0f}" if cpu else "-")


def qstats_cell(r):
    if not r["repetitions"]:
        return "no record"
    supported, errors = r["qstats_supported"], "; ".join(r["qstats_errors"])
    if supported == [True]:
        return "supported"
    if supported == [False]:
        return f"no: {errors}"
    if not supported:
        return f"no answer: {errors}" if errors else "no answer"
    return f"varies: {errors}"


def qstats_sum_cell(r):
    n, exact = r["qstats_compared"], r["qstats_exact"]
    if not n:
        return "- (no per-queue tx-packets)" if r["qstats_supported"] != [True] else "-"
    out = (f"yes, equal in {n}/{n}" if exact == n else
           f"no, differs in {n - exact}/{n}: the sum is {pct(r['qstats_sum_share'])} "
           "of the packets sent (median)")
    drops = r.get("qstats_drops_compared", 0)
    if drops:
        out += ("; tx-hw-drops: the queues' sum = link tx_dropped and tx-packets + tx-hw-drops "
                f"= pktgen sent in {r['qstats_drops_exact']}/{drops}")
    return out


def classes_cell(r):
    n = r["classes_compared"]
    if not n:
        return "no record"
    count = "/".join(map(str, r["classes_count"]))
    kinds = "/".join(r["classes_kinds"]) or "no"
    if r["classes_exact"] == n:
        return f"{count} {kinds} classes; Sent sum = pktgen sent in {n}/{n}"
    return (f"{count} {kinds} classes; Sent sum = pktgen sent in {r['classes_exact']}/{n}, "
            f"{pct(r['classes_sum_share'])} of it (median)")


def sink_lines(summary, sinks):
    """The sinks section: pps per sink, the paired ratios, the setup table and
    what each reports per queue."""
    rows = [r for r in summary if r["key"].startswith("Sink-")]
    if not rows and not sinks:
        return []
    lines = ["## Multi-queue sinks: dummy, veth, netdevsim", "",
             "The same load on each sink, on the patched kernel: one pktgen thread per CPU, "
             "queue_xmit, N TX queues (one per CPU, at least 2) under an mq root, without XPS "
             "(the flow hash picks the queue) and with XPS CPU i -> tx-i (pktgen --xps). "
             "**" + UML_CAVEAT + "**", ""]
    if sinks and sinks.get("pps"):
        lines += ["Median pps (min-max) and median CPU ns per packet over the repetitions "
                  "(UML numbers):", "",
                  "| sink | no XPS: pps | no XPS: CPU ns/pkt | XPS: pps | XPS: CPU ns/pkt |",
                  "|---|---|---|---|---|"]
        for r in sinks["pps"]:
            lines.append(f"| {r['name']} | " + " | ".join(
                c for v in (r.get("no_xps"), r.get("xps")) for c in sink_pps_cell(v)) + " |")
        lines.append("")
    if rows:
        lines += ["Paired ratios, B/A within each boot, A the dummy: below 1 the other sink "
                  "sends fewer packets per second than the dummy on the same CPUs.", "",
                  "| # | comparison | B/A median (min-max) | B/A 95% CI (width) | "
                  "repetitions |", "|---|---|---|---|---|"]
        for r in rows:
            if not r["repetitions"]:
                lines.append(f"| {r['key']} | {r['title']} | no data | - | 0 |")
                continue
            lines.append(f"| {r['key']} | {r['title']} | {r['ratio_median']:.2f}x "
                         f"({r['ratio_min']:.2f}-{r['ratio_max']:.2f}) | "
                         f"{r['ratio_ci_low']:.3f}-{r['ratio_ci_high']:.3f} "
                         f"({r['ratio_ci_width']:.3f}) | {r['repetitions']} |")
        lines.append("")
    lines += ["### What each sink takes to set up", "",
              "| sink | kernel options (built in) | module, bus, debugfs | peer | netns | "
              "xmit | commands (N: TX queues) |", "|---|---|---|---|---|---|---|"]
    for s in SINKS:
        cmds = "<br>".join(f"`{cell(c)}`" for c in s.commands)
        lines.append(f"| {s.name} | {cell(s.config)} | {cell(s.needs)} | {cell(s.peer)} | "
                     f"{cell(s.netns)} | {cell(s.xmit)} | {cmds} |")
    lines += ["", "### What each sink reports per queue", "",
              "From the files the guest recorded beside each run: `mqbench qstats --json` "
              "before and after it (netdev QSTATS_GET, scope queue, or the kernel's error; "
              "the per-queue tx-packets summed over the TX queues, after - before, against "
              "the packets pktgen sent) and `tc -s class show` under mq after it. The link "
              "column is the device's own TX counters (rtnetlink), as a share of the packets "
              "pktgen sent.", "",
              "| sink | scenario | qstats-get, scope queue | TX queues in the answer | "
              "per-queue tx-packets sum = pktgen sent | tc -s class show (mq) | "
              "link tx_packets / tx_dropped |", "|---|---|---|---|---|---|---|"]
    for r in (sinks or {}).get("records", []):
        tx, rx = "-", "/".join(map(str, r["rx_queues_reported"]))
        if True in r["qstats_supported"]:
            tx = "/".join(map(str, r["tx_queues_reported"]))
            if rx and rx != "0":
                tx += f" (and {rx} RX)"
        lines.append(f"| {r['name']} | {r['scenario']} | {cell(qstats_cell(r))} | {tx} | "
                     f"{cell(qstats_sum_cell(r))} | {cell(classes_cell(r))} | "
                     f"{pct(r['link_tx_packets_share'])} / {pct(r['link_tx_dropped_share'])} |")
    lines += ["", "What the drivers report per queue, from their source:", ""]
    lines += [f"- {s.name}: {s.per_queue}." for s in SINKS]
    lines += ["- tc -s class show under mq, any device: one class per TX queue, whose Sent is "
              "what that queue's qdisc handed to the driver (or let bypass), whatever the "
              "driver then did with it.", ""]
    return lines

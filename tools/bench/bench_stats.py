"""The numbers of the benchmark: paired per-repetition ratios with their
median, min-max and bootstrap confidence interval, the verdict on each
target, CPU time per packet, per-queue shares, perf counters, the sweep and
the per-device costs."""

import random
import re
import statistics

from tools.bench.bench_config import COMPARISONS, MIN_REPETITIONS, SWEEP, SWEEP_KERNELS

# The verdict on a target comes from a percentile bootstrap interval of the
# median of the paired B/A ratios, never from the median alone: a median
# inside the noise proves nothing. Fixed seed: the same ratios always give
# the same interval, so a report can be reproduced from bench.json.
BOOTSTRAP = {"confidence": 0.95, "resamples": 10000, "seed": 11,
             "statistic": "median of the per-repetition B/A ratios", "method": "percentile"}
MET, NOT_MET, INCONCLUSIVE = "met", "not met", "inconclusive"


def median(values):
    """statistics.median without its overhead: it runs once per resample."""
    s = sorted(values)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def bootstrap_ci(values, confidence=BOOTSTRAP["confidence"], resamples=BOOTSTRAP["resamples"],
                 seed=BOOTSTRAP["seed"], stat=median):
    """Percentile bootstrap interval (low, high) of stat(values): stat of
    `resamples` samples drawn with replacement, cut at the two tails."""
    values = list(values)
    if len(set(values)) == 1:  # every resample is the same sample
        return stat(values), stat(values)
    rng = random.Random(seed)
    n = len(values)
    boots = sorted(stat(rng.choices(values, k=n)) for _ in range(resamples))
    k = int(round((1 - confidence) / 2 * resamples))
    return boots[k], boots[resamples - 1 - k]


def within(x, lo, hi):
    return (lo is None or x >= lo) and (hi is None or x <= hi)


def verdict(ci, lo, hi, repetitions):
    """met: the whole interval satisfies the target (ratio in [lo, hi]); not
    met: the whole interval violates it; inconclusive: the interval straddles
    a bound, or too few repetitions. None for a comparison without target."""
    if lo is None and hi is None:
        return None
    if ci is None or repetitions < MIN_REPETITIONS:
        return INCONCLUSIVE
    low, high = ci
    if within(low, lo, hi) and within(high, lo, hi):
        return MET
    if (lo is not None and high < lo) or (hi is not None and low > hi):
        return NOT_MET
    return INCONCLUSIVE


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
               "target": c.target, "guard": c.guard, "repetitions": len(pairs)}
        if pairs:
            ratios = [r for _, _, r in pairs]
            row.update(
                a_pps_median=statistics.median(a for a, _, _ in pairs),
                a_pps_min=min(a for a, _, _ in pairs), a_pps_max=max(a for a, _, _ in pairs),
                b_pps_median=statistics.median(b for _, b, _ in pairs),
                b_pps_min=min(b for _, b, _ in pairs), b_pps_max=max(b for _, b, _ in pairs),
                ratio_median=statistics.median(ratios), ratio_min=min(ratios),
                ratio_max=max(ratios), ratios=ratios)
            low, high = bootstrap_ci(ratios)
            row.update(ratio_ci_low=low, ratio_ci_high=high, ratio_ci_width=high - low)
        row["target_lo"], row["target_hi"] = c.lo, c.hi
        row["verdict"] = verdict((row["ratio_ci_low"], row["ratio_ci_high"]) if pairs else None,
                                 c.lo, c.hi, len(pairs))
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


def sweep_summary(runs, sweep=SWEEP, kernels=SWEEP_KERNELS):
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

"""A/B benchmark of the base and patched kernels in UML (SMP, pktgen, user-space senders).

Both kernels are booted alternately, repetition after repetition, each boot
running every scenario (tools/bench/uml-guest.sh drives mqbench in the
guest). Comparisons pair A and B within a repetition and report the median
of the per-repetition ratios with its min-max and a bootstrap confidence
interval, which decides whether a target is met, not met or inconclusive,
plus median pps and CPU time per packet. The sweep (queues x senders, both
kernels) feeds the plot. UML runs kernel code at native speed but is not
hardware: absolute numbers are not hardware numbers, ratios are what the
report leads with.

The parts, one module each:
  bench_config.py   scenarios, comparisons and their targets, the sweep
  bench_runner.py   booting UML: guest protocol, boot order, environment
  bench_pinning.py  pinning the vCPU threads to host CPUs (--pin-vcpus)
  bench_stats.py    paired ratios, medians, bootstrap intervals, verdicts
  bench_sinks.py    the multi-queue sinks' per-queue records (qstats, tc classes)
  bench_report.py   bench.md
  bench_plots.py    gnuplot SVGs
This file: the command line and run(), which puts them together.
"""

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from common import logs
from tools.bench.bench_config import (COMPARISONS, ICOUNT_REPORTS, KERNELS, SCENARIOS, SINKS,
                                      SWEEP, TRACEPOINTS, Comparison, failed_targets,
                                      passing_guard, s1_kernel_scenarios, scenarios_for)
from tools.bench.bench_plots import plot
from tools.bench.bench_report import counter_lines, markdown
from tools.bench.bench_runner import GUEST, environment, read_tracepoints, run_repetitions
from tools.bench.bench_sinks import sinks_summary
from tools.bench.bench_stats import (BOOTSTRAP, counters_summary, devcost_summary, pps,
                                     queue_shares, result_error, summarize, sweep_summary)
from tools.bench.icount import judge as icount_judge

# What other code uses of the benchmark (ci/pipeline_bench.py, tests/test_bench.py).
__all__ = ["COMPARISONS", "Comparison", "GUEST", "KERNELS", "SCENARIOS", "SINKS", "SWEEP",
           "TRACEPOINTS", "counter_lines", "counters_summary", "main", "read_tracepoints", "run",
           "scenarios_for"]

logger = logging.getLogger(__name__)


def inconclusive_sides(runs, comparisons=None):
    """The (kernel, scenario) sides of the targets (not guards) still inconclusive,
    not those without data (their scenarios were not asked for)."""
    comparisons = COMPARISONS if comparisons is None else comparisons
    bad = {r["key"] for r in summarize(runs, comparisons)
           if r.get("verdict") == "inconclusive" and r.get("repetitions")
           and not passing_guard(r)}
    return [side for c in comparisons if c.key in bad for side in (c.a, c.b)]


def more_repetitions(args, kernels, out, runs, order, step=2):
    """A target left inconclusive gets more repetitions of its scenarios only,
    `step` at a time, until it is met or not met or the runs reach
    args.max_repetitions; a target still inconclusive then fails the run
    (ci/pipeline_bench.py). Appends to runs and order; returns how many
    repetitions were added, by the targets they were for."""
    added = []
    cap = getattr(args, "max_repetitions", args.repetitions)
    while len(runs) < cap:
        sides = inconclusive_sides(runs)
        if not sides:
            break
        n = min(step, cap - len(runs))
        more = argparse.Namespace(**{**vars(args), "repetitions": n, "devcost": False,
                                     "scenarios": sorted({s for _, s in sides})})
        logger.info(f"  {n} more repetition(s) for inconclusive targets: "
                    + ", ".join(sorted({s for _, s in sides})))
        extra_runs, _, _, extra_order, _ = run_repetitions(
            more, kernels, out / f"extra{len(runs)}")
        runs.extend(extra_runs)
        order.extend(extra_order)
        added.append({"repetitions": n, "scenarios": more.scenarios})
    return added


def run(args):
    """Boot both kernels args.repetitions times, write bench.json, bench.md
    and the plots into args.out. Returns (data, SVG paths, errors: each
    scenario or devcost run without a result)."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kernels = {"base": Path(args.base_kernel), "lock": Path(args.lock_kernel),
               "patched": Path(args.patched_kernel)}
    for k, p in kernels.items():
        if not os.access(p, os.X_OK):
            raise FileNotFoundError(f"{k} UML kernel {p} missing: build it first")
    if not os.access(args.mqbench, os.X_OK):
        raise FileNotFoundError(f"mqbench {args.mqbench} missing: build the C++ tools first")
    runs, tracepoints, devcost, order, pinning = run_repetitions(args, kernels, out)
    extra = more_repetitions(args, kernels, out, runs, order)
    env = environment(args, args.base_desc)
    env["extra_repetitions"] = extra
    env["tracepoints"] = tracepoints
    env["boot_order"] = order
    env["vcpu_pinning"] = pinning
    data = {"environment": env, "bootstrap": BOOTSTRAP, "comparisons": summarize(runs),
            "per_queue": queue_shares(runs, s1_kernel_scenarios()),
            "counters": counters_summary(runs),
            "sweep": sweep_summary(runs), "devcost": devcost_summary(devcost),
            "sinks": sinks_summary(runs), "runs": runs}
    if getattr(args, "icount", None):
        # tools/bench/icount.py's results, shown beside the UML rows.
        icount = json.loads(Path(args.icount).read_text())
        data["icount"] = {"environment": icount["environment"], "rows": icount["rows"],
                          "guards": icount.get("guards") or icount_judge(icount["runs"]),
                          "reports": icount.get("reports") or icount_judge(
                              icount["runs"], guards=ICOUNT_REPORTS)}
    (out / "bench.json").write_text(json.dumps(data, indent=2) + "\n")
    (out / "bench.md").write_text(markdown(data))
    svgs = plot(data, out)
    errors = [f"rep {i} {k} {s}: {result_error(r)}" for i, rep in enumerate(runs)
              for k, res in rep.items() for s, r in res.items() if pps(r) is None]
    errors += [f"rep {i} {k} devcost: {r['error']}" for k, reps in devcost.items()
               for i, r in enumerate(reps) if "error" in r]
    return data, svgs, errors


@logs.printed
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-kernel", required=True, help="UML 'linux' binary of the base")
    ap.add_argument("--patched-kernel", required=True)
    ap.add_argument("--lock-kernel", required=True,
                    help="the patched tree with tools/bench/variants/dummy-queue-lock.patch")
    ap.add_argument("--mqbench", required=True, help="path to the mqbench binary")
    ap.add_argument("--out", default="results/bench")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--max-repetitions", type=int, default=None,
                    help="more repetitions, up to this many, for targets still "
                         "inconclusive (default: --repetitions, none)")
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--scenarios", type=lambda s: s.split(","), default=SCENARIOS)
    ap.add_argument("--base-desc", default="unknown")
    ap.add_argument("--no-devcost", dest="devcost", action="store_false",
                    help="skip the per-device cost table (devcost.py)")
    ap.add_argument("--icount", metavar="ICOUNT_JSON",
                    help="tools/bench/icount.py's icount.json, shown beside the UML rows")
    ap.add_argument("--pin-vcpus", action="store_true",
                    help="pin each UML vCPU thread to its own host CPU (bench_pinning.py)")
    args = ap.parse_args(argv)
    if args.repetitions < 1 or args.seconds <= 0:
        ap.error("repetitions >= 1 and seconds > 0")
    if args.max_repetitions is None:
        args.max_repetitions = args.repetitions
    if args.max_repetitions < args.repetitions:
        ap.error("--max-repetitions must be at least --repetitions")
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
    # Every target decides: one not met or inconclusive fails the run.
    failed = failed_targets(data["comparisons"])
    # The icount guards shown beside them too (their own stage judges them).
    failed += [f"icount {g['key']}" for g in data.get("icount", {}).get("guards", [])
               if g["verdict"] == "not met"]
    if failed:
        print("targets not met or inconclusive: " + ", ".join(failed), file=sys.stderr)
    return 1 if errors or failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Instructions per packet: x86 test kernels under QEMU TCG with icount.

With `-icount shift=0,sleep=off` the guest clock advances one nanosecond
per guest instruction, so pktgen's elapsed "usec" over COUNT packets is
instructions / 1000 and instructions per packet = usec * 1000 / COUNT.
The count repeats to about 0.1% and does not depend on the host. It is the
whole guest's: pktgen's loop, the path under test, interrupts and the timer
tick; with one vCPU it cannot show contention (the UML benchmark does).
pktgen reads the clock for every packet's timestamp, so the clocksource is
part of the count: hpet costs about 27 instructions per packet more than
tsc, and a guest left to choose falls back to hpet when its clocksource
watchdog marks the TSC unstable, which under TCG depends on the host. Every
boot pins tsc (CLOCKSOURCE_ARGS); the guest reads the clocksource after
every pktgen run, and a boot with a run on another is booted again, once.

Kernels boot alternately (base, lock, patched, then reversed), each running
every scenario REPS times (tools/bench/icount-guest.sh). No guard is met or
missed on one boot: a guard needs BOOTS boots of each side, and a kernel's
boots must agree, every scenario's medians within AGREEMENT of each other.
A kernel whose boots disagree boots once more; the boots kept are the
first BOOTS that agree, and if none do, the run fails naming the medians. A kernel is a build
directory, optionally with a dummy.ko to load instead of its own: the "lock"
design is the patched build with the previous design's dummy module.
"""

import argparse
import hashlib
import itertools
import json
import logging
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common.git import git_run
from common.vm import run_vm
from common import logs
from common.stamp import (BUILD_SOURCE, build_source, source_stamp, tree_source,
                          write_source_stamp)
from tools.bench.bench_config import (ICOUNT_BOOTS, ICOUNT_GUARDS, ICOUNT_MIN_RUNS,
                                      ICOUNT_REPORTS)

logger = logging.getLogger(__name__)

GUEST = Path(__file__).resolve().parent / "icount-guest.sh"
QEMU_OPTS = "-icount shift=0,sleep=off"
# No watchdog to mark the TSC unstable: every boot reads the same clock.
CLOCKSOURCE = "tsc"
CLOCKSOURCE_ARGS = f"clocksource={CLOCKSOURCE} tsc=reliable"
COUNT = 20000  # packets per run
# The repeatability the method claims: one boot's median of a row and
# another's differ by at most 0.1% (the record's widest, 0.07%; an hpet boot
# differs by about 1.1%).
AGREEMENT = 0.001
SCENARIOS = {
    "q2_start_xmit": "2 TX queues, pktgen start_xmit on queue 0: the driver's transmit alone",
    "q2_noqueue": "2 TX queues, default root (noqueue), pktgen queue_xmit",
    "q2_mq": "2 TX queues, mq root, pktgen queue_xmit",
    "q1_noqueue": "default dummy (1 TX queue, noqueue), pktgen queue_xmit",
    # The bypass series, as the UML benchmark's S2 scenarios (same names).
    "s2_fq_codel_fresh": "default dummy, fq_codel root never filtered, queue_xmit",
    "s2_fq_codel_after_filter": "default dummy, fq_codel root after a matchall filter was "
                                "added and deleted, queue_xmit",
    "s2_pfifo_fast": "default dummy, pfifo_fast root, queue_xmit",
    # The other sinks of the UML benchmark (same names), as q2_mq: 2 TX queues, mq root.
    "sink_veth_mq": "veth with 2 TX queues, mq root, its peer up in another netns "
                    "(receives and drops each packet), queue_xmit",
    "sink_nsim_mq": "netdevsim with 2 queues, mq root, unlinked (drops each packet), "
                    "queue_xmit",
}
# The dummy series' counter designs and the default device; the bypass
# series' rows. A kernel without a dummy module of its own runs both.
DUMMY_SCENARIOS = ("q2_start_xmit", "q2_noqueue", "q2_mq", "q1_noqueue")
BYPASS_SCENARIOS = ("s2_fq_codel_fresh", "s2_fq_codel_after_filter", "s2_pfifo_fast")


def guard_scenarios(keys=None) -> list[str]:
    """The scenarios the guards (bench_config.ICOUNT_GUARDS) named in keys, or all, need."""
    sides = [side for g in ICOUNT_GUARDS if keys is None or g.key in keys for side in (g.a, g.b)]
    return [s for s in SCENARIOS if s in {scen for _, scen in sides}]


def guest_command(out: Path, count: int, reps: int, scenarios, ko: str | None) -> str:
    cmd = f"bash {GUEST} {out} {count} {reps} {' '.join(scenarios)}"
    return cmd + (f" -- {ko}" if ko else "")


def read_runs(out: Path, count: int, reps: int, scenarios) -> dict:
    """{scenario: [instructions per packet, ...]} from the guest's files."""
    res = {}
    for s in scenarios:
        res[s] = [int((out / f"{s}.{i}").read_text()) * 1000 / count
                  for i in range(1, reps + 1)]
    return res


def clocksource_problem(out: Path, reps: int, scenarios) -> str:
    """"" when the guest ran on CLOCKSOURCE at its start (OUT/clocksource)
    and after every pktgen run (OUT/<scenario>.<i>.clocksource,
    icount-guest.sh); else what it ran on where."""
    files = {"at boot": "clocksource"}
    files.update({f"after {s}.{i}": f"{s}.{i}.clocksource" for s in scenarios
                  for i in range(1, reps + 1)})
    bad = []
    for where, name in files.items():
        f = out / name
        found = f.read_text().strip() if f.is_file() else "not recorded"
        if found != CLOCKSOURCE:
            bad.append(f"{found} {where}")
    if not bad:
        return ""
    return (f"clocksource {', '.join(bad[:3])}{', ...' if len(bad) > 3 else ''}, not "
            f"{CLOCKSOURCE}: its counts are not comparable with the other boots'")


def disagreement(boots: list, scenarios) -> list[str]:
    """What of a kernel's boots ({scenario: [runs]} each) disagrees: each
    scenario whose boots' medians lie further apart than AGREEMENT, with
    the medians."""
    out = []
    for s in scenarios:
        meds = [statistics.median(b[s]) for b in boots if b.get(s)]
        if len(meds) > 1 and max(meds) > min(meds) * (1 + AGREEMENT):
            out.append(f"{s} " + " vs ".join(f"{m:.1f}" for m in meds))
    return out


def agreeing(boots: list, want: int, scenarios) -> list[int] | None:
    """The indices of the first `want` boots that agree pairwise (disagreement()),
    None if no `want` of them do."""
    for pick in itertools.combinations(range(len(boots)), want):
        if all(not disagreement([boots[i], boots[j]], scenarios)
               for i, j in itertools.combinations(pick, 2)):
            return list(pick)
    return None


def kernel_scenarios(ko: str | None, scenarios) -> list[str]:
    """What a kernel runs: a kernel given a dummy module of its own (the
    lock design) runs the dummy scenarios only."""
    return [s for s in scenarios if not ko or s in DUMMY_SCENARIOS]


def summarize(runs: dict, scenarios) -> list[dict]:
    """Per scenario and kernel: median, min, max and spread of the
    instructions per packet, and the median's difference from the base."""
    rows = []
    for s in scenarios:
        base = statistics.median(v for r in runs["base"] for v in r[s])
        for k in runs:
            vals = [v for r in runs[k] for v in r.get(s, [])]
            if not vals:
                continue
            med = statistics.median(vals)
            rows.append({"scenario": s, "kernel": k, "median": med, "min": min(vals),
                         "max": max(vals), "spread": (max(vals) - min(vals)) / med,
                         "delta": med - base, "n": len(vals)})
    return rows


def markdown(data: dict) -> str:
    env = data["environment"]
    lines = ["# Instructions per packet (QEMU TCG, icount)", "",
             f"{env['count']} packets of 60 bytes per run, {env['reps']} runs per boot, "
             f"{env['boots']} boots per kernel, kernels alternating, each kernel's boots "
             f"agreeing within {AGREEMENT:.1%}; one vCPU, "
             f"`{QEMU_OPTS}`: one guest nanosecond per guest instruction, so "
             "instructions per packet = pktgen usec x 1000 / packets. Every boot runs "
             f"on the {CLOCKSOURCE} clocksource (`{CLOCKSOURCE_ARGS}`): pktgen reads "
             "the clock per packet, and hpet, where a guest falls back to it, costs "
             "about 27 instructions per packet more.", "",
             "The count is the whole guest's (pktgen's loop, the transmit path, "
             "interrupts, the timer tick), repeats to about 0.1% and does not depend on "
             "the host. One vCPU: it shows the path's cost, not contention (the UML "
             "benchmark shows that). Wall-clock time under TCG means nothing here.", "",
             f"Source: {env['source']}", "",
             "| scenario | kernel | instructions/packet (median) | min-max | spread | vs base |",
             "|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['scenario']} | {r['kernel']} | {r['median']:.1f} | "
                     f"{r['min']:.1f}-{r['max']:.1f} | {100 * r['spread']:.2f}% | "
                     f"{r['delta']:+.1f} |")
    for k, boots in (data.get("rejected") or {}).items():
        lines += ["", f"Left out: {len(boots)} boot(s) of {k}, whose medians disagreed by more "
                  f"than {AGREEMENT:.1%} with the boots kept (booted once more): " + "; ".join(
                      ", ".join(f"{s} {statistics.median(v):.1f}" for s, v in b.items())
                      for b in boots)]
    lines += [""] + guard_lines(data.get("guards", []))
    lines += guard_lines(data.get("reports", []), reports=True)
    lines += ["Scenarios:", ""]
    lines += [f"- {s}: {SCENARIOS[s]}" for s in data["scenarios"]]
    lines += ["", "Kernels: " + "; ".join(f"{k}: {v}" for k, v in env["kernels"].items()), ""]
    return "\n".join(lines)


def boot_once(k: str, boot: int, build, ko, out: Path, count: int, reps: int, mine,
              timeout: int) -> dict:
    """One boot of kernel k running its scenarios `mine`: {scenario:
    [instructions per packet]}. A boot with a run on another clocksource
    boots again, once (its log out/boot<i>-<label>-again.log). Raises
    RuntimeError when a boot fails or both ran on another clocksource."""
    why = ""
    for log in (out / f"boot{boot}-{k}.log", out / f"boot{boot}-{k}-again.log"):
        with tempfile.TemporaryDirectory(dir=out) as tmp:
            rw = Path(tmp)
            res = run_vm(build, guest_command(rw, count, reps, mine, ko), rw,
                         timeout=timeout, cpus=1, qemu_opts=QEMU_OPTS,
                         append=CLOCKSOURCE_ARGS, log_path=log)
            if not res.ok:
                raise RuntimeError(f"{k} boot {boot}: {res.reason()} (see {log})")
            if not (why := clocksource_problem(rw, reps, mine)):
                runs = read_runs(rw, count, reps, mine)
                logger.info(f"  icount boot {boot + 1} {k}: " + ", ".join(
                    f"{s}={statistics.median(runs[s]):.1f}" for s in mine))
                return runs
            logger.info(f"  icount boot {boot + 1} {k}: {why}: booted again")
    raise RuntimeError(f"{k} boot {boot}: {why}, and so again on the boot after")


def boot_runs(kernels: dict, out: Path, count: int, reps: int, boots: int, scenarios,
              timeout: int = 900, rejected: dict | None = None) -> dict:
    """Boot each kernel `boots` times, alternating, each boot running its
    scenarios reps times (boot_once()): {label: [{scenario: [instructions
    per packet]}] per boot}. With two boots or more, a kernel whose boots
    disagree (disagreement()) boots once more and keeps the first `boots`
    that agree; the boot left out goes to rejected ({label: [boot]}).
    Raises RuntimeError when a boot fails or no `boots` of a kernel agree,
    naming the medians."""
    out.mkdir(parents=True, exist_ok=True)
    runs: dict = {k: [] for k in kernels}
    for boot in range(boots):
        order = list(kernels)[::1 if boot % 2 == 0 else -1]
        for k in order:
            build, ko = kernels[k]
            runs[k].append(boot_once(k, boot, build, ko, out, count, reps,
                                     kernel_scenarios(ko, scenarios), timeout))
    for k, (build, ko) in kernels.items():
        mine = kernel_scenarios(ko, scenarios)
        if boots < 2 or not (why := disagreement(runs[k], mine)):
            continue
        logger.info(f"  icount {k}: the boots disagree by more than {AGREEMENT:.1%} "
                    f"({'; '.join(why)}): one boot more")
        runs[k].append(boot_once(k, boots, build, ko, out, count, reps, mine, timeout))
        keep = agreeing(runs[k], boots, mine)
        if keep is None:
            raise RuntimeError(
                f"{k}: no {boots} of its {boots + 1} boots agree within {AGREEMENT:.1%}: "
                + "; ".join(disagreement(runs[k], mine)))
        if rejected is not None:
            rejected[k] = [b for i, b in enumerate(runs[k]) if i not in keep]
        runs[k] = [runs[k][i] for i in keep]
    return runs


def judge(runs: dict, keys=None, guards=ICOUNT_GUARDS) -> list[dict]:
    """The guards (all, or those named in keys) whose rows ran on both sides,
    decided on the median instructions per packet of each side's runs: "met"
    when B/A is within the bounds, "not met" when it is not or a side has
    fewer than ICOUNT_MIN_RUNS runs or ICOUNT_BOOTS boots; a row without
    bounds (ICOUNT_REPORTS) is "report"."""
    rows = []
    for g in guards:
        if keys is not None and g.key not in keys:
            continue
        a, b = ([v for boot in runs.get(k, []) for v in boot.get(s, [])] for k, s in (g.a, g.b))
        if not a or not b:
            continue
        booted = min(sum(1 for boot in runs[k] if boot.get(s)) for k, s in (g.a, g.b))
        row = {"key": g.key, "title": g.title, "a": list(g.a), "b": list(g.b),
               "target": g.target, "lo": g.lo, "hi": g.hi, "runs": min(len(a), len(b)),
               "boots": booted, "a_median": None, "b_median": None, "ratio": None}
        if row["runs"] < ICOUNT_MIN_RUNS and not g.report:
            row.update(verdict="not met",
                       why=f"{row['runs']} runs, fewer than {ICOUNT_MIN_RUNS}")
        elif booted < ICOUNT_BOOTS and not g.report:
            row.update(verdict="not met",
                       why=f"{booted} boot(s) of a side, fewer than {ICOUNT_BOOTS}")
        else:
            am, bm = statistics.median(a), statistics.median(b)
            ratio = bm / am
            ok = (g.lo is None or ratio >= g.lo) and (g.hi is None or ratio <= g.hi)
            row.update(a_median=am, b_median=bm, ratio=ratio,
                       verdict="report" if g.report else "met" if ok else "not met",
                       why=f"{am:.1f} -> {bm:.1f} instructions/packet, B/A {ratio:.4f} "
                           f"({bm - am:+.1f}), target {g.target}")
        rows.append(row)
    return rows


def guard_lines(guards: list[dict], reports: bool = False) -> list[str]:
    """The guards' table, or with reports the table of ICOUNT_REPORTS' rows."""
    if not guards:
        return []
    if reports:
        lines = ["Reported (tools/bench/bench_config.py ICOUNT_REPORTS, no target): B/A of "
                 "the medians, B - A in instructions per packet.", "",
                 "| row | comparison | A | B | B/A | B - A |", "|---|---|---|---|---|---|"]
    else:
        lines = ["Guards (tools/bench/bench_config.py ICOUNT_GUARDS): B/A of the medians, "
                 f"each side at least {ICOUNT_MIN_RUNS} runs.", "",
                 "| guard | comparison | A | B | B/A | target | verdict |",
                 "|---|---|---|---|---|---|---|"]

    def cell(v):
        return "-" if v is None else f"{v:.1f}"
    for g in guards:
        ratio = "-" if g["ratio"] is None else f"{g['ratio']:.4f}"
        row = f"| {g['key']} | {g['title']} | {cell(g['a_median'])} | {cell(g['b_median'])} | "
        if reports:
            diff = "-" if g["ratio"] is None else f"{g['b_median'] - g['a_median']:+.1f}"
            lines.append(row + f"{ratio} | {diff} |")
            continue
        verdict = "met" if g["verdict"] == "met" else f"**NOT MET** ({g['why']})"
        lines.append(row + f"{ratio} | {g['target']} | {verdict} |")
    return lines + [""]


def module_note(tree, rev: str, patch=None) -> str:
    """What a dummy module built by build_dummy_module is, for the report."""
    return f"dummy.c of {tree}@{rev}" + (f" + {patch}" if patch else "") + ", built out of tree"


def module_source(tree, rev: str, patch=None) -> dict:
    """What a dummy module built by build_dummy_module is built from, for
    the record: the tree's commit of rev, and the patch's digest."""
    done = git_run(tree, "rev-parse", f"{rev}^{{commit}}", capture="apart")
    source = {"tree": str(tree), "rev": rev,
              "commit": done.stdout.strip() if done.returncode == 0 else None}
    if patch:
        source.update(patch=str(patch), patch_sha256=hashlib.sha256(
            Path(patch).read_bytes()).hexdigest())
    return source


def kernel_builds(kernels: dict, modules: dict | None = None) -> dict:
    """Each kernel as the record names it: its build directory with the tree
    commit built there (common.stamp.build_source), and for a dummy.ko of
    its own, the module's source (module_source, or the .ko's path)."""
    builds = {}
    for k, (build, ko) in kernels.items():
        builds[k] = build_source(build)
        if ko:
            builds[k]["module"] = (modules or {}).get(k) or {"ko": str(ko)}
    return builds


def run(kernels: dict, out: Path, count: int = COUNT, reps: int = 3, boots: int = 2,
        scenarios=tuple(SCENARIOS), timeout: int = 900,
        modules: dict | None = None, sources: dict | None = None,
        stages=("tools.bench.icount",)) -> dict:
    """kernels: {label: (build dir, dummy.ko or None)}; modules: {label: what
    its dummy.ko is} (module_note), said instead of the module's path;
    sources: {label: what it is built from} (module_source); stages: what
    made the record, for its source stamp (common/record_inputs.py). Writes
    icount.json (rows, guards, reports, runs, the boots left out for
    disagreeing), icount.md and the source stamp (source.json) into out;
    returns the data. Raises RuntimeError when a boot fails or a kernel's
    boots do not agree (boot_runs())."""
    rejected: dict = {}
    runs = boot_runs(kernels, out, count, reps, boots, scenarios, timeout, rejected)
    modules = modules or {}
    data = {"environment": {"count": count, "reps": reps, "boots": boots,
                            "qemu_opts": QEMU_OPTS, "kernel_args": CLOCKSOURCE_ARGS,
                            "source": source_stamp(stages=stages),
                            "kernels": {k: f"{b}" + (f" with {modules.get(k, ko)}" if ko else "")
                                        for k, (b, ko) in kernels.items()},
                            "kernel_builds": kernel_builds(kernels, sources)},
            "scenarios": list(scenarios), "rows": summarize(runs, scenarios),
            "guards": judge(runs), "reports": judge(runs, guards=ICOUNT_REPORTS),
            "runs": runs, "rejected": rejected}
    (out / "icount.json").write_text(json.dumps(data, indent=2) + "\n")
    write_source_stamp(out, stages=stages)
    (out / "icount.md").write_text(markdown(data))
    return data


def built_tree(build: str | Path) -> Path:
    """The kernel tree the build directory was built from, if it still holds
    what was built (the commit and local changes of the build's stamp,
    common.stamp); raises RuntimeError naming both otherwise."""
    link = Path(build) / "source"
    stamp = build_source(build)
    if not link.is_dir() or not stamp.get("commit"):
        raise RuntimeError(f"{build}: no source link or no {BUILD_SOURCE}: not a kernel build "
                           "directory kernel/build.sh made")
    src = link.resolve()
    now = tree_source(src)
    keys = ("commit", "dirty", "changes_sha256")
    if any(now.get(k) != stamp.get(k) for k in keys):
        def said(s):
            return f"{str(s.get('commit'))[:12]}{' with local changes' if s.get('dirty') else ''}"
        raise RuntimeError(f"{build} was built from {said(stamp)} of {src}, which now holds "
                           f"{said(now)}: a module would see other headers; check out "
                           f"{str(stamp['commit'])[:12]} there")
    return src


def build_dummy_module(build: str | Path, tree: str | Path, rev: str, dest: Path,
                       patch: str | Path | None = None, log_path: Path | None = None) -> Path:
    """dummy.ko built out of tree against the build directory `build` from
    drivers/net/dummy.c at rev of the git tree `tree`, with `patch` applied
    (patch -p3: a patch of drivers/net/dummy.c). It is compiled with the
    headers of the tree the build was made from (the build's `source` link),
    which must still hold the commit the build's stamp names, and the make
    runs there with O=build: a copied build directory's own Makefile names
    the directory it was copied from. Returns the module's path; raises
    RuntimeError when the tree moved or a step fails (its output in log_path)."""
    src = built_tree(build)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    (dest / "Kbuild").write_text("obj-m := dummy.o\n")
    logfile: Path = log_path or dest / "build.log"
    logfile.write_text("")

    def step(cmd: list[str], to: Path | None = None) -> None:
        with open(logfile, "a") as log:
            log.write("$ " + " ".join(cmd) + "\n")
            log.flush()
            if to:
                with open(to, "w") as out:
                    code = subprocess.run(cmd, cwd=dest, stdout=out, stderr=log).returncode
            else:
                code = subprocess.run(cmd, cwd=dest, stdout=log, stderr=log).returncode
        if code:
            raise RuntimeError(f"dummy module for {dest.name}: {cmd[0]} exited {code} "
                               f"(see {logfile})")

    step(["git", "-C", str(tree), "show", f"{rev}:drivers/net/dummy.c"], dest / "dummy.c")
    if patch:
        step(["patch", "-p3", "-i", str(Path(patch).resolve())])
    step(["make", "-C", str(src), f"O={Path(build).resolve()}", f"M={dest.resolve()}",
          "CC=ccache gcc", "modules"])
    ko = dest / "dummy.ko"
    if not ko.is_file():
        raise RuntimeError(f"dummy module for {dest.name}: no {ko}")
    return ko


@logs.printed
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", action="append", required=True, metavar="LABEL=BUILD[:KO]",
                    help="a build directory, with a dummy.ko to load instead of its own")
    ap.add_argument("--dummy-module", action="append", default=[],
                    metavar="LABEL=TREE@REV[:PATCH]",
                    help="build LABEL's dummy.ko out of tree against its build directory "
                         "from drivers/net/dummy.c at REV of the git tree TREE, PATCH applied")
    ap.add_argument("--out", default="results/icount")
    ap.add_argument("--count", type=int, default=COUNT)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--boots", type=int, default=2)
    ap.add_argument("--scenarios", type=lambda s: s.split(","), default=list(SCENARIOS))
    args = ap.parse_args(argv)
    kernels = {}
    for spec in args.kernel:
        label, _, rest = spec.partition("=")
        build, _, ko = rest.partition(":")
        if not label or not build:
            ap.error(f"--kernel {spec}: want LABEL=BUILD[:KO]")
        kernels[label] = (build, ko or None)
    modules = {}
    for spec in args.dummy_module:
        label, _, rest = spec.partition("=")
        tree, _, rest = rest.partition("@")
        rev, _, patch = rest.partition(":")
        if label not in kernels or kernels[label][1] or not tree or not rev:
            ap.error(f"--dummy-module {spec}: want LABEL=TREE@REV[:PATCH] for a --kernel "
                     "LABEL=BUILD given without a module")
        modules[label] = (tree, rev, patch or None)
    if "base" not in kernels:
        ap.error("a kernel labelled base is needed: every row is compared with it")
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        ap.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    out = Path(args.out)
    try:
        # The modules live as long as the boots: the record says what they are.
        with tempfile.TemporaryDirectory(prefix="icount-modules.") as tmp:
            for label, (tree, rev, patch) in modules.items():
                build = kernels[label][0]
                ko = build_dummy_module(build, tree, rev, Path(tmp) / label, patch)
                kernels[label] = (build, str(ko))
            data = run(kernels, out, args.count, args.reps, args.boots, args.scenarios,
                       modules={k: module_note(*m) for k, m in modules.items()},
                       sources={k: module_source(*m) for k, m in modules.items()})
    except (RuntimeError, FileNotFoundError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(markdown(data))
    if bad := unmet(data["guards"]):
        print("error: guards not met: " + "; ".join(bad), file=sys.stderr)
        return 1
    return 0


def unmet(guards: list[dict]) -> list[str]:
    """Every guard of ICOUNT_GUARDS not met among judge()'s rows, with why:
    one whose rows did not run on both sides is not judged, so not met."""
    judged = {g["key"]: g for g in guards}
    return [f"{g.key}: " + (f"{judged[g.key]['verdict']} ({judged[g.key]['why']})"
                            if g.key in judged else "not judged: its rows did not run on "
                            f"{g.a[0]} and {g.b[0]}")
            for g in ICOUNT_GUARDS if judged.get(g.key, {}).get("verdict") != "met"]


if __name__ == "__main__":
    sys.exit(main())

"""run_matrix(): the selftest programs run in VMs booted on each kernel
(the tree's kselftests installed first) and judged (judge.py)."""

import logging
import shutil
from pathlib import Path

from ci import report
from common import vm
from ci.matrix.expectations import (TDC_STABLE_CATEGORIES, expected, load_expectations, programs,
                                    series_cases, tdc_expect, tdc_tree_ids)
from ci.matrix.judge import (errno_keyed_programs, failing_cases, judge, patched_only,
                             regression_kept)
from ci.matrix.kselftests import install_kselftests, kselftest_collections
from ci.matrix.read import read_program, unfinished
from common.cache import cache_dir
from common.paths import ROOT
from common.programs import CXX_BUILD, read_programs
from common.stamp import write_source_stamp

logger = logging.getLogger(__name__)


def selftest_kernel(label):
    """SELFTEST_KERNEL of a kernel label: the tree it is built from. The
    no-callback and debug kernels are built from the patched tree."""
    return "base" if label == "base" else "patched"


def tdc_subset(expect, progs, label, labels, failing=(), listed=()):
    """The environment that makes tc-testing.sh run only some tdc cases
    ("TDC_IDS='id ...' "), on the base kernel when the patched one runs
    beside it, and on the kernels of listed: those expectations.json lists
    and those that failed on the patched kernel (failing), run there first.
    Every other case passed on the patched kernel; the others add nothing to
    that but minutes. "" everywhere else."""
    if label not in listed and (label != "base" or "patched" not in labels):
        return ""
    ids = sorted({case for prog, kind in progs if kind == "tdc"
                  for case in expect.get(prog, {})} | set(failing))
    return f"TDC_IDS='{' '.join(ids)}' " if ids else ""


# A peer case (tc-testing's, a tree kselftest's) that failed on patched and
# passed on base is rerun on both, alternating, up to this many more pairs
# of boots before it is judged (judge.py: REGRESSION or FLAKY).
RERUN_PAIRS = 3


def flaky_suspects(runs, expect, progs, tests, own):
    """{program: {case}}: the peer cases that failed on patched and passed
    on base where expectations.json wants a pass on both. Peer: a
    tc-testing case or a kselftest of the tree, not one of own (the series'
    own kselftests and tc-testing ids, expectations.series_cases()), whose
    cases keep one-run strictness, as the C++ programs' do."""
    own_ksft, own_tdc = own
    out = {}
    for prog, kind in progs:
        if kind not in ("tdc", "kselftest") or tests.get(prog, "") in own_ksft:
            continue
        patched, base = (runs.get(label, {}).get(prog) for label in ("patched", "base"))
        if not patched or not base:
            continue
        on_base = {case: res.status for case, res in reversed(base.ktap.results)}
        for case, res in patched.ktap.results:
            wanted = kind == "tdc" or case in expect.get(prog, {})
            if (res.status == "fail" and on_base.get(case) == "pass" and wanted
                    and not (kind == "tdc" and case in own_tdc)
                    and all(expected(expect, prog, case, k)[0] == "pass"
                            for k in ("patched", "base"))):
                out.setdefault(prog, set()).add(case)
    return out


def rerun_suspects(suspects, runs, boot, pairs=RERUN_PAIRS):
    """Reruns the suspects (flaky_suspects()) on patched, then base, up to
    pairs times, each boot running only their programs (boot(label, n,
    {program: cases}) -> {program: ProgramRun}, or why the VM failed),
    and stops once every suspect has passed on patched or failed on base.
    Returns ({(program, case): {"patched": [status...], "base": [...]}},
    the first run's included; problems): a failed boot or a suspect a rerun
    did not report is a problem, its run not counted."""
    got = {(prog, case): {label: [runs[label][prog].ktap.cases[case].status]
                          for label in ("patched", "base")}
           for prog, cases in suspects.items() for case in cases}
    problems = []
    for n in range(1, pairs + 1):
        if not any(regression_kept(s) for s in got.values()):
            break
        for label in ("patched", "base"):
            again = boot(label, n, suspects)
            if isinstance(again, str):
                return got, problems + [f"rerun {n} of the flaky suspects on {label}: {again}"]
            for prog, case in got:
                res = again.get(prog) and again[prog].ktap.cases.get(case)
                if res:
                    got[(prog, case)][label].append(res.status)
                else:
                    problems.append(f"{prog}: {case}: not reported by rerun {n} on {label}")
    return got, problems


def own_tdc_not_run(own_tdc, tree, tdc_ids):
    """The series' own tc-testing ids (own_tdc) that tree has and the
    categories run leave out ({program: ids} of tdc_expect()): a category
    choice must never drop a case the series adds."""
    run = set().union(*tdc_ids.values()) if tdc_ids else set()
    return sorted((set(own_tdc) & tdc_tree_ids(tree)) - run)


def run_matrix(kernels, outdir, bindir=CXX_BUILD, tree="", timeout=1800,
               expect=None, progs=None, churn_seconds=20, before=None, after=None,
               ksft_root=None, tdc_categories=TDC_STABLE_CATEGORIES, tdc_base_all=False,
               iproute2=None, tdc_timeout=900, tdc_listed=(), controls_on_base=True,
               own=None, stages=None):
    """kernels: {label: build_dir}. Boots each, runs the programs and judges
    them (expect, progs: expectations.json and programs.txt unless given).
    With kselftest programs among them, the tree's selftests are installed
    first (install_kselftests(), under ksft_root, by default the cache's
    kselftest/<outdir's name>).
    The VM's runner gets SELFTEST_KERNEL (selftest_kernel()) for its
    programs. stages: what made the record, for its source stamp
    (common/record_inputs.py). before, after: functions of a kernel's
    results directory giving a shell command the VM runs before and after
    the programs (the debug kernels' fault injection and instrument dump);
    the VM's exit status stays run-in-vm.sh's. Returns an MatrixVerdict with cases and matrix.
    tdc_categories: the tc-testing categories run (TDC_ALL: the whole suite);
    every tree case of them must be reported (tdc_expect()). The base kernel
    beside the patched one runs them all with tdc_base_all, else only the
    listed cases and those that failed on the patched kernel, which then
    runs first (tdc_subset()). iproute2: the directory of the ip and tc
    tc-testing runs (TDC_IPROUTE2), None for the host's; tdc_timeout: its
    limit in seconds (run-in-vm.sh's TDC_TIMEOUT). tdc_listed: the labels
    whose tdc runs only the listed cases, whatever runs beside them.
    controls_on_base: the base kernel runs every program; else, beside a
    patched kernel (which then runs first), not the controls that passed
    there (patched_only()). With base and patched, a peer case that failed
    on patched and passed on base is rerun on both (flaky_suspects(),
    rerun_suspects(); own: the series' own cases, by default
    expectations.series_cases()), its VMs' results in <label>-rerun<N>/."""
    expect = load_expectations() if expect is None else expect
    # Programs given: the VM runs only those.
    given = progs is not None
    progs = programs() if progs is None else progs
    tests = {p.name: p.kselftest for p in read_programs() if p.kind == "kselftest"}
    ksft, install_note = "", ""
    if targets := kselftest_collections(progs, tests):
        root = ksft_root or cache_dir() / "kselftest" / Path(outdir).name
        ksft, secs = install_kselftests(tree, root, targets)
        install_note = f"\nselftests installed ({' '.join(targets)}) in {secs:.0f} s: {ksft}"
        logger.info(install_note.strip())
    runs, boot_cases, problems, listed_only = {}, [], [], []
    required, tdc_env = {}, ""
    if any(kind == "tdc" for _, kind in progs):
        tdc_env = f"TDC_CATEGORIES='{' '.join(tdc_categories)}' TDC_TIMEOUT={int(tdc_timeout)} "
        tdc_env += f"TDC_IPROUTE2={iproute2} " if iproute2 else ""
        if tree:
            expect, tdc_ids = tdc_expect(expect, progs, tree, tdc_categories)
            required = {label: tdc_ids for label in kernels}
            own = series_cases() if own is None else own
            if missing := own_tdc_not_run(own[1], tree, tdc_ids):
                raise ValueError(f"tc-testing categories {' '.join(tdc_categories)} leave out "
                                 f"the series' own cases {' '.join(missing)}")
    # The results say which commit of the project made them
    # (ci/tests/test_results_fresh.py reads it from copies kept in Documentation/).
    write_source_stamp(outdir, stages=stages)
    order = list(kernels)
    if ((tdc_env and not tdc_base_all) or not controls_on_base) and \
            "base" in kernels and "patched" in kernels:
        # Patched first: the base reruns its tdc failures, and skips the controls that passed.
        order.sort(key=lambda label: label != "patched")
    not_run = {}

    def boot(label, shared_dir, subset, only):
        """run-in-vm.sh in a VM of kernel label: its VmResult."""
        # Nothing of an earlier run is read as this one's.
        shutil.rmtree(shared_dir, ignore_errors=True)
        cmd = (f"{subset}{tdc_env}SELFTEST_KERNEL={selftest_kernel(label)} "
               f"CHURN_SECONDS={int(churn_seconds)} "
               f"bash {ROOT}/selftests/run-in-vm.sh {shared_dir} {bindir} {tree}{only}"
               + (f" --kselftests={ksft}" if ksft else ""))
        if before or after:
            cmd = (f"{before(shared_dir) + '; ' if before else ''}{cmd}; rc=$?; "
                   f"{after(shared_dir) + '; ' if after else ''}(exit $rc)")
        res = vm.run_vm(kernels[label], cmd, rwdir=shared_dir, timeout=timeout,
                        log_path=Path(outdir) / f"{shared_dir.name}-console.log")
        logger.info(f"    {shared_dir.name}: {res.reason()} after {res.seconds:.0f}s "
                    f"(console: {res.log_path})")
        return res

    def rerun(label, n, suspects):
        """The suspects' programs, their tdc cases alone, rerun on label."""
        shared_dir = Path(outdir) / f"{label}-rerun{n}"
        ids = sorted(c for p, k in progs if k == "tdc" for c in suspects.get(p, ()))
        named = ", ".join(f"{p}: {c}" for p, cs in sorted(suspects.items()) for c in sorted(cs))
        logger.info(f"  rerun {n} on {label} (failed on patched, passed on base): {named}")
        res = boot(label, shared_dir, f"TDC_IDS='{' '.join(ids)}' " if ids else "",
                   f" --only={','.join(sorted(suspects))}")
        if not (res.ok and (shared_dir / "complete").is_file()):
            return f"{res.reason()} (console: {res.log_path})"
        return {p: read_program(shared_dir, p, k, tree, tests.get(p, ""))
                for p, k in progs if p in suspects}

    for label in order:
        shared_dir = Path(outdir) / label
        failing = {c for p, k in progs if k == "tdc"
                   for c in failing_cases(runs.get("patched", {}).get(p))}
        subset = "" if tdc_base_all else tdc_subset(expect, progs, label, list(kernels),
                                                    failing, tdc_listed)
        mine = progs
        if label == "base" and not controls_on_base:
            not_run[label] = patched_only(expect, progs, list(kernels), runs.get("patched", {}))
            mine = [(p, k) for p, k in progs if p not in not_run[label]]
        only = (f" --only={','.join(p for p, _ in mine)}" if given or mine != progs else "")
        logger.info(f"  booting the {label} kernel (TCG) and running {len(mine)} program(s)"
                    + (f" (not rerun: {len(progs) - len(mine)} control program(s) that passed "
                       "on patched)" if mine != progs else ""))
        if subset:
            listed_only.append(label)
            asked = set(subset.split("'")[1].split())
            required[label] = {p: asked for p, k in progs if k == "tdc"}
        res = boot(label, shared_dir, subset, only)
        boot_cases.append(report.Case(f"vm.{label}", "boot and run", "pass" if res.ok else "fail",
                                      res.reason()))
        complete = res.ok and (shared_dir / "complete").is_file()
        if not complete:
            # The programs that finished are judged; one that was still
            # running (a hung test) is named, its listed cases never ran.
            hung = unfinished(shared_dir, progs, tree, tests)
            problems.append(f"{label} VM: {res.reason()}" + (f"; {hung[1]}" if hung else ""))
            if hung:
                boot_cases.append(report.Case(f"selftests.{label}",
                                              f"{hung[0]}: exit code and plan", "fail", hung[1]))
        elif (shared_dir / "no-timers").is_file():
            problems.append(f"{label} VM: the kernel has no POSIX timers "
                            f"({(shared_dir / 'no-timers').read_text().strip()}): the runner's "
                            "900 s limit per program and ping's -W never fire "
                            "(CONFIG_POSIX_TIMERS, kernel/configs/vng.config)")
        # After a complete run every program is read (one without results
        # fails as such); after a stopped one, those that finished.
        runs[label] = {p: read_program(shared_dir, p, k, tree, tests.get(p, ""))
                       for p, k in mine if complete or (shared_dir / f"{p}.rc").is_file()}
    reruns = {}
    if "base" in runs and "patched" in runs:
        suspects = flaky_suspects(runs, expect, progs, tests,
                                  series_cases() if own is None else own)
        if suspects:
            reruns, more = rerun_suspects(suspects, runs, rerun)
            problems += more
    out = judge(runs, expect, progs, list(kernels), problems, listed_only, required, not_run,
                errno_keyed_programs(progs), reruns)
    out.cases = boot_cases + out.cases
    out.matrix += install_note
    return out

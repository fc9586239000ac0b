"""The matrix judged: judge() gives the MatrixVerdict of the programs'
runs on every kernel (a report.Case per case and program, the matrix, the
programs' times); patched_only() names the control programs the base
kernel need not rerun beside the patched one.
"""

from dataclasses import dataclass, field

from ci import report
from ci.matrix.case import judge_case, program_problems
from ci.matrix.expectations import (expected, expected_cases, is_control, kernel_judged,
                                    programs)


@dataclass
class MatrixVerdict:
    ok: bool = True
    summary: str = ""
    matrix: str = ""
    cases: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    flaky: list = field(default_factory=list)  # "PROG: CASE: patched 1/4 failed, base 0/4 failed"
    not_run: list = field(default_factory=list)  # "PROG: CASE" of entries with "not_run"


def errno_keyed_programs(progs, listed=None):
    """The programs of progs that name a failure's errno by a "# errno:"
    key line: the C++ programs, kind ktap in programs.txt (listed: its
    [(name, kind)]), each built from selftests/ with its KtapWriter. The
    kselftests' and tc-testing's output is the kernel tree's, which writes
    no such key: their errnos are read from the prose."""
    cxx = {prog for prog, kind in (programs() if listed is None else listed) if kind == "ktap"}
    return {prog for prog, kind in progs if kind == "ktap" and prog in cxx}


def failing_cases(run):
    """The ids of the cases of a ProgramRun that did not pass (none of a
    program that did not run)."""
    return {case for case, res in run.ktap.results if res.status != "pass"} if run else set()


def control_programs(expect, progs, labels):
    """The programs (not tdc: tdc_subset() chooses its cases) every case of
    which expectations.json lists as a control on every kernel of labels:
    passing everywhere, no new behaviour to show on the base. Not one that
    judges its rows by the kernel it runs on (kernel_judged()): its "pass"
    on base is the base's behaviour shown."""
    judged = kernel_judged(progs)
    return {prog for prog, kind in progs
            if kind != "tdc" and expect.get(prog) and prog not in judged
            and all(is_control(e, labels) for e in expect[prog].values())}


def patched_only(expect, progs, labels, patched_runs):
    """The control programs (control_programs()) the base kernel beside the
    patched one need not run: those that ran on the patched kernel with
    every case passing, its exit code and plan as they imply. A control that
    failed there runs on the base too, to tell a regression from the tree's
    own failure. Empty when there is no patched kernel beside a base."""
    if "base" not in labels or "patched" not in labels:
        return set()
    kinds = dict(progs)
    out = set()
    for prog in control_programs(expect, progs, labels):
        run = patched_runs.get(prog)
        if run is None or program_problems(kinds[prog], run.ktap, run.rc, run.runner):
            continue
        if run.ktap.results and not failing_cases(run):
            out.add(prog)
    return out


def rerun_counts(statuses):
    """"patched 1/4 failed, base 0/4 failed" of a rerun case's {label:
    [status of each run]}."""
    return ", ".join(f"{label} {sum(s != 'pass' for s in got)}/{len(got)} failed"
                     for label, got in statuses.items())


def regression_kept(statuses):
    """Whether a rerun case failed on every run on patched and passed on
    every run on base: a regression, not a flaky case."""
    return (all(s != "pass" for s in statuses.get("patched", ["pass"]))
            and all(s == "pass" for s in statuses.get("base", ["fail"])))


def tdc_note(per, labels):
    """(verdict, note) of a tdc case without an entry that failed on the
    patched kernel: a regression if it passed on base, else a failure of
    both that expectations.json must list with its reason; ("", "") else."""
    got = {label: per[label].status for label in labels if label in per}
    if got.get("patched", "pass") == "pass" or "base" not in labels:
        return "", ""
    if got.get("base") == "pass":
        return "REGRESSION", " (a regression: it passes on base)"
    if "base" in got:
        return "UNLISTED", (f" (it {got['base']}s on base too: list it in expectations.json "
                            "with its reason)")
    return "", ""


def judge(runs, expect, progs, labels, problems=None, listed_only=(), required=None,
          not_run=None, errno_keyed=(), reruns=None):
    """MatrixVerdict of the runs: {label: {program: ProgramRun}}, a kernel whose
    VM failed left out (its listed cases then never ran). problems: those
    found before (the VM boots), counted in the summary. listed_only: the
    labels whose tdc programs ran only some cases (tdc_subset()): an
    unlisted tdc case is judged on the other kernels. required: {label:
    {program: ids}} of the tdc cases each kernel must report (the tree's
    cases of the categories run, or the subset asked for). not_run: {label:
    programs} left out on a kernel as controls that passed on the patched
    one (patched_only()): their cases show "not run (control)" there.
    errno_keyed: the programs whose errnos are read from their "# errno:"
    key lines alone (errno_keyed_programs()), the others' from their prose
    (case.not_shown()). reruns: {(program, case): {label: [status of each
    run]}} of the peer cases that failed on patched and passed on base,
    rerun on both (run.py rerun_suspects()): a regression only if every
    run failed on patched and passed on base, else FLAKY, a warning with
    its counts (MatrixVerdict.flaky), not a failure."""
    out = MatrixVerdict()
    not_run = not_run or {}
    reruns = reruns or {}
    judged = kernel_judged(progs)
    problems = list(problems or [])
    kinds = dict(progs)
    required = required or {}
    # (prog, case) -> {label: CaseResult}; listed and required cases show
    # as never run unless a program reports them.
    results = {key: {} for key in expected_cases(expect, progs)}
    for label in labels:
        for prog, ids in required.get(label, {}).items():
            for case in ids:
                results.setdefault((prog, case), {})
    prog_notes = []
    for label in labels:
        for prog, kind in progs:
            run = runs.get(label, {}).get(prog)
            if run is None:
                continue
            probs = program_problems(kind, run.ktap, run.rc, run.runner)
            plan = "no plan" if run.ktap.plan is None else f"plan 1..{run.ktap.plan}"
            out.cases.append(report.Case(
                f"selftests.{label}", f"{prog}: exit code and plan", "fail" if probs else "pass",
                "; ".join(probs) if probs else
                f"exit {run.rc}, {plan}, {len(run.ktap.results)} result(s)"))
            problems += [f"{prog} on {label}: {p}" for p in probs]
            prog_notes += [f"{prog} on {label}: {p}" for p in probs]
            for case, res in run.ktap.results:
                results.setdefault((prog, case), {}).setdefault(label, res)
    rows = [("test", "role", *[f"{k} (want)" for k in labels], "verdict")]
    controls = 0
    unlisted = {}  # tdc program -> its cases without an entry, as expected everywhere
    for (prog, case), per in sorted(results.items()):
        entry = expect.get(prog, {}).get(case)
        # A tdc case without an entry must pass on every kernel.
        plain = entry is None and kinds.get(prog) == "tdc"
        if plain:
            entry = {}
        control = is_control(entry, labels) and prog not in judged
        controls += control
        cells, verdict = [], "ok"
        word_both, note = tdc_note(per, labels) if plain else ("", "")
        rerun = reruns.get((prog, case))
        flaky = rerun is not None and not regression_kept(rerun)
        if rerun is not None:
            word_both = "" if flaky else "REGRESSION"
            note = "" if flaky else f" (a regression: {rerun_counts(rerun)})"
        if flaky:
            out.flaky.append(f"{prog}: {case}: {rerun_counts(rerun)}")
        for label in labels:
            got = per.get(label)
            if got is None and prog in not_run.get(label, ()):
                cells.append("not run (control)")
                continue
            if entry is None and got is None:
                cells.append("missing (none)")  # judged where it ran
                continue
            if (plain and got is None and label in listed_only
                    and case not in required.get(label, {}).get(prog, ())):
                cells.append("not run (listed only)")
                continue
            ok, word, msg = judge_case(entry, label, got, control, prog in errno_keyed)
            status = "pass" if ok else "fail"
            if ok and entry.get("not_run"):
                # It failed as listed, for the environment: no test of the
                # kernel, counted as not run.
                status, msg = "skip", f"not run: {entry['not_run']} ({msg})"
            if not ok and label == "patched" and word_both:
                word, msg = word_both, msg + note
            if not ok and label == "patched" and flaky:
                # Seen, never silently passed: a warning with its counts.
                ok, word, status = True, "FLAKY", "warn"
                msg = f"flaky: {rerun_counts(rerun)}; the first run: {msg}"
                verdict = word
            if not ok and verdict in ("ok", "FLAKY"):
                verdict = word
            want = expected(expect, prog, case, label)[0] if entry is not None else "none"
            cells.append(f"{got.status if got else 'missing'} ({want})")
            out.cases.append(report.Case(f"selftests.{label}", f"{prog}: {case}", status, msg))
            if not ok:
                problems.append(f"{prog}: {case} on {label}: {msg}")
        if word_both and verdict != "ok":
            verdict = word_both
        if entry and entry.get("not_run") and verdict == "ok":
            verdict = "NOT RUN"
            out.not_run.append(f"{prog}: {case}")
        if plain and verdict == "ok":
            unlisted[prog] = unlisted.get(prog, 0) + 1
            continue
        rows.append((f"{prog}: {case}", "control" if control else "", *cells, verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out.matrix = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                           for r in rows)
    for prog, n in sorted(unlisted.items()):
        out.matrix += (f"\n{prog}: {n} other case(s) without an entry, each passing on "
                       + ", ".join(k for k in labels if k not in listed_only))
    if out.not_run:
        out.matrix += ("\nnot run, failing for the environment as listed (expectations.json "
                       "\"not_run\"): " + ", ".join(out.not_run))
    if out.flaky:
        out.matrix += ("\nflaky (failed on patched and passed on base, then rerun on both, "
                       "alternating): " + "; ".join(out.flaky))
    out.matrix += "\nprograms: " + (
        "; ".join(prog_notes) if prog_notes else
        f"{len(progs)} x {len(runs)} kernel(s), exit codes and KTAP plans as their results imply")
    out.matrix += "\n" + times_table(runs, progs, labels)
    out.problems = problems
    out.ok = not problems and bool(results)
    n = len(results)
    skipped = "".join(f", {len(p)} control program(s) not rerun on {k}"
                      for k, p in sorted(not_run.items()) if p)
    skipped += (f", {len(out.not_run)} not run (listed): " + ", ".join(out.not_run)
                if out.not_run else "")
    skipped += (f", {len(out.flaky)} flaky: " + "; ".join(out.flaky)) if out.flaky else ""
    out.summary = (f"{n} case(s) ({controls} controls) x {len(labels)} kernels{skipped}, "
                   + ("all as expected" if out.ok else
                      f"{len(problems)} problem(s): " + "; ".join(problems[:3])
                      if problems else "no results"))
    return out


def times_table(runs, progs, labels):
    """Each program's wall time in seconds on each kernel (run-in-vm.sh's
    <name>.seconds; "-" where it did not run or left none), and the total."""
    rows = [("seconds", *labels)]
    total = {label: 0 for label in labels}
    for prog, _ in progs:
        cells = []
        for label in labels:
            secs = getattr(runs.get(label, {}).get(prog), "seconds", None)
            cells.append("-" if secs is None else str(secs))
            total[label] += secs or 0
        rows.append((prog, *cells))
    rows.append(("total", *(str(total[label]) for label in labels)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.rjust(w) if i else c.ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                     for r in rows)

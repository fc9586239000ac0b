"""Run the selftest programs in VMs booted on the base and patched kernels.

Every case of a judged program has an expected result per kernel
(selftests/expectations.json). The run fails when any result differs from
its expectation, so a test that cannot fail on the base kernel is caught as
well as a test failing on the patched one. Besides:

- an expected "fail" names what must be seen (``shows``: an errno name, an
  extack text or a counter value) in that case's diagnostics, the KTAP "#"
  lines before its result line; a
  failure that does not show them "failed for another reason";
- a program's KTAP plan and exit code count: a crash or an exit code its
  results do not imply, a missing plan or one that differs from the results,
  a case with no entry in expectations.json and an entry whose case never
  ran each fail the stage, named;
- cases expected to pass on every kernel are controls, labelled so in the
  matrix and in the report;
- the tree's Python kselftests (kind "kselftest") are installed on the host
  with the kselftest make (install_kselftests()) and run in the VM by the
  kselftest runner, as netdev CI runs them: their cases are read from the
  test's KTAP nested in the runner's, and the runner's result line counts
  too: a test the installed list lacks (not in its Makefile), one killed
  at its settings timeout, one the runner could not start, or an exit code
  its cases do not imply fail the stage, named;
- the tree's tc-testing (kind "tdc") is judged case by case too, its cases
  named by their tdc id: a listed case as expectations.json says, every
  other case must pass on every kernel; all cases skipped, no plan, or an
  exit code its results do not imply fail the stage.

KTAP is read by ci/ktap_parse.py, with the kernel tree's
tools/testing/kunit/kunit_parser.py when the tree is given.
"""

import errno
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ci import report
from ci.ktap_parse import CaseResult, Ktap, parse_results, parse_runner, parse_tdc
from common.cache import cache_dir
from common.programs import CXX_BUILD, PROGRAMS_TXT, read_programs
from common.stamp import write_source_stamp
from ci import vm

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class MatrixVerdict:
    ok: bool = True
    summary: str = ""
    matrix: str = ""
    cases: list = field(default_factory=list)
    problems: list = field(default_factory=list)


# ---- judging ----

def expected_rc(statuses):
    """Exit codes the kselftest results imply: 1 (KSFT_FAIL) if any failed,
    else 0, or 4 (KSFT_SKIP) when all were skipped (lib/py exits 0 then)."""
    if "fail" in statuses:
        return {1}
    if statuses and "pass" not in statuses:
        return {0, 4}
    return {0}


def rc_problem(rc, kind, statuses):
    """Why exit code rc is wrong for a program of this kind with these
    results; empty if it is right."""
    if rc is None:
        return "no exit code recorded: the program never finished"
    what = f"exit {rc}"
    if rc == 124:
        what += " (killed by the 900 s timeout)"
    elif rc > 128:
        what += f" (killed by signal {rc - 128})"
    elif rc == 127:
        what += " (command not found)"
    # tdc exits 1 when a case failed, else 0, and 4 when it found no case.
    want = (({1} if "fail" in statuses else {0}) if statuses else {4}) if kind == "tdc" \
        else expected_rc(statuses)
    if rc in want:
        return ""
    if rc > 128 or rc in (124, 127) or rc not in (0, 1, 4):
        return f"crashed: {what}"
    implied = " or ".join(map(str, sorted(want)))
    return f"unexpected {what}: its results imply exit {implied}"


def program_problems(kind, ktap, rc, runner=None):
    """Problems with a program as a whole: exit code, plan, duplicates.
    runner: the kselftest runner's problems with the test (a kselftest
    program's, see read_kselftest()), None for the other kinds. A test the
    runner gave no result for has those only; one it ended without an exit
    code of the test's own (a timeout) has no exit code to judge."""
    statuses = [r.status for _, r in ktap.results]
    probs = list(runner or [])
    if runner is not None and rc is None:
        if not ktap.plan and not ktap.results:
            return probs
    elif err := rc_problem(rc, kind, statuses):
        probs.append(err)
    if ktap.plan is None:
        probs.append("no KTAP plan")
    elif ktap.plan != len(ktap.results):
        probs.append(f"plan 1..{ktap.plan} but {len(ktap.results)} result(s)"
                     + (" (missing cases)" if ktap.plan > len(ktap.results) else ""))
    names = [n for n, _ in ktap.results]
    probs += [f"case {n!r} reported {names.count(n)} times"
              for n in sorted(set(names)) if names.count(n) > 1]
    if kind == "tdc" and statuses and set(statuses) == {"skip"}:
        probs.append(f"all {len(statuses)} case(s) skipped")
    probs += ktap.problems
    return probs


SHOW_KINDS = ("errno", "extack", "counter", "skip")
# What an entry may expect of a case on a kernel. "skip" is not one: a case
# that skips proves nothing, so a skip is accepted only as an expected
# "fail" whose shows name the skip's reason (kind "skip").
EXPECTED = ("pass", "fail", "xfail")


def _norm(text):
    return " ".join(text.split())


def token_re(value):
    """A regex finding value as whole tokens: not inside a longer number or
    word ("tx_packets +100" is not in "tx_packets +1000", "0 != 5" not in
    "0 != 50", "EINVAL" not in "EINVALX"), whitespace aside."""
    body = r"\s+".join(re.escape(word) for word in value.split())
    return re.compile(rf"(?<![\w.+-]){body}(?![\w]|[.+-]\w)")


# In "expected EINVAL, got EOPNOTSUPP (...)" and "got tx 1/1, expected tx
# 4/4", the clause from "expected" up to a following "got" or the line's
# end states what was wanted, not what happened.
EXPECTED_CLAUSE_RE = re.compile(r"\bexpected\b.*?(?=[,;]?\s*\bgot\b|$)")


def got_part(line):
    """A diagnostic line without the clauses that state what was expected."""
    return EXPECTED_CLAUSE_RE.sub(" ", line)


def not_shown(shows, diag, skip_reason=None):
    """What of shows ({kind: text or [texts]}) the diagnostics lack.

    Every text is matched as whole tokens (token_re()). An errno is seen as
    its name or its strerror() text, which the C++ programs ("EOPNOTSUPP
    (Operation not supported)", bad_input's "got EOPNOTSUPP") and Python's
    exceptions ("Netlink error: Operation not supported") print, and only in
    what was got: not in the clauses that say what was expected
    (got_part()), so "expected EOPNOTSUPP, got EINVAL (...)" shows EINVAL and
    not EOPNOTSUPP. Extack and counter texts are seen anywhere in the
    diagnostics. A "skip" text is seen only in the reason of a skipped case
    (skip_reason, None for a case that did not skip).
    """
    text = _norm(" ".join(diag))
    got = _norm(" ".join(got_part(line) for line in diag))
    missing = []
    for kind, values in sorted(shows.items()):
        for value in [values] if isinstance(values, str) else values:
            if kind == "errno":
                num = getattr(errno, value, None) if value.isupper() else None
                seen = num is not None and any(
                    token_re(t).search(got) for t in (value, os.strerror(num)))
            elif kind == "skip":
                seen = skip_reason is not None and bool(token_re(value).search(skip_reason))
            else:
                seen = kind in SHOW_KINDS and bool(token_re(value).search(text))
            if not seen:
                missing.append(f"{kind} {value!r}")
    return missing


def _shown(shows):
    return "; ".join(f"{kind} " + ", ".join(
        repr(v) for v in ([values] if isinstance(values, str) else values))
        for kind, values in sorted(shows.items()))


def is_control(entry, labels):
    return bool(entry) and all(entry.get(k, "pass") == "pass" for k in labels)


def _brief(diag, limit=240):
    """The diagnostics on one line; their end if too long (where a Python
    traceback names its exception)."""
    text = " | ".join(diag)
    return text if len(text) <= limit else "..." + text[3 - limit:]


def load_expectations(path=ROOT / "selftests/expectations.json"):
    return json.loads(Path(path).read_text()) if Path(path).is_file() else {}


def expected(expect, prog, case, kernel):
    entry = expect.get(prog, {}).get(case, {})
    return entry.get(kernel, "pass"), entry.get("why", "")


def expected_cases(expect, progs):
    """(program, case) of every case expectations.json lists for a program
    of programs.txt."""
    return {(prog, case) for prog, _ in progs for case in expect.get(prog, {})}


def programs(path=PROGRAMS_TXT):
    """[(name, kind)] of programs.txt (common.programs) in file order."""
    return [(p.name, p.kind) for p in read_programs(path)]


@dataclass
class ProgramRun:
    """What one program left in the VM's results directory."""
    kind: str
    rc: int | None  # None: no exit code recorded (kselftest: none of the test's own)
    ktap: Ktap = field(default_factory=Ktap)
    seconds: int | None = None  # wall time, from run-in-vm.sh
    runner: list | None = None  # kselftest: the runner's problems with the test


def read_program(shared_dir, prog, kind, tree="", test=""):
    """The ProgramRun of prog from shared_dir (run-in-vm.sh's
    OUT/<name>.{ktap,rc,out,stderr}); test: a kselftest program's
    COLLECTION:TEST (read_kselftest())."""
    shared_dir = Path(shared_dir)

    def text(ext):
        f = shared_dir / f"{prog}.{ext}"
        return f.read_text(errors="replace") if f.is_file() else ""

    try:
        rc = int(text("rc").strip())
    except ValueError:
        rc = None
    try:
        seconds = int(text("seconds").strip())
    except ValueError:
        seconds = None
    if kind == "tdc":
        return ProgramRun(kind, rc, parse_tdc(text("ktap")), seconds)
    if kind == "kselftest":
        run = read_kselftest(text("ktap"), text("stderr"), rc, test, tree)
        run.seconds = seconds
        return run
    return ProgramRun(kind, rc, parse_results(text("ktap"), tree), seconds)


NO_SUCH_TEST_RE = re.compile(r"No such test '([^']*)'")
TIMEOUT_RE = re.compile(r"^TIMEOUT (\d+) seconds$")
EXIT_RE = re.compile(r"^exit=(\d+)$")
# The exit code of the test that the runner's result line implies.
RUNNER_RC = {"": 0, "SKIP": 4, "XFAIL": 2}


KTAP_VERSION_RE = re.compile(r"^\s*(?:KTAP|TAP) version \d+")


def shell_test_ktap(done):
    """The one case of a shell test that prints no KTAP of its own (e.g.
    netdevsim's peer.sh; a Python test always does): named after its file, its status the
    runner's result (SKIP: exit 4), its diagnostics the test's output."""
    if not done.ok:
        status, reason = "fail", ""
    elif done.directive.startswith("SKIP"):
        status, reason = "skip", done.directive[4:].strip()
    else:
        status, reason = "pass", ""
    return Ktap(plan=1, results=[(done.test.partition(":")[2],
                                  CaseResult(status, reason, list(done.lines)))],
                parser="runner")


def read_kselftest(out, stderr, rc, test, tree=""):
    """ProgramRun of a kselftest program: out, stderr and rc those of the
    runner (run_kselftest.sh -t test, or drv-net-dummy.sh around it). Its
    ktap is the test's own KTAP, nested in the runner's; its rc the test's
    exit code as the runner's result line gives it (None where it gives
    none); its runner the runner's problems with the test:

    - run_kselftest.sh exits 1 before any KTAP with "No such test" when the
      installed kselftest-list.txt lacks the test (its Makefile does not
      list it);
    - "# TIMEOUT S seconds": the runner killed the test at its timeout (the
      collection's settings, 45 s without one);
    - "not ok" with no exit code: the runner could not run the test (a
      file missing or not executable);
    - no result for the test, another test than the one asked for, more
      than one result, or a runner exit code its result does not imply.
    A shell test that prints no KTAP of its own is one case (shell_test_ktap()).
    """
    runner = parse_runner(out)
    what = f"exit {rc}" if rc is not None else "no exit code"
    if rc == 124:
        what += " (killed by run-in-vm.sh, a minute past the settings timeout)"
    err = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    if (m := NO_SUCH_TEST_RE.search(stderr)) and runner.plan is None:
        return ProgramRun("kselftest", None, Ktap(), runner=[
            f"not in the installed kselftest-list.txt: run_kselftest.sh: No such test "
            f"'{m[1]}' ({what}); its Makefile does not list it (TEST_PROGS)"])
    mine = [t for t in runner.tests if t.test == test] if test else runner.tests
    probs = [f"run_kselftest.sh ran {t.test}, not {test}" for t in runner.tests
             if test and t.test != test]
    if runner.tests and runner.plan != len(runner.tests):
        probs.append(f"run_kselftest.sh: plan {runner.plan and f'1..{runner.plan}'} but "
                     f"{len(runner.tests)} test(s)")
    if len(mine) > 1:
        probs.append(f"run_kselftest.sh ran {test} {len(mine)} times")
    done = next((t for t in mine if t.ok is not None), None)
    if done is None:
        why = f": {err[-1]}" if err else ""
        started = " (it started, its result never came)" if mine else ""
        return ProgramRun("kselftest", None,
                          parse_results("\n".join(mine[0].lines), tree) if mine else Ktap(),
                          runner=probs + [f"run_kselftest.sh gave no result for "
                                          f"{test or 'the test'}{started} ({what}{why})"])
    ktap = parse_results("\n".join(done.lines), tree)
    if done.test.endswith(".sh") and not any(KTAP_VERSION_RE.match(ln) for ln in done.lines):
        ktap = shell_test_ktap(done)
    if rc is not None and rc != (0 if done.ok else 1):
        probs.append(f"run_kselftest.sh {what}, its result ({'ok' if done.ok else 'not ok'}) "
                     f"implies exit {0 if done.ok else 1}")
    test_rc = None
    if m := TIMEOUT_RE.match(done.directive):
        probs.append(f"{done.test} timed out: run_kselftest.sh killed it after {m[1]} s, "
                     f"the timeout of {done.test.split(':')[0]}/settings")
    elif m := EXIT_RE.match(done.directive):
        test_rc = int(m[1])
    elif done.ok and done.directive in RUNNER_RC:
        test_rc = RUNNER_RC[done.directive]
    elif not done.ok and not done.directive:
        said = [ln for ln in done.lines if ln.startswith("Warning:")]
        probs.append(f"run_kselftest.sh could not run {done.test}"
                     + (f": {'; '.join(said)}" if said else ""))
    else:
        probs.append(f"run_kselftest.sh: unknown result for {done.test}: "
                     f"{'ok' if done.ok else 'not ok'} # {done.directive}")
    return ProgramRun("kselftest", test_rc, ktap, runner=probs)


def judge_case(entry, label, got, control=False):
    """(ok, verdict, message) of one case on one kernel. entry: its
    expectations, None if expectations.json has none; got: its CaseResult,
    None if it never ran.

    got.status pass, fail, skip or xfail (lib/py's "# XFAIL"); the entry's
    pass, fail or xfail. An expected fail or xfail must show what the entry
    names; a skip is taken only where a fail is expected whose shows name
    the skip's reason ("skip"), a fail only where they name none.
    """
    if entry is None:
        return False, "NO ENTRY", ("no entry in expectations.json"
                                   + (f" (got {got.status})" if got else ""))
    want = entry.get(label, "pass")
    if want not in EXPECTED:
        return False, "BAD ENTRY", (f"expectations.json expects {want!r}, which is not one of "
                                    f"{', '.join(EXPECTED)}")
    why = entry.get("why", "")
    if control:
        why = why.removeprefix("control: ")
    why = f": {why}" if why else ""
    label_ = "control, " if control else ""
    if got is None:
        return False, "NEVER RAN", f"{label_}never ran, expected {want}{why}"
    head = f"{label_}got {got.status}, expected {want}"
    skip = f" [{got.reason}]" if got.reason else ""
    shows = entry.get("shows", {}).get(label) or {}
    skip_shown = "skip" in shows
    if got.status != want and not (got.status == "skip" and want == "fail"):
        detail = f" [{_brief(got.diag)}]" if got.status == "fail" and got.diag else skip
        return False, "MISMATCH", head + why + detail
    if want == "pass":
        return True, "ok", head + why + skip
    if not shows:
        return False, "MISMATCH", f"{head}, but expectations.json names nothing it must show"
    if (got.status == "skip") != skip_shown:
        return False, "MISMATCH", (
            f"{label_}got {got.status}, expected a skip showing {_shown(shows)}{why}"
            if skip_shown else f"{head} showing {_shown(shows)}, not a skip{why}{skip}")
    diag = got.diag + ([got.reason] if got.status == "xfail" and got.reason else [])
    if missing := not_shown(shows, diag, got.reason if got.status == "skip" else None):
        what = {"skip": "skipped", "xfail": "xfailed"}.get(got.status, "failed")
        seen = got.reason if got.status == "skip" else _brief(diag)
        return False, "OTHER REASON", (
            f"{what} for another reason: {seen or 'no diagnostics'}"
            f" (expected to show {', '.join(missing)})")
    return True, "ok", f"{head}, showing {_shown(shows)}{why}"


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
          not_run=None):
    """MatrixVerdict of the runs: {label: {program: ProgramRun}}, a kernel whose
    VM failed left out (its listed cases then never ran). problems: those
    found before (the VM boots), counted in the summary. listed_only: the
    labels whose tdc programs ran only some cases (tdc_subset()): an
    unlisted tdc case is judged on the other kernels. required: {label:
    {program: ids}} of the tdc cases each kernel must report (the tree's
    cases of the categories run, or the subset asked for). not_run: {label:
    programs} left out on a kernel as controls that passed on the patched
    one (patched_only()): their cases show "not run (control)" there."""
    out = MatrixVerdict()
    not_run = not_run or {}
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
        control = is_control(entry, labels)
        controls += control
        cells, verdict = [], "ok"
        word_both, note = tdc_note(per, labels) if plain else ("", "")
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
            ok, word, msg = judge_case(entry, label, got, control)
            if not ok and label == "patched" and word_both:
                word, msg = word_both, msg + note
            if not ok and verdict == "ok":
                verdict = word
            want = expected(expect, prog, case, label)[0] if entry is not None else "none"
            cells.append(f"{got.status if got else 'missing'} ({want})")
            out.cases.append(report.Case(f"selftests.{label}", f"{prog}: {case}",
                                         "pass" if ok else "fail", msg))
            if not ok:
                problems.append(f"{prog}: {case} on {label}: {msg}")
        if word_both and verdict != "ok":
            verdict = word_both
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
    out.matrix += "\nprograms: " + (
        "; ".join(prog_notes) if prog_notes else
        f"{len(progs)} x {len(runs)} kernel(s), exit codes and KTAP plans as their results imply")
    out.matrix += "\n" + times_table(runs, progs, labels)
    out.problems = problems
    out.ok = not problems and bool(results)
    n = len(results)
    skipped = "".join(f", {len(p)} control program(s) not rerun on {k}"
                      for k, p in sorted(not_run.items()) if p)
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


def selftest_kernel(label):
    """SELFTEST_KERNEL of a kernel label: the tree it is built from. The
    no-callback and debug kernels are built from the patched tree."""
    return "base" if label == "base" else "patched"


SELFTESTS_DIR = "tools/testing/selftests"
# The C programs of the installed collections that the matrix's tests run,
# built one by one: (the targets that install it, its directory, its name).
# net/lib goes with net and drivers/net; xdp_helper: drivers/net/queues.py
# check_xsk.
KSFT_HELPERS = ((("net", "drivers/net"), "net/lib", "xdp_helper"),)
# On the make command line, these empty the lists of C programs and files
# the collections' Makefiles build: "install" then copies the tests, their
# libraries and settings, and writes kselftest-list.txt, compiling nothing.
LEAN_INSTALL = ("TEST_GEN_PROGS=", "TEST_GEN_PROGS_EXTENDED=", "TEST_GEN_FILES=",
                "TEST_CUSTOM_PROGS=")


def kselftest_collections(progs, tests):
    """The collections (make TARGETS) of the kselftest programs of progs,
    in order; tests: {program: COLLECTION:TEST}."""
    out = []
    for prog, kind in progs:
        coll = tests.get(prog, "").partition(":")[0] if kind == "kselftest" else ""
        if coll and coll not in out:
            out.append(coll)
    return out


def kselftest_install_commands(tree, build, dest, targets, lean=True):
    """The make commands that install the tree's selftests of targets into
    dest, as netdev CI installs them (make -C tools/testing/selftests
    TARGETS=... install), objects under build (O=), outside the tree.
    lean: without the C programs (LEAN_INSTALL), KSFT_HELPERS then built
    on their own (their collection's Makefile rule) and copied in."""
    sdir = Path(tree) / SELFTESTS_DIR
    cmds = [["make", "-C", str(sdir), f"O={build}", f"TARGETS={' '.join(targets)}",
             f"INSTALL_PATH={dest}", *(LEAN_INSTALL if lean else ()), "install"]]
    for with_, coll, prog in KSFT_HELPERS if lean else ():
        if set(with_) & set(targets):
            out = Path(build) / "kselftest" / coll
            cmds.append(["make", "-C", str(sdir / coll), f"OUTPUT={out}", f"{out}/{prog}"])
            cmds.append(["install", "-D", "-m", "755", f"{out}/{prog}",
                         f"{dest}/{coll}/{prog}"])
    return cmds


def install_kselftests(tree, root, targets, log=print, lean=True):
    """(install directory, seconds): the tree's selftests of targets
    installed into root/install (emptied first), built in root/build;
    the tree itself is not written. A failing command is a RuntimeError
    naming it; a test the installed list lacks is the VM's to find (the
    runner refuses it, as netdev CI's would)."""
    root = Path(root)
    dest, build = root / "install", root / "build"
    shutil.rmtree(dest, ignore_errors=True)
    build.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    log(f"  installing the tree's selftests ({' '.join(targets)}) into {dest}"
        + ("" if lean else ", every C program built"))
    for cmd in kselftest_install_commands(Path(tree).resolve(), build, dest, targets, lean):
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            tail = " | ".join((res.stdout + res.stderr).strip().splitlines()[-6:])
            raise RuntimeError(f"selftests install: {' '.join(cmd)} exited "
                               f"{res.returncode}: {tail}")
    if not (dest / "run_kselftest.sh").is_file():
        raise RuntimeError(f"selftests install: no run_kselftest.sh in {dest}")
    return dest, time.monotonic() - start


# The tc-testing categories each run takes (tc-testing.sh, @TDC_CATEGORIES@):
# the test command's, the main command's ("all": the whole suite, as netdev
# CI's tdc.sh runs it) and the stable trees' (run_matrix()'s default, with
# the host's iproute2, measured so). The test command's: the qdiscs whose
# code the series changes (codel, fq_codel, sfq, cake; cake's cls_api
# callback included), 91 cases in 5 files. What the main command adds to
# them (pfifo_fast, fifo, mq, cake_mq: 62 cases, about 4 of the 9 minutes
# the patched kernel's tdc took in a cold test run on 2 cores) did not fit
# the test command's time (Documentation/pipeline.md). Not matchall: in
# the test command of 677d2ea the setup of its case 3329 failed on both
# kernels, and tdc skipped the three cases after it.
TDC_TEST_CATEGORIES = ("codel", "fq_codel", "sfq", "cake")
TDC_ALL = ("all",)
TDC_STABLE_CATEGORIES = ("pfifo_fast", "fifo", "codel", "fq_codel", "sfq", "mq")
TDC_TESTS = "tools/testing/selftests/tc-testing/tc-tests"


def tdc_tree_ids(tree, categories=TDC_ALL):
    """The ids of the tree's tc-testing cases that tdc runs for categories
    (a case with any of them, as tdc -c selects; TDC_ALL: every case)."""
    ids = set()
    for f in sorted((Path(tree) / TDC_TESTS).rglob("*.json")):
        for case in json.loads(f.read_text()):
            if tuple(categories) == TDC_ALL or set(case.get("category", [])) & set(categories):
                ids.add(case["id"])
    return ids


def tdc_expect(expect, progs, tree, categories):
    """(expect, {program: ids}): expect without the listed tdc cases of the
    tree's other categories (tdc does not run them), and the tree's ids of
    categories, which every kernel that runs them all must report. A listed
    case the tree does not have stays, so its absence is seen."""
    every, run = tdc_tree_ids(tree), tdc_tree_ids(tree, categories)
    out = dict(expect)
    for prog, kind in progs:
        if kind == "tdc" and prog in out:
            out[prog] = {c: e for c, e in out[prog].items() if c in run or c not in every}
    return out, {prog: run for prog, kind in progs if kind == "tdc"}


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


def failing_cases(run):
    """The ids of the cases of a ProgramRun that did not pass (none of a
    program that did not run)."""
    return {case for case, res in run.ktap.results if res.status != "pass"} if run else set()


def control_programs(expect, progs, labels):
    """The programs (not tdc: tdc_subset() chooses its cases) every case of
    which expectations.json lists as a control on every kernel of labels:
    passing everywhere, no new behaviour to show on the base."""
    return {prog for prog, kind in progs
            if kind != "tdc" and expect.get(prog)
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


def unfinished(shared_dir, progs, tree="", tests=None):
    """(program, message) of the program run-in-vm.sh started (its .out
    exists) and did not finish (no .rc) when its VM stopped, or None. Its
    output so far becomes its .ktap, as run-in-vm.sh does after a program."""
    d = Path(shared_dir)
    for prog, kind in progs:
        if (d / f"{prog}.out").is_file() and not (d / f"{prog}.rc").is_file():
            shutil.copyfile(d / f"{prog}.out", d / f"{prog}.ktap")
            run = read_program(d, prog, kind, tree, (tests or {}).get(prog, ""))
            last = (f", its last result {run.ktap.results[-1][0]!r}" if run.ktap.results
                    else ", no result yet")
            return prog, f"{prog} never finished: still running when the VM stopped{last}"
    return None


def run_matrix(kernels, outdir, bindir=CXX_BUILD, tree="", timeout=1800, log=print,
               expect=None, progs=None, churn_seconds=20, before=None, after=None,
               ksft_root=None, tdc_categories=TDC_STABLE_CATEGORIES, tdc_base_all=False,
               iproute2=None, tdc_timeout=900, tdc_listed=(), controls_on_base=True):
    """kernels: {label: build_dir}. Boots each, runs the programs and judges
    them (expect, progs: expectations.json and programs.txt unless given).
    With kselftest programs among them, the tree's selftests are installed
    first (install_kselftests(), under ksft_root, by default the cache's
    kselftest/<outdir's name>).
    The VM's runner gets SELFTEST_KERNEL (selftest_kernel()) for its
    programs. before, after: functions of a kernel's results directory giving a shell
    command the VM runs before and after the programs (the debug kernels'
    fault injection and instrument dump); the VM's exit status stays
    run-in-vm.sh's. Returns an MatrixVerdict with cases and matrix.
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
    there (patched_only())."""
    expect = load_expectations() if expect is None else expect
    # Programs given: the VM runs only those.
    given = progs is not None
    progs = programs() if progs is None else progs
    tests = {p.name: p.kselftest for p in read_programs() if p.kind == "kselftest"}
    ksft, install_note = "", ""
    if targets := kselftest_collections(progs, tests):
        root = ksft_root or cache_dir() / "kselftest" / Path(outdir).name
        ksft, secs = install_kselftests(tree, root, targets, log)
        install_note = f"\nselftests installed ({' '.join(targets)}) in {secs:.0f} s: {ksft}"
        log(install_note.strip())
    runs, boot_cases, problems, listed_only = {}, [], [], []
    required, tdc_env = {}, ""
    if any(kind == "tdc" for _, kind in progs):
        tdc_env = f"TDC_CATEGORIES='{' '.join(tdc_categories)}' TDC_TIMEOUT={int(tdc_timeout)} "
        tdc_env += f"TDC_IPROUTE2={iproute2} " if iproute2 else ""
        if tree:
            expect, tdc_ids = tdc_expect(expect, progs, tree, tdc_categories)
            required = {label: tdc_ids for label in kernels}
    # The results say which commit of the project made them
    # (ci/tests/test_results_fresh.py reads it from copies kept in Documentation/).
    write_source_stamp(outdir)
    order = list(kernels)
    if ((tdc_env and not tdc_base_all) or not controls_on_base) and \
            "base" in kernels and "patched" in kernels:
        # Patched first: the base reruns its tdc failures, and skips the controls that passed.
        order.sort(key=lambda label: label != "patched")
    not_run = {}
    for label in order:
        build = kernels[label]
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
        log(f"  booting the {label} kernel (TCG) and running {len(mine)} program(s)"
            + (f" (not rerun: {len(progs) - len(mine)} control program(s) that passed on "
               "patched)" if mine != progs else ""))
        if subset:
            listed_only.append(label)
            asked = set(subset.split("'")[1].split())
            required[label] = {p: asked for p, k in progs if k == "tdc"}
        # Nothing of an earlier run is read as this one's.
        shutil.rmtree(shared_dir, ignore_errors=True)
        cmd = (f"{subset}{tdc_env}SELFTEST_KERNEL={selftest_kernel(label)} "
               f"CHURN_SECONDS={int(churn_seconds)} "
               f"bash {ROOT}/selftests/run-in-vm.sh {shared_dir} {bindir} {tree}{only}"
               + (f" --kselftests={ksft}" if ksft else ""))
        if before or after:
            cmd = (f"{before(shared_dir) + '; ' if before else ''}{cmd}; rc=$?; "
                   f"{after(shared_dir) + '; ' if after else ''}(exit $rc)")
        res = vm.run_vm(build, cmd, rwdir=shared_dir, timeout=timeout,
                        log_path=Path(outdir) / f"{label}-console.log")
        log(f"    {label}: {res.reason()} after {res.seconds:.0f}s "
            f"(console: {res.log_path})")
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
    out = judge(runs, expect, progs, list(kernels), problems, listed_only, required, not_run)
    out.cases = boot_cases + out.cases
    out.matrix += install_note
    return out

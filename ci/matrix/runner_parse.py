"""tc-testing's TAP (parse_tdc()) and the kselftest runner's output
(run_kselftest.sh: its result per test and each test's own KTAP nested in
it, parse_runner()), read into ktap_parse.py's types.
"""

import re
from dataclasses import dataclass, field

from ci.matrix.ktap_parse import ANSI_RE, PLAN_RE, CaseResult, Ktap, _diag


TDC_RESULT_RE = re.compile(r"^(?P<not>not )?ok (?P<n>\d+) (?P<id>\S+) - (?P<name>.*?)"
                           r"(?: # skipped - (?P<why>.*))?$")
# tdc's "ok" for every case after one whose setup (or teardown) failed: it
# never ran them (tdc.py test_runner()).
TDC_NOT_RUN_RE = re.compile(r"previous (\w+) failed (?:\d+ )?(\S+)?")
# tc-testing.sh's lines around each tdc run when it runs several.
TDC_RUN_RE = re.compile(r"^### tdc run: (?P<what>.+?)(?: exit (?P<rc>\d+))?$")


def tdc_exit_note(rc):
    """What a tdc run's exit code says beyond tdc's own 0 and 1."""
    if rc == 124:
        return " (killed at TDC_FILE_TIMEOUT)"
    return f" (killed by signal {rc - 128})" if rc > 128 else ""


def parse_tdc(text):
    """Ktap of tdc's TAP (tc-testing.sh's output): its cases named by their
    tdc id. tdc prints its own progress, then "1..N" and the results; it
    writes a failure's steps after a tab on the result line and its message
    on the lines after it, so a case's diagnostics are what follows its
    result line. Results before the plan are not read: tdc prints none
    there, and without a plan the runner never got to its results. A case
    tdc reports "ok # skipped - previous setup failed" never ran: it is a
    "fail", and the run has a problem naming how many. Several tdc runs
    (tc-testing.sh's "### tdc run: WHAT" before each, "... exit RC" after)
    are one: their plans add up, and a run without its plan or results, or
    whose exit code its own results do not imply (1 when one of them
    failed, else 0), is a problem naming it."""
    k = Ktap(parser="tdc")
    current = None
    not_run = []
    plan = start = None  # this run's plan, and where its results start
    for raw in text.splitlines():
        line = ANSI_RE.sub("", raw).rstrip()
        if run := TDC_RUN_RE.match(line):
            if run["rc"] is not None and plan is None:
                k.problems.append(f"{run['what']}: tdc exited {run['rc']} before its results")
            elif run["rc"] is not None and len(k.results) - start != plan:
                k.problems.append(f"{run['what']}: plan 1..{plan} but "
                                  f"{len(k.results) - start} result(s)")
            elif run["rc"] is not None:
                # Each run's exit code against its own results: another run's
                # failures (htb's, by design on patched) hide no crash.
                want = 1 if any(r.status == "fail" for _, r in k.results[start:]) else 0
                if int(run["rc"]) != want:
                    k.problems.append(f"{run['what']}: tdc exited {run['rc']}"
                                      f"{tdc_exit_note(int(run['rc']))}, its results imply "
                                      f"exit {want}")
            current = plan = None
            continue
        if plan is None:
            if m := PLAN_RE.match(line):
                plan, start = int(m[1]), len(k.results)
                k.plan = (k.plan or 0) + plan
            continue
        head, _, rest = line.partition("\t")
        m = TDC_RESULT_RE.match(head)
        if not m:
            if current is not None:
                current.diag += _diag([line])
            continue
        if int(m["n"]) != len(k.results) - start + 1:
            k.problems.append(f"{m['id']}: Expected test number {len(k.results) - start + 1} "
                              f"but found {m['n']}")
        if m["why"] is not None and TDC_NOT_RUN_RE.search(m["why"]):
            # Not a skip: the case never ran, so it fails.
            current = CaseResult("fail", m["why"].strip())
            not_run.append(m["id"])
        elif m["why"] is not None:
            current = CaseResult("skip", m["why"].strip())
        else:
            current = CaseResult("fail" if m["not"] else "pass")
        current.diag = _diag([rest]) + ([current.reason] if current.status == "fail" and
                                        current.reason else [])
        k.results.append((m["id"], current))
    if not_run:
        first = TDC_NOT_RUN_RE.search(k.cases[not_run[0]].reason)
        k.problems.append(f"{len(not_run)} case(s) never ran: tdc reported them \"ok # skipped\" "
                          f"after the {first[1]} of case {first[2] or '?'} failed "
                          f"({', '.join(not_run[:5])}{', ...' if len(not_run) > 5 else ''})")
    return k


# The kselftest runner (kselftest/runner.sh run_one()): "# selftests: DIR:
# TEST" before a test's output, which it prefixes with "# "
# (kselftest/prefix.pl), then "ok N selftests: DIR: TEST", with "# SKIP",
# "# XFAIL", "# TIMEOUT S seconds" or "# exit=RC" as the case may be.
RUNNER_HEADER_RE = re.compile(r"^# selftests: (?P<dir>\S+): (?P<test>\S+)\s*$")
RUNNER_RESULT_RE = re.compile(r"^(?P<not>not )?ok (?P<n>\d+) selftests: (?P<dir>\S+): "
                              r"(?P<test>\S+)\s*(?:# (?P<directive>.*?))?\s*$")


@dataclass
class RunnerTest:
    """One test as the kselftest runner ran it."""
    test: str  # COLLECTION:TEST
    ok: bool | None = None  # None: no result line
    directive: str = ""  # of the result line: "SKIP", "TIMEOUT 45 seconds", "exit=139"
    lines: list = field(default_factory=list)  # its output, the runner's "# " off


@dataclass
class Runner:
    """run_kselftest.sh's output: its plan and its tests in order."""
    plan: int | None = None
    tests: list = field(default_factory=list)  # [RunnerTest]


def parse_runner(text):
    """Runner of the kselftest runner's output. A test's lines are those
    between its "# selftests: DIR: TEST" header and its result line, each
    with the "# " the runner put before it taken off (a line that has none
    is kept as it is); what the runner prints between tests (its timeout
    note, its totals) is not a test's."""
    r = Runner()
    current = None
    for raw in text.splitlines():
        line = ANSI_RE.sub("", raw).rstrip()
        if r.plan is None and (m := PLAN_RE.match(line)):
            r.plan = int(m[1])
            continue
        if m := RUNNER_HEADER_RE.match(line):
            current = RunnerTest(f"{m['dir']}:{m['test']}")
            r.tests.append(current)
            continue
        if m := RUNNER_RESULT_RE.match(line):
            test = f"{m['dir']}:{m['test']}"
            if current is None or current.test != test or current.ok is not None:
                current = RunnerTest(test)  # a result without its header
                r.tests.append(current)
            current.ok = not m["not"]
            current.directive = (m["directive"] or "").strip()
            current = None
            continue
        if current is not None:
            current.lines.append(line[2:] if line.startswith("# ") else
                                 "" if line == "#" else line)
    return r

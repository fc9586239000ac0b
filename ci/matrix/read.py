"""What the programs left in a VM's results directory (run-in-vm.sh's
OUT/<name>.{out,rc,seconds,stderr}; <name>.out is the program's stdout: KTAP,
the kselftest runner's output or tdc's TAP by its kind): a ProgramRun each
(read_program()), a kselftest program's read from the kselftest runner's
output (read_kselftest()).
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

from ci.matrix.ktap_parse import CaseResult, Ktap, parse_results
from ci.matrix.runner_parse import parse_runner, parse_tdc


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
    OUT/<name>.{out,rc,seconds,stderr}), its stdout read as its kind
    writes it (tdc: TAP, kselftest: the runner's output, ktap: KTAP), as
    far as it got; test: a kselftest program's COLLECTION:TEST
    (read_kselftest())."""
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
        return ProgramRun(kind, rc, parse_tdc(text("out")), seconds)
    if kind == "kselftest":
        run = read_kselftest(text("out"), text("stderr"), rc, test, tree)
        run.seconds = seconds
        return run
    return ProgramRun(kind, rc, parse_results(text("out"), tree), seconds)


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


def unfinished(shared_dir, progs, tree="", tests=None):
    """(program, message) of the program run-in-vm.sh started (its .out
    exists) and did not finish (no .rc) when its VM stopped, or None; its
    last result read from its .out as far as it got."""
    d = Path(shared_dir)
    for prog, kind in progs:
        if (d / f"{prog}.out").is_file() and not (d / f"{prog}.rc").is_file():
            run = read_program(d, prog, kind, tree, (tests or {}).get(prog, ""))
            last = (f", its last result {run.ktap.results[-1][0]!r}" if run.ktap.results
                    else ", no result yet")
            return prog, f"{prog} never finished: still running when the VM stopped{last}"
    return None

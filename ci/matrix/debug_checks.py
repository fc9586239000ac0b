"""What a debug kernel's VM run (the vm-debug stage) must show besides its
programs' results: that its instruments worked for the whole run, and the
fault-injection program's results.

A KASAN, lockdep or kmemleak kernel that lost its instrument still boots and
passes every program: lockdep turns itself off after its first report (or
when it runs out of entries), kmemleak disables itself when it cannot track
an object, and a KCSAN kernel whose detector does not fire reports nothing.
check_instruments() reads the console log and the state selftests/
instruments.sh wrote at the end of the run (OUT/instruments) and names each
instrument that was absent, off or disabled.

judge_fault_injection() judges selftests/progs/fault_inject/, run by
selftests/fault-inject.sh before the programs, as judge.judge() judges
every program, by its entries in selftests/expectations.json: each
request must have run and passed (no inconsistent answer, no leak), with its
KTAP plan and exit code as its results imply; and a passing request must say
it injected faults at no fewer than FAULT_MIN_SHARE of its sites.
"""

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ci import report
from ci.matrix.expectations import load_expectations
from ci.matrix.judge import errno_keyed_programs, judge
from common.paths import ROOT

# The instruments each debug kernel has (kernel/configs/<name>.config).
INSTRUMENTS = {"debug": ("kasan", "lockdep", "kmemleak"), "kcsan": ("kcsan",)}

LOCKDEP_OFF = re.compile(r"turning off the locking correctness validator")
KMEMLEAK_INIT = re.compile(r"kmemleak: Kernel memory leak detector initialized")
KMEMLEAK_OFF = re.compile(r"kmemleak: (Kernel memory leak detector disabled|Kmemleak disabled"
                          r"|Cannot allocate a kmemleak_object)")
KMEMLEAK_LEAKS = re.compile(r"kmemleak: (\d+) new suspected memory leaks")
KASAN_INIT = re.compile(r"KernelAddressSanitizer initialized")
KCSAN_SELFTEST = re.compile(r"kcsan: selftest: (\d+)/(\d+) tests passed")

# The requests fault_inject must have run (its KTAP case names), as
# expectations.json lists them, judged on the debug kernel ("patched").
FAULT_PROGRAM = "fault_inject"
FAULT_LABEL = "patched"
EXPECTATIONS = ROOT / "selftests/expectations.json"
FAULT_REQUESTS = tuple(json.loads(EXPECTATIONS.read_text()).get(FAULT_PROGRAM, {}))
# A request whose tries failed fewer than this share of the sites its
# faultless run counted (faults stop early when a failed allocation ends the
# request) did not test its error paths: 16 of 26 is the lowest seen.
FAULT_MIN_SHARE = 0.5
FAULTS_RE = re.compile(r"(\d+) faults injected at (\d+) sites")


@dataclass
class Check:
    instrument: str
    ok: bool
    message: str


def read_dump(text):
    """OUT/instruments as {instrument: state}, e.g. {"lockdep":
    "debug_locks 1", "kmemleak": "enabled"}."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _kasan(console, dump):
    if not KASAN_INIT.search(console):
        return False, "no \"KernelAddressSanitizer initialized\" on the console"
    return True, "initialized"


def _unread(dump, instrument, where):
    """Why the dump has no state of the instrument to judge: none left, or
    "absent" (its file `where` missing: not built in); None when it has one."""
    state = dump.get(instrument)
    if state is None:
        return f"instruments.sh left no {instrument} state"
    if state == "absent":
        return f"no {where}: {instrument} is not built in"
    return None


def _lockdep(console, dump):
    if why := _unread(dump, "lockdep", "/proc/lockdep_stats"):
        return False, why
    state = dump["lockdep"]
    if m := LOCKDEP_OFF.search(console):
        line = console[console.rfind("\n", 0, m.start()) + 1:m.end()].strip()
        return False, f"lockdep turned itself off during the run: {line}"
    if state != "debug_locks 1":
        return False, f"lockdep off at the end of the run ({state})"
    return True, "debug_locks 1 at the end, never turned off"


def _kmemleak(console, dump):
    if why := _unread(dump, "kmemleak", "/sys/kernel/debug/kmemleak"):
        return False, why
    state = dump["kmemleak"]
    if not KMEMLEAK_INIT.search(console):
        return False, "kmemleak never initialized (no \"Kernel memory leak detector initialized\")"
    if m := KMEMLEAK_OFF.search(console):
        return False, f"kmemleak disabled itself during the run: {m.group(0)}"
    if state != "enabled":
        return False, f"kmemleak {state} at the end of the run"
    leaks = sum(int(n) for n in KMEMLEAK_LEAKS.findall(console))
    if leaks:
        return False, f"kmemleak reported {leaks} suspected leak(s) on the console"
    return True, "enabled from boot to the end of the run, no leak reported"


def _kcsan(console, dump):
    m = KCSAN_SELFTEST.search(console)
    if not m:
        return False, "no \"kcsan: selftest: N/N tests passed\" line on the console"
    passed, total = int(m.group(1)), int(m.group(2))
    if not total or passed != total:
        return False, f"KCSAN self-test: {passed}/{total} tests passed"
    state = dump.get("kcsan")
    if state != "enabled: 1":
        return False, f"KCSAN not enabled at the end of the run ({state or 'no state'})"
    return True, f"self-test {passed}/{total} passed, enabled at the end"


CHECKERS = {"kasan": _kasan, "lockdep": _lockdep, "kmemleak": _kmemleak, "kcsan": _kcsan}


def check_instruments(cfg, console, dump_text):
    """[Check] for each instrument of the kernel config cfg ("debug",
    "kcsan"), from the console log and instruments.sh's dump ("" if it
    left none)."""
    dump = read_dump(dump_text or "")
    checks = []
    for name in INSTRUMENTS.get(cfg, ()):
        ok, msg = CHECKERS[name](console, dump)
        checks.append(Check(name, ok, msg))
    return checks


def instrument_cases(cfg, shared_dir, console_log):
    """report.Cases of check_instruments() for a run: shared_dir the VM's results
    directory (instruments.sh's OUT), console_log its console log."""
    def text(path):
        p = Path(path)
        return p.read_text(errors="replace") if p.is_file() else ""
    return [report.Case(f"{cfg}.instruments", c.instrument, "pass" if c.ok else "fail", c.message)
            for c in check_instruments(cfg, text(console_log),
                                       text(Path(shared_dir) / "instruments"))]


def too_few_faults(diag):
    """Why a passing request's diagnostics do not show enough faults; "" if
    they do."""
    m = next((m for line in diag if (m := FAULTS_RE.search(line))), None)
    if not m:
        return "no \"N faults injected at M sites\" line"
    faults, sites = int(m[1]), int(m[2])
    if not faults:
        return f"no fault injected ({sites} sites)"
    if faults < FAULT_MIN_SHARE * sites:
        return f"{faults} faults injected at {sites} sites (fewer than {FAULT_MIN_SHARE:.0%})"
    return ""


def judge_fault_injection(run, expect=None):
    """(cases, problems) for fault_inject's ProgramRun (read.read_program()),
    judged by expect (expectations.json unless given) as judge.judge()
    judges a program, and by the faults each passing request injected."""
    expect = load_expectations() if expect is None else expect
    progs = [(FAULT_PROGRAM, "ktap")]
    # fault_inject is a C++ program (selftests/), run apart from programs.txt.
    out = judge({FAULT_LABEL: {FAULT_PROGRAM: run}}, expect, progs, [FAULT_LABEL],
                errno_keyed=errno_keyed_programs(progs, progs))
    problems = out.problems or ([] if out.ok else [f"{FAULT_PROGRAM}: no results"])
    got = dict(run.ktap.results)
    cases = []
    for case in out.cases:
        name = case.name.removeprefix(f"{FAULT_PROGRAM}: ")
        res = got.get(name)
        if case.status == "pass" and res is not None and name in expect.get(FAULT_PROGRAM, {}):
            if why := too_few_faults(res.diag):
                case = dataclasses.replace(case, status="fail", message=why)
                problems.append(f"{FAULT_PROGRAM}: {name} on {FAULT_LABEL}: {why}")
        cases.append(dataclasses.replace(case, suite="debug.fault_inject"))
    return cases, problems

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

judge_fault_injection() judges selftests/progs/fault_inject.cpp, run by
selftests/fault-inject.sh before the programs: each request of FAULT_REQUESTS
must have run and passed (no inconsistent answer, no leak), with its KTAP plan
and exit code as its results imply.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from ci import report

# The instruments each debug kernel has (kernel/configs/<name>.config).
INSTRUMENTS = {"debug": ("kasan", "lockdep", "kmemleak"), "kcsan": ("kcsan",)}

LOCKDEP_OFF = re.compile(r"turning off the locking correctness validator")
KMEMLEAK_INIT = re.compile(r"kmemleak: Kernel memory leak detector initialized")
KMEMLEAK_OFF = re.compile(r"kmemleak: (Kernel memory leak detector disabled|Kmemleak disabled"
                          r"|Cannot allocate a kmemleak_object)")
KMEMLEAK_LEAKS = re.compile(r"kmemleak: (\d+) new suspected memory leaks")
KASAN_INIT = re.compile(r"KernelAddressSanitizer initialized")
KCSAN_SELFTEST = re.compile(r"kcsan: selftest: (\d+)/(\d+) tests passed")

# The requests fault_inject must have run (its KTAP case names).
FAULT_PROGRAM = "fault_inject"
FAULT_REQUESTS = ("link_add_txq4", "channels_set_tx2", "channels_grow_tx4_rx4", "qstats_dump",
                  "filter_add_fq_codel", "filter_add_sfq",
                  "filter_delete_fq_codel", "filter_delete_sfq",
                  "limit0_codel", "limit0_fq_codel")


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


def _lockdep(console, dump):
    state = dump.get("lockdep")
    if state is None:
        return False, "instruments.sh left no lockdep state"
    if state == "absent":
        return False, "no /proc/lockdep_stats: lockdep is not built in"
    if m := LOCKDEP_OFF.search(console):
        line = console[console.rfind("\n", 0, m.start()) + 1:m.end()].strip()
        return False, f"lockdep turned itself off during the run: {line}"
    if state != "debug_locks 1":
        return False, f"lockdep off at the end of the run ({state})"
    return True, "debug_locks 1 at the end, never turned off"


def _kmemleak(console, dump):
    state = dump.get("kmemleak")
    if state is None:
        return False, "instruments.sh left no kmemleak state"
    if state == "absent":
        return False, "no /sys/kernel/debug/kmemleak: kmemleak is not built in"
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


def judge_fault_injection(run, requests=FAULT_REQUESTS):
    """(cases, problems) for fault_inject's ProgramRun (selftests_run.read_program)."""
    from ci import selftests_run  # noqa: PLC0415
    cases, problems = [], []
    probs = selftests_run.program_problems("ktap", run.ktap, run.rc)
    cases.append(report.Case("debug.fault_inject", "exit code and plan",
                             "fail" if probs else "pass", "; ".join(probs) or f"exit {run.rc}"))
    problems += probs
    got = dict(run.ktap.results)
    for name in requests:
        res = got.get(name)
        if res is None:
            msg, ok = "never ran", False
        else:
            ok = res.status == "pass"
            msg = (res.status + (f": {' | '.join(res.diag)}" if res.diag else "")
                   + (f" [{res.reason}]" if res.reason else ""))
        cases.append(report.Case("debug.fault_inject", name, "pass" if ok else "fail", msg))
        if not ok:
            problems.append(f"fault_inject: {name}: {msg}")
    for name in sorted(set(got) - set(requests)):
        problems.append(f"fault_inject: {name} is not a request debug_checks.py knows")
        cases.append(report.Case("debug.fault_inject", name, "fail", "unknown request"))
    return cases, problems

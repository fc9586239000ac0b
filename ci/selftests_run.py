"""Run the selftest programs in VMs booted on the base and patched kernels.

Every case has an expected result per kernel (selftests/expectations.json;
a case not listed is expected to pass on both). The run fails when any
result differs from its expectation, so a test that cannot fail on the base
kernel is caught as well as a test failing on the patched one. A case listed
there that a program does not report counts as "missing", so a renamed or
dropped case cannot pass unnoticed.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import report
import vm

ROOT = Path(__file__).resolve().parents[1]
# "# SKIP" per KTAP; tdc writes "# skipped - reason".
KTAP_RE = re.compile(r"^(?P<not>not )?ok (?P<n>\d+) (?P<name>.*?)"
                     r"(?: # (?P<dir>SKIP|skipped|XFAIL)\b(?P<why>.*))?$")
# Colour codes, which lib/py's ktap_result() adds on a terminal.
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Outcome:
    ok: bool = True
    summary: str = ""
    matrix: str = ""
    cases: list = field(default_factory=list)


def parse_ktap(text):
    """Top-level KTAP results: {name: (status, reason)}; status pass|fail|skip."""
    res = {}
    for line in text.splitlines():
        # tdc appends a tab and its steps
        m = KTAP_RE.match(ANSI_RE.sub("", line).split("\t")[0])
        if not m:
            continue
        if m["dir"] in ("SKIP", "skipped"):
            res[m["name"]] = ("skip", m["why"].strip())
        else:
            res[m["name"]] = ("fail" if m["not"] else "pass", "")
    return res


def load_expectations(path=ROOT / "selftests/expectations.json"):
    return json.loads(Path(path).read_text()) if Path(path).is_file() else {}


def expected(expect, prog, case, kernel):
    entry = expect.get(prog, {}).get(case, {})
    return entry.get(kernel, "pass"), entry.get("why", "")


def expected_cases(expect, progs):
    """(program, case) of every case expectations.json lists for a judged
    (not peer) program of programs.txt."""
    return {(prog, case) for prog, kind in progs if kind != "peer"
            for case in expect.get(prog, {})}


def programs(path=ROOT / "selftests/programs.txt"):
    """[(name, kind)] in file order."""
    progs = []
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, kind = line.split()[:2]
            progs.append((name, kind))
    return progs


def judge_peer(prog, per_kernel, labels):
    """Peer rule: what passes on labels[0] passes on every other kernel.

    per_kernel: {label: {case: (status, why)}}. Returns (cases, problems,
    summary line) with one report.Case per case and kernel.
    """
    ref = labels[0]
    cases, problems, regressions, both_fail = [], [], [], []
    for label in labels:
        if not per_kernel.get(label):
            problems.append(f"{prog}: no results on the {label} kernel")
    names = sorted(set().union(*(per_kernel.get(k, {}) for k in labels)))
    for name in names:
        want = per_kernel.get(ref, {}).get(name, ("missing", ""))[0]
        for label in labels[1:]:
            got, why = per_kernel.get(label, {}).get(name, ("missing", ""))
            bad = want == "pass" and got != "pass"
            if bad:
                regressions.append(f"{name} ({label}: {got})")
            elif got != "pass" and want != "pass":
                both_fail.append(name)
            cases.append(report.Case(
                f"peer.{label}", f"{prog}: {name}", "fail" if bad else "pass",
                f"{got} here, {want} on {ref}" + (f" [{why}]" if why else "")))
    problems += [f"{prog}: regression {r}" for r in regressions]
    passed = {k: sum(st == "pass" for st, _ in per_kernel.get(k, {}).values()) for k in labels}
    summary = (f"{prog}: {len(names)} case(s); passing "
               + ", ".join(f"{k} {passed[k]}" for k in labels)
               + f"; regressions {len(regressions)}"
               + (f"; not passing on {ref} either: {', '.join(sorted(set(both_fail)))}"
                  if both_fail else ""))
    return cases, problems, summary


def run_matrix(kernels, outdir, bindir=ROOT / "build/cxx", tree="", timeout=1800, log=print):
    """kernels: {label: build_dir}. Returns an Outcome with cases and matrix."""
    expect = load_expectations()
    progs = programs()
    out = Outcome()
    # (prog, case) -> {kernel: (status, reason)}; listed cases show as missing
    # unless a program reports them.
    results = {key: {} for key in expected_cases(expect, progs)}
    peer = {}  # prog -> {kernel: {case: (status, reason)}}
    problems = []
    for label, build in kernels.items():
        rw = Path(outdir) / label
        log(f"  booting the {label} kernel (TCG) and running {len(progs)} program(s)")
        res = vm.run_vm(build, f"bash {ROOT}/selftests/run-in-vm.sh {rw} {bindir} {tree}",
                        rwdir=rw, timeout=timeout, log_path=Path(outdir) / f"{label}-console.log")
        log(f"    {label}: {res.reason()} after {res.seconds:.0f}s "
            f"(console: {res.log_path})")
        out.cases.append(report.Case(f"vm.{label}", "boot and run", "pass" if res.ok else "fail",
                                     res.reason()))
        if not res.ok or not (rw / "complete").is_file():
            problems.append(f"{label} VM: {res.reason()}")
            continue
        for prog, kind in progs:
            ktap = rw / f"{prog}.ktap"
            rc = int((rw / f"{prog}.rc").read_text()) if (rw / f"{prog}.rc").is_file() else -1
            cases = parse_ktap(ktap.read_text()) if ktap.is_file() else {}
            if kind == "peer":
                peer.setdefault(prog, {})[label] = cases
                continue
            if not cases:
                cases = {"(program)": ("fail", f"no KTAP results, exit {rc}")}
            for case, st in cases.items():
                results.setdefault((prog, case), {})[label] = st
    rows = [("test", *[f"{k} (want)" for k in kernels], "verdict")]
    for (prog, case), per in sorted(results.items()):
        cells, good = [], True
        for label in kernels:
            got, why = per.get(label, ("missing", ""))
            want, reason = expected(expect, prog, case, label)
            match = got == want
            good &= match
            cells.append(f"{got} ({want})")
            out.cases.append(report.Case(
                f"selftests.{label}", f"{prog}: {case}", "pass" if match else "fail",
                f"got {got}, expected {want}" + (f": {reason}" if reason else "")
                + (f" [{why}]" if why else "")))
        rows.append((f"{prog}: {case}", *cells, "ok" if good else "MISMATCH"))
        if not good:
            problems.append(f"{prog}: {case}: {', '.join(cells)}")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out.matrix = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)
    for prog, per in peer.items():
        cases, probs, line = judge_peer(prog, per, list(kernels))
        out.cases += cases
        problems += probs
        out.matrix += f"\npeer suite {line}"
    out.ok = not problems and bool(results)
    n = len(results) + sum(len(set().union(*per.values())) for per in peer.values())
    out.summary = (f"{n} case(s) x {len(kernels)} kernels, "
                   + ("all as expected" if out.ok else
                      f"{len(problems)} problem(s): " + "; ".join(problems[:3])
                      if problems else "no results"))
    return out

"""The KTAP of the judged programs: each case's result, the plan and each
case's diagnostics (the "#" lines before its result).

KTAP is read with the kernel tree's tools/testing/kunit/kunit_parser.py when
the tree is given and its interface fits (parse_results()), else by
parse_ktap_without_tree(), which reads it the same way. runner_parse.py
reads tc-testing's TAP and the kselftest runner's output into the same
types; case.py and judge.py judge what these return.

Why two readers, kept equal by ci/tests/test_matrix.py on the recorded
outputs: kunit_parser is the kernel's own reading of KTAP, and where the
tree has it the programs are judged by it. It cannot serve alone: it
lives in the tree (the pipeline's own tests run on a fresh host before any
tree is fetched), and the 6.12 and 6.1 stable trees' parsers lack the
interface parse_kunit() calls (kunit_api_fits()). Nor can the small parser
replace it on 7.3 without a VM run to show it: the two read nested
subtests differently, and only the recorded outputs show them agreeing.
"""

import importlib.util
import inspect
import io
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Colour codes, which lib/py's ktap_result() adds on a terminal.
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class CaseResult:
    status: str  # pass | fail | skip
    reason: str = ""  # of a SKIP
    diag: list = field(default_factory=list)  # the case's lines before its result, "#" off


@dataclass
class Ktap:
    plan: int | None = None  # N of "1..N"; None without a plan
    results: list = field(default_factory=list)  # [(name, CaseResult)] in output order
    problems: list = field(default_factory=list)  # what the parser found wrong
    parser: str = ""

    @property
    def cases(self):
        return dict(self.results)


def _diag(lines):
    """Diagnostic lines without their "#" and blanks."""
    out = []
    for line in lines:
        text = line.strip()
        text = text[1:].strip() if text.startswith("#") else text
        if text:
            out.append(text)
    return out


HEADER_RE = re.compile(r"^\s*K?TAP version \d+\s*$")
PLAN_RE = re.compile(r"^1\.\.(\d+)")
RESULT_RE = re.compile(r"^(?P<not>not )?ok (?P<n>\d+)(?: -)?(?: (?P<name>[^#]*?))?\s*"
                       r"(?:# (?P<dir>\w+)\b ?(?P<why>.*))?$")


def parse_ktap_without_tree(lines):
    """The top level of a KTAP stream, for when no kernel tree is at hand.

    The same reading as parse_kunit(): the diagnostics of a case are the lines
    between the result before it and its own; a directive SKIP makes a skip,
    "ok ... # XFAIL" (lib/py's expected failure) an xfail, any other leaves
    ok/not ok as it is; results are numbered
    1, 2, ... The two differ where the programs judged here do not go: nested
    subtests (indented), which kunit_parser reads as subtests, count here as
    diagnostics of their parent, and a plan may follow the results.
    """
    k = Ktap(parser="small")
    started, pending = False, []
    for line in lines:
        if not started:
            started = bool(HEADER_RE.match(line))
            continue
        m = PLAN_RE.match(line)
        if m and k.plan is None:
            k.plan = int(m[1])
            continue
        m = RESULT_RE.match(line)
        if not m:
            pending.append(line)
            continue
        name = (m["name"] or "").strip()
        if int(m["n"]) != len(k.results) + 1:
            k.problems.append(f"{name}: Expected test number {len(k.results) + 1} "
                              f"but found {m['n']}")
        if m["dir"] == "SKIP":
            res = CaseResult("skip", (m["why"] or "").strip())
        elif m["dir"] == "XFAIL" and not m["not"]:
            res = CaseResult("xfail", (m["why"] or "").strip())
        else:
            res = CaseResult("fail" if m["not"] else "pass")
        res.diag = _diag(pending)
        pending = []
        k.results.append((name, res))
    if not started:
        k.problems.append("no KTAP version line")
    return k


_KUNIT = {}


def _kunit_modules(tree):
    """(kunit_parser, kunit_printer) of tree/tools/testing/kunit, or None
    when the tree has none or one whose interface does not fit."""
    kdir = Path(tree) / "tools/testing/kunit" if tree else None
    if kdir is None or not (kdir / "kunit_parser.py").is_file():
        return None
    key = str(kdir.resolve())
    if key not in _KUNIT:
        # kunit_parser imports kunit_printer by name: both are this tree's,
        # in sys.modules while they load and taken out after (another tree's
        # may be loaded next), what stood there before put back.
        names = ("kunit_printer", "kunit_parser")
        saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
        try:
            printer = _load_file("kunit_printer", kdir / "kunit_printer.py")
            parser = _load_file("kunit_parser", kdir / "kunit_parser.py")
        finally:
            for n in names:
                sys.modules.pop(n, None)
            sys.modules.update(saved)
        modules = (parser, printer)
        _KUNIT[key] = modules if kunit_api_fits(modules) else None
    return _KUNIT[key]


def _load_file(name, path):
    """The module of the Python file path, loaded under name into sys.modules."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def parse_kunit(lines, modules):
    """The top level of a KTAP stream read by the tree's kunit_parser.

    It fits the programs judged here (flat KTAP from the C++ programs and
    lib/py, "# SKIP" and "# XFAIL" directives, diagnostics before each
    result), with three things around it: an XFAIL, which it reads as a
    pass, is read back from the line; parse_test() stops at the plan, so
    results past it are read here with the same parse_test(); and the
    parser's errors only go to its printer, so they are read back from it.
    """
    kp, kprinter = modules
    buf = io.StringIO()
    printer = kprinter.Printer(output=buf)  # not a terminal: no colour codes
    stream = kp.extract_tap_lines(lines)
    k = Ktap(parser="kunit_parser")
    if not stream:
        k.problems.append("no KTAP version line")
        return k
    main = kp.parse_test(stream, 0, [], False, printer)
    k.plan = main.expected_count
    subtests = list(main.subtests)
    while stream:
        log = kp.parse_diagnostic(stream)
        if stream:
            subtests.append(kp.parse_test(stream, len(subtests) + 1, log, True, printer))
    status = {kp.TestStatus.SUCCESS: "pass", kp.TestStatus.FAILURE: "fail",
              kp.TestStatus.SKIPPED: "skip"}
    # kunit_parser reads "ok N name # XFAIL why" as a pass: the top-level
    # XFAIL results, in order, from the lines.
    xfails = [m for m in map(RESULT_RE.match, lines)
              if m and m["dir"] == "XFAIL" and not m["not"]]
    for sub in subtests:
        if not sub.name and sub.status in (kp.TestStatus.TEST_CRASHED, kp.TestStatus.NO_TESTS):
            continue  # a result the plan promised and the output lacks, or no result at all
        res = CaseResult(status.get(sub.status, "fail"), sub.skip_reason.strip(), _diag(sub.log))
        name = sub.name.strip()
        x = next((m for m in xfails if (m["name"] or "").strip() == name
                  and int(m["n"]) == len(k.results) + 1), None)
        if x is not None and res.status == "pass":
            res.status, res.reason = "xfail", (x["why"] or "").strip()
        k.results.append((name, res))
    for line in buf.getvalue().splitlines():
        m = re.search(r"\[ERROR\] Test: (.*)$", line)
        # Missing results and a missing plan are judged from plan and results.
        judged_here = ("missing expected subtest!", "0 tests run!", "No more test results!")
        if m and not m[1].endswith(judged_here):
            k.problems.append(m[1])
    return k


def parse_results(text, tree=""):
    """Ktap of a judged program's output: read with the kernel tree's
    kunit_parser when the tree has one (the VM stage passes the patched
    tree), else with parse_ktap_without_tree(). The pipeline's own tests also run on a
    fresh host before any tree is fetched; ci/tests/test_matrix.py checks
    that both read the recorded outputs alike."""
    lines = [ANSI_RE.sub("", ln).rstrip() for ln in text.splitlines()]
    modules = _kunit_modules(tree)
    return parse_kunit(lines, modules) if modules else parse_ktap_without_tree(lines)


def kunit_api_fits(modules):
    """Whether the tree's kunit_parser has the interface parse_kunit() calls
    (a Printer passed to parse_test(), as in 7.3); a tree whose parser
    lacks it (the 6.12 and 6.1 stable trees) has its KTAP read by
    parse_ktap_without_tree()."""
    if not modules:
        return False
    kp, kprinter = modules
    try:
        params = inspect.signature(kp.parse_test).parameters
    except (TypeError, ValueError):
        return False
    return "printer" in params and hasattr(kprinter, "Printer")

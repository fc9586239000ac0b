"""What the matrix expects: selftests/expectations.json (an entry per
case, by kernel label), selftests/programs.txt's programs, the controls,
and the tc-testing categories each run takes and the tree's cases in them.
"""

import json
import re
from pathlib import Path

from common.paths import ROOT
from common.programs import PROGRAMS_TXT, read_programs


SHOW_KINDS = ("errno", "operation", "extack", "counter", "skip")
# What an entry may expect of a case on a kernel. "skip" is not one: a case
# that skips proves nothing, so a skip is accepted only as an expected
# "fail" whose shows name the skip's reason (kind "skip").
EXPECTED = ("pass", "fail", "xfail")


def is_control(entry, labels):
    return bool(entry) and all(entry.get(k, "pass") == "pass" for k in labels)


PROGS_SRC = ROOT / "selftests/progs"


def kernel_judged(progs, src=PROGS_SRC):
    """The C++ programs (kind ktap) that judge their rows by the kernel they
    run on: their source (src/NAME.cpp or src/NAME/) reads SELFTEST_KERNEL
    (bad_input). Every row of theirs expects "pass" on each kernel, but what
    passes differs by kernel: they are no controls, and run on every kernel."""
    out = set()
    for prog, kind in progs:
        files = [Path(src) / f"{prog}.cpp", *sorted((Path(src) / prog).glob("*"))]
        if kind == "ktap" and any(f.is_file() and "SELFTEST_KERNEL" in
                                  f.read_text(errors="replace") for f in files):
            out.add(prog)
    return out


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


# The tc-testing categories each run takes (tc-testing.sh, @TDC_CATEGORIES@):
# the test command's, the main command's ("all": the whole suite, as netdev
# CI's tdc.sh runs it) and the stable trees' (run_matrix()'s default, with
# the host's iproute2, measured so). The test command's: the qdiscs the
# series changes (130 cases, the series' own among them, which run_matrix()
# checks). A filter add on any other qdisc only reads its flags
# (cls_api.c); the qdisc and filter categories (755 cases, 566 s of the
# patched VM in Documentation/results/test-run/) and the rest run in the
# main command, judged the same way.
TDC_TEST_CATEGORIES = ("pfifo_fast", "fifo", "codel", "fq_codel", "sfq", "mq", "cake")
TDC_ALL = ("all",)
TDC_STABLE_CATEGORIES = ("pfifo_fast", "fifo", "codel", "fq_codel", "sfq", "mq")
TDC_TESTS = "tools/testing/selftests/tc-testing/tc-tests"


def tdc_tree_ids(tree, categories=TDC_ALL):
    """The ids of the tree's tc-testing cases that tdc runs for categories
    (a case with any of them, as tdc -c selects; TDC_ALL: every case).
    selftests/tc-testing.sh's plan picks the same in the VM (test_tdc)."""
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


# What a patch writes: a selftest file, a tc-testing case's id.
SELFTEST_FILE_RE = re.compile(r"^\+\+\+ b/tools/testing/selftests/(?P<path>\S+)$")
TDC_ADDED_ID_RE = re.compile(r'^\+\s*"id":\s*"(?P<id>[^"]+)"')


def series_cases(patches=ROOT / "patches"):
    """(kselftests, tdc ids): the COLLECTION:TEST of every selftest file
    the series' patches add or change, and the id of every tc-testing case
    they add. These are the series' own cases, judged on one run; the
    others of the tree are peer cases, rerun when they look like a
    regression (run.py rerun_suspects())."""
    ksft, tdc = set(), set()
    for f in sorted(Path(patches).rglob("*.patch")):
        for line in f.read_text(errors="replace").splitlines():
            if m := SELFTEST_FILE_RE.match(line):
                collection, _, test = m["path"].rpartition("/")
                ksft.add(f"{collection}:{test}")
            elif m := TDC_ADDED_ID_RE.match(line):
                tdc.add(m["id"])
    return ksft, tdc

"""The measured numbers the documents quote, each bound to its record
(CLAIMS), and what looks measured but is no number of a record (LISTED).
ci/tests/test_doc_numbers.py checks both.

A number added to a document gets a claim here: the document, a snippet
of it unique in it with "{}" for each number, the record (a file under
Documentation/results/) and one key a number:
  rows[scenario=q2_mq,kernel=base].median   a JSON path, [k=v,...] selects
                                            the one element with those fields
  [stage=vm].minutes                        a markdown table's cell: the row
                                            whose "stage" is vm, column minutes
  /^total\\s+(\\S+) min/                      the last match's group 1 (any file)
  count/^(?:ok|not ok) /                    how many lines match
  KEY - KEY / 60                            keys and numbers joined by " + ",
                                            " - ", " / ", taken left to right (so
                                            a regex holds none of those three)
Keys name rows and columns, never lines: a regenerated record keeps them.
The document may round the value (1829.85 printed 1829.8 or 1830).

What reads as measured (MEASURED) and is no number of a current record is
listed in LISTED, by a literal anchor and the line, paragraph or section
around it, with the reason: a setting, an estimate, no measured quantity, or
historical (the text names the commit whose record held it). A number
measured once of which no record is kept has no place: it is rerun into
a record or dropped."""

import re
from typing import NamedTuple


class Claim(NamedTuple):
    doc: str
    snippet: str
    record: str
    keys: tuple


class Listed(NamedTuple):
    doc: str
    anchor: str   # literal text, once in the document
    scope: str    # "line", "paragraph" or "section" (its heading to the next)
    reason: str


def documents(root):
    """The documents whose numbers are checked."""
    docs = ["README.md", "Documentation/results/README.md"]
    docs += sorted(str(p.relative_to(root)) for p in (root / "Documentation").glob("*.md"))
    covers = root.glob("patches/*/*/0000-cover-letter.patch")
    docs += sorted(str(p.relative_to(root)) for p in covers)
    return docs


STAGES = ("setup|base|apply|userspace|host-tests|build-base|checks|submission|mailing-list|"
          "kunit|vm|vm-debug|icount|bench")
UNITS = (r"min|minutes|s|ms|ns|instructions|Mpps|M pps|pps|cases?|case\(s\)|passed|failed|"
         r"skipped|objects|repetitions|faults")
# What reads as a measurement: a number with a unit of time, count or
# rate, a ratio (1.45x, B/A 0.69), a signed difference (+7.9), an
# instruction count (1829.8, or a column of a cover letter's table) and a
# stage's minutes (checks 12.2).
MEASURED = tuple(re.compile(p, re.M) for p in (
    r"(?<![\w.+-])(?P<n>\d+(?:\.\d+)?) ?(?:%s)(?![\w-])" % UNITS,
    r"(?<![\w.+-])(?P<n>\d+(?:\.\d+)?)x\b",
    r"(?<![\w.])(?P<n>[-+]\d+(?:\.\d+)?)(?!\w|\.\d)",
    r"(?<![\w.+/-])(?P<n>\d{3,}\.\d+)(?!\w|\.\d)",
    r"(?<![\w-])(?:%s) (?P<n>\d+\.\d+)(?!\w|\.\d| \d)" % STAGES,
    r"B/A (?P<n>\d+\.\d+)",
    r"(?<=  )(?P<n>\d{3,}(?:\.\d+)?)(?=  | *$)",
))


def C(doc, record, snippet, *keys):
    return Claim(doc, snippet, record, keys)


README = "README.md"
RESULTS = "Documentation/results/README.md"
PIPELINE = "Documentation/pipeline.md"
DESIGN = "Documentation/design.md"
WORKFLOW = "Documentation/workflow.md"
BAD_INPUT = "Documentation/bad-input.md"
CHURN = "Documentation/churn.md"
DUMMY = "patches/net-next/dummy-mq/0000-cover-letter.patch"
BYPASS = "patches/net-next/qdisc-bypass/0000-cover-letter.patch"
DUMMY_COUNTERS = ("patches/net-next/dummy-mq/"
                  "0002-net-dummy-count-TX-packets-per-queue-on-multi-queue-.patch")

TOTAL = r"/^total\s+(\S+) min/"
PASSED = r"/^pipeline: (\d+) passed/"
FAILED = r"/^pipeline: \d+ passed, (\d+) failed/"
SKIPPED = r"/^pipeline: .* (\d+) skipped/"


Q2 = ("q2_start_xmit", "q2_noqueue", "q2_mq")
VM_CASES = r"/\| vm \| pass \| [\d.]+ \| (\d+) case/"
VM_CONTROLS = r"/\| vm \| pass \| [\d.]+ \| \d+ case\(s\) \((\d+)/"
TDC_CASES = r"count/^(?:ok|not ok) \d+ /"
TDC_SECONDS_PATCHED = r"/^tc-testing\s+\d+\s+(\d+)$/"
# A check's seconds over all patches, from the checks stage's "time per check".
CHECK_TIME = r"/^\s+time per check, all patches:.* %s (\d+)s/"
# bad_input's rows passing on both kernels, in a summary's matrix.
BAD_INPUT_PASS = r"count/^bad_input: \S+\s+pass \(pass\)\s+pass \(pass\)\s+ok$/"


def stages(names):
    """Keys of a summary.md's stage minutes, in the order named."""
    return tuple(f"[stage={name}].minutes" for name in names.split())


def CI(key):
    """A bench comparison's median ratio and its 95% interval."""
    fields = ("ratio_median", "ratio_ci_low", "ratio_ci_high")
    return tuple(f"comparisons[key={key}].{f}" for f in fields)


def median(scenario, kernel):
    return f"rows[scenario={scenario},kernel={kernel}].median"


def delta(scenario, kernel, base="base"):
    return f"{median(scenario, kernel)} - {median(scenario, base)}"


def ratio(scenario, kernel, base):
    return f"{median(scenario, kernel)} / {median(scenario, base)}"


CLAIMS = [
    # README.md: the test command's records and the main job's vm stage.
    C(README, "test-run/test.log", "check results reused) took {} min, {} passed, {} failed: the "
      "vm stage {} and icount {} of it", TOTAL, PASSED, FAILED, r"/^vm\s+PASS\s+(\S+) min/",
      r"/^icount\s+PASS\s+(\S+) min/"),
    C(README, "test-run/cold/test.log", "the icount stage) took {} min on this machine,",
      TOTAL),
    C(README, "test-run/cold/summary.md",
      "on this machine, build-base {}, checks {} and kunit {} of them",
      "[stage=build-base].minutes", "[stage=checks].minutes", "[stage=kunit].minutes"),
    C(README, "main-vm/base/tc-testing.out", "tc-testing's whole suite ({} cases)", TDC_CASES),
    C(README, "test-run/cold/summary.md", "`--build`: {} min in its cold record",
      "[stage=checks].minutes"),
    C(README, "test-run/summary.md", "(`Documentation/results/test-run/cold/`), {} min",
      "[stage=checks].minutes"),

    # Documentation/results/README.md, "Test runs".
    C(RESULTS, "test-run/test.log", "nothing beside it: {} passed, {} failed, {} skipped; {} min",
      PASSED, FAILED, SKIPPED, TOTAL),
    C(RESULTS, "test-run/summary.md", "min (host-tests {}, checks {}, vm {}, icount {});",
      "[stage=host-tests].minutes", "[stage=checks].minutes", "[stage=vm].minutes",
      "[stage=icount].minutes"),
    C(RESULTS, "test-run/test.log", "icount {}); tc-testing {} s on the patched kernel",
      r"/^icount\s+PASS\s+(\S+) min/", TDC_SECONDS_PATCHED),
    C(RESULTS, "test-run/summary.md",
      "none skipped after a failed setup), {} case(s) ({} controls) x 2 kernels, {} control "
      "program(s) not rerun on base, all as expected; net kernel: {} case(s) ({} controls) x 1 "
      "kernels, all as expected; no-callback kernel: {} case(s) ({} controls)",
      VM_CASES, VM_CONTROLS,
      r"/, (\d+) control program\(s\) not rerun/", r"/net kernel: (\d+) case/",
      r"/net kernel: \d+ case\(s\) \((\d+)/", r"/no-callback kernel: (\d+) case/",
      r"/no-callback kernel: \d+ case\(s\) \((\d+)/"),
    C(RESULTS, "test-run/summary.md", "KUnit {} passed with the dummy suite's negative control",
      r"/KUnit \(UML\): (\d+) passed/"),
    C(RESULTS, "test-run/cold/test.log",
      "nothing beside it: {} min, {} passed, {}\n failed, {} skipped",
      TOTAL, PASSED, FAILED, SKIPPED),
    C(RESULTS, "test-run/cold/summary.md", "skipped (build-base {}, checks {}, kunit {}, vm {};",
      "[stage=build-base].minutes", "[stage=checks].minutes", "[stage=kunit].minutes",
      "[stage=vm].minutes"),
    C(RESULTS, "test-run/cold/test.log",
      "{} VM cases x 2 kernels, {} control programs not rerun on base, {} on the net kernel and "
      "{} on the no-callback kernel", r"/<== vm: PASS in \d+s: (\d+) case/",
      r"/<== vm: .*?, (\d+) control program\(s\) not rerun/", r"/<== vm: .*net kernel: (\d+) case/",
      r"/<== vm: .*no-callback kernel: (\d+) case/"),
    C(RESULTS, "main-vm/stage.log", "nothing beside it: PASS in\n {} min", TOTAL),
    C(RESULTS, "main-vm/summary.md", "min (checks {}, vm {}),",
      "[stage=checks].minutes", "[stage=vm].minutes"),
    C(RESULTS, "main-vm/stage.log",
      "vm {}), {} passed, {} failed.", r"/^vm\s+PASS\s+(\S+) min/", PASSED, FAILED),
    C(RESULTS, "main-vm/base/tc-testing.out", "whole suite on both kernels, {} cases each",
      TDC_CASES),
    C(RESULTS, "main-vm/base/tc-testing.seconds", "(base {} s,", "/(\\d+)/"),
    C(RESULTS, "main-vm/patched/tc-testing.seconds", "patched {} s,", "/(\\d+)/"),
    # 1305: passing on patched, less the series' nine cases expectations.json lists.
    C(RESULTS, "main-vm/patched/tc-testing.out", "output): {} cases without an entry",
      r"count/^ok (?!.*# skip)/ - 9"),
    C(RESULTS, "main-vm/patched/tc-testing.out", "and {}\n fail or skip on both",
      r"count/^not ok\s/ + count/^ok .*# skip/"),
    C(RESULTS, "main-vm/summary.md", "The other programs:\n {} cases ({} controls) x 2 kernels, "
      "net kernel {}, no-callback kernel\n {}, all as expected.",
      VM_CASES, VM_CONTROLS,
      r"/net kernel: (\d+) case/", r"/no-callback kernel: (\d+) case/"),
    C(RESULTS, "b4/b4.md", "9b6188b above (`source.json`): {} series,",
      r"count/^\| [\w/-]+ \| prep \|/"),
    # Documentation/results/README.md, the debug kernels (vm-debug/).
    C(RESULTS, "vm-debug/stage.log", "test command's run of the same clone: PASS in {} min, "
      "vm-debug {} of", TOTAL, r"/^vm-debug\s+PASS\s+(\S+) min/"),
    C(RESULTS, "vm-debug/stage.log", "for the new configuration (debug {} min,\n KCSAN {} min, "
      "about {} objects each)", r"/build-debug: \d+ objects, (\d+)s$/ / 60",
      r"/build-kcsan: \d+ objects, (\d+)s$/ / 60", r"/build-kcsan: (\d+) objects/"),
    C(RESULTS, "vm-debug/stage.log",
      "injection): VM {} s,", r"/^\s+patched: ok after (\d+)s .*vm-debug/"),
    C(RESULTS, "vm-debug/stage.log",
      "- KCSAN kernel: VM {} s", r"/^\s+patched: ok after (\d+)s .*vm-kcsan/"),
    C(RESULTS, "vm-debug/stage.log", "s). {} cases ({} controls), all as expected;",
      r"/debug: (\d+) case/", r"/debug: \d+ case\(s\) \((\d+) controls/"),

    # Documentation/results/README.md, icount/ (the main command's kernels).
    C(RESULTS, "icount/icount.json", "counts to about one instruction: {} and {} on\n start_xmit",
      median("q2_start_xmit", "series-ext"), median("q2_start_xmit", "patched")),
    C(RESULTS, "icount/icount.json", "The series adds {} instructions per packet on a 2-queue\n "
      "dummy ({} -> {} with start_xmit; {} with noqueue, {} with mq)",
      delta("q2_start_xmit", "patched"), median("q2_start_xmit", "base"),
      median("q2_start_xmit", "patched"), delta("q2_noqueue", "patched"),
      delta("q2_mq", "patched")),
    C(RESULTS, "icount/icount.json", "none on the default dummy ({} -> {}, within the spread)",
      median("q1_noqueue", "base"), median("q1_noqueue", "patched")),
    C(RESULTS, "icount/icount.json",
      "the atomic design {} and the lock design {} (the counters guard,\n"
      " at most {} of the base,", delta("q2_start_xmit", "atomic"),
      delta("q2_start_xmit", "lock"), "guards[key=counters].hi"),
    C(RESULTS, "icount/icount.json", "added and deleted: {} on the\n base, {} with the series "
      "(the bypass restored: {} fewer,\n {}x), within one instruction of never filtered ({})",
      median("s2_fq_codel_after_filter", "base"), median("s2_fq_codel_after_filter", "patched"),
      delta("s2_fq_codel_after_filter", "base", "patched"),
      ratio("s2_fq_codel_after_filter", "base", "patched"),
      median("s2_fq_codel_fresh", "patched")),
    C(RESULTS, "icount/icount.json",
      "the pfifo_fast bypass costs {} instructions more than no\n qdisc",
      "reports[key=S2-floor].b_median - reports[key=S2-floor].a_median"),
    C(RESULTS, "icount/icount.json", "veth (its peer receiving) {} and an unlinked\n netdevsim {} "
      "against the dummy's {}; netdevsim's per-queue\n counters add {} ({} -> {}), the dummy's {}.",
      median("sink_veth_mq", "patched"), median("sink_nsim_mq", "patched"),
      median("q2_mq", "patched"), delta("sink_nsim_mq", "patched"), median("sink_nsim_mq", "base"),
      median("sink_nsim_mq", "patched"), delta("q2_mq", "patched")),

    # Documentation/results/README.md, bench/ (the full benchmark of f19c7a1).
    C(RESULTS, "bench/bench.json", "dummy = 1: veth {}x without XPS (CI\n {}-{}) and {}x with XPS "
      "({}-{}); netdevsim {}x ({}-{})\n and {}x ({}-{}).", *CI("Sink-veth"), *CI("Sink-veth-xps"),
      *CI("Sink-nsim"), *CI("Sink-nsim-xps")),
    C(RESULTS, "bench/bench.json", "pktgen sent ({} of {} repetitions; netdevsim's in {} of {},",
      "sinks.records[sink=dummy,xps=False].qstats_exact",
      "sinks.records[sink=dummy,xps=False].qstats_compared",
      "sinks.records[sink=nsim,xps=False].qstats_exact",
      "sinks.records[sink=nsim,xps=False].qstats_compared"),
    C(RESULTS, "bench/bench.json", "S1-xps {}x ({}-{}), S1 {}x\n ({}-{}, bimodal)", *CI("S1-xps"),
      *CI("S1")),
    C(RESULTS, "bench/bench.json", "S2-restore {}x ({}-{}, >= {}x) met after {}\n repetitions; "
      "CPU time per packet {}x.", *CI("S2-restore"), "comparisons[key=S2-restore].target_lo",
      "comparisons[key=S2-restore].repetitions", "comparisons[key=S2-restore].cpu_ratio_median"),
    C(RESULTS, "bench/bench.json",
      "S2-fresh {}x ({}-{}, {}-{}) met; S2-bypass {}x\n ({}-{}, >= {}) "
      "and S3 {}x ({}-{}, >= {}) inconclusive", *CI("S2-fresh"),
      "comparisons[key=S2-fresh].target_lo", "comparisons[key=S2-fresh].target_hi",
      *CI("S2-bypass"), "comparisons[key=S2-bypass].target_lo", *CI("S3"),
      "comparisons[key=S3].target_lo"),
    C(RESULTS, "bench/bench.json", "(dummy\n {}M pps and {} CPU ns per packet,",
      "sinks.pps[sink=dummy].no_xps.pps_median / 1000000",
      "sinks.pps[sink=dummy].no_xps.cpu_ns_median"),
    C(RESULTS, "bench/bench.json",
      "while veth took {} ns per packet", "sinks.pps[sink=veth].no_xps.cpu_ns_median"),
    C(RESULTS, "bench/bench.json",
      "its share\n fell from 0.12x to {}x.", "comparisons[key=Sink-veth].ratio_median"),
    C(RESULTS, "vm-debug/matrix.txt", "the programs {} s", r"/^total\s+(\d+)$/"),
    C(RESULTS, "vm-kcsan/matrix.txt", "(programs {} s), {} cases, all as expected; KCSAN",
      r"/^total\s+(\d+)$/", r"count/^\S+: \S+\s+(?:control\s+)?\w+ \(\w+\)\s+ok$/"),
    C(RESULTS, "vm-debug/patched/fault-table.md", "(link add {} faults at {} sites under\n "
      "register_netdevice, {} in the whole request; channels set {} at {};\n grow {} at {}",
      "[request=link_add_txq4].faults", "[request=link_add_txq4].sites",
      "[request=link_add_txq4].sites (whole)", "[request=channels_set_tx2].faults",
      "[request=channels_set_tx2].sites", "[request=channels_grow_tx4_rx4].faults",
      "[request=channels_grow_tx4_rx4].sites"),

    # Documentation/results/README.md, stable/.
    C(RESULTS, "stable/6.1-patched-tc-testing.out", "peer suite: 6.1 {} cases,", TDC_CASES),
    C(RESULTS, "stable/6.12-patched-tc-testing.out", "cases, 6.12 {}, each passing", TDC_CASES),
    C(RESULTS, "stable/6.1-matrix.txt",
      "- 6.1: {} cases x 2 kernels,", r"/^stable 6.1: (\d+) case/"),
    C(RESULTS, "stable/6.12-matrix.txt",
      "6.12: {} x 2, all as expected.", r"/^stable 6.12: (\d+) case/"),
    # The test command's tc-testing categories, and what the qdisc and filter ones cost.
    C(PIPELINE, "test-run/test.log",
      "without them tc-testing takes {} s of the patched VM", TDC_SECONDS_PATCHED),
    C(PIPELINE, "test-run/test.log",
      "kernel ({} s of the patched VM in `test-run/`). From dce8917", TDC_SECONDS_PATCHED),
    # Documentation/pipeline.md "Measured times": the rows of the current records.
    C(PIPELINE, "test-run/cold/test.log",
      "the same machine right after the run above | **{} min**:",
      TOTAL),
    C(PIPELINE, "test-run/cold/summary.md",
      "min**: setup {}, base {}, apply {}, userspace {}, host-tests {}, build-base {}, checks {}, "
      "submission {}, kunit {}, vm {} (patched VM", *stages(
          "setup base apply userspace host-tests build-base checks submission kunit vm")),
    C(PIPELINE, "test-run/cold/test.log", "(patched VM {} s, tc-testing {} s of it; base VM {} s "
      "with {} of the {} programs); {} passed, {} failed, {} skipped "
      "| Documentation/results/test-run/cold/ |",
      r"/^\s+patched: ok after (\d+)s/", TDC_SECONDS_PATCHED, r"/^\s+base: ok after (\d+)s/",
      r"/booting the base kernel \(TCG\) and running (\d+) program/",
      r"/booting the patched kernel \(TCG\) and running (\d+) program/", PASSED, FAILED, SKIPPED),
    C(PIPELINE, "test-run/test.log",
      "no-callback kernels), nothing beside it, the same machine | **{} min**:", TOTAL),
    C(PIPELINE, "test-run/summary.md",
      "min**: setup {}, base {}, apply {}, userspace {}, host-tests {}, build-base {}, checks {} "
      "({} of {} patches' results reused), submission {}, kunit {}, vm {} (tc-testing",
      *stages("setup base apply userspace host-tests build-base checks"),
      r"/results of (\d+) of \d+ patches reused/", r"/results of \d+ of (\d+) patches reused/",
      *stages("submission kunit vm")),
    C(PIPELINE, "test-run/test.log",
      "(tc-testing {} s on the patched kernel), icount {}; {} passed, "
      "{} failed | Documentation/results/test-run/ |", TDC_SECONDS_PATCHED,
      r"/^icount\s+PASS\s+(\S+) min/", PASSED, FAILED),
    C(PIPELINE, "main-vm/stage.log",
      "fresh clone of fb168d9, warm, nothing beside it, the same machine "
      "| **{} min**: checks {}, vm {} (", TOTAL, r"/^checks\s+PASS\s+(\S+) min/",
      r"/^vm\s+PASS\s+(\S+) min/"),
    C(PIPELINE, "main-vm/base/tc-testing.out",
      "tc-testing's whole suite, {} cases a kernel", TDC_CASES),
    C(PIPELINE, "main-vm/base/tc-testing.seconds", "cases a kernel: base {} s,", "/(\\d+)/"),
    C(PIPELINE, "main-vm/patched/tc-testing.seconds", "s, patched {} s); ", "/(\\d+)/"),
    C(PIPELINE, "main-vm/stage.log", "s); {} passed, {} failed | Documentation/results/main-vm/ |",
      PASSED, FAILED),
    C(PIPELINE, "vm-debug/stage.log",
      "| **{} min**: checks {} (cocci over every touched file in main "
      "mode), vm-debug {}: debug build {} min and KCSAN build {} min, both cold for the tree's "
      "fragments (about {} objects each), debug VM {} s, KCSAN VM {} s; {} passed, {} failed, {} "
      "skipped | Documentation/results/vm-debug/ |", TOTAL, r"/^checks\s+PASS\s+(\S+) min/",
      r"/^vm-debug\s+PASS\s+(\S+) min/", r"/build-debug: \d+ objects, (\d+)s$/ / 60",
      r"/build-kcsan: \d+ objects, (\d+)s$/ / 60", r"/build-kcsan: (\d+) objects/",
      r"/^\s+patched: ok after (\d+)s .*vm-debug/", r"/^\s+patched: ok after (\d+)s .*vm-kcsan/",
      PASSED, FAILED, SKIPPED),
    # The dummy series' cover letter: icount-designs/ (v4's designs as modules
    # on one kernel).
    C(DUMMY, "icount-designs/icount.json", "without the series {} {} {}",
      *(median(sc, "base") for sc in Q2)),
    C(DUMMY, "icount-designs/icount.json",
      "this series {} {} {}", *(delta(sc, "patched") for sc in Q2)),
    C(DUMMY, "icount-designs/icount.json", "this series, an atomic64 pair added {} {} {}",
      *(delta(sc, "atomic") for sc in Q2)),
    C(DUMMY, "icount-designs/icount.json", "not lltx (the queue's xmit lock) {} {} {}",
      *(delta(sc, "lock") for sc in Q2)),
    C(DUMMY, "icount-designs/icount.json",
      "a default dummy (1 TX queue), noqueue: {} without, {} with",
      median("q1_noqueue", "base"), median("q1_noqueue", "patched")),
    C(DUMMY, "icount-designs/icount.json",
      "the base's own dummy.c built as a module counts {}, {}\n and {}.)",
      *(delta(sc, "base-ext") for sc in Q2)),
    # Its patch 2/4 quotes the same record, and design.md says so.
    C(DESIGN, "icount-designs/icount.json", "`icount-designs/` ({}, {} -> {}, a claim of",
      delta("q2_start_xmit", "patched"), median("q2_start_xmit", "base"),
      median("q2_start_xmit", "patched")),
    C(DUMMY_COUNTERS, "icount-designs/icount.json",
      "second add costs {} instructions per packet ({} -> {}, pktgen",
      delta("q2_start_xmit", "patched"), median("q2_start_xmit", "base"),
      median("q2_start_xmit", "patched")),

    # The bypass series' cover letter: icount/.
    C(BYPASS, "icount/icount.json", "and deleted {} {}", median("s2_fq_codel_after_filter", "base"),
      median("s2_fq_codel_after_filter", "patched")),
    C(BYPASS, "icount/icount.json", "fq_codel never filtered {} {}",
      median("s2_fq_codel_fresh", "base"), median("s2_fq_codel_fresh", "patched")),
    C(BYPASS, "icount/icount.json", "The restored bypass saves {} of {} instructions per packet",
      delta("s2_fq_codel_after_filter", "base", "patched"),
      median("s2_fq_codel_after_filter", "base")),

    # Documentation/design.md section 3: the same records as the dummy cover letter.
    C(DESIGN, "icount-designs/icount.json",
      "the base kernel's {} /\n {} / {}; the base's `dummy.c` "
      "built the same way counts {} /\n {} / {}):", *(median(sc, "base") for sc in Q2),
      *(delta(sc, "base-ext") for sc in Q2)),
    C(DESIGN, "icount-designs/icount.json", "| per-CPU x per-queue (this series) | {} / {} / {} |",
      *(delta(sc, "patched") for sc in Q2)),
    C(DESIGN, "icount-designs/icount.json",
      "icount/icount.md`); {} / {} / {} as `dummy-atomic.patch`",
      *(delta(sc, "atomic") for sc in Q2)),
    C(DESIGN, "icount-designs/icount.json", "(v2) | {} / {} / {} (`dummy-queue-lock.patch`",
      *(delta(sc, "lock") for sc in Q2)),
    C(DESIGN, "icount-designs/icount.json", "add on the multi-queue path alone: {} there,",
      delta("q2_start_xmit", "patched")),
    C(DESIGN, "icount-designs/icount.json",
      "the atomic design on this tip\n ({}); the lock design is {}.",
      delta("q2_start_xmit", "atomic"), delta("q2_start_xmit", "lock")),
    C(DESIGN, "icount/icount.json", "adds {} built in (`icount/`)",
      delta("q2_start_xmit", "patched")),
    C(DESIGN, "icount-designs/icount.json", "(`icount/`) and {} as a module:",
      delta("q2_start_xmit", "patched")),
    # design.md section 3, under contention: bench-design/.
    C(DESIGN, "bench-design/bench.json", "the lock design runs at {}x ({}-{}) of the base and "
      "this series at {}x ({}-{}), or {}x ({}-{}) of the lock design", *CI("D-onequeue-lock"),
      *CI("D-onequeue-atomic"), *CI("D-onequeue-lock-atomic")),
    C(DESIGN, "bench-design/bench.json", "the series {}x ({}-{}), the lock design {}x ({}-{})",
      *CI("D-xps-atomic"), *CI("D-xps-lock")),

    # Documentation/design.md "The sinks, measured": bench-sinks/ and icount/.
    C(DESIGN, "bench-sinks/bench.json",
      "scenarios in one run, {} repetitions, this version's",
      "comparisons[key=Sink-veth].repetitions"),
    C(DESIGN, "bench-sinks/bench.json",
      "| dummy | 1 ({}M pps) | 1 ({}M pps) | qstats for 2 TX queues; "
      "their sum equals pktgen's count in {} of {} repetitions |",
      "sinks.pps[sink=dummy].no_xps.pps_median / 1000000",
      "sinks.pps[sink=dummy].xps.pps_median / 1000000",
      "sinks.records[sink=dummy,xps=False].qstats_exact",
      "sinks.records[sink=dummy,xps=False].qstats_compared"),
    C(DESIGN, "bench-sinks/bench.json", "| veth | {}x (95% CI {}-{}) | {}x (95% CI {}-{}) |",
      *CI("Sink-veth"), *CI("Sink-veth-xps")),
    C(DESIGN, "bench-sinks/bench.json", "| netdevsim | {}x (95% CI {}-{}) | {}x (95% CI {}-{}) |",
      *CI("Sink-nsim"), *CI("Sink-nsim-xps")),
    C(DESIGN, "bench-sinks/bench.json",
      "intervals (netdevsim {}x, {}-{}, with XPS; {}x, {}-{},\n without;",
      *CI("Sink-nsim-xps"), *CI("Sink-nsim")),
    C(DESIGN, "icount/icount.json",
      "(`icount/`: {} instructions against netdevsim's {} and veth's\n {},",
      median("q2_mq", "patched"), median("sink_nsim_mq", "patched"),
      median("sink_veth_mq", "patched")),
    C(DESIGN, "icount/icount.json",
      "Its cost:\n {} instructions per packet on an unlinked netdevsim "
      "with 2 queues and\n an mq root ({} -> {},", delta("sink_nsim_mq", "patched"),
      median("sink_nsim_mq", "base"), median("sink_nsim_mq", "patched")),
    # Documentation/pipeline.md's other quotes of current records.
    C(PIPELINE, "main-vm/base/tc-testing.out",
      "on the base and the patched kernel: {} cases a\n kernel",
      TDC_CASES),
    C(PIPELINE, "main-vm/base/tc-testing.seconds", "in lanes {} s on base", "/(\\d+)/"),
    C(PIPELINE, "main-vm/patched/tc-testing.seconds", "and {} s on patched; the vm stage",
      "/(\\d+)/"),
    C(PIPELINE, "main-vm/stage.log", "the net and no-callback kernels, {} min (the run of fb168d9",
      r"/^vm\s+PASS\s+(\S+) min/"),
    C(DESIGN, "bench/bench.json", "(f19c7a1) {}x ({}-{}), met after {}.", *CI("S2-restore"),
      "comparisons[key=S2-restore].repetitions"),
    C(RESULTS, "bench-sinks/bench.json",
      "tx-hw-drops add up to what pktgen sent in {} of {} repetitions",
      "sinks.records[sink=nsim,xps=False].qstats_drops_exact",
      "sinks.records[sink=nsim,xps=False].qstats_drops_compared"),
    C(RESULTS, "bench/bench.json", "stage runs it ({} repetitions of {} s, up to 15",
      "environment.repetitions", "environment.seconds"),
    C(DESIGN, "vm-kcsan/patched-console.log", "(KCSAN, its boot selftest {}/{} passed, DEBUG_NET)",
      r"/kcsan: selftest: (\d+)/\d+ tests passed/", r"/kcsan: selftest: \d+/(\d+) tests passed/"),
    # The kselftest install, the source checks' times and bad_input's rows.
    C(DESIGN, "test-run/test.log", "drivers/net/netdevsim install in {} s in the test command's",
      r"/^selftests installed \(net drivers/net drivers/net/netdevsim\) in (\d+) s/"),
    C(PIPELINE, "main-vm/stage.log", "checkpatch {} s (with `--codespell`), pylint {} s, ruff {} s "
      "(one node run for every blob, up front), cc_maintainers {} s, kdoc {} s; the bot's builds "
      "(one configuration and prepare of their own each, then two compiles of the touched objects "
      "per patch, ccache'd) build_clang {} s, build_allmodconfig_warn {} s, build_32bit {} s.",
      *(CHECK_TIME % name for name in ("checkpatch", "pylint", "ruff", "cc_maintainers", "kdoc",
                                       "build_clang", "build_allmodconfig_warn", "build_32bit"))),
    C(PIPELINE, "vm-debug/stage.log", "cached by blob; {} s over the series in `vm-debug/`",
      CHECK_TIME % "cocci"),
    C(BAD_INPUT, "test-run/summary.md", "(`Documentation/results/test-run/`), {} cases: {} pass on "
      "each", BAD_INPUT_PASS, BAD_INPUT_PASS),
]

SETTING = "a setting, limit or size of the run, not a measurement"
# The previous version's (v3's) own count, in the icount/ record of its time.
V3_ICOUNT = "`git show f47a74e:Documentation/results/icount/icount.md` (v3, stamped cfcbf3e)"
ESTIMATE = "an estimate of how long a rerun takes"
NOT_MEASURED = "no measured quantity (a version, an error's text, a definition's count)"
TREE_COUNT = "a count of the kernel tree's tdc cases in those categories, not of a run"


def L(doc, anchor, reason, scope="line"):
    return Listed(doc, anchor, scope, reason)


def H(doc, anchor, source, scope="line"):
    """Historical, with the source the text names."""
    return Listed(doc, anchor, scope, f"historical: {source}")


LISTED = [
    # Documentation/results/README.md
    L(RESULTS, "checks vm-debug`, about 90 min.", ESTIMATE),
    L(RESULTS, "Rerun: `python3 -m tools.series.stable apply 6.1 6.12 &&", NOT_MEASURED),
    L(RESULTS, "python3 -m ci.stable_vm 6.1 6.12`, about 33 min.", ESTIMATE),
    L(RESULTS, "(about 55 min).", ESTIMATE),
    H(RESULTS, "brought its cold run back from 70.9 min", "pipeline.md's 70.9 min row (ee031c8)"),
    L(RESULTS, "(churn at 60 s, no", SETTING),
    L(RESULTS, "lib/py's 20 s command timeout", SETTING),
    L(RESULTS, "a dummy 20 s plus one second per 16 queues", SETTING),
    L(RESULTS, "repetitions of 3 s, 2", SETTING),
    L(RESULTS, "for a target still\n inconclusive", SETTING),
    H(RESULTS, "against 2.01M and 988 ns", "the run before it, bench/ of d81abd3", "paragraph"),
    H(RESULTS, "The runs before it, of the same kernel code", "bench/ of d81abd3 and ee76ae6, "
      "bench-sinks/ of eb37c09 and older",
      "paragraph"),
    L(RESULTS, "(`link tx_packets +100, qdisc drops +0`", NOT_MEASURED),

    # Documentation/design.md
    L(DESIGN, "0.55% (about 10 instructions)", SETTING),
    L(DESIGN, "a counter read after a 2 s sleep, a timer of 10 s against 3 x 4 s of sleep",
      SETTING),
    L(DESIGN, "`churn` for 60 s, the dummy", SETTING),
    L(DESIGN, "when killed at 15 min", SETTING),
    H(DESIGN, "The bound was 1.5x, set from the first runs' medians", "bench/'s history "
      "(the runs before f19c7a1); 1.25x, 1.5x and 1.0x are bounds", "paragraph"),
    H(DESIGN, "added and deleted, base -> patched, >= 1.25x) is what", "a bound", "paragraph"),
    L(DESIGN, "120 s by default", SETTING),
    H(DESIGN, "base build compiles 2231 objects against about 1600", "pipeline.md's "
      "\"Measured times\" rows, each naming its record", "paragraph"),

    # Documentation/workflow.md
    L(WORKFLOW, "# every tree, or: apply 6.12", NOT_MEASURED),

    # Documentation/bad-input.md, churn.md
    L(BAD_INPUT, "new dummy with ifi_index -1", NOT_MEASURED),
    L(CHURN, "since it began (at most 5 s)", SETTING),

    # Documentation/pipeline.md
    L(PIPELINE, "waited for (30 s)", SETTING),
    H(PIPELINE, "Measured, when the test command still ran it (f864581", "`Documentation/"
      "results/test-run/` of c8a820e, which the row names (the medians in the error it quotes "
      "show the error's form)"),
    L(PIPELINE, "Unlike `.ci/run` with its 90 minutes", SETTING),
    L(PIPELINE, "(`tx_packets +100` is not seen in `tx_packets", NOT_MEASURED, "paragraph"),
    L(PIPELINE, "against a 500 ms threshold", SETTING),
    L(PIPELINE, "`d3da: patched 1/2 failed, base 0/2 failed`", NOT_MEASURED),
    L(PIPELINE, "fewer than 3 repetitions paired", SETTING),
    L(PIPELINE, "stub is pinned for up to 50 ms, the pinner's poll interval", SETTING),
    H(PIPELINE, "the run of 234a67f before it: 1091", "the run of 234a67f", "paragraph"),
    L(PIPELINE, "`TDC_TEST_CATEGORIES`: 130 cases, the series' own among them;", TREE_COUNT),
    L(PIPELINE, "Before dce8917 it ran `codel fq_codel sfq cake` (91 cases)", TREE_COUNT),
    L(PIPELINE, "also `pfifo_fast fifo mq cake_mq` (153 cases)", TREE_COUNT),
    L(PIPELINE, "How tdc runs (`selftests/tc-testing.sh`), measured on the patched kernel",
      TREE_COUNT, "paragraph"),
    H(PIPELINE, "| one tdc run per file, `-J 2` |", "13ad34d's message", "paragraph"),
    L(PIPELINE, "(10 s a run, 2.5 s a case, 10 s a ping)", SETTING),
    L(PIPELINE, "tdc kills it after 24 s", SETTING, "paragraph"),
    L(PIPELINE, "`LLVM=-19`", NOT_MEASURED),
    L(PIPELINE, "| maintainers | when `MAINTAINERS` changes", NOT_MEASURED),
    L(PIPELINE, "| VM hangs | killed at the timeout", SETTING),
    L(PIPELINE, "| `./ci/test.sh` on CI (clean clone, its cache kept", "CI's run, outside this "
      "repository"),
    # The "Measured times" rows of earlier runs, each naming its source.
    *(H(PIPELINE, f"| historical: {source} |", "its row's source") for source in (
        "`Documentation/results/test-run.log` of 15b7ee7",
        "`Documentation/results/test-run.log` of 317d848",
        "`Documentation/results/test-run.log` of a383258",
        "`Documentation/results/test-run/` of 5900d8a",
        "d833e95's message",
        "`Documentation/results/test-run/` of d833e95",
        "`Documentation/results/test-run/` of 0211a9a",
        "`Documentation/results/test-run/` of 5173798",
        "`Documentation/results/test-run/` of 1c5159e",
        "`Documentation/results/test-run/` of c422773",
        "`Documentation/results/test-run/cold/` of ee7cdcf",
        "ee031c8's message",
        "`Documentation/results/test-run/` of c93ed9b",
        "`Documentation/results/test-run/cold/` of ee031c8",
        "`Documentation/results/test-run/` of 9b6188b",
        "c068eef's message",
    )),
    H(PIPELINE, "(the 70.9 and 62.3 min rows, `test-run/cold/` of ee031c8)", "those rows"),
    H(PIPELINE, "Its cold run took 62.3 min on the same machine.", "`test-run/cold/` of ee031c8"),
    H(PIPELINE, "### Where a cold run goes", "the \"Measured times\" rows it names, each with its "
      "source", "section"),
    L(PIPELINE, "churn at 60 s, each VM given 3 hours", SETTING),
    L(DESIGN, "`Documentation/results/bench-design/`: 15 pairs of 3 s, the", SETTING),
    H(DESIGN, "without; an earlier run, of 49c91aa, put netdevsim at 0.94x,",
      "`bench-sinks/` of 49c91aa (git show e8576fc:Documentation/results/bench-sinks/bench.md)"),
    H(PIPELINE, "took 36.6 min, debug VM 1740 s, KCSAN VM 331 s", "`Documentation/results/"
      "vm-debug/` of 14dd997"),
    # The previous version's (v3's) own count, from the icount/ record it had.
    H(DESIGN, 'Its "+7 instructions" is the cost on one CPU', V3_ICOUNT),
    H(DESIGN, "| per-queue atomics (v3) | +7.0 / +7.0 / +6.7 as v3 counted them", V3_ICOUNT),
    H(DESIGN, "+7.0 built into the kernel (`icount/` of cfcbf3e), this version's", V3_ICOUNT),
    H(RESULTS, "counters, +7.0 on start_xmit) is `git show", V3_ICOUNT),
]

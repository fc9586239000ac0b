"""The numbers README.md and Documentation/ quote of the test command's runs
are those of its records under Documentation/results/ (test.log's stage
table and closing line, summary.md's stage table): each quote is a claim
(CLAIMS) checked here, and README.md quotes no minutes that no claim
covers. A new record fails the quotes of the old one until they are
updated."""

import re
import unittest
from pathlib import Path

from common.paths import ROOT

RESULTS = ROOT / "Documentation/results"
COUNTS = re.compile(r"^pipeline: (\d+) passed, (\d+) failed, (?:(\d+) warned, )?(\d+) skipped",
                    re.M)
STAGE = re.compile(r"^\| ([\w-]+) \| (?:pass|fail|skip) \| ([\d.]+) \|", re.M)
KUNIT = re.compile(r"KUnit \(UML\): (\d+) passed")

# (document, record, pattern): every named group of the pattern, which must
# match the document, is the record's value of that name (record()).
CLAIMS = [
    ("README.md", "test-run",
     r"\(`Documentation/results/test-run/`:[^)]*\) took (?P<minutes>[\d.]+) min, "
     r"(?P<passed>\d+)\s+passed, (?P<failed>\d+) failed"),
    ("README.md", "test-run/cold",
     r"\(`Documentation/results/test-run/cold/`:[^)]*\) took (?P<minutes>[\d.]+) min,"
     r"\s+build-base (?P<build_base>[\d.]+), checks (?P<checks>[\d.]+) and\s+"
     r"kunit (?P<kunit>[\d.]+) of them"),
    ("Documentation/results/README.md", "test-run",
     r"nothing beside it: (?P<passed>\d+) passed, (?P<failed>\d+) failed, "
     r"(?P<skipped>\d+) skipped;.*?KUnit (?P<kunit_passed>\d+) passed"),
    ("Documentation/results/README.md", "test-run/cold",
     r"nothing beside it: (?P<minutes>[\d.]+) min, (?P<passed>\d+) passed, "
     r"(?P<failed>\d+)\s+failed, (?P<skipped>\d+) skipped \(build-base (?P<build_base>[\d.]+), "
     r"checks (?P<checks>[\d.]+), kunit (?P<kunit>[\d.]+), vm (?P<vm>[\d.]+)"),
    ("Documentation/pipeline.md", "test-run/cold",
     r"\*\*(?P<minutes>[\d.]+) min\*\*: setup (?P<setup>[\d.]+), base (?P<base>[\d.]+), "
     r"apply (?P<apply>[\d.]+), userspace (?P<userspace>[\d.]+), "
     r"host-tests (?P<host_tests>[\d.]+), build-base (?P<build_base>[\d.]+) [^|]*?; "
     r"(?P<passed>\d+) passed, (?P<failed>\d+) failed, (?P<skipped>\d+) skipped "
     r"\| Documentation/results/test-run/cold/ \|"),
]
MINUTES = re.compile(r"\b\d+(?:\.\d+)? min\b")


def record(rel):
    """A test-run record's numbers as printed: minutes (the run's total),
    passed, failed, skipped, kunit_passed, and each stage's minutes (its
    name with "_" for "-")."""
    folder = RESULTS / rel
    log = (folder / "test.log").read_text(errors="replace")
    summary = (folder / "summary.md").read_text(errors="replace")
    out = {"minutes": re.findall(r"^total\s+([\d.]+) min", log, re.M)[-1]}
    passed, failed, _, skipped = COUNTS.findall(log)[-1]
    out.update(passed=passed, failed=failed, skipped=skipped)
    out.update({name.replace("-", "_"): minutes for name, minutes in STAGE.findall(summary)})
    if m := KUNIT.search(summary):
        out["kunit_passed"] = m[1]
    return out


def claim_problems(root=ROOT, claims=CLAIMS, read=record):
    """Each claim whose document lacks it or quotes another number than its
    record, and each "N min" of README.md no claim covers."""
    problems, covered = [], []
    for doc, rel, pattern in claims:
        text = (root / doc).read_text()
        m = re.search(pattern, text, re.S)
        if not m:
            problems.append(f"{doc}: no quote of {rel} matching {pattern[:60]!r}...")
            continue
        if doc == "README.md":
            covered.append(m.span())
        values = read(rel)
        for name, quoted in m.groupdict().items():
            if values.get(name) != quoted:
                problems.append(f"{doc}: {name} of {rel} quoted as {quoted}, "
                                f"the record says {values.get(name)}")
    text = (root / "README.md").read_text()
    problems += [f"README.md: {m[0]!r} is no claim of a record"
                 for m in MINUTES.finditer(text)
                 if not any(lo <= m.start() < hi for lo, hi in covered)]
    return problems


class DocNumbersTest(unittest.TestCase):
    def test_quotes_are_the_records(self):
        self.assertEqual(claim_problems(), [])

    def test_records_read(self):
        run = record("test-run")
        self.assertTrue(run["passed"].isdigit())
        self.assertTrue({"minutes", "build_base", "vm", "kunit_passed"} <= set(run))


class CraftedDocTest(unittest.TestCase):
    """A README that quotes other numbers than the records fails."""

    def quotes(self, readme):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "README.md").write_text(readme)
            claims = [c for c in CLAIMS if c[0] == "README.md"][:1]
            return claim_problems(Path(tmp), claims,
                                  lambda rel: {"minutes": "19.2", "passed": "1496",
                                               "failed": "0"})

    GOOD = ("The record (`Documentation/results/test-run/`: warm) took 19.2 min, 1496\n"
            "passed, 0 failed.\n")

    def test_the_records_numbers_pass(self):
        self.assertEqual(self.quotes(self.GOOD), [])

    def test_other_minutes_fail(self):
        self.assertEqual(self.quotes(self.GOOD.replace("19.2", "27")),
                         ["README.md: minutes of test-run quoted as 27, the record says 19.2"])

    def test_unchecked_minutes_fail(self):
        # The audit's README: 27 / 24 / 98 minutes that no record says.
        text = self.GOOD + "A fresh clone took 24 min here; with an empty cache 98 min.\n"
        self.assertEqual(self.quotes(text), ["README.md: '24 min' is no claim of a record",
                                             "README.md: '98 min' is no claim of a record"])

    def test_a_quote_that_is_gone_fails(self):
        self.assertIn("README.md: no quote of test-run", self.quotes("Fast.\n")[0])


if __name__ == "__main__":
    unittest.main()

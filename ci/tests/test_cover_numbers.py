"""Every benchmark ratio a cover letter quotes is a row of the kept
results of the dummy series' counter designs
(Documentation/results/bench-design/bench.json): a cover letter cannot
keep numbers of a run that was replaced. Cover letters name no file of
the project (no "bench.md of project commit ..."): a reviewer cannot
open one."""

import json
import re
import unittest

from common.paths import ROOT

BENCH = ROOT / "Documentation/results/bench-design/bench.json"
# "1.04x (1.02-1.05)": the median of the paired ratios and its 95% CI.
RATIO = re.compile(r"(\d+\.\d\d)x \((\d+\.\d\d)-(\d+\.\d\d)\)")
PRIVATE = re.compile(r"bench\.md of project commit|Documentation/results/")


def quoted(text):
    """The (ratio, CI low, CI high) a text quotes, as printed."""
    return RATIO.findall(text)


def rows(bench):
    """The same tuples for every comparison of a bench.json."""
    return {(f"{c['ratio_median']:.2f}", f"{c['ratio_ci_low']:.2f}",
             f"{c['ratio_ci_high']:.2f}")
            for c in bench["comparisons"] if c.get("ratio_ci_low") is not None}


def problems(text, bench):
    """Why a cover letter's numbers are not those of bench; [] if they are."""
    out = [f"names a project file: {m.group(0)}" for m in PRIVATE.finditer(text)]
    known = rows(bench)
    out += [f"{r}x ({lo}-{hi}) is no row of the kept results"
            for r, lo, hi in quoted(text) if (r, lo, hi) not in known]
    return out


ICOUNT = ROOT / "Documentation/results/icount-designs/icount.json"
# The table's rows: label, then the start_xmit, noqueue-root and mq-root columns.
ICOUNT_ROWS = {"without the series": ("base", False), "this series": ("patched", True),
               "this series, an atomic64 pair added": ("atomic", True),
               "not lltx (the queue's xmit lock)": ("lock", True)}
SCENARIOS = ("q2_start_xmit", "q2_noqueue", "q2_mq")


def icount_problems(text, record=ICOUNT):
    """Why the dummy cover letter's instruction table is not the record's
    medians (absolute for the base, differences to it for the others)."""
    rows = {(r["scenario"], r["kernel"]): r["median"]
            for r in json.loads(record.read_text())["rows"]}
    out, seen = [], 0
    for line in text.splitlines():
        for label, (kernel, delta) in ICOUNT_ROWS.items():
            m = re.fullmatch(r"\s*" + re.escape(label) + r"\s+([-+]?[\d.]+)\s+([-+]?[\d.]+)\s+"
                             r"([-+]?[\d.]+)\s*", line)
            if not m:
                continue
            seen += 1
            for scen, quoted_ in zip(SCENARIOS, m.groups()):
                want = rows[(scen, kernel)] - (rows[(scen, "base")] if delta else 0)
                if abs(float(quoted_) - want) > 0.051:
                    out.append(f"{label} {scen}: {quoted_}, the record has {want:.2f}")
    if seen != len(ICOUNT_ROWS):
        out.append(f"{seen} of the {len(ICOUNT_ROWS)} table rows found")
    return out


class CoverNumbersTest(unittest.TestCase):
    def test_cover_letters_quote_the_kept_results(self):
        bench = json.loads(BENCH.read_text())
        covers = sorted(ROOT.glob("patches/**/0000-cover-letter.patch"))
        self.assertTrue(covers)
        quoting = 0
        for cover in covers:
            text = cover.read_text()
            quoting += bool(quoted(text))
            with self.subTest(cover=str(cover.relative_to(ROOT))):
                self.assertEqual(problems(text, bench), [])
        # The dummy series quotes instruction counts instead: each number of
        # its table is a median of the kept icount record of its designs.
        if not quoting:
            self.assertEqual(icount_problems(
                (ROOT / "patches/net-next/dummy-mq/0000-cover-letter.patch").read_text()), [])

    def test_a_number_of_another_run_is_named(self):
        bench = {"comparisons": [{"ratio_median": 1.0378, "ratio_ci_low": 1.0163,
                                  "ratio_ci_high": 1.0523}]}
        good = "each CPU its own queue   1.04x (1.02-1.05)\n"
        self.assertEqual(problems(good, bench), [])
        self.assertEqual(len(problems(good.replace("1.04x", "1.05x"), bench)), 1)
        self.assertEqual(len(problems(good.replace("-1.05", "-1.06"), bench)), 1)
        self.assertEqual(len(problems(good + "(bench.md of project commit abc, 7 "
                                      "repetitions)\n", bench)), 1)


class IcountTableTest(unittest.TestCase):
    def test_a_number_not_in_the_record_is_named(self):
        good = (ROOT / "patches/net-next/dummy-mq/0000-cover-letter.patch").read_text()
        self.assertEqual(icount_problems(good), [])
        bad = good.replace("this series                           +7.9",
                           "this series                           +2.9")
        self.assertEqual(len(icount_problems(bad)), 1)


if __name__ == "__main__":
    unittest.main()

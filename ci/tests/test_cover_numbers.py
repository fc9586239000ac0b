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
        self.assertGreater(quoting, 0, "no cover letter quotes the benchmark")

    def test_a_number_of_another_run_is_named(self):
        bench = {"comparisons": [{"ratio_median": 1.0378, "ratio_ci_low": 1.0163,
                                  "ratio_ci_high": 1.0523}]}
        good = "each CPU its own queue   1.04x (1.02-1.05)\n"
        self.assertEqual(problems(good, bench), [])
        self.assertEqual(len(problems(good.replace("1.04x", "1.05x"), bench)), 1)
        self.assertEqual(len(problems(good.replace("-1.05", "-1.06"), bench)), 1)
        self.assertEqual(len(problems(good + "(bench.md of project commit abc, 7 "
                                      "repetitions)\n", bench)), 1)


if __name__ == "__main__":
    unittest.main()

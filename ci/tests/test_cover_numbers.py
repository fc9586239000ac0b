"""Every benchmark ratio a cover letter quotes is a row of the kept
benchmark results (Documentation/results/bench/bench.json), and the cover
letter names the project commit and repetitions of that run: a cover letter
cannot keep numbers of a run that was replaced."""

import json
import re
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "Documentation/results/bench/bench.json"
RATIO = re.compile(r"(\d+\.\d\d)x \(95% CI (\d+\.\d\d)-(\d+\.\d\d), (\d+) pairs\)")
SOURCE = re.compile(r"\(bench\.md of project commit ([0-9a-f]{12}), (\d+) repetitions\)")


def quoted(text):
    """The (ratio, CI low, CI high, pairs) a text quotes, as printed."""
    return RATIO.findall(text)


def rows(bench):
    """The same tuples for every comparison of a bench.json."""
    return {(f"{c['ratio_median']:.2f}", f"{c['ratio_ci_low']:.2f}",
             f"{c['ratio_ci_high']:.2f}", str(c["repetitions"]))
            for c in bench["comparisons"] if c.get("ratio_ci_low") is not None}


def problems(text, bench):
    """Why a cover letter's numbers are not those of bench; [] if they are."""
    found = quoted(text)
    if not found:
        return []
    out = []
    source = bench["environment"]["source"]
    named = SOURCE.findall(text)
    if not named:
        out.append("quotes benchmark ratios but names no '(bench.md of project commit ...)'")
    for commit, reps in named:
        if not source["commit"].startswith(commit):
            out.append(f"names commit {commit}, the kept results are of "
                       f"{source['commit'][:12]}")
        if int(reps) != bench["environment"]["repetitions"]:
            out.append(f"names {reps} repetitions, the kept results have "
                       f"{bench['environment']['repetitions']}")
    known = rows(bench)
    out += [f"{r}x (95% CI {lo}-{hi}, {n} pairs) is no row of the kept results"
            for r, lo, hi, n in found if (r, lo, hi, n) not in known]
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
        bench = {"environment": {"source": {"commit": "a" * 40}, "repetitions": 7},
                 "comparisons": [{"ratio_median": 1.664, "ratio_ci_low": 1.382,
                                  "ratio_ci_high": 2.096, "repetitions": 7}]}
        good = ("1.66x (95% CI 1.38-2.10, 7 pairs)\n"
                "(bench.md of project commit aaaaaaaaaaaa, 7 repetitions)")
        self.assertEqual(problems(good, bench), [])
        self.assertEqual(len(problems(good.replace("1.66x", "1.50x"), bench)), 1)
        self.assertEqual(len(problems(good.replace("aaaa", "bbbb", 1), bench)), 1)
        self.assertEqual(len(problems(good.replace(", 7 rep", ", 15 rep"), bench)), 1)
        self.assertEqual(len(problems(good.splitlines()[0], bench)), 1)


if __name__ == "__main__":
    unittest.main()

"""Benchmark verdicts: bootstrap intervals of paired ratios on synthetic data."""

import statistics
import unittest

from tools.bench import bench_config
from tools.bench import bench_stats
from tools.bench.bench_stats import INCONCLUSIVE, MET, NOT_MET, bootstrap_ci, verdict


def decide(ratios, lo=None, hi=None):
    return verdict(bootstrap_ci(ratios), lo, hi, len(ratios))


class VerdictTest(unittest.TestCase):
    def test_met_when_the_whole_interval_satisfies_the_target(self):
        ratios = [1.08, 1.10, 1.11, 1.09, 1.12, 1.10, 1.07]
        low, high = bootstrap_ci(ratios)
        self.assertGreaterEqual(low, 0.97)
        self.assertEqual(decide(ratios, lo=0.97), MET)

    def test_not_met_when_the_whole_interval_violates_it(self):
        ratios = [0.80, 0.82, 0.79, 0.85, 0.81, 0.83, 0.80]
        self.assertLess(bootstrap_ci(ratios)[1], 0.97)
        self.assertEqual(decide(ratios, lo=0.97), NOT_MET)

    def test_a_median_inside_the_noise_is_inconclusive(self):
        # The median (0.99) meets ">= 0.97", the spread does not allow saying so.
        ratios = [0.90, 0.93, 0.98, 0.99, 1.00, 1.02, 1.08]
        self.assertGreaterEqual(statistics.median(ratios), 0.97)
        low, high = bootstrap_ci(ratios)
        self.assertLess(low, 0.97)
        self.assertGreater(high, 0.97)
        self.assertEqual(decide(ratios, lo=0.97), INCONCLUSIVE)

    def test_two_sided_target(self):
        self.assertEqual(decide([0.99, 1.00, 1.01, 1.00, 0.99, 1.01, 1.00], 0.95, 1.05), MET)
        self.assertEqual(decide([1.10, 1.15, 1.12, 1.20, 1.11, 1.13, 1.14], 0.95, 1.05), NOT_MET)
        self.assertEqual(decide([0.80, 0.85, 0.90, 0.93, 0.96, 1.00, 1.02], 0.95, 1.05),
                         INCONCLUSIVE)
        # Wider than the target on both sides: neither met nor violated.
        self.assertEqual(verdict((0.90, 1.10), 0.95, 1.05, 7), INCONCLUSIVE)

    def test_upper_bound_only(self):
        self.assertEqual(verdict((1.2, 1.3), None, 1.1, 7), NOT_MET)
        self.assertEqual(verdict((0.9, 1.0), None, 1.1, 7), MET)

    def test_too_few_repetitions_are_inconclusive(self):
        self.assertEqual(bootstrap_ci([1.5, 1.5]), (1.5, 1.5))
        self.assertEqual(decide([1.5, 1.5], lo=0.97), INCONCLUSIVE)
        self.assertEqual(decide([0.5], lo=0.97), INCONCLUSIVE)
        self.assertEqual(verdict(None, 0.97, None, 0), INCONCLUSIVE)

    def test_no_target_no_verdict(self):
        self.assertIsNone(decide([1.0, 1.2, 1.4]))


class BootstrapTest(unittest.TestCase):
    RATIOS = [0.91, 1.04, 0.97, 1.12, 0.99, 1.01, 0.95]

    def test_deterministic(self):
        first = bootstrap_ci(self.RATIOS)
        bootstrap_ci([5.0, 1.0, 3.0])  # no state carried from one call to the next
        self.assertEqual(bootstrap_ci(self.RATIOS), first)
        self.assertEqual(bootstrap_ci(list(reversed(self.RATIOS))), first)

    def test_seed_and_resamples_are_used(self):
        wide = [0.5, 0.7, 0.9, 1.0, 1.1, 1.3, 1.6, 2.0, 0.6]
        got = {bootstrap_ci(wide, seed=s, resamples=200) for s in range(8)}
        self.assertGreater(len(got), 1)

    def test_interval_brackets_the_median_within_the_range(self):
        low, high = bootstrap_ci(self.RATIOS)
        self.assertLessEqual(min(self.RATIOS), low)
        self.assertLessEqual(low, statistics.median(self.RATIOS))
        self.assertLessEqual(statistics.median(self.RATIOS), high)
        self.assertLessEqual(high, max(self.RATIOS))
        # n = 7: the 95% interval of the median runs from the 2nd to the 6th value.
        ordered = sorted(self.RATIOS)
        self.assertEqual((low, high), (ordered[1], ordered[5]))

    def test_higher_confidence_is_wider(self):
        low95, high95 = bootstrap_ci(self.RATIOS)
        low80, high80 = bootstrap_ci(self.RATIOS, confidence=0.80)
        self.assertLessEqual(low95, low80)
        self.assertGreaterEqual(high95, high80)

    def test_median(self):
        self.assertEqual(bench_stats.median([3, 1, 2]), 2)
        self.assertEqual(bench_stats.median([4, 1, 2, 3]), 2.5)


class SummarizeTest(unittest.TestCase):
    def runs(self, ratios):
        return [{"base": {"s3_default": {"pps": 1e6}},
                 "patched": {"s3_default": {"pps": 1e6 * r}}} for r in ratios]

    def test_rows_carry_interval_width_and_verdict(self):
        comps = [bench_config.Comparison("T", "t", ("base", "s3_default"),
                                         ("patched", "s3_default"), ">= 0.97", lo=0.97),
                 bench_config.Comparison("R", "r", ("base", "s3_default"),
                                         ("patched", "s3_default"), "report")]
        ratios = [0.90, 0.93, 0.98, 0.99, 1.00, 1.02, 1.08]
        rows = bench_stats.summarize(self.runs(ratios), comps)
        t, r = rows
        self.assertEqual(t["verdict"], INCONCLUSIVE)
        self.assertIsNone(r["verdict"])
        self.assertAlmostEqual(t["ratio_ci_width"], t["ratio_ci_high"] - t["ratio_ci_low"])
        self.assertEqual((t["target_lo"], t["target_hi"]), (0.97, None))
        # The report-only row has its interval too.
        self.assertEqual(r["ratio_ci_low"], t["ratio_ci_low"])
        self.assertEqual(bench_stats.summarize(self.runs(ratios), comps), rows)

    def test_no_pairs_is_inconclusive(self):
        comps = [bench_config.Comparison("T", "t", ("base", "s3_default"),
                                         ("patched", "s3_default"), ">= 0.97", lo=0.97)]
        row = bench_stats.summarize([{"base": {}, "patched": {}}], comps)[0]
        self.assertEqual(row["repetitions"], 0)
        self.assertEqual(row["verdict"], INCONCLUSIVE)
        self.assertNotIn("ratio_ci_low", row)


if __name__ == "__main__":
    unittest.main()

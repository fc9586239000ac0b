"""Benchmark driver on a stand-in UML kernel: pairing, ratios, report files."""

import json
import stat
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools/bench"))
import bench  # noqa: E402

# A fake 'linux' binary: reads BENCH_* from its arguments like UML's init
# environment and writes one mqbench-shaped JSON per scenario.
FAKE = r"""#!/usr/bin/env python3
import json, sys, pathlib
env = dict(a.split("=", 1) for a in sys.argv[1:] if a.startswith("BENCH_"))
out = pathlib.Path(env["BENCH_OUT"])
scale = float("@SCALE@")
for s in env["BENCH_SCENARIOS"].split(","):
    if s == "s2_noqueue" and "@FAIL@" == "yes":
        (out / f"{s}.err").write_text("pktgen: device busy")
        continue
    (out / f"{s}.json").write_text(json.dumps({"pps": 1e6 * scale * (2 if "mq" in s else 1)}))
(out / "complete").write_text("complete")
"""


def fake_kernel(tmp, name, scale, fail="no", complete=True):
    p = Path(tmp) / name
    text = FAKE.replace("@SCALE@", str(scale)).replace("@FAIL@", fail)
    if not complete:
        text = "#!/bin/sh\nexit 0\n"
    p.write_text(text)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return p


class BenchTest(unittest.TestCase):
    def args(self, tmp, base, patched, reps=3):
        return bench.main.__globals__["argparse"].Namespace(
            base_kernel=base, patched_kernel=patched, mqbench="/bin/true", out=Path(tmp) / "out",
            repetitions=reps, seconds=0.1, cpus=2, timeout=30, scenarios=bench.SCENARIOS,
            base_desc="test base")

    def test_ratios_and_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, svg, errors = bench.run(self.args(tmp, fake_kernel(tmp, "base", 1.0),
                                                    fake_kernel(tmp, "patched", 1.1)),
                                          log=lambda m: None)
            self.assertEqual(errors, [])
            rows = {r["key"]: r for r in data["comparisons"]}
            self.assertEqual(rows["S3"]["repetitions"], 3)
            self.assertAlmostEqual(rows["S3"]["ratio_median"], 1.1)
            self.assertAlmostEqual(rows["S1"]["ratio_median"], 2.2)
            self.assertTrue(rows["S1"]["meets_target"])
            self.assertFalse(rows["S2-fresh"]["meets_target"] is None)
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("not hardware numbers", md)
            self.assertIn("| S3 |", md)
            saved = json.loads((Path(tmp) / "out/bench.json").read_text())
            self.assertEqual(len(saved["runs"]), 3)
            if svg:
                self.assertIn("<svg", svg.read_text())

    def test_missing_result_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            _, _, errors = bench.run(self.args(tmp, fake_kernel(tmp, "base", 1.0),
                                               fake_kernel(tmp, "patched", 1.0, fail="yes"), 1),
                                     log=lambda m: None)
            self.assertTrue(any("s2_noqueue" in e and "device busy" in e for e in errors))

    def test_guest_that_does_not_complete_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(RuntimeError):
                bench.run(self.args(tmp, fake_kernel(tmp, "base", 1.0, complete=False),
                                    fake_kernel(tmp, "patched", 1.0), 1), log=lambda m: None)

    def test_each_kernel_runs_only_its_scenarios(self):
        base = bench.scenarios_for("base", bench.SCENARIOS)
        self.assertNotIn("s1_default_mq", base)
        self.assertIn("s1_default_pfifo_fast", base)
        self.assertIn("s1_default_mq", bench.scenarios_for("patched", bench.SCENARIOS))

    def test_bad_arguments(self):
        with self.assertRaises(SystemExit) as ctx:
            bench.main(["--base-kernel", "x", "--patched-kernel", "y", "--mqbench", "z",
                        "--repetitions", "0"])
        self.assertEqual(ctx.exception.code, 2)


if __name__ == "__main__":
    unittest.main()

"""Benchmark driver on a stand-in UML kernel: pairing, ratios, report files."""

import json
import re
import shutil
import stat
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools/bench"))
import bench  # noqa: E402

# A fake 'linux' binary: reads BENCH_* from its arguments like UML's init
# environment and writes one mqbench-shaped JSON per scenario, plus the
# guest's tracepoints file. mq scenarios send twice the packets at half the
# CPU time, spread 3:1 over two queues; the sweep scales with queues x senders.
FAKE = r"""#!/usr/bin/env python3
import json, re, sys, pathlib
env = dict(a.split("=", 1) for a in sys.argv[1:] if a.startswith("BENCH_"))
out = pathlib.Path(env["BENCH_OUT"])
scale = float("@SCALE@")
tp = "@TP@"
counter = @COUNTER@
names = ["cycles", "task-clock"]
(out / "tracepoints").write_text(f"tracefs yes\nqdisc/qdisc_bypass {tp}\nqdisc/qdisc_enqueue yes\n")
for s in env["BENCH_SCENARIOS"].split(","):
    if s == "s2_noqueue" and "@FAIL@" == "yes":
        (out / f"{s}.err").write_text("pktgen: device busy")
        continue
    if s == "s2_pfifo_fast_tp_on" and tp != "yes":
        (out / f"{s}.err").write_text("no tracepoint qdisc:qdisc_bypass on this kernel")
        continue
    mq = "mq" in s
    sweep = re.fullmatch(r"sweep_q(\d)_t(\d)", s)
    factor = int(sweep[1]) * int(sweep[2]) if sweep else (2 if mq else 1)
    res = {"pps": 1e6 * scale * factor, "cpu_ns_per_pkt": 1000 / (2 if mq else 1),
           "per_queue": {"0": 300, "1": 100} if mq else None,
           "per_queue_source": "qstats" if mq else "unavailable",
           "per_queue_note": "" if mq else "qstats: EOPNOTSUPP",
           "counters": {n: counter for n in names},
           "counters_note": "" if counter else
               "no counters: cycles (perf_event_open: Function not implemented), task-clock "
               "(perf_event_open: Function not implemented); kernels without perf events "
               "(such as UML) have none"}
    (out / f"{s}.json").write_text(json.dumps(res))
(out / "complete").write_text("complete")
"""


def fake_kernel(tmp, name, scale, fail="no", complete=True, tp="no", counter=None):
    p = Path(tmp) / name
    text = (FAKE.replace("@SCALE@", str(scale)).replace("@FAIL@", fail).replace("@TP@", tp)
            .replace("@COUNTER@", repr(counter)))
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

    def run_both(self, tmp, reps=3, **patched):
        return bench.run(self.args(tmp, fake_kernel(tmp, "base", 1.0),
                                   fake_kernel(tmp, "patched", 1.1, tp="yes", **patched), reps),
                         log=lambda m: None)

    def test_ratios_and_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, svgs, errors = self.run_both(tmp)
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
            for svg in svgs:
                self.assertIn("<svg", svg.read_text())

    def test_user_space_and_tracepoint_comparisons(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, errors = self.run_both(tmp)
            self.assertEqual(errors, [])
            rows = {r["key"]: r for r in data["comparisons"]}
            self.assertAlmostEqual(rows["S1-ring"]["ratio_median"], 2.2)
            self.assertAlmostEqual(rows["S1-udp"]["ratio_median"], 2.2)
            self.assertIsNone(rows["S1-ring"]["meets_target"])
            self.assertEqual(rows["S2-tracepoint-on"]["repetitions"], 3)
            self.assertEqual(rows["S2-tracepoint-on"]["b"], ["patched", "s2_pfifo_fast_tp_on"])

    def test_tracepoints_in_environment_and_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = self.run_both(tmp)
            tps = data["environment"]["tracepoints"]
            self.assertFalse(tps["base"]["qdisc/qdisc_bypass"])
            self.assertTrue(tps["patched"]["qdisc/qdisc_bypass"])
            self.assertTrue(tps["base"]["qdisc/qdisc_enqueue"])
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("- base: qdisc:qdisc_bypass absent, qdisc:qdisc_enqueue present", md)
            self.assertIn("- patched: qdisc:qdisc_bypass present", md)
            self.assertIn("compiled in and disabled", md)

    def test_tracepoint_scenario_without_the_event_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, errors = bench.run(
                self.args(tmp, fake_kernel(tmp, "base", 1.0), fake_kernel(tmp, "patched", 1.0), 1),
                log=lambda m: None)
            self.assertEqual(len(errors), 1)
            self.assertIn("s2_pfifo_fast_tp_on: no tracepoint qdisc:qdisc_bypass", errors[0])
            rows = {r["key"]: r for r in data["comparisons"]}
            self.assertEqual(rows["S2-tracepoint-on"]["repetitions"], 0)
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("does not measure a disabled tracepoint", md)

    def test_cpu_time_table(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = self.run_both(tmp)
            s1 = next(r for r in data["comparisons"] if r["key"] == "S1")
            self.assertEqual(s1["cpu_repetitions"], 3)
            self.assertAlmostEqual(s1["a_cpu_ns_median"], 1000)
            self.assertAlmostEqual(s1["b_cpu_ns_median"], 500)
            self.assertAlmostEqual(s1["cpu_ratio_median"], 0.5)
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("| S1 | 1000 | 500 | 0.50x (0.50-0.50) |", md)

    def test_per_queue_shares_of_s1(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = self.run_both(tmp)
            shares = {(r["kernel"], r["scenario"]): r for r in data["per_queue"]}
            self.assertEqual({k for k, s in shares}, {"base", "patched"})
            self.assertTrue(all(s.startswith("s1_") for _, s in shares))
            mq = shares[("patched", "s1_ring_default_mq")]
            self.assertEqual(mq["sources"], ["qstats"])
            self.assertEqual(mq["shares"], {"0": 0.75, "1": 0.25})
            self.assertEqual(shares[("base", "s1_default_pfifo_fast")]["sources"],
                             ["unavailable"])
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("| patched | s1_ring_default_mq | qstats | tx-0 75% / tx-1 25% |", md)
            self.assertIn("| base | s1_udp_default_pfifo_fast | unavailable | - |", md)

    def test_counters_unavailable_sentence(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = self.run_both(tmp)
            self.assertFalse(data["counters"]["available"])
            self.assertEqual(data["counters"]["reasons"],
                             ["perf_event_open: Function not implemented"])
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("(perf_event_open: Function not implemented): UML has no perf events", md)

    def test_counters_available_table(self):
        summary = bench.counters_summary([{"patched": {"s3_default": {
            "counters": {"cycles": 900.0, "task-clock": None}, "counters_note": ""}}}])
        self.assertTrue(summary["available"])
        md = "\n".join(bench.counter_lines(summary))
        self.assertIn("| kernel | scenario | cycles | task-clock |", md)
        self.assertIn("| patched | s3_default | 900.0 | - |", md)

    def test_sweep_summary_and_plot(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, svgs, _ = self.run_both(tmp)
            sweep = {(r["kernel"], r["queues"], r["senders"]): r for r in data["sweep"]}
            self.assertEqual(len(sweep), 8)
            self.assertAlmostEqual(sweep[("patched", 2, 2)]["pps_median"], 4.4e6)
            self.assertAlmostEqual(sweep[("base", 1, 1)]["pps_median"], 1e6)
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("| patched | 2 (mq) | 2.20M (2.20-2.20) | 4.40M (4.40-4.40) |", md)
            if not shutil.which("gnuplot"):
                self.skipTest("no gnuplot")
            self.assertEqual([p.name for p in svgs], ["bench.svg", "bench-bars.svg"])
            self.assertIn("senders", svgs[0].read_text())

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
        patched = bench.scenarios_for("patched", bench.SCENARIOS)
        self.assertNotIn("s1_default_mq", base)
        self.assertIn("s1_default_pfifo_fast", base)
        self.assertIn("s1_default_mq", patched)
        self.assertNotIn("s2_pfifo_fast_tp_on", base)
        self.assertIn("s2_pfifo_fast_tp_on", patched)
        self.assertNotIn("s1_ring_default_mq", base)
        self.assertIn("s1_udp_default_pfifo_fast", base)

    def test_sweep_runs_on_both_kernels(self):
        self.assertEqual(sorted(bench.SWEEP), ["sweep_q1_t1", "sweep_q1_t2", "sweep_q2_t1",
                                               "sweep_q2_t2"])
        for kernel in bench.KERNELS:
            got = bench.scenarios_for(kernel, bench.SCENARIOS)
            self.assertTrue(set(bench.SWEEP) <= set(got), kernel)
        self.assertEqual(bench.scenarios_for("base", ["sweep_q2_t1", "s3_default"]),
                         ["sweep_q2_t1", "s3_default"])

    def test_guest_defines_every_scenario(self):
        guest = bench.GUEST.read_text()
        defined = set(re.findall(r"^(\w+)\(\) \{", guest, re.M))
        self.assertEqual(set(bench.SCENARIOS) - defined, set())

    def test_read_tracepoints(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(bench.read_tracepoints(Path(tmp)), {})
            (Path(tmp) / "tracepoints").write_text("tracefs no\nqdisc/qdisc_bypass no\n")
            self.assertEqual(bench.read_tracepoints(Path(tmp)),
                             {"tracefs": False, "qdisc/qdisc_bypass": False})

    def test_bad_arguments(self):
        with self.assertRaises(SystemExit) as ctx:
            bench.main(["--base-kernel", "x", "--patched-kernel", "y", "--mqbench", "z",
                        "--repetitions", "0"])
        self.assertEqual(ctx.exception.code, 2)


if __name__ == "__main__":
    unittest.main()

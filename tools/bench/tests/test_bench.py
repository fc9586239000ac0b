"""Benchmark driver on a stand-in UML kernel: pairing, ratios, report files."""

import argparse
import contextlib
import io
import json
import re
import shutil
import stat
import tempfile
import unittest
from unittest import mock
from pathlib import Path

from tools.bench import bench
from tools.bench import bench_config

# A fake 'linux' binary: reads BENCH_* from its arguments like UML's init
# environment and writes one mqbench-shaped JSON per scenario, plus the
# guest's tracepoints file. mq scenarios send twice the packets at half the
# CPU time, spread 3:1 over two queues, 1:1 with XPS; the sweep scales with
# queues x senders. The sinks: veth sends half the dummy's pps, netdevsim 0.8
# of it; each leaves the records the guest writes (qstats dumps before and
# after, tc classes) as the drivers answer: the dummy's per-queue counters sum
# to what pktgen sent (3000 packets), veth has no qstats (EOPNOTSUPP) and
# delivers all but 10, netdevsim reports 0 on every queue and drops them all.
FAKE = r"""#!/usr/bin/env python3
import json, re, sys, pathlib
env = dict(a.split("=", 1) for a in sys.argv[1:] if a.startswith("BENCH_"))
out = pathlib.Path(env["BENCH_OUT"])
scale = float("@SCALE@")
tp = "@TP@"
counter = @COUNTER@
names = ["cycles", "task-clock"]
(out / "tracepoints").write_text(f"tracefs yes\nqdisc/qdisc_enqueue {tp}\n")


def qdump(supported, tx, rx=(), link=(0, 0)):
    queues = [{"type": "rx", "id": i, "rx_packets": n} for i, n in enumerate(rx)]
    queues += [{"type": "tx", "id": i, "tx_packets": n, "tx_bytes": 60 * n}
               for i, n in enumerate(tx)]
    return json.dumps({"subcommand": "qstats", "queue_scope": {
        "supported": supported, "error": None if supported else
        "EOPNOTSUPP (Operation not supported)", "queues": queues},
        "link": {"tx_packets": link[0], "tx_dropped": link[1]}, "errors": []})


CLASSES = "".join(f"class mq 1:{i + 1} root \n Sent {60 * n} bytes {n} pkt (dropped 0, "
                  "overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n"
                  for i, n in enumerate((2000, 1000)))
SINK_RECORDS = {
    "dummy": (qdump(True, [0, 0]), qdump(True, [2000, 1000], link=(3000, 0))),
    "veth": (qdump(False, []), qdump(False, [], link=(2990, 10))),
    "nsim": (qdump(True, [0, 0], [0, 0]), qdump(True, [0, 0], [0, 0], link=(0, 3000))),
}
for s in env["BENCH_SCENARIOS"].split(","):
    if s == "s2_noqueue" and "@FAIL@" == "yes":
        (out / f"{s}.err").write_text("pktgen: device busy")
        continue
    mq = "mq" in s
    xps = s.endswith("_xps")
    sweep = re.fullmatch(r"sweep_q(\d)_t(\d)", s)
    factor = int(sweep[1]) * int(sweep[2]) if sweep else (2 if mq else 1)
    sink = re.fullmatch(r"sink_(\w+?)_mq(_xps)?", s)
    if sink:
        factor = {"dummy": 2, "veth": 1, "nsim": 1.6}[sink[1]]
        before, after = SINK_RECORDS[sink[1]]
        (out / f"{s}.qstats-before").write_text(before)
        (out / f"{s}.qstats").write_text(after)
        (out / f"{s}.classes").write_text(CLASSES)
    res = {"pps": 1e6 * scale * factor, "cpu_ns_per_pkt": 1000 / (2 if mq else 1),
           "per_queue": ({"0": 200, "1": 200} if xps else {"0": 300, "1": 100}) if mq else None,
           "packets": 3000,
           "per_queue_source": "qstats" if mq else "unavailable",
           "per_queue_note": "" if mq else "qstats: EOPNOTSUPP",
           "counters": {n: counter for n in names},
           "counters_note": "" if counter else
               "no counters: cycles (perf_event_open: Function not implemented), task-clock "
               "(perf_event_open: Function not implemented); kernels without perf events "
               "(such as UML) have none"}
    (out / f"{s}.json").write_text(json.dumps(res))
if "BENCH_DEVCOST" in env:
    q1 = {"queues": 1, "mem_kb": {"Percpu": 0.5, "Slab": 8.0}, "stats_read_ns": 900,
          "link_show_us": 40.0}
    q64 = dict(q1, queues=64, mem_kb={"Percpu": 3.0 * scale, "Slab": 40.0})
    (out / "devcost.json").write_text(json.dumps({"cpus": 2, "rows": [q1, q64]}))
(out / "complete").write_text("complete")
"""


def fake_kernel(tmp, name, scale, fail="no", complete=True, tp="yes", counter=None):
    p = Path(tmp) / name
    text = (FAKE.replace("@SCALE@", str(scale)).replace("@FAIL@", fail).replace("@TP@", tp)
            .replace("@COUNTER@", repr(counter)))
    if not complete:
        text = "#!/bin/sh\nexit 0\n"
    p.write_text(text)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return p


class BenchTest(unittest.TestCase):
    def args(self, tmp, base, patched, reps=3, lock=None):
        """The "lock" kernel, unless given, a stand-in between base and patched."""
        return argparse.Namespace(
            base_kernel=base, patched_kernel=patched,
            lock_kernel=lock or fake_kernel(tmp, "lock", 1.05), mqbench="/bin/true",
            out=Path(tmp) / "out",
            repetitions=reps, seconds=0.1, cpus=2, timeout=30, scenarios=bench.SCENARIOS,
            base_desc="test base", devcost=True)

    def run_both(self, tmp, reps=3, **patched):
        return bench.run(self.args(tmp, fake_kernel(tmp, "base", 1.0),
                                   fake_kernel(tmp, "patched", 1.1, **patched), reps))

    def test_ratios_and_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, svgs, errors = self.run_both(tmp)
            self.assertEqual(errors, [])
            rows = {r["key"]: r for r in data["comparisons"]}
            self.assertEqual(rows["S3"]["repetitions"], 3)
            self.assertAlmostEqual(rows["S3"]["ratio_median"], 1.1)
            # Same setup on both kernels: the ratio is the kernels' difference alone.
            self.assertAlmostEqual(rows["S1"]["ratio_median"], 1.1)
            # Without XPS the queues come by flow hash (bimodal): a report row, no verdict.
            self.assertIsNone(rows["S1"]["verdict"])
            # The lock's cost is stated, not bounded: every S1 row reports.
            self.assertIsNone(rows["S1-xps"]["verdict"])
            self.assertEqual((rows["S1"]["ratio_ci_low"], rows["S1"]["ratio_ci_width"]),
                             (rows["S1"]["ratio_median"], 0))
            self.assertAlmostEqual(rows["S1-xps"]["ratio_median"], 1.1)
            self.assertAlmostEqual(rows["S1-queues-patched"]["ratio_median"], 2.0)
            self.assertIsNotNone(rows["S2-fresh"]["verdict"])
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("not hardware numbers", md)
            self.assertIn("Absolute numbers under UML mean little; only the paired ratios count.",
                          md.split("\n## ")[0])
            self.assertIn("| S3 |", md)
            saved = json.loads((Path(tmp) / "out/bench.json").read_text())
            self.assertEqual(len(saved["runs"]), 3)
            for svg in svgs:
                self.assertIn("<svg", svg.read_text())

    def test_the_record_names_each_kernel_by_the_tree_commit_built(self):
        from common.stamp import write_build_source
        from common.tests.test_stamp import tree
        with tempfile.TemporaryDirectory() as tmp:
            commit = tree(Path(tmp) / "src")
            # The fake kernels' build directory: tmp.
            write_build_source(Path(tmp) / "src", tmp)
            self.run_both(tmp, reps=1)
            env = json.loads((Path(tmp) / "out/bench.json").read_text())["environment"]
        self.assertEqual({k: (b["dir"], b["commit"], b["dirty"])
                          for k, b in env["kernel_builds"].items()},
                         {k: (tmp, commit, False) for k in ("base", "patched", "lock")})
        self.assertEqual(env["base_kernel"], f"{tmp}/base")
        self.assertEqual(env["source"]["stages"], ["tools.bench.bench"])

    def test_verdicts_and_intervals_in_report_and_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = self.run_both(tmp)
            rows = {r["key"]: r for r in data["comparisons"]}
            # 1.1x everywhere base -> patched: S2-restore's ">= 1.25x" is not met.
            self.assertEqual(rows["S2-restore"]["verdict"], "not met")
            self.assertEqual(rows["S2-fresh"]["verdict"], "met")
            self.assertEqual(rows["S2-bypass"]["verdict"], "met")
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("Targets: 4 met, 1 not met (S2-restore), 0 inconclusive.", md)
            self.assertRegex(md, r"\| S1 \| .* \| report \| - \|")
            self.assertIn("| B/A 95% CI (width) | target | verdict |", md)
            self.assertRegex(md, r"\| S2-restore \| .* \| 1\.100-1\.100 \(0\.000\) \| "
                                 r">= 1\.25x \| \*\*NOT MET\*\* \|")
            self.assertRegex(md, r"\| S1-ring \| .* \| report \| - \|")
            saved = json.loads((Path(tmp) / "out/bench.json").read_text())
            self.assertEqual(saved["bootstrap"]["resamples"], 10000)
            self.assertEqual(saved["comparisons"], data["comparisons"])

    def test_icount_beside_the_uml_rows(self):
        """Given icount.py's results (the record, written before its guards
        were: they are judged from its runs), bench.md shows each icount guard
        beside its UML row, and the instructions per packet."""
        record = Path(__file__).resolve().parent / "data/icount/icount-c802371.json"
        with tempfile.TemporaryDirectory() as tmp:
            args = self.args(tmp, fake_kernel(tmp, "base", 1.0), fake_kernel(tmp, "patched", 1.1))
            args.icount = record
            data, _, _ = bench.run(args)
            md = (Path(tmp) / "out/bench.md").read_text()
        self.assertEqual([g["key"] for g in data["icount"]["guards"]],
                         ["S2-restore", "S2-fresh", "S2-bypass", "S3", "counters"])
        self.assertEqual([g["key"] for g in data["icount"]["reports"]],
                         ["S2-floor", "S2-floor-base", "dummy-counters"])
        self.assertIn("## Beside the UML rows: instructions per packet (QEMU icount)", md)
        # UML: S3 1.10x, met (guard >= 0.97); icount: 2248.2 on both, met.
        self.assertRegex(md, r"\| S3 \| default dummy \(noqueue\), one sender: base -> patched "
                             r"\| 1\.10x \(1\.100-1\.100\) \| met \| 2248\.2 \| 2248\.2 \| "
                             r"1\.0000 \| B/A within 0\.998-1\.002 \| met \|")
        self.assertRegex(md, r"\| S2-restore \| .* \| \*\*NOT MET\*\* \| 3631\.2 \| 2520\.3 \| "
                             r"0\.6941 \| B/A <= 0\.80 \| met \|")
        self.assertIn("| s2_pfifo_fast | patched | 2397.4 | 2397.2-2397.6 | -0.1 |", md)

    def test_no_icount_no_section(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = self.run_both(tmp)
            md = (Path(tmp) / "out/bench.md").read_text()
        self.assertNotIn("icount", data)
        self.assertNotIn("QEMU icount", md)

    def test_boot_order_and_pinning_recorded(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = self.run_both(tmp)
            env = data["environment"]
            self.assertEqual(env["boot_order"], [["base", "lock", "patched"],
                                                 ["patched", "lock", "base"],
                                                 ["base", "lock", "patched"]])
            self.assertFalse(env["vcpu_pinning"]["requested"])
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("Boot order: base/lock/patched, patched/lock/base, "
                          "base/lock/patched", md)
            self.assertIn("the base boots first 2 times, the patched kernel 1)", md)
            self.assertIn("vCPU threads not pinned", md)

    def test_pinning_requested_on_a_kernel_without_vcpu_threads(self):
        with tempfile.TemporaryDirectory() as tmp:
            args = self.args(tmp, fake_kernel(tmp, "base", 1.0), fake_kernel(tmp, "patched", 1.0),
                             1)
            args.pin_vcpus = True
            data, _, errors = bench.run(args)
            self.assertEqual(errors, [])
            pin = data["environment"]["vcpu_pinning"]
            # The stand-in is one thread: nothing to pin, the run goes on.
            self.assertEqual((pin["requested"], pin["boots"], pin["pinned"]), (True, 3, 0))
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("pinned one to one to host CPUs in 0 of 3 boots", md)

    def test_s1_same_setup_on_both_kernels_with_and_without_xps(self):
        rows = {c.key: c for c in bench.COMPARISONS}
        s1 = {k: c for k, c in rows.items() if k.startswith("S1") and "queues" not in k}
        self.assertEqual(sorted(s1), ["S1", "S1-flows", "S1-ring", "S1-ring-xps", "S1-udp",
                                      "S1-udp-xps", "S1-xps"])
        for key, c in s1.items():
            with self.subTest(key):
                # base -> patched on one and the same scenario: numtxqueues N + mq.
                self.assertEqual((c.a[0], c.b[0]), ("base", "patched"))
                self.assertEqual(c.a[1], c.b[1])
                self.assertIn("_nq_mq", c.a[1])
                self.assertEqual(c.a[1].endswith("_xps"), key.endswith("-xps"))
        for key in ("S1-queues-base", "S1-queues-patched"):
            c = rows[key]
            self.assertEqual(c.a[0], c.b[0])
            self.assertEqual((c.a[1], c.b[1]), ("s1_1q_pfifo_fast", "s1_nq_mq_xps"))

    def test_guest_s1_devices_and_xps(self):
        guest = bench.GUEST.read_text()
        for s in bench.SCENARIOS:
            if not s.startswith("s1_") or "_nq_" not in s:
                continue
            with self.subTest(s):
                body = re.search(rf"^{s}\(\) \{{\n(.*?)^\}}", guest, re.M | re.S)[1]
                self.assertIn('dev_add d0 "$nq"', body)
                self.assertIn("root_mq", body)
                if s.endswith("_xps"):
                    self.assertTrue("--xps" in body or " yes" in body, body)
                else:
                    self.assertTrue("xps_unset" in body or " no" in body, body)

    def test_s1_rows_report_the_lock_cost_s3_guards_the_default_path(self):
        rows = {c.key: c for c in bench.COMPARISONS}
        for key in ("S1", "S1-xps", "S1-flows"):
            self.assertEqual((rows[key].target, rows[key].lo, rows[key].hi),
                             ("report", None, None), key)
        self.assertEqual((rows["S3"].target, rows["S3"].lo, rows["S3"].guard),
                         ("guard >= 0.97", 0.97, True))
        bounded = {k for k, c in rows.items() if c.lo is not None or c.hi is not None}
        self.assertEqual(bounded, {"S2-restore", "S2-fresh", "S2-bypass", "S3", "D-xps-atomic"})
        # The one claim: what the series changes; the guards bound the same code.
        self.assertEqual({k for k in bounded if not rows[k].guard}, {"S2-restore"})

    def test_sink_comparisons(self):
        rows = {c.key: c for c in bench.COMPARISONS if c.key.startswith("Sink-")}
        self.assertEqual(sorted(rows), ["Sink-nsim", "Sink-nsim-xps", "Sink-veth",
                                        "Sink-veth-xps"])
        self.assertEqual([s.key for s in bench.SINKS], ["dummy", "veth", "nsim"])
        for key, c in rows.items():
            with self.subTest(key):
                xps = key.endswith("-xps")
                # A is the dummy (a ratio below 1: the other sink is slower), both patched.
                self.assertEqual(c.a, ("patched", "sink_dummy_mq_xps" if xps else "sink_dummy_mq"))
                sink = key.split("-")[1]
                self.assertEqual(c.b, ("patched", f"sink_{sink}_mq" + ("_xps" if xps else "")))
                self.assertEqual((c.target, c.lo, c.hi), ("report", None, None))

    def test_guest_sink_scenarios(self):
        guest = bench.GUEST.read_text()

        def body(name):
            m = re.search(rf"^{name}\(\) \{{[^\n]*\n(.*?)^\}}", guest, re.M | re.S)
            self.assertIsNotNone(m, name)
            return m[1]

        for sink in bench.SINKS:
            for s, xps in ((sink.scenario, "no"), (sink.scenario_xps, "yes")):
                self.assertIn(f'\n{s}() {{ sink_{sink.key} "${{FUNCNAME[0]}}" {xps}; }}\n', guest)
        measure = body("sink_measure")
        for part in ('root_mq "$name" "$dev"', "/carrier", "xps=(--xps)", "xps_unset",
                     '"$bin" qstats --dev "$dev" --json > "$out/$name.qstats-before"',
                     'mqbench_run "$name" "$dev" pktgen --threads "$ncpu" "${xps[@]}"',
                     '"$bin" qstats --dev "$dev" --json > "$out/$name.qstats"',
                     'tc -s class show dev "$dev" > "$out/$name.classes"', 'dev_del "$dev"'):
            self.assertIn(part, measure)
        self.assertIn('dev_add d0 "$nq"', body("sink_dummy"))
        veth = body("sink_veth")
        for part in ('ip netns add "$sink_ns"',
                     'ip link add v0 numtxqueues "$nq" numrxqueues "$nq" type veth peer name v1',
                     'numtxqueues "$nq" numrxqueues "$nq" netns "$sink_ns"',
                     'ip -n "$sink_ns" link set v1 up', "ip link set v0 up",
                     'sink_measure "$1" v0 "$2"', 'ip netns del "$sink_ns"'):
            self.assertIn(part, veth)
        nsim = body("sink_nsim")
        for part in ('echo "$nsim_id 1 $nq" > "$bus/new_device"',
                     '"$bus/devices/netdevsim$nsim_id/net/"', "name n0", "ip link set n0 up",
                     'sink_measure "$1" n0 "$2"', 'echo "$nsim_id" > "$bus/del_device"'):
            self.assertIn(part, nsim)
        # The netdevsim netdev refuses ip link del: every deletion goes through dev_del.
        self.assertIn("/sys/bus/netdevsim/del_device", body("dev_del"))
        self.assertEqual(re.findall(r"ip link del \S+", guest), ['ip link del "$1"'])
        self.assertIn("\nsink_ns=sinkpeer\n", guest)
        self.assertIn("\nnsim_id=7\n", guest)

    def test_sink_setup_commands_match_the_guest(self):
        """The setup table's commands are the guest's: N, sinkpeer and 7 stand for its
        variables; the dummy and the mq roots come from dev_add and root_mq."""
        guest = bench.GUEST.read_text().replace("\\\n\t\t", "")
        for old, new in (('"$nq"', "N"), ("$nq", "N"), ('"$sink_ns"', "sinkpeer"),
                         ("$nsim_id", "7"), ('"$bus/new_device"', "/sys/bus/netdevsim/new_device")):
            guest = guest.replace(old, new)
        generic = {"ip link add d0 numtxqueues N type dummy":
                   'ip link add "$1" numtxqueues "$2" type dummy',
                   "ip link set d0 up": 'ip link set "$1" up'}
        for sink in bench.SINKS:
            for cmd in sink.commands:
                if "$(ls" in cmd or "del_device" in cmd:
                    continue  # the guest globs the netdev's name; deletes in dev_del
                want = generic.get(cmd, cmd)
                if cmd.startswith("tc qdisc replace dev"):
                    self.assertEqual(cmd, f"tc qdisc replace dev {sink.device} root handle 1: mq")
                    want = 'tc qdisc replace dev "$2" root handle 1: mq'
                with self.subTest(sink=sink.key, cmd=cmd):
                    self.assertIn(want, guest)

    def test_sinks_pps_ratios_and_per_queue_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, errors = self.run_both(tmp)
            self.assertEqual(errors, [])
            rows = {r["key"]: r for r in data["comparisons"]}
            for key, ratio in (("Sink-veth", 0.5), ("Sink-veth-xps", 0.5), ("Sink-nsim", 0.8),
                               ("Sink-nsim-xps", 0.8)):
                self.assertAlmostEqual(rows[key]["ratio_median"], ratio)
                self.assertIsNone(rows[key]["verdict"])
                self.assertEqual(rows[key]["repetitions"], 3)
            sinks = data["sinks"]
            pps = {r["sink"]: r for r in sinks["pps"]}
            self.assertAlmostEqual(pps["veth"]["xps"]["pps_median"], 1.1e6)
            self.assertAlmostEqual(pps["dummy"]["no_xps"]["pps_median"], 2.2e6)
            rec = {r["scenario"]: r for r in sinks["records"]}
            self.assertEqual(len(rec), 6)
            self.assertEqual(rec["sink_dummy_mq"]["qstats_exact"], 3)
            self.assertEqual(rec["sink_veth_mq_xps"]["qstats_supported"], [False])
            self.assertEqual(rec["sink_nsim_mq"]["qstats_exact"], 0)
            self.assertEqual(rec["sink_nsim_mq"]["link_tx_dropped_share"], 1.0)
            saved = json.loads((Path(tmp) / "out/bench.json").read_text())
            self.assertIn("records", saved["runs"][0]["patched"]["sink_veth_mq"])
            self.assertNotIn("sink_veth_mq", saved["runs"][0]["base"])
            md = (Path(tmp) / "out/bench.md").read_text()
            section = md.split("## Multi-queue sinks: dummy, veth, netdevsim\n")[1]
            section = section.split("\n## ")[0]
            self.assertIn("**Absolute numbers under UML mean little; only the paired ratios "
                          "count.**", section)
            self.assertIn("| veth | 1.10M (1.10-1.10) | 500 | 1.10M (1.10-1.10) | 500 |", section)
            self.assertRegex(section, r"\| Sink-nsim-xps \| .* \| 0\.80x \(0\.80-0\.80\) \| "
                                      r"0\.800-0\.800 \(0\.000\) \| 3 \|")
            self.assertIn("| veth | CONFIG_VETH, CONFIG_NET_NS |", section)
            self.assertIn("`ip netns add sinkpeer`<br>", section)
            self.assertIn('`echo "7 1 N" > /sys/bus/netdevsim/new_device`', section)
            self.assertIn("| dummy | sink_dummy_mq | supported | 2 | yes, equal in 3/3 | "
                          "2 mq classes; Sent sum = pktgen sent in 3/3 | 100.0% / 0.0% |", section)
            self.assertIn("| veth | sink_veth_mq_xps | no: EOPNOTSUPP (Operation not supported) | "
                          "- | - (no per-queue tx-packets) | 2 mq classes; Sent sum = pktgen "
                          "sent in 3/3 | 99.7% / 0.3% |", section)
            self.assertIn("| netdevsim | sink_nsim_mq | supported | 2 (and 2 RX) | no, differs in "
                          "3/3: the sum is 0.0% of the packets sent (median) | 2 mq classes; "
                          "Sent sum = pktgen sent in 3/3 | 0.0% / 100.0% |", section)
            self.assertIn("- netdevsim: stat_ops counting per queue (the netdevsim-qstats "
                          "series)", section)

    def test_no_bypass_tracepoint_comparisons(self):
        keys = [c.key for c in bench.COMPARISONS]
        self.assertFalse([k for k in keys if "tracepoint" in k])
        self.assertFalse([s for s in bench.SCENARIOS if "tp_on" in s])
        self.assertNotIn("qdisc_bypass", bench.GUEST.read_text())
        self.assertEqual(bench.TRACEPOINTS, ("qdisc/qdisc_enqueue",))

    def test_user_space_comparisons(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, errors = self.run_both(tmp)
            self.assertEqual(errors, [])
            rows = {r["key"]: r for r in data["comparisons"]}
            for key in ("S1-ring", "S1-ring-xps", "S1-udp", "S1-udp-xps"):
                self.assertAlmostEqual(rows[key]["ratio_median"], 1.1)
                self.assertIsNone(rows[key]["verdict"])

    def test_tracepoints_in_environment_and_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = bench.run(
                self.args(tmp, fake_kernel(tmp, "base", 1.0, tp="no"),
                          fake_kernel(tmp, "patched", 1.0), 1))
            tps = data["environment"]["tracepoints"]
            self.assertFalse(tps["base"]["qdisc/qdisc_enqueue"])
            self.assertTrue(tps["patched"]["qdisc/qdisc_enqueue"])
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("- base: qdisc:qdisc_enqueue absent", md)
            self.assertIn("- patched: qdisc:qdisc_enqueue present", md)
            self.assertNotIn("qdisc_bypass", md)

    def test_cpu_time_table(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = self.run_both(tmp)
            s1 = next(r for r in data["comparisons"] if r["key"] == "S1")
            self.assertEqual(s1["cpu_repetitions"], 3)
            self.assertAlmostEqual(s1["a_cpu_ns_median"], 500)
            self.assertAlmostEqual(s1["b_cpu_ns_median"], 500)
            self.assertAlmostEqual(s1["cpu_ratio_median"], 1.0)
            q = next(r for r in data["comparisons"] if r["key"] == "S1-queues-base")
            self.assertAlmostEqual(q["cpu_ratio_median"], 0.5)
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("| S1 | 500 | 500 | 1.00x (1.00-1.00) |", md)
            self.assertIn("| S1-queues-base | 1000 | 500 | 0.50x (0.50-0.50) |", md)

    def test_per_queue_shares_of_s1(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, _ = self.run_both(tmp)
            shares = {(r["kernel"], r["scenario"]): r for r in data["per_queue"]}
            self.assertEqual({k for k, s in shares}, {"base", "patched"})
            self.assertTrue(all(s.startswith("s1_") for _, s in shares))
            mq = shares[("patched", "s1_ring_nq_mq")]
            self.assertEqual(mq["sources"], ["qstats"])
            self.assertEqual(mq["shares"], {"0": 0.75, "1": 0.25})
            self.assertEqual(shares[("base", "s1_ring_nq_mq_xps")]["shares"],
                             {"0": 0.5, "1": 0.5})
            self.assertEqual(shares[("base", "s1_1q_pfifo_fast")]["sources"], ["unavailable"])
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("| patched | s1_ring_nq_mq | qstats | tx-0 75% / tx-1 25% |", md)
            self.assertIn("| base | s1_udp_nq_mq_xps | qstats | tx-0 50% / tx-1 50% |", md)
            self.assertIn("| patched | s1_1q_pfifo_fast | unavailable | - |", md)

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
                                               fake_kernel(tmp, "patched", 1.0, fail="yes"), 1))
            self.assertTrue(any("s2_noqueue" in e and "device busy" in e for e in errors))

    def test_guest_that_does_not_complete_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(RuntimeError):
                bench.run(self.args(tmp, fake_kernel(tmp, "base", 1.0, complete=False),
                                    fake_kernel(tmp, "patched", 1.0), 1))

    def test_each_kernel_runs_only_its_scenarios(self):
        base = bench.scenarios_for("base", bench.SCENARIOS)
        patched = bench.scenarios_for("patched", bench.SCENARIOS)
        for s in ("s1_nq_mq", "s1_nq_mq_xps", "s1_ring_nq_mq", "s1_udp_nq_mq_xps",
                  "s1_1q_pfifo_fast", "s3_default"):
            self.assertIn(s, base)
            self.assertIn(s, patched)
        self.assertNotIn("s2_fq_codel_fresh", base)
        self.assertIn("s2_fq_codel_fresh", patched)
        for sink in bench.SINKS:  # the sink comparisons are on the patched kernel
            for s in (sink.scenario, sink.scenario_xps):
                self.assertNotIn(s, base)
                self.assertIn(s, patched)
        self.assertIn("s2_pfifo_fast", base)  # S2-bypass: base -> patched
        self.assertIn("s2_pfifo_fast", patched)

    def test_sweep_runs_on_both_kernels(self):
        self.assertEqual(sorted(bench.SWEEP), ["sweep_q1_t1", "sweep_q1_t2", "sweep_q2_t1",
                                               "sweep_q2_t2"])
        for kernel in ("base", "patched"):
            got = bench.scenarios_for(kernel, bench.SCENARIOS)
            self.assertTrue(set(bench.SWEEP) <= set(got), kernel)
        # The previous design's kernel runs the design cases only.
        self.assertEqual(sorted(bench.scenarios_for("lock", bench.SCENARIOS)),
                         sorted(bench_config.DESIGN_CASES.values()))
        self.assertEqual(bench.scenarios_for("base", ["sweep_q2_t1", "s3_default"]),
                         ["sweep_q2_t1", "s3_default"])

    def test_guest_defines_every_scenario(self):
        guest = bench.GUEST.read_text()
        defined = set(re.findall(r"^(\w+)\(\) \{", guest, re.M))
        self.assertEqual(set(bench.SCENARIOS) - defined, set())

    def test_read_tracepoints(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(bench.read_tracepoints(Path(tmp)), {})
            (Path(tmp) / "tracepoints").write_text("tracefs no\nqdisc/qdisc_enqueue no\n")
            self.assertEqual(bench.read_tracepoints(Path(tmp)),
                             {"tracefs": False, "qdisc/qdisc_enqueue": False})

    def test_bad_arguments(self):
        with self.assertRaises(SystemExit) as ctx:
            bench.main(["--base-kernel", "x", "--patched-kernel", "y", "--mqbench", "z",
                        "--repetitions", "0"])
        self.assertEqual(ctx.exception.code, 2)

    def test_command_fails_unless_every_target_is_met(self):
        """bench.py decides by the verdicts, not only by scenario errors."""
        def fake_run(rows, icount_guards=()):
            def run(args):
                Path(args.out).mkdir(parents=True, exist_ok=True)
                (Path(args.out) / "bench.md").write_text("# bench\n")
                data = {"comparisons": rows}
                if icount_guards:
                    data["icount"] = {"guards": list(icount_guards)}
                return data, [], []
            return run

        def code(rows, icount_guards=()):
            err = io.StringIO()
            with tempfile.TemporaryDirectory() as tmp, \
                    mock.patch.object(bench, "run", fake_run(rows, icount_guards)), \
                    contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                rc = bench.main(["--base-kernel", "x", "--patched-kernel", "y", "--lock-kernel",
                                 "l", "--mqbench", "z", "--out", tmp])
            return rc, err.getvalue()

        met = {"key": "A", "verdict": "met", "repetitions": 7}
        report = {"key": "R", "verdict": None, "repetitions": 0}
        self.assertEqual(code([met, report]), (0, ""))
        for bad in ({"key": "B", "verdict": "not met", "repetitions": 7},
                    {"key": "B", "verdict": "inconclusive", "repetitions": 15},
                    {"key": "B", "verdict": "inconclusive", "repetitions": 0}):
            rc, err = code([met, bad, report])
            self.assertEqual(rc, 1, bad)
            self.assertIn("targets not met or inconclusive: B", err)
        guard = {"key": "G", "verdict": "inconclusive", "repetitions": 7, "guard": True}
        self.assertEqual(code([met, guard])[0], 0)
        rc, err = code([met], [{"key": "S3", "verdict": "not met"}])
        self.assertEqual((rc, err.strip()), (1, "targets not met or inconclusive: icount S3"))

    def test_devcost_table(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, _, errors = self.run_both(tmp)
            self.assertEqual(errors, [])
            rows = {(r["kernel"], r["queues"]): r for r in data["devcost"]}
            self.assertEqual(rows[("base", 64)]["mem_kb"]["Percpu"], 3.0)
            self.assertAlmostEqual(rows[("patched", 64)]["mem_kb"]["Percpu"], 3.3)
            self.assertEqual(rows[("patched", 1)]["samples"], 3)
            md = (Path(tmp) / "out/bench.md").read_text()
            self.assertIn("## What a dummy device costs by TX queue count", md)
            self.assertIn("| patched | 64 | 3.3 | 40.0 | 900 | 40.0 |", md)

    def test_missing_devcost_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = fake_kernel(tmp, "base", 1.0)
            fake.write_text(fake.read_text().replace('if "BENCH_DEVCOST" in env:', "if False:"))
            _, _, errors = bench.run(self.args(tmp, fake, fake_kernel(tmp, "patched", 1.1)))
            self.assertTrue(any("base devcost: no result" in e for e in errors), errors)


class MoreRepetitionsTest(unittest.TestCase):
    """Inconclusive targets get more repetitions of their scenarios only, up
    to the cap; met targets get none."""

    def fake_runs(self, ratios, key="S2-restore"):
        from tools.bench import bench
        c = next(c for c in bench.COMPARISONS if c.key == key)  # base -> patched
        return [{c.a[0]: {c.a[1]: {"pps": 1e6}},
                 c.b[0]: {**({c.b[1]: {"pps": 1e6 * r}} if c.a[0] != c.b[0] else {})}}
                for r in ratios], c

    def run_more(self, ratios, extra_ratio, cap, key="S2-restore"):
        import argparse
        from tools.bench import bench
        runs, c = self.fake_runs(ratios, key)
        calls = []

        def fake_reps(args, kernels, out):
            calls.append(args.scenarios)
            new, _ = self.fake_runs([extra_ratio] * args.repetitions, key)
            return new, {}, {}, [["base", "patched"]] * args.repetitions, {}

        args = argparse.Namespace(repetitions=len(ratios), max_repetitions=cap,
                                  scenarios=bench.SCENARIOS, devcost=True)
        with mock.patch.object(bench, "run_repetitions", fake_reps), \
                mock.patch.object(bench, "COMPARISONS", [c]):
            added = bench.more_repetitions(args, {}, Path("/nonexistent"), runs, [])
        return runs, calls, added, c

    def test_inconclusive_target_gets_more_until_the_cap(self):
        # Spread ratios around S2-restore's bound (>= 1.25x): inconclusive, and it stays so.
        runs, calls, added, c = self.run_more([1.15, 1.3, 1.2], 1.25, cap=7)
        self.assertEqual(len(runs), 7)
        self.assertEqual(sum(a["repetitions"] for a in added), 4)
        self.assertTrue(all(set(s) == {c.a[1], c.b[1]} for s in calls))

    def test_met_target_gets_none(self):
        runs, calls, added, _ = self.run_more([1.6, 1.61, 1.6, 1.62], 1.6, cap=10)
        self.assertEqual((len(runs), calls, added), (4, [], []))

    def test_target_without_data_gets_none(self):
        """A target whose scenarios were left out (--scenarios) has no data: no
        repetitions for it (its verdict is not "inconclusive" for want of runs)."""
        import argparse
        from tools.bench import bench
        c = next(c for c in bench.COMPARISONS if c.key == "S2-restore")
        runs = [{"base": {"s1_nq_mq_xps": {"pps": 1e6}}} for _ in range(3)]
        args = argparse.Namespace(repetitions=3, max_repetitions=7, devcost=False,
                                  scenarios=["s1_nq_mq_xps"])
        with mock.patch.object(bench, "run_repetitions") as reps, \
                mock.patch.object(bench, "COMPARISONS", [c]):
            added = bench.more_repetitions(args, {}, Path("/nonexistent"), runs, [],
                                           lambda m: None)
        self.assertEqual(added, [])
        reps.assert_not_called()

    def test_inconclusive_guard_gets_none(self):
        # S3 (guard >= 0.97) straddling its bound: no more repetitions, it does not fail.
        runs, calls, added, _ = self.run_more([0.9, 1.05, 0.95], 0.97, cap=7, key="S3")
        self.assertEqual((len(runs), calls, added), (3, [], []))


class SourceStampTest(unittest.TestCase):
    def test_stamp_names_the_commit_and_the_patches(self):
        from common.stamp import source_stamp
        from tools.bench import bench_report
        got = source_stamp()
        self.assertRegex(got["commit"], r"^[0-9a-f]{40}$")
        self.assertRegex(got["patches_sha256"], r"^[0-9a-f]{64}$")
        line = bench_report.source_lines(got)[0]
        self.assertIn(got["commit"][:12], line)
        self.assertIn("not recorded", bench_report.source_lines(None)[0])


if __name__ == "__main__":
    unittest.main()

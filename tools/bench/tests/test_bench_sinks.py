"""The multi-queue sinks' records (qstats dumps, tc classes) reduced to the
per-queue table of bench.md, on crafted guest output."""

import json
import tempfile
import unittest
from pathlib import Path

from tools.bench import bench_report
from tools.bench import bench_sinks

# tc -s class show dev v0 under "tc qdisc replace dev v0 root handle 1: mq" (iproute2 6.x,
# which ends the class and Sent lines with a space).
CLASSES = "".join(line + "\n" for line in (
    "class mq 1:1 root ",
    " Sent 123000 bytes 2050 pkt (dropped 0, overlimits 0 requeues 0) ",
    " backlog 0b 0p requeues 0",
    "class mq 1:2 root ",
    " Sent 57000 bytes 950 pkt (dropped 3, overlimits 0 requeues 1) ",
    " backlog 0b 0p requeues 1"))


def dump(supported=True, tx=(), rx=(), link=(0, 0), error="EOPNOTSUPP (Operation not supported)",
         drops=()):
    queues = [{"type": "rx", "id": i, "rx_packets": n} for i, n in enumerate(rx)]
    queues += [{"type": "tx", "id": i, "tx_packets": n} for i, n in enumerate(tx)]
    for i, n in enumerate(drops):  # tx-hw-drops where the driver reports it
        queues[len(rx) + i]["tx_hw_drops"] = n
    return {"subcommand": "qstats",
            "queue_scope": {"supported": supported, "error": None if supported else error,
                            "queues": queues if supported else []},
            "link": {"tx_packets": link[0], "tx_dropped": link[1]}, "errors": []}


def result(packets, before, after, classes=CLASSES, pps=1e6):
    return {"pps": pps, "packets": packets,
            "records": {"qstats_before": before, "qstats": after, "classes": classes}}


class ClassesTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(bench_sinks.parse_classes(CLASSES), [
            {"kind": "mq", "classid": "1:1", "bytes": 123000, "packets": 2050, "dropped": 0},
            {"kind": "mq", "classid": "1:2", "bytes": 57000, "packets": 950, "dropped": 3}])

    def test_empty_and_without_stats(self):
        self.assertEqual(bench_sinks.parse_classes(""), [])
        self.assertEqual(bench_sinks.parse_classes(None), [])
        # Without -s: no Sent lines, no counted classes.
        self.assertEqual(bench_sinks.parse_classes("class mq 1:1 root \nclass mq 1:2 root \n"),
                         [])


class RecordsTest(unittest.TestCase):
    def test_read_records(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            self.assertEqual(bench_sinks.read_records(d, "sink_veth_mq"), {})
            (d / "sink_veth_mq.qstats").write_text(json.dumps(dump(False)))
            (d / "sink_veth_mq.qstats-before").write_text("mqbench: error: boom\n")
            (d / "sink_veth_mq.classes").write_text(CLASSES)
            rec = bench_sinks.read_records(d, "sink_veth_mq")
            self.assertEqual(set(rec), {"qstats", "qstats_before", "classes"})
            self.assertFalse(rec["qstats"]["queue_scope"]["supported"])
            self.assertEqual(rec["qstats_before"],
                             {"errors": ["unreadable sink_veth_mq.qstats-before: "
                                         "mqbench: error: boom"]})
            self.assertEqual(rec["classes"], CLASSES)

    def test_exact_per_queue_counters(self):
        r = bench_sinks.one_repetition(result(3000, dump(tx=[5, 0]), dump(tx=[2055, 950],
                                                                          link=(3005, 0))))
        self.assertEqual(r["qstats"]["per_queue"], {0: 2050, 1: 950})
        self.assertEqual(r["qstats"]["sum"], 3000)
        self.assertEqual(r["classes"], {"count": 2, "sum": 3000, "kinds": ["mq"]})
        self.assertEqual(r["link"], {"tx_packets": 3005, "tx_dropped": 0})

    def test_queue_drops_counted_from_the_before_dump(self):
        # netdevsim unlinked: tx-hw-drops per queue, a queue absent before counts from 0.
        r = bench_sinks.one_repetition(result(3000, dump(tx=[0], drops=[7]),
                                              dump(tx=[0, 0], drops=[2057, 950])))
        self.assertEqual(r["qstats"]["sum"], 0)
        self.assertEqual(r["qstats"]["drops_sum"], 3000)
        r = bench_sinks.one_repetition(result(3000, dump(tx=[5]), dump(tx=[3005])))
        self.assertIsNone(r["qstats"]["drops_sum"])

    def test_no_before_dump_no_sum(self):
        r = bench_sinks.one_repetition(result(3000, None, dump(tx=[10, 20])))
        self.assertTrue(r["qstats"]["supported"])
        self.assertIsNone(r["qstats"]["sum"])
        self.assertIsNone(r["link"]["tx_packets"])

    def test_unreadable_after_dump(self):
        r = bench_sinks.one_repetition(result(3000, dump(), {"errors": ["unreadable x"]}))
        self.assertEqual(r["qstats"], {"unreadable": "unreadable x"})

    def summary(self, results, scenario="sink_nsim_mq"):
        runs = [{"patched": {scenario: r}} for r in results]
        return next(r for r in bench_sinks.sink_records(runs) if r["scenario"] == scenario)

    def test_summary_netdevsim_unlinked(self):
        # Every queue reports 0, the link counts every packet as dropped.
        r = self.summary([result(1000 * (i + 1), dump(tx=[0, 0], rx=[0, 0]),
                                 dump(tx=[0, 0], rx=[0, 0], link=(0, 1000 * (i + 1))),
                                 classes=CLASSES.replace("2050", str(1000 * (i + 1) - 950)))
                          for i in range(3)])
        self.assertEqual((r["repetitions"], r["qstats_supported"]), (3, [True]))
        self.assertEqual((r["tx_queues_reported"], r["rx_queues_reported"]), ([2], [2]))
        self.assertEqual((r["qstats_compared"], r["qstats_exact"], r["qstats_sum_share"]),
                         (3, 0, 0.0))
        self.assertEqual((r["classes_compared"], r["classes_exact"]), (3, 3))
        self.assertEqual((r["link_tx_packets_share"], r["link_tx_dropped_share"]), (0.0, 1.0))
        self.assertEqual(bench_report.qstats_cell(r), "supported")
        self.assertEqual(bench_report.qstats_sum_cell(r), "no, differs in 3/3: the sum is 0.0% "
                                                          "of the packets sent (median)")
        self.assertEqual(bench_report.classes_cell(r),
                         "2 mq classes; Sent sum = pktgen sent in 3/3")

    def test_summary_netdevsim_counting_drops(self):
        # Unlinked, with true per-queue counters: nothing sent, every packet a
        # tx-hw-drop of its queue, their sum the link's tx_dropped.
        r = self.summary([result(3000, dump(tx=[0, 0], drops=[7, 0], link=(0, 7)),
                                 dump(tx=[0, 0], drops=[2057, 950], link=(0, 3007)))] * 2)
        self.assertEqual((r["qstats_compared"], r["qstats_exact"]), (2, 0))
        self.assertEqual((r["qstats_drops_compared"], r["qstats_drops_exact"]), (2, 2))
        self.assertEqual(bench_report.qstats_sum_cell(r),
                         "no, differs in 2/2: the sum is 0.0% of the packets sent (median); "
                         "tx-hw-drops: the queues' sum = link tx_dropped and tx-packets + "
                         "tx-hw-drops = pktgen sent in 2/2")
        # A drop counted on no queue is caught.
        r = self.summary([result(3000, dump(tx=[0, 0], drops=[0, 0]),
                                 dump(tx=[0, 0], drops=[2000, 999], link=(0, 3000)))])
        self.assertEqual((r["qstats_drops_compared"], r["qstats_drops_exact"]), (1, 0))
        self.assertIn("in 0/1", bench_report.qstats_sum_cell(r))

    def test_summary_veth(self):
        r = self.summary([result(3000, dump(False), dump(False, link=(2990, 10)))] * 2,
                         scenario="sink_veth_mq_xps")
        self.assertEqual((r["qstats_supported"], r["qstats_errors"]),
                         ([False], ["EOPNOTSUPP (Operation not supported)"]))
        self.assertEqual(r["qstats_compared"], 0)
        self.assertAlmostEqual(r["link_tx_dropped_share"], 10 / 3000)
        self.assertEqual(bench_report.qstats_cell(r), "no: EOPNOTSUPP (Operation not supported)")
        self.assertEqual(bench_report.qstats_sum_cell(r), "- (no per-queue tx-packets)")

    def test_summary_classes_short_and_mixed_answers(self):
        r = self.summary([result(4000, dump(tx=[0, 0]), dump(tx=[2000, 2000])),
                          result(3000, dump(False), dump(False))])
        self.assertEqual(r["qstats_supported"], [False, True])
        self.assertTrue(bench_report.qstats_cell(r).startswith("varies: EOPNOTSUPP"))
        self.assertEqual((r["qstats_compared"], r["qstats_exact"]), (1, 1))
        self.assertEqual(bench_report.classes_cell(r), "2 mq classes; Sent sum = pktgen sent in "
                                                       "1/2, 87.5% of it (median)")

    def test_summary_without_records(self):
        r = self.summary([{"error": "no result"}, {"pps": 1e6, "packets": 5}])
        self.assertEqual(r["repetitions"], 0)
        self.assertEqual(bench_report.qstats_cell(r), "no record")
        self.assertEqual(bench_report.classes_cell(r), "no record")

    def test_pps_per_sink(self):
        runs = [{"patched": {"sink_veth_mq": {"pps": v, "cpu_ns_per_pkt": 800.0},
                             "sink_veth_mq_xps": {"error": "no result"}}}
                for v in (1e6, 3e6, 2e6)]
        veth = next(r for r in bench_sinks.sink_pps(runs) if r["sink"] == "veth")
        self.assertEqual(veth["no_xps"], {"scenario": "sink_veth_mq", "repetitions": 3,
                                          "pps_median": 2e6, "pps_min": 1e6, "pps_max": 3e6,
                                          "cpu_ns_median": 800.0})
        self.assertEqual(veth["xps"], {"scenario": "sink_veth_mq_xps", "repetitions": 0})
        self.assertEqual(bench_report.sink_pps_cell(veth["xps"]), ("no data", "-"))

    def test_section_without_sink_data(self):
        self.assertEqual(bench_report.sink_lines([], None), [])
        lines = bench_report.sink_lines([{"key": "Sink-veth", "title": "t", "repetitions": 0}],
                                        None)
        self.assertIn("| Sink-veth | t | no data | - | 0 |", lines)
        self.assertIn("**Absolute numbers under UML mean little; only the paired ratios count.**",
                      "\n".join(lines))


if __name__ == "__main__":
    unittest.main()

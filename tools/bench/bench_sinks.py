"""The multi-queue sinks (dummy, veth, netdevsim; bench_config.SINKS): what the
guest recorded beside each sink scenario's result and what it says per queue.

Each sink scenario leaves, beside <scenario>.json, <scenario>.qstats-before and
<scenario>.qstats (mqbench qstats --json just before and after the run: netdev
QSTATS_GET scope queue or the kernel's error, and the link's TX counters) and
<scenario>.classes (tc -s class show of the mq root after the run). The runner
attaches them to the result as "records"; this module reduces them, over the
repetitions, to the answers of the per-queue table of bench.md: does the
device report per-queue counters, does their sum over the TX queues match what
pktgen sent, what do the mq classes count, what did the driver do with the
packets (link tx_packets and tx_dropped).
"""

import json
import re
import statistics

from tools.bench.bench_config import SINKS
from tools.bench.bench_stats import cpu_ns, pps

# Record name -> file suffix beside <scenario>.json.
RECORDS = {"qstats_before": ".qstats-before", "qstats": ".qstats", "classes": ".classes"}
KERNEL = "patched"  # the sink comparisons run on the patched kernel only


def read_records(outdir, scenario):
    """The guest's records of one scenario that exist: the qstats dumps as
    JSON ({"errors": [...]} when unreadable), the classes as text."""
    rec = {}
    for key, suffix in RECORDS.items():
        f = outdir / f"{scenario}{suffix}"
        if not f.is_file():
            continue
        text = f.read_text(errors="replace")
        if key == "classes":
            rec[key] = text
            continue
        try:
            rec[key] = json.loads(text)
        except ValueError:
            rec[key] = {"errors": [f"unreadable {f.name}: {text.strip()[-200:] or 'empty'}"]}
    return rec


CLASS_RE = re.compile(r"^class (?P<kind>\S+) (?P<id>\S+)")
SENT_RE = re.compile(r"^\s*Sent (?P<bytes>\d+) bytes (?P<pkts>\d+) pkt"
                     r"(?: \(dropped (?P<dropped>\d+))?")


def parse_classes(text):
    """`tc -s class show` output as [{"kind", "classid", "bytes", "packets",
    "dropped"}], one per class that has its Sent line."""
    out, cur = [], None
    for line in (text or "").splitlines():
        m = CLASS_RE.match(line)
        if m:
            cur = {"kind": m["kind"], "classid": m["id"]}
            continue
        m = SENT_RE.match(line)
        if m and cur is not None:
            cur.update(bytes=int(m["bytes"]), packets=int(m["pkts"]),
                       dropped=int(m["dropped"] or 0))
            out.append(cur)
            cur = None
    return out


def tx_queue_counter(dump, key="tx_packets"):
    """{queue id: counter} of the TX entries of a qstats dump's queue scope
    (entries without the counter count as absent)."""
    queues = ((dump or {}).get("queue_scope") or {}).get("queues") or []
    return {q["id"]: q[key] for q in queues
            if q.get("type") == "tx" and isinstance(q.get(key), int)}


def tx_queue_delta(before, after, key):
    """{queue id: after - before} of one counter of the TX queues two qstats
    dumps report it for (a queue new in after counts from 0)."""
    b = tx_queue_counter(before, key)
    return {k: v - b.get(k, 0) for k, v in tx_queue_counter(after, key).items()}


def link_delta(before, after, key):
    """after - before of one link counter of two qstats dumps, or None."""
    a = ((after or {}).get("link") or {}).get(key)
    b = ((before or {}).get("link") or {}).get(key)
    return a - b if isinstance(a, int) and isinstance(b, int) else None


def one_repetition(result):
    """What one run of a sink scenario recorded, reduced: the qstats answer,
    the per-queue sum against what pktgen sent, the classes, the link counters."""
    rec = result.get("records") or {}
    before, after = rec.get("qstats_before"), rec.get("qstats")
    sent = result.get("packets") if isinstance(result.get("packets"), int) else None
    out = {"sent": sent, "qstats": None, "classes": None, "link": None}
    if isinstance(after, dict) and "queue_scope" in after:
        scope = after["queue_scope"]
        queues = scope.get("queues") or []
        q = {"supported": bool(scope.get("supported")), "error": scope.get("error"),
             "tx_queues": sum(e.get("type") == "tx" for e in queues),
             "rx_queues": sum(e.get("type") == "rx" for e in queues), "sum": None}
        per_queue = tx_queue_delta(before, after, "tx_packets")
        if q["supported"] and per_queue and isinstance(before, dict) \
                and before.get("queue_scope"):
            q["per_queue"] = per_queue
            q["sum"] = sum(per_queue.values())
            # what the queues counted as dropped (tx-hw-drops), where they report it
            drops = tx_queue_delta(before, after, "tx_hw_drops")
            q["drops_sum"] = sum(drops.values()) if drops else None
        out["qstats"] = q
    elif isinstance(after, dict):
        out["qstats"] = {"unreadable": "; ".join(after.get("errors") or ["no queue_scope"])}
    if "classes" in rec:
        classes = parse_classes(rec["classes"])
        out["classes"] = {"count": len(classes), "sum": sum(c["packets"] for c in classes),
                          "kinds": sorted({c["kind"] for c in classes})}
    if isinstance(after, dict) and after.get("link"):
        out["link"] = {k: link_delta(before, after, k) for k in ("tx_packets", "tx_dropped")}
    return out


def share(part, whole):
    return part / whole if isinstance(part, int) and whole else None


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def sink_records(runs, sinks=SINKS, kernel=KERNEL):
    """Per sink scenario, over the repetitions: the per-queue answers."""
    out = []
    for sink in sinks:
        for scenario, xps in ((sink.scenario, False), (sink.scenario_xps, True)):
            reps = [rep.get(kernel, {}).get(scenario) for rep in runs]
            reps = [one_repetition(r) for r in reps if isinstance(r, dict) and r.get("records")]
            qs = [r["qstats"] for r in reps if r["qstats"] and "supported" in r["qstats"]]
            compared = [r for r in reps if r["qstats"] and r["qstats"].get("sum") is not None
                        and r["sent"] is not None]
            classes = [r for r in reps if r["classes"] is not None and r["sent"] is not None]
            links = [r for r in reps if r["link"] and r["sent"]]
            out.append({
                "sink": sink.key, "name": sink.name, "scenario": scenario, "xps": xps,
                "repetitions": len(reps),
                "qstats_supported": sorted({q["supported"] for q in qs}),
                "qstats_errors": sorted({q["error"] for q in qs if q["error"]}
                                        | {r["qstats"]["unreadable"] for r in reps
                                           if r["qstats"] and "unreadable" in r["qstats"]}),
                "tx_queues_reported": sorted({q["tx_queues"] for q in qs}),
                "rx_queues_reported": sorted({q["rx_queues"] for q in qs}),
                "qstats_compared": len(compared),
                "qstats_exact": sum(r["qstats"]["sum"] == r["sent"] for r in compared),
                "qstats_sum_share": median_or_none(share(r["qstats"]["sum"], r["sent"])
                                                   for r in compared),
                # the queues' tx-hw-drops against the link's tx_dropped and pktgen's count
                "qstats_drops_compared": sum(r["qstats"].get("drops_sum") is not None
                                             for r in compared),
                "qstats_drops_exact": sum(
                    r["qstats"].get("drops_sum") is not None and r["link"] is not None
                    and r["qstats"]["drops_sum"] == r["link"]["tx_dropped"]
                    and r["qstats"]["sum"] + r["qstats"]["drops_sum"] == r["sent"]
                    for r in compared),
                "classes_compared": len(classes),
                "classes_count": sorted({r["classes"]["count"] for r in classes}),
                "classes_kinds": sorted({k for r in classes for k in r["classes"]["kinds"]}),
                "classes_exact": sum(r["classes"]["sum"] == r["sent"] for r in classes),
                "classes_sum_share": median_or_none(share(r["classes"]["sum"], r["sent"])
                                                    for r in classes),
                "link_tx_packets_share": median_or_none(
                    share(r["link"]["tx_packets"], r["sent"]) for r in links),
                "link_tx_dropped_share": median_or_none(
                    share(r["link"]["tx_dropped"], r["sent"]) for r in links),
            })
    return out


def sink_pps(runs, sinks=SINKS, kernel=KERNEL):
    """Median (min-max) pps and median CPU ns per packet of each sink, without
    and with XPS, over the repetitions that have them."""
    out = []
    for sink in sinks:
        row = {"sink": sink.key, "name": sink.name}
        for label, scenario in (("no_xps", sink.scenario), ("xps", sink.scenario_xps)):
            results = [rep.get(kernel, {}).get(scenario, {}) for rep in runs]
            values = [v for v in map(pps, results) if v]
            cpu = [v for v in map(cpu_ns, results) if v]
            row[label] = {"scenario": scenario, "repetitions": len(values)}
            if values:
                row[label].update(pps_median=statistics.median(values), pps_min=min(values),
                                  pps_max=max(values))
            if cpu:
                row[label]["cpu_ns_median"] = statistics.median(cpu)
        out.append(row)
    return out


def sinks_summary(runs):
    """bench.json's "sinks": pps per sink and the per-queue answers."""
    return {"pps": sink_pps(runs), "records": sink_records(runs)}

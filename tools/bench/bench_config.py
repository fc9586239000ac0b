"""What the benchmark measures: the scenarios each kernel runs, the
comparisons (A and B as (kernel, scenario), with their targets) and the
sweep. tools/bench/uml-guest.sh defines each scenario as a shell function."""

from dataclasses import dataclass


@dataclass
class Comparison:
    key: str
    title: str
    a: tuple  # (kernel, scenario)
    b: tuple
    target: str  # human-readable target
    lo: float | None = None  # ratio bounds the target asks for
    hi: float | None = None


# S1 sets up what users get on either kernel (the series leaves dummy's default
# of one TX queue alone): numtxqueues N (one per CPU) with an mq root. Each S1
# comparison comes in two forms: as the device comes (no XPS map, the stack
# hashes flows onto queues) and "-xps", with XPS CPU i -> tx-i set by the
# benchmark (pktgen --xps, or xps_cpus for the user-space senders).
COMPARISONS = [
    Comparison("S1", "one pktgen thread per CPU, numtxqueues N + mq, no XPS: base -> patched",
               ("base", "s1_nq_mq"), ("patched", "s1_nq_mq"), ">= 0.97", lo=0.97),
    Comparison("S1-xps", "one pktgen thread per CPU, numtxqueues N + mq, XPS CPU i -> tx-i: "
               "base -> patched", ("base", "s1_nq_mq_xps"), ("patched", "s1_nq_mq_xps"),
               ">= 0.97", lo=0.97),
    Comparison("S1-queues-patched", "patched kernel: 1 TX queue + pfifo_fast -> N queues + mq, "
               "XPS CPU i -> tx-i", ("patched", "s1_1q_pfifo_fast"), ("patched", "s1_nq_mq_xps"),
               "report"),
    Comparison("S1-queues-base", "base kernel: 1 TX queue + pfifo_fast -> N queues + mq, "
               "XPS CPU i -> tx-i", ("base", "s1_1q_pfifo_fast"), ("base", "s1_nq_mq_xps"),
               "report"),
    Comparison("S1-queues-noxps-patched", "patched kernel: 1 TX queue + pfifo_fast -> N queues "
               "+ mq, no XPS (one flow per pktgen thread)", ("patched", "s1_1q_pfifo_fast"),
               ("patched", "s1_nq_mq"), "report"),
    Comparison("S1-flows", "pktgen thread per CPU, 1024 flows each, numtxqueues N + mq, no XPS: "
               "base -> patched", ("base", "s1_flows_nq_mq"), ("patched", "s1_flows_nq_mq"),
               ">= 0.97", lo=0.97),
    Comparison("S1-flows-queues-patched", "patched kernel, 1024 flows per thread, no XPS: "
               "1 TX queue + pfifo_fast -> N queues + mq", ("patched", "s1_flows_1q_pfifo_fast"),
               ("patched", "s1_flows_nq_mq"), "report"),
    Comparison("S1-ring", "TX_RING sender per CPU, numtxqueues N + mq, no XPS: base -> patched",
               ("base", "s1_ring_nq_mq"), ("patched", "s1_ring_nq_mq"), "report"),
    Comparison("S1-ring-xps", "TX_RING sender per CPU, numtxqueues N + mq, XPS CPU i -> tx-i: "
               "base -> patched", ("base", "s1_ring_nq_mq_xps"), ("patched", "s1_ring_nq_mq_xps"),
               "report"),
    Comparison("S1-udp", "UDP socket sender per CPU, numtxqueues N + mq, no XPS: base -> patched",
               ("base", "s1_udp_nq_mq"), ("patched", "s1_udp_nq_mq"), "report"),
    Comparison("S1-udp-xps", "UDP socket sender per CPU, numtxqueues N + mq, XPS CPU i -> tx-i: "
               "base -> patched", ("base", "s1_udp_nq_mq_xps"), ("patched", "s1_udp_nq_mq_xps"),
               "report"),
    Comparison("S2-restore", "fq_codel after filter add+delete: base -> patched",
               ("base", "s2_fq_codel_after_filter"), ("patched", "s2_fq_codel_after_filter"),
               ">= 1.5x", lo=1.5),
    Comparison("S2-fresh", "patched fq_codel: never filtered -> after filter add+delete",
               ("patched", "s2_fq_codel_fresh"), ("patched", "s2_fq_codel_after_filter"),
               "0.95-1.05", lo=0.95, hi=1.05),
    # The bypass path itself, which the series touches (the flag read in __dev_xmit_skb()).
    Comparison("S2-bypass", "pfifo_fast bypass, one sender: base -> patched",
               ("base", "s2_pfifo_fast"), ("patched", "s2_pfifo_fast"), ">= 0.97", lo=0.97),
    # How far the bypass stays from no qdisc at all: a property of the qdisc layer on
    # either kernel (0.83x, CI 0.823-0.835, on the CI host), not a claim of the series.
    Comparison("S2-floor", "patched: noqueue floor -> pfifo_fast bypass",
               ("patched", "s2_noqueue"), ("patched", "s2_pfifo_fast"), "report"),
    Comparison("S2-floor-base", "base: noqueue floor -> pfifo_fast bypass",
               ("base", "s2_noqueue"), ("base", "s2_pfifo_fast"), "report"),
    Comparison("S3", "default dummy (noqueue), one sender per CPU: base -> patched",
               ("base", "s3_default"), ("patched", "s3_default"), ">= 0.97", lo=0.97),
]
# pps against senders and queues, on both kernels: scenario -> (TX queues, pktgen threads).
SWEEP = {f"sweep_q{q}_t{t}": (q, t) for q in (1, 2) for t in (1, 2)}
SCENARIOS = sorted({c.a[1] for c in COMPARISONS} | {c.b[1] for c in COMPARISONS} | set(SWEEP))
KERNELS = ("base", "patched")
# The guest's tracepoints file names these; the report says which kernel has them
# compiled in (qdisc_enqueue sits on the path a bypass skips).
TRACEPOINTS = ("qdisc/qdisc_enqueue",)


def scenarios_for(kernel, wanted, comparisons=COMPARISONS, sweep=SWEEP):
    """The wanted scenarios some comparison or the sweep runs on this kernel
    (the patched kernel's fq_codel never filtered, say, is not one on the base)."""
    used = {s for c in comparisons for k, s in (c.a, c.b) if k == kernel} | set(sweep)
    return [s for s in wanted if s in used]


def s1_sides(comparisons=COMPARISONS):
    """The (kernel, scenario) sides of the S1 comparisons, in order, once each."""
    sides = [side for c in comparisons if c.key.startswith("S1") for side in (c.a, c.b)]
    return list(dict.fromkeys(sides))

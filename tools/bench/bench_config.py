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
    # A guard bounds a comparison of code that is the same on both sides (shown by
    # the per-patch xmit_disasm check, or the same kernel): it fails only when its
    # whole interval violates the bound, and an inconclusive guard of at least
    # MIN_REPETITIONS pairs passes without more repetitions. A target without
    # guard is a claim: inconclusive at the repetition cap fails.
    guard: bool = False


# Fewer paired repetitions than this give no verdict but "inconclusive": the
# bootstrap of one or two values only repeats them (bench_stats.verdict()).
MIN_REPETITIONS = 3


def passing_guard(row):
    """True for a comparison row (bench_stats.summarize) that is an inconclusive
    guard of at least MIN_REPETITIONS pairs: its interval is the benchmark's
    resolution, and it passes. With fewer pairs it has no interval to speak
    of (two ratios wholly past the bound are "inconclusive" too): it fails."""
    return (bool(row.get("guard")) and row.get("verdict") == "inconclusive"
            and row.get("repetitions", 0) >= MIN_REPETITIONS)


def failed_targets(comparisons):
    """The keys of the comparison rows (bench_stats.summarize) that fail a
    run: a target not met, or inconclusive (without data among them) but
    for a passing guard (passing_guard()). Rows without a target (report
    rows, verdict None) never fail."""
    return [r["key"] for r in comparisons
            if r.get("verdict") == "not met"
            or (r.get("verdict") == "inconclusive" and not passing_guard(r))]


# S1 sets up what users get on either kernel (the series leaves dummy's default
# of one TX queue alone): numtxqueues N (one per CPU) with an mq root. Each S1
# comparison comes in two forms: as the device comes (no XPS map, the stack
# hashes flows onto queues) and "-xps", with XPS CPU i -> tx-i set by the
# benchmark (pktgen --xps, or xps_cpus for the user-space senders).
# On the patched kernel the multi-queue dummy stays lltx and counts each packet in its
# CPU's counters of its queue, so S1 measures what the counters cost; every S1 row
# reports, none is a target. Without XPS the flow hash puts pktgen's threads on queues by
# chance (some repetitions share a queue, some do not: a bimodal ratio).
COMPARISONS = [
    Comparison("S1", "one pktgen thread per CPU, numtxqueues N + mq, no XPS (queues by flow "
               "hash, bimodal): base -> patched",
               ("base", "s1_nq_mq"), ("patched", "s1_nq_mq"), "report"),
    Comparison("S1-xps", "one pktgen thread per CPU, numtxqueues N + mq, XPS CPU i -> tx-i: "
               "base -> patched", ("base", "s1_nq_mq_xps"), ("patched", "s1_nq_mq_xps"),
               "report"),
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
               "report"),
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
               ">= 1.25x", lo=1.25),
    # Guards: the same kernel and, once the bypass is back (qdisc_bypass counts
    # qdisc_enqueue exactly), the same path.
    Comparison("S2-fresh", "patched fq_codel: never filtered -> after filter add+delete",
               ("patched", "s2_fq_codel_fresh"), ("patched", "s2_fq_codel_after_filter"),
               "guard 0.95-1.05", lo=0.95, hi=1.05, guard=True),
    # The bypass path itself: __dev_queue_xmit, sch_direct_xmit and pfifo_fast's
    # enqueue and dequeue, the same on both kernels (xmit_disasm).
    Comparison("S2-bypass", "pfifo_fast bypass, one sender: base -> patched",
               ("base", "s2_pfifo_fast"), ("patched", "s2_pfifo_fast"), "guard >= 0.97",
               lo=0.97, guard=True),
    # How far the bypass stays from no qdisc at all: a property of the qdisc layer on
    # either kernel (0.83x, CI 0.823-0.835, on the CI host), not a claim of the series.
    Comparison("S2-floor", "patched: noqueue floor -> pfifo_fast bypass",
               ("patched", "s2_noqueue"), ("patched", "s2_pfifo_fast"), "report"),
    Comparison("S2-floor-base", "base: noqueue floor -> pfifo_fast bypass",
               ("base", "s2_noqueue"), ("base", "s2_pfifo_fast"), "report"),
    # dummy_xmit, the default dummy's transmit function, is the base's (xmit_disasm).
    Comparison("S3", "default dummy (noqueue), one sender per CPU: base -> patched",
               ("base", "s3_default"), ("patched", "s3_default"), "guard >= 0.97", lo=0.97,
               guard=True),
]


@dataclass
class Sink:
    """A multi-queue sink device of the sink comparisons, and what it takes to set up
    (the setup table of bench.md). Its scenarios are sink_<key>_mq and sink_<key>_mq_xps
    in tools/bench/uml-guest.sh, which runs the commands below (N: TX queues)."""
    key: str  # scenario part: sink_<key>_mq
    name: str
    device: str
    config: str  # kernel options, built in (kernel/configs/uml-bench.config)
    needs: str  # module, bus, debugfs
    peer: str
    netns: str
    xmit: str  # what the driver's xmit does with a packet, and its TX lock
    per_queue: str  # what the driver reports per queue, from its source
    commands: tuple  # setup, as the guest runs it

    @property
    def scenario(self):
        return f"sink_{self.key}_mq"

    @property
    def scenario_xps(self):
        return f"sink_{self.key}_mq_xps"


SINKS = [
    Sink("dummy", "dummy", "d0", "CONFIG_DUMMY", "none (rtnetlink)", "none", "none",
         "counts the packet in its CPU's counters of its TX queue and frees it; lltx: no "
         "TX queue lock (the series)",
         "netdev stat_ops (the series): each TX queue's own counters; queues disabled by "
         "set_channels fold into the base, base + queues = the device total (the base "
         "kernel's dummy has no stat_ops: EOPNOTSUPP)",
         ("ip link add d0 numtxqueues N type dummy", "ip link set d0 up",
          "tc qdisc replace dev d0 root handle 1: mq")),
    Sink("veth", "veth", "v0", "CONFIG_VETH, CONFIG_NET_NS", "none (rtnetlink)",
         "v1, up (else v0 has no carrier and drops)", "v1 in its own (ip netns add)",
         "hands the packet to v1 (netif_rx onto the sending CPU's backlog), whose stack drops "
         "it (destination MAC not v1's: PACKET_OTHERHOST); lltx: no TX queue lock",
         "no stat_ops: QSTATS_GET for its ifindex fails with EOPNOTSUPP; per queue only the "
         "mq classes",
         ("ip netns add sinkpeer",
          "ip link add v0 numtxqueues N numrxqueues N type veth peer name v1 numtxqueues N "
          "numrxqueues N netns sinkpeer",
          "ip -n sinkpeer link set v1 up", "ip link set v0 up",
          "tc qdisc replace dev v0 root handle 1: mq")),
    Sink("nsim", "netdevsim", "n0",
         "CONFIG_NETDEVSIM (needs CONFIG_DEBUG_FS, CONFIG_INET; selects NET_DEVLINK, "
         "PAGE_POOL, NET_SHAPER)",
         "netdevsim bus (/sys/bus/netdevsim/new_device \"ID PORTS QUEUES\", del_device ID); "
         "debugfs built in and not off (the module init and probe fail without their "
         "debugfs directories; no mount needed); a devlink instance per device",
         "none: not linked (link_device would need a second netdevsim and netns fds)", "none",
         "no linked peer: frees the packet as a drop (kfree_skb_reason, tx_dropped), "
         "tx_packets stays 0; not lltx: under the TX queue's xmit lock",
         "stat_ops counting per queue (the netdevsim-qstats series): each TX queue its packets "
         "sent and, as tx-hw-drops, its drops; unlinked, every packet is a drop of its queue. "
         "The base kernel's values are synthetic (netdev.c: \"We don't have true per-queue "
         "stats, yet\"): queue 0 the device's tx_packets minus 1, every other queue 0",
         ("echo \"7 1 N\" > /sys/bus/netdevsim/new_device",
          "ip link set $(ls /sys/bus/netdevsim/devices/netdevsim7/net/) name n0",
          "ip link set n0 up", "tc qdisc replace dev n0 root handle 1: mq",
          "echo 7 > /sys/bus/netdevsim/del_device  # afterwards; ip link del is refused")),
]
SINKS_BY_KEY = {s.key: s for s in SINKS}


def sink_comparisons(sinks=SINKS):
    """dummy -> each other sink on the patched kernel, without and with XPS: report rows
    (A is the dummy: a ratio below 1 means the other sink is slower)."""
    dummy = sinks[0]
    out = []
    for s in sinks[1:]:
        for xps in (False, True):
            a = dummy.scenario_xps if xps else dummy.scenario
            b = s.scenario_xps if xps else s.scenario
            out.append(Comparison(
                f"Sink-{s.key}" + ("-xps" if xps else ""),
                "patched, pktgen thread per CPU, N queues + mq, "
                + ("XPS CPU i -> tx-i" if xps else "no XPS") + f": {dummy.name} -> {s.name}",
                ("patched", a), ("patched", b), "report"))
    return out


COMPARISONS += sink_comparisons()


# The per-queue counter designs of the dummy series (Documentation/design.md), one pktgen
# thread per CPU on a dummy with N TX queues: "lock" is the patched tree with
# tools/bench/variants/dummy-queue-lock.patch (the previous design: not lltx, counters
# under the TX queue's xmit lock), "patched" the series (lltx, per-CPU counters per
# queue), "base" has no per-queue counters. Three cases: XPS (each CPU its own queue),
# every sender on queue 0 (pktgen start_xmit, queue_map 0: the honest worst case for
# both designs), and flows hashed onto queues (1024 flows per thread, no XPS).
DESIGN_CASES = {"xps": "s1_nq_mq_xps", "onequeue": "s1_onequeue_start_xmit",
                "flows": "s1_flows_nq_mq"}
DESIGN_TITLES = {"xps": "XPS CPU i -> tx-i", "onequeue": "all senders on queue 0 (start_xmit)",
                 "flows": "1024 flows per thread hashed onto queues, no XPS"}


def design_comparisons(cases=DESIGN_CASES):
    """base -> lock, base -> patched (per-CPU) and lock -> patched for each case. The chosen
    design with XPS is a guard (>= 0.95: only a proven slowdown fails); the rest report."""
    out = []
    for case, scen in cases.items():
        title = DESIGN_TITLES[case]
        out += [Comparison(f"D-{case}-lock", f"{title}: base -> queue lock (previous design)",
                           ("base", scen), ("lock", scen), "report"),
                Comparison(f"D-{case}-atomic", f"{title}: base -> per-CPU counters (series)",
                           ("base", scen), ("patched", scen),
                           "guard >= 0.95" if case == "xps" else "report",
                           lo=0.95 if case == "xps" else None, guard=case == "xps"),
                Comparison(f"D-{case}-lock-atomic", f"{title}: queue lock -> per-CPU counters",
                           ("lock", scen), ("patched", scen), "report")]
    return out


COMPARISONS += design_comparisons()

# pps against senders and queues, on both kernels: scenario -> (TX queues, pktgen threads).
SWEEP = {f"sweep_q{q}_t{t}": (q, t) for q in (1, 2) for t in (1, 2)}
SCENARIOS = sorted({c.a[1] for c in COMPARISONS} | {c.b[1] for c in COMPARISONS} | set(SWEEP))
KERNELS = ("base", "lock", "patched")
# The kernels the sweep runs on: the base and the series.
SWEEP_KERNELS = ("base", "patched")
# The guest's tracepoints file names these; the report says which kernel has them
# compiled in (qdisc_enqueue sits on the path a bypass skips).
TRACEPOINTS = ("qdisc/qdisc_enqueue",)


def scenarios_for(kernel, wanted, comparisons=COMPARISONS, sweep=SWEEP):
    """The wanted scenarios some comparison or the sweep runs on this kernel
    (the patched kernel's fq_codel never filtered, say, is not one on the base)."""
    used = {s for c in comparisons for k, s in (c.a, c.b) if k == kernel}
    used |= set(sweep) if kernel in SWEEP_KERNELS else set()
    return [s for s in wanted if s in used]


def s1_kernel_scenarios(comparisons=COMPARISONS):
    """The (kernel, scenario) sides of the S1 comparisons, in order, once each."""
    sides = [side for c in comparisons if c.key.startswith("S1") for side in (c.a, c.b)]
    return list(dict.fromkeys(sides))


# The same rows decided by instructions per packet (tools/bench/icount.py: the x86
# test kernels under QEMU icount, one vCPU). A count repeats: in
# Documentation/results/icount/ (2 boots x 3 runs per kernel) the runs of a row lie
# within 0.04% (under one instruction in 2,250) but for an occasional run about 25
# instructions lower (7 of 132 runs, never two of a row in one boot), which the median
# of ICOUNT_MIN_RUNS or more runs does not follow; base and patched medians on the same
# code differ by at most 0.2 instructions. ICOUNT_BOUND, 0.2%, is five times the widest
# spread of a row: about 4.5 instructions per packet on the default dummy, so a change
# adding five instructions to the path fails it. Verdicts are "met" or "not met".
ICOUNT_BOUND = 0.002
ICOUNT_COUNTERS_BOUND = 0.0055  # the counters guard's (below)
ICOUNT_MIN_RUNS = 5
# No guard is met or missed on one boot: a side needs this many, which agree
# (tools/bench/icount.py AGREEMENT).
ICOUNT_BOOTS = 2


@dataclass
class IcountGuard:
    """A target on B/A, instructions per packet (median over the runs): lo <= B/A <= hi;
    without either bound a ratio reported, not judged (ICOUNT_REPORTS).
    Fewer than ICOUNT_MIN_RUNS runs on a side is "not met": no verdict without them."""
    key: str  # the UML comparison's key
    title: str
    a: tuple  # (kernel, icount scenario)
    b: tuple
    lo: float | None = None
    hi: float | None = None

    @property
    def report(self) -> bool:
        """No bounds: a ratio reported, not judged (ICOUNT_REPORTS)."""
        return self.lo is None and self.hi is None

    @property
    def target(self) -> str:
        if self.report:
            return "report"
        if self.lo is not None and self.hi is not None:
            return f"B/A within {self.lo:.3f}-{self.hi:.3f}"

        def num(v):  # two places unless a third is needed (1.008)
            return f"{v:.2f}" if round(v, 2) == v else f"{v:.3f}"
        return f"B/A <= {num(self.hi)}" if self.hi is not None else f"B/A >= {num(self.lo)}"


def same_cost(key, title, a, b):
    """A guard on code that is the same on both sides: B within ICOUNT_BOUND of A."""
    return IcountGuard(key, title, a, b, lo=1 - ICOUNT_BOUND, hi=1 + ICOUNT_BOUND)


ICOUNT_GUARDS = [
    # The UML target, 1.25x the packets per second, as instructions: at most 1/1.25.
    IcountGuard("S2-restore", "fq_codel after filter add+delete: base -> patched",
                ("base", "s2_fq_codel_after_filter"), ("patched", "s2_fq_codel_after_filter"),
                hi=0.8),
    same_cost("S2-fresh", "patched fq_codel: never filtered -> after filter add+delete",
              ("patched", "s2_fq_codel_fresh"), ("patched", "s2_fq_codel_after_filter")),
    same_cost("S2-bypass", "pfifo_fast bypass, one sender: base -> patched",
              ("base", "s2_pfifo_fast"), ("patched", "s2_pfifo_fast")),
    same_cost("S3", "default dummy (noqueue), one sender: base -> patched",
              ("base", "q1_noqueue"), ("patched", "q1_noqueue")),
    # A multi-queue dummy's transmit alone (pktgen start_xmit on queue 0 of 2): the
    # series adds each packet to this CPU's counters of its queue and tail-calls
    # dummy_xmit(), 8 instructions more than the base's 1,830 (0.44%, out-of-tree
    # modules of the two dummy.c on one kernel). ICOUNT_COUNTERS_BOUND, +0.55% or about
    # 10 instructions, lies between that and the designs it must reject
    # (ICOUNT_COUNTER_VARIANTS, its negative controls): the previous atomic counters,
    # two locked adds more (+13.0), and a dummy that is not lltx, the TX queue's xmit
    # lock (+29.1). icount counts a locked add as one instruction: what sets the atomic
    # design apart, a cache line every sender of a queue writes, it cannot show.
    IcountGuard("counters", "2-queue dummy, start_xmit: base -> patched (per-CPU "
                "per-queue counters)", ("base", "q2_start_xmit"), ("patched", "q2_start_xmit"),
                hi=1 + ICOUNT_COUNTERS_BOUND),
]
# The guard the counter designs the series did not choose must fail.
ICOUNT_COUNTER_GUARD = "counters"
# Those designs, as patches on the series' dummy.c built as modules: label -> patch.
ICOUNT_COUNTER_VARIANTS = {"lock": "tools/bench/variants/dummy-queue-lock.patch",
                           "atomic": "tools/bench/variants/dummy-atomic.patch"}
# Ratios reported beside the guards, without a target (their UML keys where there is one).
ICOUNT_REPORTS = [
    IcountGuard("S2-floor", "patched: noqueue floor -> pfifo_fast bypass",
                ("patched", "q1_noqueue"), ("patched", "s2_pfifo_fast")),
    IcountGuard("S2-floor-base", "base: noqueue floor -> pfifo_fast bypass",
                ("base", "q1_noqueue"), ("base", "s2_pfifo_fast")),
    IcountGuard("Sink-veth", "patched, 2 queues + mq: dummy -> veth (peer receives)",
                ("patched", "q2_mq"), ("patched", "sink_veth_mq")),
    IcountGuard("Sink-nsim", "patched, 2 queues + mq: dummy -> netdevsim (unlinked, drops)",
                ("patched", "q2_mq"), ("patched", "sink_nsim_mq")),
    IcountGuard("nsim-counters", "netdevsim, 2 queues + mq: base -> patched (its per-queue "
                "counters)", ("base", "sink_nsim_mq"), ("patched", "sink_nsim_mq")),
    IcountGuard("dummy-counters", "2-queue dummy + mq: base -> patched (its per-queue "
                "counters)", ("base", "q2_mq"), ("patched", "q2_mq")),
]
# What a change adding instructions to dummy_xmit must fail (the icount negative control).
ICOUNT_PATH_GUARDS = ("S2-bypass", "S3")

// kselftest: per-queue TX statistics of dummy devices (netdev QSTATS_GET).
//
// Needs root. The devices are up, with IPv6 switched off so that they send nothing but
// the test's packets, and no qdisc (dummy is IFF_NO_QUEUE: noqueue).
//
// Only what the upstream tests do not do is here (Documentation/design.md, "The C++
// selftests and the upstream tests"): traffic spread over the queues by the stack, with
// XPS and without it, and qstats read while packets are sent; in presence.cpp, which
// dummies have qstats at all (not one with a single TX queue) and that they report no RX;
// in hidden.cpp, the transmit paths that mq's classes and net:net_dev_start_xmit do not
// see. Per-queue counts of steered traffic, the device totals against the link
// statistics and channel changes are the series' net/dummy_queues.py and the tree's
// drivers/net/stats.py. Each case uses a device of its own, with a unique name, removed on
// every path.
//
// "base" below is what the device-scope dump adds to the queues: the device total minus
// the sum over the active queues (for dummy, the counters of disabled queues).

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ktap.hpp"
#include "link.hpp"
#include "qstats.hpp"
#include "sysfs.hpp"

namespace dummy_qstats {
namespace {

// XPS, set here, maps the i-th online CPU to TX queue i (CPUs past kQueues left out).
// One sender pinned to each of those CPUs in turn sends round_packets(i) packets of one
// and the same flow through dev_queue_xmit(), where netdev_pick_tx() takes the queue from
// the XPS map of the sending CPU: after each send exactly tx-i has grown, by exactly what
// CPU i sent. Without the map the flow hash would have put every send on one queue
// (spread_without_xps).
TEST_RESULT(per_queue_spread)
{
    std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    if (cpus.size() > kQueues)
        cpus.resize(kQueues);
    if (cpus.size() < 2)
        return CaseResult::skip(
                concat("a spread over the queues needs two online CPUs, found ", cpus.size()));
    const TestDummy dev(dummy(kQueues));
    Snapshot prev;
    if (auto o = first_reading(dev, prev))
        return *o;
    if (std::string err = netutil::sysfs::map_cpus_to_queues(dev.name(), cpus); !err.empty())
        return CaseResult::fail(concat("setting XPS CPU i -> tx-i: ", err));
    std::string notes = concat("XPS CPU i -> tx-i for CPUs ", fmt_cpus(cpus), "; flow ", kFlowPort,
                               " sent from each CPU in turn");
    std::string mismatches;
    for (std::uint32_t i = 0; i < cpus.size(); ++i) {
        const std::uint64_t n = round_packets(i);
        if (std::string err = send_flow(dev.ifindex(), cpus[i], kFlowPort, n, false); !err.empty())
            return CaseResult::fail(
                    concat("sending ", n, " packets from CPU ", cpus[i], ": ", err));
        Snapshot s = snapshot(dev);
        if (auto o = snapshot_error(s, dev.name()))
            return *o;
        std::string err;
        const auto growth = grown(prev, s, err);
        if (!err.empty())
            return CaseResult::fail(concat("after CPU ", cpus[i], " sent: ", err));
        const std::map<std::uint32_t, Counters> want{{i, sent_counters(n)}};
        notes += concat("\nCPU ", cpus[i], ": ", fmt(growth));
        if (growth != want)
            mismatches +=
                    concat(" CPU ", cpus[i], ": ", fmt(growth), ", expected ", fmt(want), ";");
        prev = std::move(s);
    }
    if (!mismatches.empty())
        return CaseResult::fail(concat("per-queue growth with XPS CPU i -> tx-i:", mismatches));
    return CaseResult::pass(notes);
}

// The queue spread a device created with numtxqueues kQueues gets without XPS (a new
// device has no XPS map: every tx-N/xps_cpus is an empty mask). Each send is one sender
// pinned to one CPU with one flow, and must land on exactly one queue, whole:
// - through dev_queue_xmit(), netdev_pick_tx() falls back to skb_tx_hash(), the flow
//   hash scaled to the queue count: every packet of a flow takes one queue, the same
//   from every CPU (each of kFlows flows is sent from every online CPU, up to kQueues).
//   Which queue a flow gets depends on the hash key drawn at boot, so how the flows
//   share the queues changes from boot to boot: it is reported, not asserted;
// - with PACKET_QDISC_BYPASS, packet_pick_tx_queue() records the sending CPU modulo the
//   queue count as the packet's RX queue, which skb_tx_hash() then returns: every
//   packet sent from CPU c takes tx-(c % kQueues), whatever its flow (two flows from
//   each online CPU).
TEST_RESULT(spread_without_xps)
{
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    const TestDummy dev(dummy(kQueues));
    Snapshot prev;
    if (auto o = first_reading(dev, prev))
        return *o;
    std::string notes = concat("no XPS map: xps_cpus of tx-0..tx-", kQueues - 1, " empty");
    for (std::uint32_t q = 0; q < kQueues; ++q) {
        std::string value;
        const auto empty = xps_empty(dev.name(), q, value);
        if (empty && !*empty)
            return CaseResult::fail(concat("tx-", q, " of a new device has the XPS map ", value));
        if (!empty)
            notes = "no XPS map: xps_cpus unreadable (a kernel without XPS)";
    }

    // Sends kFlowPackets packets of flow port from cpu; queue: the one queue they took.
    auto send_one = [&](int cpu, std::uint16_t port, bool bypass,
                        std::uint32_t &queue) -> std::optional<CaseResult> {
        const std::string what =
                concat("flow ", port, bypass ? " with PACKET_QDISC_BYPASS" : "", " from CPU ", cpu);
        if (std::string err = send_flow(dev.ifindex(), cpu, port, kFlowPackets, bypass);
            !err.empty())
            return CaseResult::fail(concat(what, ": ", err));
        Snapshot s = snapshot(dev);
        if (auto o = snapshot_error(s, dev.name()))
            return o;
        std::string err;
        const auto growth = grown(prev, s, err);
        if (!err.empty())
            return CaseResult::fail(concat(what, ": ", err));
        const Counters want = sent_counters(kFlowPackets);
        ASSERT_EQ(growth.size(), 1U) << what << ": " << fmt(growth);
        ASSERT_EQ(growth.begin()->second, want) << what << ": " << fmt(growth);
        queue = growth.begin()->first;
        prev = std::move(s);
        return std::nullopt;
    };

    std::vector<int> senders = cpus;
    if (senders.size() > kQueues)
        senders.resize(kQueues);
    std::map<std::uint32_t, unsigned> flows_on;
    std::string flows;
    for (std::uint16_t f = 0; f < kFlows; ++f) {
        const auto port = static_cast<std::uint16_t>(kFlowPort + f);
        std::uint32_t first = 0;
        for (std::size_t c = 0; c < senders.size(); ++c) {
            std::uint32_t q = 0;
            if (auto o = send_one(senders[c], port, false, q))
                return *o;
            if (c == 0) {
                first = q;
            } else {
                ASSERT_EQ(q, first) << "flow " << port << ": the queue from CPU " << senders[c]
                                    << " against the one from CPU " << senders[0];
            }
        }
        ++flows_on[first];
        flows += concat(f == 0 ? "" : ", ", port, " tx-", first);
    }
    notes += concat("\ndev_queue_xmit(), flow (UDP source port) -> queue, the same from CPU(s) ",
                    fmt_cpus(senders), ": ", flows, "; ", kFlows, " flows on ", flows_on.size(),
                    " of ", kQueues, " queues");

    std::string by_cpu;
    for (const int cpu : cpus) {
        const auto want = static_cast<std::uint32_t>(cpu) % kQueues;
        for (std::uint16_t f = 0; f < 2; ++f) {
            const auto port = static_cast<std::uint16_t>(kFlowPort + f);
            std::uint32_t q = 0;
            if (auto o = send_one(cpu, port, true, q))
                return *o;
            ASSERT_EQ(q, want) << "flow " << port << " with PACKET_QDISC_BYPASS from CPU " << cpu
                               << ": its queue, expected CPU % " << kQueues;
        }
        by_cpu += concat(by_cpu.empty() ? "" : ", ", "CPU ", cpu, " tx-", want);
    }
    notes += concat("\nPACKET_QDISC_BYPASS, sending CPU -> queue (CPU % ", kQueues, ") for flows ",
                    kFlowPort, " and ", kFlowPort + 1, ": ", by_cpu);
    return CaseResult::pass(notes);
}

// What concurrent_reads saw while sending.
struct ReadLoop {
    unsigned reads = 0;
    unsigned moving = 0;        // reads during which the link counters moved
    unsigned between_dumps = 0; // reads whose device total passed the queues plus base
    std::string violation;
    std::optional<CaseResult> read_error;
};

// Reads until kMinReads reads and kMinReadTime have passed (at most kMaxReadTime), each
// once the link has counted more than margin packets since the read before, and checks
// each read against the one before (see concurrent_reads).
ReadLoop read_while_sending(const TestDummy &dev, const Snapshot &start, const Counters &base_start,
                            std::uint64_t margin, const Counters &in_flight)
{
    ReadLoop r;
    Snapshot prev = start;
    const auto t0 = std::chrono::steady_clock::now();
    while (true) {
        Counters link_before;
        if (std::string err = wait_for_link(dev, prev.link.packets + margin, link_before);
            !err.empty()) {
            r.violation = concat("after ", r.reads, " reads: ", err);
            break;
        }
        const Snapshot s = snapshot(dev);
        if (auto o = snapshot_error(s, dev.name())) {
            r.read_error = *o;
            break;
        }
        ++r.reads;
        if (std::string err = check_progress(prev, s); !err.empty()) {
            r.violation = concat("read ", r.reads, " while sending: ", err);
            break;
        }
        // Within one reading, queues <= device (queues + base) <= link, read in that order.
        // A multi-queue dummy counts a packet in its queue, then in the link totals: each
        // sender may have one packet counted in the device total read first and not yet
        // in the link read after it.
        if (!less_equal(s.queue_sum(), s.device) || !less_equal(s.device, s.link + in_flight)) {
            r.violation = concat("read ", r.reads, ": queues ", fmt(s.queue_sum()),
                                 ", device (queues + base) ", fmt(s.device),
                                 ", link read right after ", fmt(s.link));
            break;
        }
        if (!less_equal(link_before, s.link)) {
            r.violation = concat("read ", r.reads, ": the link went back from ", fmt(link_before),
                                 " to ", fmt(s.link), " during the read");
            break;
        }
        r.moving += less(link_before, s.link) ? 1 : 0;
        r.between_dumps += s.device.packets > s.queue_sum().packets + base_start.packets ? 1 : 0;
        prev = s;
        const auto elapsed = std::chrono::steady_clock::now() - t0;
        if ((r.reads >= kMinReads && elapsed >= kMinReadTime) || elapsed >= kMaxReadTime)
            break;
    }
    return r;
}

// Reads queue, device and link statistics over and over while one sender per CPU
// transmits, each read once the link has counted more packets than several per sender
// since the previous read. As each sender adds to its queue's counters before it sends
// its next packet, every read must then see every counter at least where the previous
// read saw it, and the sum over the queues, the device total and the link statistics
// strictly above it. The link is also read right before each read: at least one read
// must have the link counters move between that reading and its own link reading, that
// is while the queues and the device total were being read, so that the counters are
// shown to be read live, while they are being written. After the senders stop, the
// queues plus the base add up exactly to the link statistics, grown by what was sent.
TEST_RESULT(concurrent_reads)
{
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    const std::uint32_t queues = static_cast<std::uint32_t>(std::max<std::size_t>(cpus.size(), 2));
    const TestDummy dev(dummy(queues));
    if (!dev.ok())
        return dev.error();
    const std::string xps_error = netutil::sysfs::map_cpus_to_queues(dev.name(), cpus);
    // More than two packets per sender: one sender has then counted at least three after
    // the previous read, and finished counting (in every counter) at least two of them.
    const std::uint64_t margin = 2 * cpus.size();

    const Snapshot start = snapshot(dev);
    if (auto o = snapshot_error(start, dev.name()))
        return *o;
    const auto base_start = start.base();
    ASSERT_TRUE(base_start.has_value()) << "before sending, the queues " << start.queue_sum()
                                        << " exceed the device total " << start.device;

    SenderThread senders(dev.ifindex(), cpus);
    const ReadLoop r =
            read_while_sending(dev, start, *base_start, margin, sent_counters(cpus.size()));
    const auto &results = senders.stop();
    if (r.read_error)
        return *r.read_error;
    if (std::string err = sender_problem(results, 0); !err.empty())
        return CaseResult::fail(err);
    if (!r.violation.empty())
        return CaseResult::fail(r.violation);
    ASSERT_GE(r.reads, kMinReads)
            << "reads in " << std::chrono::duration_cast<std::chrono::seconds>(kMaxReadTime).count()
            << " s";
    ASSERT_GT(r.moving, 0U) << "none of the " << r.reads
                            << " reads ran while the counters moved: the link counted as many "
                               "packets right before each read as right after it";

    const Counters want = sent_counters(total_sent(results));
    const Snapshot end = snapshot(dev);
    if (auto o = snapshot_error(end, dev.name()))
        return *o;
    const auto base_end = end.base();
    const std::string sums =
            concat("queues ", fmt(end.queue_sum()), " + base ",
                   base_end ? fmt(*base_end) : std::string("?"), ", link ", fmt(end.link));
    ASSERT_EQ(end.link - start.link, want) << "after the senders stopped: the link's growth";
    ASSERT_TRUE(base_end.has_value()) << "after the senders stopped: " << sums;
    ASSERT_EQ(*base_end, *base_start) << "after the senders stopped: " << sums;
    ASSERT_EQ(end.queue_sum() + *base_end, end.link) << "after the senders stopped: " << sums;
    ASSERT_EQ(end.queue_sum() - start.queue_sum(), want)
            << "after the senders stopped: the queues' growth";
    std::string notes = concat(
            r.reads, " reads while sending, each once the link had counted more than ", margin,
            " packets since the read before: every counter at or past "
            "that read, the totals above it; ",
            r.moving,
            " read(s) while the counters moved (the link counted more right after "
            "the read than right before it), in ",
            r.between_dumps,
            " of them the device total already past the queues read before "
            "it plus the base; after stopping: ",
            sums, ", sent ", fmt(want));
    if (!xps_error.empty())
        notes += concat("\nXPS not set (", xps_error, ")");
    return CaseResult::pass(notes);
}

} // namespace
} // namespace dummy_qstats

int main(int argc, char **argv)
{
    return ksft::main(argc, argv);
}

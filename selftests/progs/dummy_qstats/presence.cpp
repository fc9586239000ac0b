// Which dummies have per-queue statistics at all: with the series, only those with more
// than one TX queue, and those report TX alone.

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qstats.hpp"

namespace dummy_qstats {
namespace {

std::size_t entries_of(const std::vector<netdev::QStats> &all, int ifindex)
{
    return static_cast<std::size_t>(std::count_if(
            all.begin(), all.end(), [&](const netdev::QStats &q) { return q.ifindex == ifindex; }));
}

// A dump of every device's qstats (per_queue: queue scope, else device scope); nullopt
// with the case's outcome in err when it fails (SKIP without the netdev family).
std::optional<std::vector<netdev::QStats>> dump_all(bool per_queue, std::optional<CaseResult> &err)
{
    std::vector<netdev::QStats> out;
    const Status st = per_queue ? nd().queue_stats(0, out) : nd().all_device_stats(out);
    if (st.ok())
        return out;
    const char *what = per_queue ? "QSTATS_GET dump, scope queue" : "QSTATS_GET dump, device scope";
    if (st.err == ENOENT)
        err = CaseResult::skip(
                concat("netdev generic netlink family not available (", what, ": ", st.str(), ")"));
    else
        err = CaseResult::fail(concat(what, ": ", st.str()), {st.err});
    return std::nullopt;
}

// A dummy created without numtxqueues (one TX queue, what `ip link add d0 type dummy`
// gives) has no netdev_stat_ops on the base kernel, and none with the series either:
// netdev_nl_qstats_get_dump_one() skips it in the dumps of every device, device scope
// and queue scope, and a request for its ifindex fails with EOPNOTSUPP
// (netdev_nl_qstats_get_dumpit()). Both have traffic first, so that an entry would have
// counts to show. A dummy with two TX queues next to it shows that the dumps list what
// has qstats: its device entry and its two TX queues are in them with the series, and
// missing on the base (SELFTEST_KERNEL says which kernel this is).
TEST_RESULT(one_queue_no_qstats)
{
    std::optional<CaseResult> err;
    const std::optional<bool> patched = patched_label(err);
    if (!patched)
        return *err;
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    const TestDummy one(dummy(std::nullopt));
    if (!one.ok())
        return one.error();
    ASSERT_EQ(one.info().num_tx_queues, 1U) << one.name() << ", created without numtxqueues";
    const TestDummy two(dummy(2));
    if (!two.ok())
        return two.error();
    for (const TestDummy *d : {&one, &two}) {
        if (std::string e = send_flow(d->ifindex(), cpus[0], kFlowPort, kFlowPackets, true);
            !e.empty())
            return CaseResult::fail(concat("sending on ", d->name(), ": ", e));
    }

    const auto devices = dump_all(false, err);
    if (!devices)
        return *err;
    const auto queues = dump_all(true, err);
    if (!queues)
        return *err;
    ASSERT_EQ(entries_of(*devices, one.ifindex()), 0U)
            << "device-scope entries of " << one.name()
            << " (one TX queue) in the dump of every device";
    ASSERT_EQ(entries_of(*queues, one.ifindex()), 0U)
            << "queue-scope entries of " << one.name()
            << " (one TX queue) in the dump of every device";

    // Its own ifindex: what the base answers for a device without stat_ops.
    netdev::QStats entry;
    const Status by_dev = nd().device_stats(one.ifindex(), entry);
    ASSERT_EQ(errno_name(by_dev.err), errno_name(EOPNOTSUPP))
            << "QSTATS_GET of the ifindex of " << one.name() << ", device scope: " << by_dev.str();
    std::vector<netdev::QStats> own;
    const Status by_queue = nd().queue_stats(one.ifindex(), own);
    ASSERT_EQ(errno_name(by_queue.err), errno_name(EOPNOTSUPP))
            << "QSTATS_GET of the ifindex of " << one.name() << ", scope queue: " << by_queue.str()
            << ", " << own.size() << " entries";

    const std::size_t two_dev = entries_of(*devices, two.ifindex());
    const std::size_t two_q = entries_of(*queues, two.ifindex());
    const std::size_t want_dev = *patched ? 1 : 0;
    const std::size_t want_q = *patched ? 2 : 0;
    ASSERT_EQ(two_dev, want_dev) << "device-scope entries of " << two.name()
                                 << " (two TX queues) on the " << (*patched ? "patched" : "base")
                                 << " kernel: the control that the dump lists what has qstats";
    ASSERT_EQ(two_q, want_q) << "queue-scope entries of " << two.name()
                             << " (two TX queues) on the " << (*patched ? "patched" : "base")
                             << " kernel";
    return CaseResult::pass(concat(
            one.name(), " (one TX queue): no entry in either dump, QSTATS_GET of its ifindex ",
            errno_name(by_dev.err), "; ", two.name(), " (two TX queues): ", two_dev, " device and ",
            two_q, " queue entries (", *patched ? "patched" : "base", " kernel)"));
}

// With the series, a dummy with more than one TX queue reports TX statistics per queue,
// and RX only as the device's totals of zero (its base stats: it has no receive path, and
// stats.py wants the basic keys of both directions). Its device entry has
// tx-packets/tx-bytes, grown by exactly what was sent, and rx-packets/rx-bytes 0; the
// queue scope lists TX queues 0 and 1 and no RX queue, and they add up to the device
// entry and to the link's counters. The base dummy has no netdev_stat_ops: the first
// QSTATS_GET fails with EOPNOTSUPP.
TEST_RESULT(two_queues_tx_qstats_rx_zero)
{
    std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    if (cpus.size() > 2)
        cpus.resize(2);
    const TestDummy dev(dummy(2));
    Snapshot before;
    if (auto o = first_reading(dev, before))
        return *o;
    // With PACKET_QDISC_BYPASS each CPU's packets take tx-(CPU % 2).
    std::uint64_t sent = 0;
    for (const int cpu : cpus) {
        if (std::string e = send_flow(dev.ifindex(), cpu, kFlowPort, kFlowPackets, true);
            !e.empty())
            return CaseResult::fail(concat("sending from CPU ", cpu, ": ", e));
        sent += kFlowPackets;
    }
    const Snapshot after = snapshot(dev);
    if (auto o = snapshot_error(after, dev.name()))
        return *o;
    ASSERT_TRUE(after.device_raw.rx_packets == std::optional<std::uint64_t>(0))
            << "the device entry of " << dev.name() << " rx-packets: "
            << (after.device_raw.rx_packets ? std::to_string(*after.device_raw.rx_packets)
                                            : std::string("not reported"));
    ASSERT_TRUE(after.device_raw.rx_bytes == std::optional<std::uint64_t>(0))
            << "the device entry of " << dev.name() << " rx-bytes: "
            << (after.device_raw.rx_bytes ? std::to_string(*after.device_raw.rx_bytes)
                                          : std::string("not reported"));
    ASSERT_EQ(after.rx_entries, 0U) << "RX queue entries of " << dev.name();
    ASSERT_EQ(after.txq.size(), 2U) << "TX queue entries of " << dev.name();
    ASSERT_TRUE(after.txq.contains(0) && after.txq.contains(1))
            << "TX queue ids of " << dev.name() << ": expected 0 and 1";
    ASSERT_EQ(after.link - before.link, sent_counters(sent)) << "the link's growth";
    ASSERT_EQ(after.device - before.device, sent_counters(sent)) << "the device entry's growth";
    ASSERT_EQ(after.queue_sum() - before.queue_sum(), sent_counters(sent))
            << "the TX queues' growth";
    ASSERT_EQ(after.device, after.link) << "device entry against the link";
    std::string queues;
    for (const auto &[id, c] : after.txq)
        queues += concat(queues.empty() ? "" : ", ", "tx-", id, " ", fmt(c));
    return CaseResult::pass(concat("sent ", fmt(sent_counters(sent)), " from CPU(s) ",
                                   fmt_cpus(cpus), ": ", queues, "; device ", fmt(after.device),
                                   ", no RX counter, no RX queue"));
}

} // namespace
} // namespace dummy_qstats

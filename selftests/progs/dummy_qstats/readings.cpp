#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "link.hpp"
#include "qstats.hpp"

namespace dummy_qstats {

netdev::Netdev &nd()
{
    static netdev::Netdev n;
    return n;
}

std::optional<bool> patched_label(std::optional<CaseResult> &err)
{
    const char *env = std::getenv("SELFTEST_KERNEL");
    const std::string_view v = env != nullptr ? env : "";
    if (v == "patched")
        return true;
    if (v == "base")
        return false;
    err = CaseResult::fail(
            concat("SELFTEST_KERNEL is \"", v, "\": which kernel is this (base or patched)?"));
    return std::nullopt;
}

// An up dummy device ("dqs" + pid + "_" + n) with IPv6 off that must have tx_queues TX
// queues (the default count if unset).
ksft::testdev::DummySpec dummy(std::optional<std::uint32_t> tx_queues)
{
    return {.prefix = "dqs",
            .tx_queues = tx_queues,
            .ipv6_off = true,
            .up = true,
            .verify_queues = true};
}

std::string fmt(const Counters &c)
{
    return concat(c.packets, " packets/", c.bytes, " bytes");
}

std::ostream &operator<<(std::ostream &os, const Counters &c)
{
    return os << fmt(c);
}

Counters operator-(const Counters &a, const Counters &b)
{
    return {a.packets - b.packets, a.bytes - b.bytes};
}

Counters operator+(const Counters &a, const Counters &b)
{
    return {a.packets + b.packets, a.bytes + b.bytes};
}

bool less_equal(const Counters &a, const Counters &b)
{
    return a.packets <= b.packets && a.bytes <= b.bytes;
}

bool less(const Counters &a, const Counters &b)
{
    return a.packets < b.packets && a.bytes < b.bytes;
}

Counters sent_counters(std::uint64_t packets)
{
    return {packets, packets * kFrameLen};
}

Snapshot snapshot(netdev::Netdev &n, netutil::nl::Socket &rt, const std::string &name, int ifindex)
{
    Snapshot s;
    std::vector<netdev::QStats> all;
    s.queues_st = n.queue_stats(ifindex, all);
    for (const netdev::QStats &q : all) {
        if (q.ifindex != ifindex)
            continue;
        s.entries.push_back(q);
        if (q.queue_type == netdev::QueueType::tx && q.queue_id)
            s.txq[*q.queue_id] = {q.tx_packets.value_or(0), q.tx_bytes.value_or(0)};
        if (q.queue_type == netdev::QueueType::rx)
            ++s.rx_entries;
    }
    s.device_st = n.device_stats(ifindex, s.device_raw);
    s.device = {s.device_raw.tx_packets.value_or(0), s.device_raw.tx_bytes.value_or(0)};
    rtnl::LinkInfo info;
    s.link_st = rtnl::get_link(rt, name, info);
    if (s.link_st.ok() && !info.stats)
        s.link_st = Status::failed(ENODATA, "no IFLA_STATS64");
    if (info.stats)
        s.link = {info.stats->tx_packets, info.stats->tx_bytes};
    return s;
}

Snapshot snapshot(const TestDummy &dev)
{
    return snapshot(nd(), rtnl::shared_socket(), dev.name(), dev.ifindex());
}

// SKIP if the kernel has no netdev family, FAIL for any other error.
std::optional<CaseResult> snapshot_error(const Snapshot &s, std::string_view dev)
{
    const std::pair<const Status *, const char *> parts[] = {
            {&s.queues_st, "QSTATS_GET scope queue"},
            {&s.device_st, "QSTATS_GET device scope"},
            {&s.link_st, "RTM_GETLINK"},
    };
    for (const auto &[st, what] : parts) {
        if (st->ok())
            continue;
        if (st != &s.link_st && st->err == ENOENT)
            return CaseResult::skip(
                    concat("netdev generic netlink family not available (", st->str(), ")"));
        std::string msg = concat(what, " for ", dev, ": ", st->str());
        if (st->err == EOPNOTSUPP)
            msg += " (the driver reports no queue statistics)";
        return CaseResult::fail(msg, {st->err});
    }
    return std::nullopt;
}

std::optional<CaseResult> first_reading(const TestDummy &dev, Snapshot &out)
{
    if (!dev.ok())
        return dev.error();
    out = snapshot(dev);
    return snapshot_error(out, dev.name());
}

// The TX queues whose counters grew from a to b, with their growth. Sets err if a queue
// appeared, went missing or went back.
std::map<std::uint32_t, Counters> grown(const Snapshot &a, const Snapshot &b, std::string &err)
{
    std::map<std::uint32_t, Counters> out;
    if (a.txq.size() != b.txq.size())
        err = concat("the TX queue entries went from ", a.txq.size(), " to ", b.txq.size());
    for (const auto &[q, c] : b.txq) {
        const auto it = a.txq.find(q);
        if (it == a.txq.end())
            err = concat("tx-", q, " appeared");
        else if (!less_equal(it->second, c))
            err = concat("tx-", q, " went back from ", fmt(it->second), " to ", fmt(c));
        else if (c != it->second)
            out[q] = c - it->second;
    }
    return out;
}

std::string fmt(const std::map<std::uint32_t, Counters> &growth)
{
    std::string s;
    for (const auto &[q, c] : growth)
        s += concat(s.empty() ? "" : ", ", "tx-", q, " +", fmt(c));
    return s.empty() ? std::string("no queue grew") : s;
}

// Why reading cur right after prev, both taken while the senders run, shows counters that
// went backwards or did not move; empty if every counter is monotonic and the totals grew.
std::string check_progress(const Snapshot &prev, const Snapshot &cur)
{
    for (const auto &[q, c] : cur.txq) {
        const auto it = prev.txq.find(q);
        if (it == prev.txq.end())
            return concat("tx-", q, " appeared");
        if (!less_equal(it->second, c))
            return concat("tx-", q, " went back from ", fmt(it->second), " to ", fmt(c));
    }
    if (cur.txq.size() != prev.txq.size())
        return concat("the TX queue entries went from ", prev.txq.size(), " to ", cur.txq.size());
    const std::pair<const char *, std::pair<Counters, Counters>> totals[] = {
            {"the sum over the queues", {prev.queue_sum(), cur.queue_sum()}},
            {"the device total", {prev.device, cur.device}},
            {"the link statistics", {prev.link, cur.link}},
    };
    for (const auto &[what, pc] : totals) {
        if (!less(pc.first, pc.second))
            return concat(what, " went from ", fmt(pc.first), " to ", fmt(pc.second));
    }
    return {};
}

// Waits until the link has counted more than `packets` transmitted packets; seen: the
// link counters of the reading that showed it. Returns an error message, or an empty
// string.
std::string wait_for_link(const TestDummy &dev, std::uint64_t packets, Counters &seen)
{
    const auto t0 = std::chrono::steady_clock::now();
    while (true) {
        rtnl::LinkInfo info;
        if (Status st = rtnl::get_link(rtnl::shared_socket(), dev.name(), info); !st.ok())
            return concat("RTM_GETLINK ", dev.name(), ": ", st.str());
        if (!info.stats)
            return concat("no IFLA_STATS64 for ", dev.name());
        if (info.stats->tx_packets > packets) {
            seen = {info.stats->tx_packets, info.stats->tx_bytes};
            return {};
        }
        if (std::chrono::steady_clock::now() - t0 > kStallTimeout)
            return concat("the link counted no more than ", packets, " packets for ",
                          std::chrono::duration_cast<std::chrono::seconds>(kStallTimeout).count(),
                          " s with the senders running");
        std::this_thread::sleep_for(kPollGap);
    }
}

} // namespace dummy_qstats

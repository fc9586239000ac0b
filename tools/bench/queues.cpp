#include "queues.hpp"

#include <exception>

#include "netdev.hpp"

namespace mqbench::queues {

std::optional<Counts> from_qdiscs(const std::vector<netutil::rtnl::QdiscInfo> &qdiscs)
{
    const netutil::rtnl::QdiscInfo *root = nullptr;
    for (const auto &q : qdiscs) {
        if (q.parent == netutil::rtnl::kRootParent)
            root = &q;
    }
    if (root == nullptr || root->kind != "mq")
        return std::nullopt;
    const std::uint32_t major = netutil::rtnl::handle_major(root->handle);
    Counts out;
    for (const auto &q : qdiscs) {
        if (&q == root || netutil::rtnl::handle_major(q.parent) != major)
            continue;
        const std::uint32_t minor = netutil::rtnl::handle_minor(q.parent);
        if (minor == 0)
            continue;
        out[minor - 1] = q.packets;
    }
    return out;
}

namespace {

std::string try_qstats(int ifindex, Counts &out)
{
    try {
        netutil::netdev::Netdev nd;
        std::vector<netutil::netdev::QStats> qs;
        if (auto st = nd.queue_stats(ifindex, qs); !st.ok())
            return "qstats: " + st.str();
        for (const auto &q : qs) {
            if (q.ifindex == ifindex && q.queue_type == netutil::netdev::QueueType::tx &&
                q.queue_id && q.tx_packets)
                out[*q.queue_id] = *q.tx_packets;
        }
        if (out.empty())
            return "qstats: the driver reports no per-queue tx-packets";
        return {};
    } catch (const std::exception &e) {
        return std::string("qstats: ") + e.what();
    }
}

std::string try_qdisc(int ifindex, Counts &out)
{
    try {
        netutil::nl::Socket sock(NETLINK_ROUTE);
        std::vector<netutil::rtnl::QdiscInfo> qd;
        if (auto st = netutil::rtnl::qdisc_dump(sock, ifindex, qd); !st.ok())
            return "qdisc dump: " + st.str();
        std::vector<netutil::rtnl::QdiscInfo> mine;
        for (const auto &q : qd) {
            if (q.ifindex == ifindex)
                mine.push_back(q);
        }
        auto counts = from_qdiscs(mine);
        if (!counts || counts->empty())
            return "root qdisc is not mq (no per-queue qdisc counters)";
        out = std::move(*counts);
        return {};
    } catch (const std::exception &e) {
        return std::string("qdisc dump: ") + e.what();
    }
}

} // namespace

Snapshot take(int ifindex, const std::string &want)
{
    Snapshot s;
    if (want.empty() || want == "qstats") {
        const std::string why = try_qstats(ifindex, s.tx_packets);
        if (why.empty()) {
            s.source = "qstats";
            return s;
        }
        s.note = why;
        s.tx_packets.clear();
        if (want == "qstats")
            return s;
    }
    if (want.empty() || want == "qdisc") {
        const std::string why = try_qdisc(ifindex, s.tx_packets);
        if (why.empty()) {
            s.source = "qdisc";
            return s;
        }
        s.note += (s.note.empty() ? "" : "; ") + why;
        s.tx_packets.clear();
    }
    if (!s.note.empty())
        s.note += "; /sys/class/net/<dev>/queues/tx-*/ has no packet counters";
    return s;
}

Counts delta(const Counts &before, const Counts &after)
{
    Counts d;
    for (const auto &[q, v] : after) {
        const auto it = before.find(q);
        const std::uint64_t b = it == before.end() ? 0 : it->second;
        d[q] = v > b ? v - b : 0;
    }
    return d;
}

} // namespace mqbench::queues

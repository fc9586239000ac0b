#include "netdev.hpp"

#include <cerrno>
#include <set>
#include <utility>

#include <linux/genetlink.h>

#include "strutil.hpp"
#include "uapi_compat.hpp"

namespace netutil::netdev {

nlmsghdr *build_qstats_get(nl::Message &msg, std::uint16_t family, int ifindex, bool per_queue)
{
    nlmsghdr *nlh = nl::genl_start(msg, family, NETDEV_CMD_QSTATS_GET, NETDEV_FAMILY_VERSION, 0);
    if (ifindex > 0)
        msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(ifindex));
    if (per_queue)
        msg.put_u32(NETDEV_A_QSTATS_SCOPE, NETDEV_QSTATS_SCOPE_QUEUE);
    return nlh;
}

Status parse_qstats(const nlmsghdr *nlh, QStats &out)
{
    if (mnl_nlmsg_get_payload_len(nlh) < sizeof(genlmsghdr))
        return Status::from_errno(EBADMSG);
    const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(genlmsghdr), NETDEV_A_QSTATS_MAX);
    out = QStats{};
    out.ifindex = static_cast<int>(nl::attr_u32(tb, NETDEV_A_QSTATS_IFINDEX).value_or(0));
    if (auto t = nl::attr_u32(tb, NETDEV_A_QSTATS_QUEUE_TYPE))
        out.queue_type = static_cast<QueueType>(*t);
    out.queue_id = nl::attr_u32(tb, NETDEV_A_QSTATS_QUEUE_ID);
    out.rx_packets = nl::attr_uint(tb, NETDEV_A_QSTATS_RX_PACKETS);
    out.rx_bytes = nl::attr_uint(tb, NETDEV_A_QSTATS_RX_BYTES);
    out.tx_packets = nl::attr_uint(tb, NETDEV_A_QSTATS_TX_PACKETS);
    out.tx_bytes = nl::attr_uint(tb, NETDEV_A_QSTATS_TX_BYTES);
    out.tx_hw_drops = nl::attr_uint(tb, NETDEV_A_QSTATS_TX_HW_DROPS);
    out.tx_stop = nl::attr_uint(tb, NETDEV_A_QSTATS_TX_STOP);
    out.tx_wake = nl::attr_uint(tb, NETDEV_A_QSTATS_TX_WAKE);
    return {};
}

Netdev::Netdev() : genl_(NETDEV_FAMILY_NAME) {}

Status Netdev::family(std::uint16_t &id)
{
    return genl_.id(id);
}

Status Netdev::qstats(int ifindex, bool per_queue, std::vector<QStats> &out)
{
    std::uint16_t id = 0;
    if (Status st = family(id); !st.ok())
        return st;
    nl::Message msg(1024);
    out.clear();
    Status parse_st;
    nl::Socket &sock = genl_.socket();
    Status st =
            sock.dump(build_qstats_get(msg, id, ifindex, per_queue), [&](const nlmsghdr *reply) {
                QStats q;
                Status s = parse_qstats(reply, q);
                if (s.ok())
                    out.push_back(q);
                else
                    parse_st = s;
            });
    return st.ok() ? parse_st : st;
}

Status Netdev::queue_stats(int ifindex, std::vector<QStats> &out)
{
    return qstats(ifindex, true, out);
}

Status Netdev::device_stats(int ifindex, QStats &out)
{
    std::vector<QStats> all;
    if (Status st = qstats(ifindex, false, all); !st.ok())
        return st;
    for (const QStats &q : all) {
        if (q.ifindex == ifindex) {
            out = q;
            return {};
        }
    }
    Status st = Status::from_errno(ENODATA);
    st.extack = "no device-scope qstats reported";
    return st;
}

Status Netdev::all_device_stats(std::vector<QStats> &out)
{
    return qstats(0, false, out);
}

namespace {

using Counter = std::optional<std::uint64_t> QStats::*;

std::uint64_t sum_counter(const std::vector<QStats> &queues, Counter c)
{
    std::uint64_t sum = 0;
    for (const QStats &q : queues)
        sum += (q.*c).value_or(0);
    return sum;
}

} // namespace

std::uint64_t sum_tx_packets(const std::vector<QStats> &queues)
{
    return sum_counter(queues, &QStats::tx_packets);
}

std::uint64_t sum_tx_bytes(const std::vector<QStats> &queues)
{
    return sum_counter(queues, &QStats::tx_bytes);
}

std::size_t active_tx_queues(const std::vector<QStats> &queues, std::uint64_t min_packets)
{
    std::size_t n = 0;
    for (const QStats &q : queues) {
        if (q.queue_type == QueueType::tx && q.tx_packets.value_or(0) >= min_packets)
            ++n;
    }
    return n;
}

std::string check_qstats(const std::vector<QStats> &queues, const QStats &device)
{
    std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
    for (const QStats &q : queues) {
        if (!q.queue_type || !q.queue_id)
            return concat("queue entry without type/id on ifindex ", q.ifindex);
        if (!seen.emplace(static_cast<std::uint32_t>(*q.queue_type), *q.queue_id).second)
            return concat("duplicate entry for queue ", *q.queue_id);
    }
    const std::pair<const char *, Counter> counters[] = {
            {"rx-packets", &QStats::rx_packets}, {"rx-bytes", &QStats::rx_bytes},
            {"tx-packets", &QStats::tx_packets}, {"tx-bytes", &QStats::tx_bytes},
            {"tx-stop", &QStats::tx_stop},       {"tx-wake", &QStats::tx_wake},
    };
    for (const auto &[name, c] : counters) {
        const std::uint64_t sum = sum_counter(queues, c);
        const auto total = device.*c;
        if (!total) {
            if (sum != 0)
                return concat(name, ": queues report ", sum, " but the device has no total");
            continue;
        }
        if (sum > *total)
            return concat(name, ": sum over queues ", sum, " exceeds device total ", *total);
    }
    return {};
}

} // namespace netutil::netdev

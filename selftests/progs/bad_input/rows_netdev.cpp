// Rows: the netdev family (per-queue statistics, queues).
#include "bad_input.hpp"

namespace bad_input {

const std::vector<Row> kNetdevRows = {
        // netdev family: per-queue statistics and queues.
        {"qstats.missing_ifindex", "qstats of the ifindex of a deleted dummy", kHowQstats,
         error_at(ENODEV, {}, "NETDEV_A_QSTATS_IFINDEX"),
         error_at(ENODEV, {}, "NETDEV_A_QSTATS_IFINDEX"), kAllState, Where::init,
         [](Env &e, const Fix &) {
             Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
             int gone = 0;
             {
                 testdev::TestDummy d({.prefix = "bg"});
                 if (!d.ok()) {
                     r.error = d.error().message;
                     return r;
                 }
                 gone = d.ifindex();
             }
             r.mark = tail(r);
             r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(gone));
             return r;
         }},
        {"qstats.ifindex_zero", "qstats of ifindex 0 (the policy's minimum is 1)", kHowQstats,
         error_at(ERANGE, kOutOfRange, "NETDEV_A_QSTATS_IFINDEX"),
         error_at(ERANGE, kOutOfRange, "NETDEV_A_QSTATS_IFINDEX"), kAllState, Where::init,
         [](Env &e, const Fix &) {
             Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
             r.mark = tail(r);
             r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, 0);
             return r;
         }},
        {"qstats.scope_reserved", "qstats of the device with scope 2 (only bit 0 is defined)",
         kHowQstats, error_at(EINVAL, kReservedBit, "NETDEV_A_QSTATS_SCOPE"),
         error_at(EINVAL, kReservedBit, "NETDEV_A_QSTATS_SCOPE"), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
             r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
             r.mark = tail(r);
             r.msg.put_u32(NETDEV_A_QSTATS_SCOPE, 2);
             return r;
         }},
        {"qstats.ifindex_short", "qstats with a 2-byte NETDEV_A_QSTATS_IFINDEX", kHowQstats,
         error_at(EINVAL, kBadLength, "NETDEV_A_QSTATS_IFINDEX"),
         error_at(EINVAL, kBadLength, "NETDEV_A_QSTATS_IFINDEX"), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
             const auto idx = static_cast<std::uint16_t>(f.ifindex);
             r.mark = tail(r);
             r.msg.put_raw(NETDEV_A_QSTATS_IFINDEX, &idx, sizeof(idx));
             return r;
         }},
        {"qstats.unknown_attr", "qstats of the device plus attribute type 5", kHowQstats,
         error_at(EINVAL, kUnknownAttr, "type 5"), error_at(EINVAL, kUnknownAttr, "type 5"),
         kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
             r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
             r.mark = tail(r);
             r.msg.put_u32(NETDEV_A_QSTATS_SCOPE + 1, 1);
             return r;
         }},
        {"qstats.genl_reserved", "qstats with genlmsghdr.reserved 1", kHowQstats,
         error(EINVAL, "genlmsghdr.reserved field is not 0"),
         error(EINVAL, "genlmsghdr.reserved field is not 0"), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
             static_cast<genlmsghdr *>(mnl_nlmsg_get_payload(r.msg.hdr()))->reserved = 1;
             r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
             return r;
         }},
        {"qstats.no_stat_ops", "qstats of `lo` (its driver has no netdev_stat_ops)", kHowQstats,
         error_at(EOPNOTSUPP, {}, "NETDEV_A_QSTATS_IFINDEX"),
         error_at(EOPNOTSUPP, {}, "NETDEV_A_QSTATS_IFINDEX"), kAllState, Where::init,
         [](Env &e, const Fix &) {
             Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
             rtnl::LinkInfo lo;
             if (nl::Status st = rtnl::get_link(*e.lib, "lo", lo); !st.ok()) {
                 r.error = concat("get lo: ", st.str());
                 return r;
             }
             r.mark = tail(r);
             r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(lo.ifindex));
             return r;
         }},
        // A dummy with one TX queue has no netdev_stat_ops with the series either: the
        // core answers for its ifindex as for lo's.
        {"qstats.one_queue_dummy", "qstats of a dummy with one TX queue (`numtxqueues 1`)",
         kHowQstats, error_at(EOPNOTSUPP, {}, "NETDEV_A_QSTATS_IFINDEX"),
         error_at(EOPNOTSUPP, {}, "NETDEV_A_QSTATS_IFINDEX"), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
             r.mark = tail(r);
             r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
             return r;
         },
         nullptr, nullptr, 1},
        {"queue.missing_id", "QUEUE_GET of TX queues of the device without NETDEV_A_QUEUE_ID",
         kHowQueue, error_missing(EINVAL, "NETDEV_A_QUEUE_ID", NETDEV_A_QUEUE_ID),
         error_missing(EINVAL, "NETDEV_A_QUEUE_ID", NETDEV_A_QUEUE_ID), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = netdev_msg(e, NETDEV_CMD_QUEUE_GET, false);
             r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
             r.msg.put_u32(NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_TX);
             return r;
         }},
        {"queue.tx_id_out_of_range", "QUEUE_GET of TX queue 4 (4 TX queues)", kHowQueue,
         error(EINVAL), error(EINVAL), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = netdev_msg(e, NETDEV_CMD_QUEUE_GET, false);
             r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
             r.msg.put_u32(NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_TX);
             r.msg.put_u32(NETDEV_A_QUEUE_ID, kTxQueues);
             return r;
         }},
        {"queue.type_invalid", "QUEUE_GET of queue 0 of type 2 (rx 0, tx 1)", kHowQueue,
         error_at(ERANGE, kOutOfRange, "NETDEV_A_QUEUE_TYPE"),
         error_at(ERANGE, kOutOfRange, "NETDEV_A_QUEUE_TYPE"), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = netdev_msg(e, NETDEV_CMD_QUEUE_GET, false);
             r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
             r.mark = tail(r);
             r.msg.put_u32(NETDEV_A_QUEUE_TYPE, 2);
             r.msg.put_u32(NETDEV_A_QUEUE_ID, 0);
             return r;
         }},
        {"queue.create_flag", "QUEUE_GET with NLM_F_CREATE in nlmsg_flags", kHowQueue,
         error(EINVAL, "ambiguous or reserved bits set in nlmsg_flags"),
         error(EINVAL, "ambiguous or reserved bits set in nlmsg_flags"), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = netdev_msg(e, NETDEV_CMD_QUEUE_GET, false);
             r.msg.hdr()->nlmsg_flags |= NLM_F_CREATE;
             r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
             r.msg.put_u32(NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_TX);
             r.msg.put_u32(NETDEV_A_QUEUE_ID, 0);
             return r;
         }},
};

} // namespace bad_input

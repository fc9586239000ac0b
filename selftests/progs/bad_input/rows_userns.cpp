// Rows: in a user and network namespace of its own, as uid 65534 of the initial one: it
// may create dummies there and change them, up to the same limits as root; the netns of
// the case stays out of reach.
#include "bad_input.hpp"

namespace bad_input {

const std::vector<Row> kUsernsRows = {
        {"userns.newlink_own_netns", "`ip link add NAME numtxqueues 4 type dummy` in its own netns",
         kHowNewlink, accepted("CAP_NET_ADMIN over its own netns is enough to create a dummy"),
         accepted("as on the patched kernel"),
         "its netns has the new dummy with 4/1 queues, 4/1 active once up", Where::userns, nullptr,
         nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             RunResult res;
             if (!c.own) {
                 res.skip = c.userns_error;
                 return res;
             }
             Request r = newlink_queues(kTxQueues, std::nullopt);
             const std::string name = r.created;
             res = send_own(c, std::move(r), [&](const Snapshot &, const Snapshot &) {
                 rtnl::LinkInfo info;
                 if (nl::Status st = rtnl::get_link(*c.own_lib, name, info); !st.ok())
                     return concat("get ", name, ": ", st.str());
                 if (info.num_tx_queues != kTxQueues || info.num_rx_queues != kRxQueues)
                     return concat(name, " has ", info.num_tx_queues, "/", info.num_rx_queues,
                                   " queues");
                 c.own_dev = name;
                 c.own_ifindex = info.ifindex;
                 if (nl::Status st = rtnl::set_link_up(*c.own_lib, name); !st.ok())
                     return concat("set ", name, " up: ", st.str());
                 return own_queues_are(c, kTxQueues, kRxQueues);
             });
             return res;
         }},
        {"userns.newlink_txq_zero", "`ip link add NAME numtxqueues 0 type dummy` there",
         kHowNewlink, error(EINVAL, kTxQueuesMsg), error(EINVAL, kTxQueuesMsg), kOwnState,
         Where::userns, nullptr, nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             return send_own(c, newlink_queues(0, std::nullopt));
         }},
        {"userns.newlink_txq_4097", "`ip link add NAME numtxqueues 4097 type dummy` there",
         kHowNewlink, error(EINVAL, kTxQueuesMsg), error(EINVAL, kTxQueuesMsg), kOwnState,
         Where::userns, nullptr, nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             return send_own(c, newlink_queues(4097, std::nullopt));
         }},
        {"userns.newlink_rxq_zero", "`ip link add NAME numrxqueues 0 type dummy` there",
         kHowNewlink, error(EINVAL, kRxQueuesMsg), error(EINVAL, kRxQueuesMsg), kOwnState,
         Where::userns, nullptr, nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             return send_own(c, newlink_queues(std::nullopt, 0));
         }},
        {"userns.channels_tx_zero", "`ethtool -L OWN tx 0` on its own dummy", kHowChannels,
         error(EINVAL, kNoChannel), kNoChannelsOps, kOwnState, Where::userns, nullptr, nullptr,
         nullptr, kTxQueues,
         [](ChildCtx &c) {
             return own_channels(c, {{ETHTOOL_A_CHANNELS_TX_COUNT, 0}});
         }},
        {"userns.channels_tx_above_max", "`ethtool -L OWN tx 5` on its own dummy", kHowChannels,
         error(EINVAL, kExceedsMax), kNoChannelsOps, kOwnState, Where::userns, nullptr, nullptr,
         nullptr, kTxQueues,
         [](ChildCtx &c) {
             return own_channels(c, {{ETHTOOL_A_CHANNELS_TX_COUNT, 5}});
         }},
        {"userns.channels_tx_two", "`ethtool -L OWN tx 2` on its own dummy", kHowChannels,
         accepted("allowed: its own device, within the maximum"), kNoChannelsOps,
         "patched: 2 active TX queues; base: unchanged", Where::userns, nullptr, nullptr, nullptr,
         kTxQueues,
         [](ChildCtx &c) {
             if (std::string err = own_device_ready(c); !err.empty())
                 return RunResult{.skip = err};
             return send_own(c, channels_set(*c.own, c.own_dev, {{ETHTOOL_A_CHANNELS_TX_COUNT, 2}}),
                             [&](const Snapshot &, const Snapshot &) {
                                 return own_queues_are(c, 2, kRxQueues);
                             });
         }},
        {"userns.channels_init_netns",
         "`ethtool -L DEV tx 2` on the device of the case's netns, through a socket opened there",
         kHowChannels, kEperm, kEperm, kInitState, Where::userns, nullptr, nullptr, nullptr,
         kTxQueues,
         [](ChildCtx &c) {
             if (!c.own)
                 return RunResult{.skip = c.userns_error};
             return send_init(
                     c, channels_set(c.init, c.init_dev.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, 2}}));
         }},
        {"userns.newlink_into_init_netns",
         "new dummy from its own netns with IFLA_NET_NS_PID 1 (the init netns)", kHowNewlink,
         kEperm, kEperm, "netns of the case and its own: links unchanged", Where::userns, nullptr,
         nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             if (!c.own)
                 return RunResult{.skip = c.userns_error};
             return send_own(c, newlink(testdev::unique_name("bn"),
                                        [](Request &r) { r.msg.put_u32(IFLA_NET_NS_PID, 1); }));
         }},
        {"userns.newlink_txq_4096",
         "`ip link add NAME numtxqueues 4096 type dummy` in its own netns", kHowNewlink,
         accepted("4096 is the most rtnetlink allows, for any user with CAP_NET_ADMIN over "
                  "the netns"),
         accepted("as on the patched kernel"), "its netns has the new dummy with 4096 TX queues",
         Where::userns, nullptr, nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             if (!c.own)
                 return RunResult{.skip = c.userns_error};
             Request r = newlink_queues(4096, std::nullopt);
             const std::string name = r.created;
             return send_own(c, std::move(r), [&](const Snapshot &, const Snapshot &) {
                 rtnl::LinkInfo info;
                 if (nl::Status st = rtnl::get_link(*c.own_lib, name, info); !st.ok())
                     return concat("get ", name, ": ", st.str());
                 if (info.num_tx_queues != 4096)
                     return concat(name, " has ", info.num_tx_queues, " TX queues");
                 c.big_dev = name;
                 c.big_ifindex = info.ifindex;
                 return std::string();
             });
         }},
        {"userns.qstats_4096_queues", "qstats of its dummy with 4096 TX queues", kHowQstats,
         accepted("a dummy with more than one TX queue has per-queue TX statistics, "
                  "whatever its queue count: per-CPU counters for each TX queue"),
         error(EOPNOTSUPP),
         "links of its netns, active queues of its dummy unchanged; patched: the one "
         "device entry is dumped",
         Where::userns, nullptr, nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             if (!c.own)
                 return RunResult{.skip = c.userns_error};
             if (c.big_ifindex == 0)
                 return RunResult{.skip = "no 4096-queue dummy (see userns.newlink_txq_4096)"};
             Request r = netdev_msg(*c.own, NETDEV_CMD_QSTATS_GET, true);
             r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(c.big_ifindex));
             RunResult res = send_own(c, std::move(r));
             // Device scope: one entry, the device's totals.
             if (res.ack.answered && res.ack.err == 0 && res.state.empty() && res.ack.replies != 1)
                 res.state = concat(res.ack.replies, " entries dumped, expected the one of ",
                                    c.big_dev);
             return res;
         }},
};

} // namespace bad_input

// Rows: unprivileged, in the user namespace of the case's netns: nothing may change.
#include <sched.h>

#include "bad_input.hpp"

namespace bad_input {

const std::vector<Row> kUnprivRows = {
        {"unpriv.channels_set", "`ethtool -L DEV tx 2` on the root-owned test device", kHowChannels,
         kEperm, kEperm, kInitState, Where::unpriv, nullptr, nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             return send_init(
                     c, channels_set(c.init, c.init_dev.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, 2}}));
         }},
        {"unpriv.newlink", "`ip link add NAME numtxqueues 4 type dummy`", kHowNewlink, kEperm,
         kEperm, kInitState, Where::unpriv, nullptr, nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             return send_init(c, newlink_queues(4, std::nullopt));
         }},
        {"unpriv.qdisc_replace", "`tc qdisc replace dev DEV root handle 1: fq_codel limit 0`",
         kHowQdisc, kEperm, kEperm, kInitState, Where::unpriv, nullptr, nullptr, nullptr, kTxQueues,
         [](ChildCtx &c) {
             return send_init(c, qdisc_msg(c.init_dev, kCreateReplace, "fq_codel",
                                           {u32_bytes(TCA_FQ_CODEL_LIMIT, 0)}));
         }},
        {"unpriv.filter_delete", "`tc filter del dev DEV ingress prio 1`",
         "rtnetlink RTM_DELTFILTER", kEperm, kEperm, kInitState, Where::unpriv, nullptr, nullptr,
         nullptr, kTxQueues,
         [](ChildCtx &c) {
             Request r = filter_msg(c.init_dev, 0, rtnl::kIngressParent, 1, 0, std::nullopt);
             r.msg.hdr()->nlmsg_type = RTM_DELTFILTER;
             return send_init(c, std::move(r));
         }},
        {"unpriv.unshare_netns", "unshare(CLONE_NEWNET) without a user namespace", "syscall",
         kEperm, kEperm, kInitState, Where::unpriv, nullptr, nullptr, nullptr, kTxQueues,
         [](ChildCtx &) {
             RunResult res;
             res.ack.answered = true;
             res.ack.err = unshare(CLONE_NEWNET) == 0 ? 0 : errno;
             return res;
         }},
};

} // namespace bad_input

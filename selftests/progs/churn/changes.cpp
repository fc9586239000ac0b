#include <cerrno>
#include <thread>

#include <linux/pkt_sched.h>

#include "fixture.hpp"

namespace churn {

std::uint32_t root_handle(const churn::State &s)
{
    return rtnl::make_handle(s.root_major, 0);
}

namespace {

// Replaces the root qdisc; the old root's last counters go to ledger. An mq root is read
// just before (its RTM_DELQDISC sums the queues of its successor, see the top of the file).
// When the replace succeeded but the old root's counters could not be had, note says so.
Status replace_root(Fixture &f, const churn::Action &a, RootLedger &ledger, bool live,
                    std::string &note)
{
    std::optional<rtnl::QdiscInfo> old;
    if (f.state.root == churn::RootKind::mq) {
        if (Status st = rtnl::root_qdisc(f.rtnl_socket(), f.ifindex, old); !st.ok())
            return st;
    }
    rtnl::QdiscSpec spec;
    spec.ifindex = f.ifindex;
    spec.parent = TC_H_ROOT;
    spec.handle = rtnl::make_handle(a.root_major, 0);
    spec.kind = std::string(churn::root_name(a.root));
    if (a.limit)
        spec.options = a.root == churn::RootKind::codel ? rtnl::codel_options(*a.limit)
                                                        : rtnl::fq_codel_options(*a.limit);
    std::vector<rtnl::QdiscInfo> echoed;
    Status st = rtnl::qdisc_replace_echo(f.rtnl_socket(), spec, echoed);
    if (!st.ok())
        return st;
    std::optional<rtnl::QdiscInfo> deleted;
    for (const rtnl::QdiscInfo &q : echoed) {
        if (q.ifindex == f.ifindex && q.parent == TC_H_ROOT && q.has_stats &&
            q.handle == root_handle(f.state))
            deleted = q;
    }
    if (old)
        ledger.retire(*old, live); // the mq pre-read: exact only with the senders paused
    else if (deleted)
        ledger.retire(*deleted, false); // the echo: the old root's final counters
    else
        note = "no RTM_DELQDISC echo with the old root's counters";
    return st;
}

// TCA_CODEL_LIMIT / TCA_FQ_CODEL_LIMIT of the codel or fq_codel root.
Status change_root_limit(Fixture &f, std::uint32_t limit)
{
    rtnl::QdiscSpec spec;
    spec.ifindex = f.ifindex;
    spec.parent = TC_H_ROOT;
    spec.handle = root_handle(f.state);
    spec.kind = std::string(churn::root_name(f.state.root));
    spec.options = f.state.root == churn::RootKind::codel ? rtnl::codel_options(limit)
                                                          : rtnl::fq_codel_options(limit);
    return rtnl::qdisc_change(f.rtnl_socket(), spec);
}

} // namespace

Status perform(Fixture &f, const churn::Action &a, RootLedger &ledger, bool live, std::string &note,
               std::string &problem)
{
    using churn::ActionType;
    using churn::FilterKind;
    using churn::FilterPlace;
    const std::uint32_t parent =
            a.place == FilterPlace::root ? root_handle(f.state) : rtnl::kEgressParent;
    switch (a.type) {
    case ActionType::set_channels: {
        netutil::ethtool::ChannelsRequest req;
        req.tx = a.channels;
        return f.ethtool->channels_set(f.name, req);
    }
    case ActionType::replace_root:
        return replace_root(f, a, ledger, live, problem);
    case ActionType::change_limit:
        return change_root_limit(f, a.limit.value_or(0));
    case ActionType::add_filter:
        if (a.filter == FilterKind::u32) {
            std::optional<std::uint32_t> classid;
            if (a.place == FilterPlace::root) // fq_codel flow 2
                classid = rtnl::make_handle(f.state.root_major, 2);
            return rtnl::filter_add(f.rtnl_socket(), rtnl::U32MatchAllSpec{.ifindex = f.ifindex,
                                                                           .parent = parent,
                                                                           .prio = kU32Prio,
                                                                           .classid = classid});
        } else {
            rtnl::MatchallSpec spec;
            spec.ifindex = f.ifindex;
            spec.parent = parent;
            spec.prio = kMatchallPrio;
            if (a.place == FilterPlace::root) { // fq_codel flow 1
                spec.classid = rtnl::make_handle(f.state.root_major, 1);
            } else {
                spec.skbedit_queue_mapping = a.queue_mapping;
            }
            Status st = rtnl::filter_add(f.rtnl_socket(), spec);
            if (st.err == ENOENT && spec.skbedit_queue_mapping) {
                note = concat(" (no skbedit: ", st.str(), "; without it)");
                spec.skbedit_queue_mapping.reset();
                st = rtnl::filter_add(f.rtnl_socket(), spec);
            }
            return st;
        }
    case ActionType::delete_filter:
        return rtnl::filter_delete_prio(f.rtnl_socket(), f.ifindex, parent,
                                        a.filter == FilterKind::u32 ? kU32Prio : kMatchallPrio,
                                        churn::filter_name(a.filter));
    case ActionType::set_carrier:
        return rtnl::set_carrier(f.rtnl_socket(), f.ifindex, a.on);
    case ActionType::set_up:
        return rtnl::set_link_up(f.rtnl_socket(), f.name, a.on);
    }
    return Status::from_errno(EINVAL);
}

std::string transmit_enough(Fixture &f)
{
    std::string notes;
    if (!f.state.up) {
        if (Status st = rtnl::set_link_up(f.rtnl_socket(), f.name, true); !st.ok())
            return concat("up for the tail: ", st.str());
        f.state.up = true;
        notes += "up for the tail; ";
    }
    if (!f.state.carrier) {
        if (Status st = rtnl::set_carrier(f.rtnl_socket(), f.ifindex, true); !st.ok())
            return concat("carrier on for the tail: ", st.str());
        f.state.carrier = true;
        notes += "carrier on for the tail; ";
    }
    // A root with a limit of 0 drops every packet: raising it loses none.
    if (f.state.limit0 && churn::has_limit(f.state.root)) {
        if (Status st = change_root_limit(f, churn::kRaisedLimit); !st.ok())
            return concat("limit ", churn::kRaisedLimit, " for the tail: ", st.str());
        f.state.limit0 = false;
        notes += concat("limit ", churn::kRaisedLimit, " for the tail; ");
    }
    if (std::string n = settle_link(f); !n.empty())
        notes += concat("settle: ", n, "; ");
    const std::uint64_t start = f.last.link.stats ? f.last.link.stats->tx_packets : 0;
    const auto t0 = Clock::now();
    while (Clock::now() - t0 < kHoldTimeout) {
        rtnl::LinkInfo ls;
        if (Status st = rtnl::get_link_stats(f.rtnl_socket(), f.ifindex, ls); !st.ok() || !ls.stats)
            return concat(notes, "RTM_GETLINK: ", st.str());
        if (ls.stats->tx_packets - start >= churn::kMinExactTransmitted)
            break;
        std::this_thread::sleep_for(milliseconds(10));
    }
    return notes;
}

} // namespace churn

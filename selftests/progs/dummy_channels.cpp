// kselftest: ethtool channels of dummy devices.
//
// Needs root. Every case creates its own dummy device under a unique name and removes it
// on every path: with numtxqueues 4 numrxqueues 2, the multi-queue device the series
// gives channels to, except get_channels_default (the default one TX and one RX queue).
// A dummy without get_channels/set_channels answers the ethtool requests with
// EOPNOTSUPP: that is reported as a failure, not a skip, as the driver is the subject of
// the test.

#include <cerrno>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ethtool.hpp"
#include "ktap.hpp"
#include "nl.hpp"
#include "rtnl.hpp"
#include "testdev.hpp"

namespace {

using ksft::Outcome;
using ksft::testdev::TestDummy;
using netutil::cat;
using netutil::nl::Status;
namespace ethtool = netutil::ethtool;
namespace rtnl = netutil::rtnl;

constexpr std::uint32_t kTxQueues = 4;
constexpr std::uint32_t kRxQueues = 2;
constexpr std::uint32_t kMqHandle = rtnl::make_handle(1, 0);

ethtool::Ethtool &eth()
{
    static ethtool::Ethtool e;
    return e;
}

// A dummy device ("dc" + pid + "_" + n) that must have kTxQueues/kRxQueues queues.
ksft::testdev::DummySpec dummy()
{
    return {.prefix = "dc", .tx_queues = kTxQueues, .rx_queues = kRxQueues, .verify_queues = true};
}

// SKIP when the kernel has no ethtool netlink family at all.
std::optional<Outcome> need_ethtool()
{
    std::uint16_t id = 0;
    if (Status st = eth().family(id); !st.ok())
        return Outcome::skip(cat("ethtool netlink family not available (", st.str(), ")"));
    return std::nullopt;
}

std::string fmt(const ethtool::Channels &ch)
{
    return cat("tx ", ch.tx_count, "/", ch.tx_max, " rx ", ch.rx_count, "/", ch.rx_max,
               " combined ", ch.combined_count, "/", ch.combined_max, " other ", ch.other_count,
               "/", ch.other_max, " (count/max)");
}

std::string fmt(const ethtool::ChannelsRequest &req)
{
    std::string s;
    auto add = [&](const char *name, const std::optional<std::uint32_t> &v) {
        if (v)
            s += cat(s.empty() ? "" : " ", name, " ", *v);
    };
    add("tx", req.tx);
    add("rx", req.rx);
    add("combined", req.combined);
    add("other", req.other);
    return s;
}

bool counts_equal(const ethtool::Channels &a, const ethtool::Channels &b)
{
    return a.tx_count == b.tx_count && a.rx_count == b.rx_count &&
           a.combined_count == b.combined_count && a.other_count == b.other_count;
}

// The channels a freshly created device must report.
std::string check_initial(const ethtool::Channels &ch)
{
    if (ch.tx_max != kTxQueues || ch.rx_max != kRxQueues || ch.tx_count != kTxQueues ||
        ch.rx_count != kRxQueues || ch.combined_max != 0 || ch.combined_count != 0 ||
        ch.other_max != 0 || ch.other_count != 0)
        return cat("got ", fmt(ch), ", expected tx ", kTxQueues, "/", kTxQueues, " rx ", kRxQueues,
                   "/", kRxQueues, " combined 0/0 other 0/0");
    return {};
}

// ---- cases ----

Outcome get_channels()
{
    if (auto skip = need_ethtool())
        return *skip;
    const TestDummy dev(dummy());
    if (!dev.ok())
        return dev.error();
    ethtool::Channels ch;
    if (Status st = eth().channels_get(dev.name(), ch); !st.ok())
        return Outcome::fail(cat("ETHTOOL_MSG_CHANNELS_GET ", dev.name(), ": ", st.str()));
    if (std::string err = check_initial(ch); !err.empty())
        return Outcome::fail(err);
    return Outcome::pass(fmt(ch));
}

// The sysfs queues/<prefix>-* entries: the kernel keeps queues/tx-N and rx-N only for N
// below real_num_{tx,rx}_queues (netdev_queue_update_kobjects(),
// net_rx_queue_update_kobjects()). Empty if there are want of them, else why not.
std::string check_sysfs(const std::string &dev, const char *prefix, std::uint32_t want)
{
    const auto now = rtnl::sysfs_queue_count(dev, prefix);
    if (now == want)
        return {};
    return cat("sysfs queues/", prefix, "-* count ", now ? cat(*now) : std::string("unreadable"),
               ", expected ", want);
}

// Sets tx/rx and checks what CHANNELS_GET, the allocated counts and sysfs say after it.
std::string set_and_check(const std::string &dev, std::uint32_t tx, std::uint32_t rx,
                          std::string &notes)
{
    ethtool::ChannelsRequest req;
    req.tx = tx;
    req.rx = rx;
    if (Status st = eth().channels_set(dev, req); !st.ok())
        return cat("ETHTOOL_MSG_CHANNELS_SET ", fmt(req), ": ", st.str());

    ethtool::Channels ch;
    if (Status st = eth().channels_get(dev, ch); !st.ok())
        return cat("ETHTOOL_MSG_CHANNELS_GET after set: ", st.str());
    if (ch.tx_count != tx || ch.rx_count != rx || ch.tx_max != kTxQueues || ch.rx_max != kRxQueues)
        return cat("after set ", fmt(req), ": ", fmt(ch), ", expected tx ", tx, "/", kTxQueues,
                   " rx ", rx, "/", kRxQueues);

    rtnl::LinkInfo info;
    if (Status st = rtnl::get_link(rtnl::shared_socket(), dev, info); !st.ok())
        return cat("get ", dev, ": ", st.str());
    if (info.num_tx_queues != kTxQueues || info.num_rx_queues != kRxQueues)
        return cat("after set ", fmt(req), ": allocated queues changed to ", info.num_tx_queues,
                   "/", info.num_rx_queues);
    for (const auto &[prefix, want] : {std::pair{"tx", tx}, std::pair{"rx", rx}}) {
        if (std::string err = check_sysfs(dev, prefix, want); !err.empty())
            return cat("after set ", fmt(req), ": ", err);
    }
    notes += cat(notes.empty() ? "" : "\n", "set ", fmt(req), ": ", fmt(ch),
                 "; sysfs tx-*/rx-* entries ", tx, "/", rx);
    return {};
}

// A dummy created without queue counts: one TX and one RX queue, both maxima 1.
Outcome get_channels_default()
{
    if (auto skip = need_ethtool())
        return *skip;
    const TestDummy dev({.prefix = "dc"});
    if (!dev.ok())
        return dev.error();
    ethtool::Channels ch;
    if (Status st = eth().channels_get(dev.name(), ch); !st.ok())
        return Outcome::fail(cat("ETHTOOL_MSG_CHANNELS_GET ", dev.name(), ": ", st.str()));
    if (ch.tx_max != 1 || ch.rx_max != 1 || ch.tx_count != 1 || ch.rx_count != 1 ||
        ch.combined_max != 0 || ch.combined_count != 0 || ch.other_max != 0 || ch.other_count != 0)
        return Outcome::fail(
                cat("got ", fmt(ch), ", expected tx 1/1 rx 1/1 combined 0/0 other 0/0"));
    return Outcome::pass(fmt(ch));
}

Outcome set_within_bounds()
{
    if (auto skip = need_ethtool())
        return *skip;
    const TestDummy dev(dummy());
    if (!dev.ok())
        return dev.error();
    // Before any change every allocated queue is active and has its sysfs directory.
    for (const auto &[prefix, want] : {std::pair{"tx", kTxQueues}, std::pair{"rx", kRxQueues}}) {
        if (std::string err = check_sysfs(dev.name(), prefix, want); !err.empty())
            return Outcome::fail(cat("before the change: ", err));
    }
    std::string notes;
    // Down to the least, then back up to the maxima: both directions move the sysfs
    // entries.
    if (std::string err = set_and_check(dev.name(), 2, 1, notes); !err.empty())
        return Outcome::fail(err);
    if (std::string err = set_and_check(dev.name(), 1, 1, notes); !err.empty())
        return Outcome::fail(err);
    if (std::string err = set_and_check(dev.name(), kTxQueues, kRxQueues, notes); !err.empty())
        return Outcome::fail(err);
    return Outcome::pass(notes);
}

// A request the core must refuse with EINVAL and an extack message, leaving the counts.
Outcome expect_rejected(const ethtool::ChannelsRequest &req)
{
    if (auto skip = need_ethtool())
        return *skip;
    const TestDummy dev(dummy());
    if (!dev.ok())
        return dev.error();
    ethtool::Channels before;
    const Status get_st = eth().channels_get(dev.name(), before);

    const Status st = eth().channels_set(dev.name(), req);
    const std::string what = cat("ETHTOOL_MSG_CHANNELS_SET ", fmt(req));
    if (st.ok())
        return Outcome::fail(cat(what, " was accepted"));
    if (st.err != EINVAL)
        return Outcome::fail(cat(what, ": expected EINVAL, got ", st.str()));
    if (st.extack.empty())
        return Outcome::fail(cat(what, ": EINVAL without an extack message"));

    if (!get_st.ok())
        return Outcome::fail(cat("ETHTOOL_MSG_CHANNELS_GET before the request: ", get_st.str()));
    if (std::string err = check_initial(before); !err.empty())
        return Outcome::fail(cat("before the request: ", err));
    ethtool::Channels after;
    if (Status g = eth().channels_get(dev.name(), after); !g.ok())
        return Outcome::fail(cat("ETHTOOL_MSG_CHANNELS_GET after the request: ", g.str()));
    if (!counts_equal(before, after))
        return Outcome::fail(
                cat("counts changed by a rejected request: ", fmt(before), " -> ", fmt(after)));
    // The active queues keep their sysfs directories (and only they have one).
    for (const auto &[prefix, want] : {std::pair{"tx", kTxQueues}, std::pair{"rx", kRxQueues}}) {
        if (std::string err = check_sysfs(dev.name(), prefix, want); !err.empty())
            return Outcome::fail(cat("after a rejected request: ", err));
    }
    return Outcome::pass(cat(what, ": ", st.str()));
}

Outcome reject_zero_tx()
{
    ethtool::ChannelsRequest req;
    req.tx = 0;
    return expect_rejected(req);
}

Outcome reject_above_max_tx()
{
    ethtool::ChannelsRequest req;
    req.tx = kTxQueues + 1;
    return expect_rejected(req);
}

Outcome reject_above_max_rx()
{
    ethtool::ChannelsRequest req;
    req.rx = kRxQueues + 1;
    return expect_rejected(req);
}

Outcome reject_combined()
{
    ethtool::ChannelsRequest req;
    req.combined = 1; // max_combined is 0
    return expect_rejected(req);
}

// Parents (minor numbers) of the qdiscs attached below the mq root, as a dump shows them.
Status mq_children(int ifindex, std::set<std::uint32_t> &minors)
{
    std::vector<rtnl::QdiscInfo> qdiscs;
    if (Status st = rtnl::qdisc_dump(rtnl::shared_socket(), ifindex, qdiscs); !st.ok())
        return st;
    minors.clear();
    for (const rtnl::QdiscInfo &q : qdiscs) {
        if (q.parent != rtnl::kRootParent && rtnl::handle_major(q.parent) == 1 &&
            rtnl::handle_minor(q.parent) != 0)
            minors.insert(rtnl::handle_minor(q.parent));
    }
    return {};
}

std::string fmt(const std::set<std::uint32_t> &minors)
{
    std::string s;
    for (const std::uint32_t m : minors)
        s += cat(s.empty() ? "" : " ", "1:", m);
    return s.empty() ? "none" : s;
}

Outcome mq_follows()
{
    if (auto skip = need_ethtool())
        return *skip;
    const TestDummy dev(dummy());
    if (!dev.ok())
        return dev.error();
    if (Status u = rtnl::set_link_up(rtnl::shared_socket(), dev.name()); !u.ok())
        return Outcome::fail(cat("set ", dev.name(), " up: ", u.str()));
    rtnl::QdiscSpec mq;
    mq.ifindex = dev.ifindex();
    mq.handle = kMqHandle;
    mq.kind = "mq";
    if (Status st = rtnl::qdisc_replace(rtnl::shared_socket(), mq); !st.ok())
        return Outcome::fail(cat("replace root mq handle 1: on ", dev.name(), ": ", st.str()));

    std::string notes;
    // tx count to set (0: none, the initial state) and children expected after it.
    for (const std::uint32_t tx : {0U, 2U, kTxQueues}) {
        const std::uint32_t want = tx == 0 ? kTxQueues : tx;
        if (tx != 0) {
            ethtool::ChannelsRequest req;
            req.tx = tx;
            if (Status st = eth().channels_set(dev.name(), req); !st.ok())
                return Outcome::fail(cat("ETHTOOL_MSG_CHANNELS_SET tx ", tx, ": ", st.str()));
        }
        std::set<std::uint32_t> minors;
        if (Status st = mq_children(dev.ifindex(), minors); !st.ok())
            return Outcome::fail(cat("qdisc dump: ", st.str()));
        std::set<std::uint32_t> expected;
        for (std::uint32_t i = 1; i <= want; ++i)
            expected.insert(i);
        const std::string state = tx == 0 ? std::string("initially") : cat("after tx ", tx);
        if (minors != expected)
            return Outcome::fail(
                    cat(state, ": children of 1: are ", fmt(minors), ", expected ", fmt(expected)));
        notes += cat(notes.empty() ? "" : "\n", state, ": children at ", fmt(minors));
    }
    return Outcome::pass(notes);
}

} // namespace

int main()
{
    ksft::TestSuite suite;
    suite.add("get_channels", get_channels);
    suite.add("get_channels_default", get_channels_default);
    suite.add("set_within_bounds", set_within_bounds);
    suite.add("reject_zero_tx", reject_zero_tx);
    suite.add("reject_above_max_tx", reject_above_max_tx);
    suite.add("reject_above_max_rx", reject_above_max_rx);
    suite.add("reject_combined", reject_combined);
    suite.add("mq_follows", mq_follows);
    suite.require_root();
    return suite.run();
}

// Traffic control requests and replies: handles, qdiscs, options, matchall filters.
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/gen_stats.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_gact.h>
#include <linux/tc_act/tc_skbedit.h>

#include "link.hpp"
#include "nl.hpp"
#include "tc.hpp"
#include "uapi_compat.hpp"

namespace {

using netutil::nl::Message;

TEST(Rtnl, TcHandles)
{
    using namespace netutil::rtnl;
    EXPECT_EQ(make_handle(1, 0), 0x10000U);
    EXPECT_EQ(make_handle(0xffff, 0xfff2), 0xfffffff2U);
    EXPECT_EQ(kIngressParent, static_cast<std::uint32_t>(TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)));
    EXPECT_EQ(handle_major(0x00100002), 0x10U);
    EXPECT_EQ(handle_minor(0x00100002), 0x2U);
    EXPECT_EQ(format_handle(TC_H_ROOT), "root");
    EXPECT_EQ(format_handle(0), "none");
    EXPECT_EQ(format_handle(make_handle(1, 0)), "1:");
    EXPECT_EQ(format_handle(make_handle(0x10, 0x2)), "10:2");
    EXPECT_EQ(parse_handle("root"), TC_H_ROOT);
    EXPECT_EQ(parse_handle("clsact"), TC_H_CLSACT);
    EXPECT_EQ(parse_handle("1:"), 0x10000U);
    EXPECT_EQ(parse_handle("ffff:fff3"), kEgressParent);
    EXPECT_EQ(parse_handle("a"), 0xa0000U);
    EXPECT_FALSE(parse_handle("12345:"));
    EXPECT_FALSE(parse_handle("1:xyz"));
    EXPECT_FALSE(parse_handle(""));
}

TEST(Rtnl, QdiscRequestAndReply)
{
    Message msg;
    netutil::rtnl::QdiscSpec spec;
    spec.ifindex = 3;
    spec.handle = netutil::rtnl::make_handle(1, 0);
    spec.kind = "pfifo";
    spec.options = {0x10, 0x00, 0x00, 0x00};
    const nlmsghdr *req =
            netutil::rtnl::build_qdisc(msg, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, spec);
    const auto *tcm = static_cast<const tcmsg *>(mnl_nlmsg_get_payload(req));
    EXPECT_EQ(tcm->tcm_ifindex, 3);
    EXPECT_EQ(tcm->tcm_parent, TC_H_ROOT);
    EXPECT_EQ(tcm->tcm_handle, 0x10000U);
    auto tb = netutil::nl::parse_attrs(req, sizeof(tcmsg), TCA_MAX);
    EXPECT_EQ(netutil::nl::attr_str(tb, TCA_KIND), "pfifo");
    ASSERT_NE(tb[TCA_OPTIONS], nullptr);
    EXPECT_EQ(mnl_attr_get_payload_len(tb[TCA_OPTIONS]), 4U);
    EXPECT_EQ(netutil::nl::attr_u32(tb, TCA_OPTIONS), 16U);

    Message rep;
    nlmsghdr *nlh = rep.start(RTM_NEWQDISC, 0);
    auto *t = rep.put_extra<tcmsg>();
    t->tcm_ifindex = 3;
    t->tcm_handle = 0x10000;
    t->tcm_parent = TC_H_ROOT;
    rep.put_strz(TCA_KIND, "fq_codel");
    nlattr *st2 = rep.nest_start(TCA_STATS2);
    gnet_stats_basic basic{};
    basic.bytes = 1000;
    basic.packets = 10;
    rep.put_raw(TCA_STATS_BASIC, &basic, sizeof(basic));
    gnet_stats_queue q{};
    q.qlen = 3;
    q.backlog = 300;
    q.drops = 2;
    q.requeues = 1;
    q.overlimits = 5;
    rep.put_raw(TCA_STATS_QUEUE, &q, sizeof(q));
    rep.nest_end(st2);

    netutil::rtnl::QdiscInfo info;
    ASSERT_TRUE(netutil::rtnl::parse_qdisc(nlh, info).ok());
    EXPECT_EQ(info.kind, "fq_codel");
    EXPECT_TRUE(info.has_stats);
    EXPECT_EQ(info.bytes, 1000U);
    EXPECT_EQ(info.packets, 10U);
    EXPECT_EQ(info.qlen, 3U);
    EXPECT_EQ(info.backlog, 300U);
    EXPECT_EQ(info.drops, 2U);
    EXPECT_EQ(info.requeues, 1U);
    EXPECT_EQ(info.overlimits, 5U);

    // TCA_STATS_PKT64 wins over the 32-bit counter.
    st2 = rep.nest_start(TCA_STATS2);
    rep.put_u64(TCA_STATS_PKT64, 5000000000ULL);
    rep.nest_end(st2);
    ASSERT_TRUE(netutil::rtnl::parse_qdisc(nlh, info).ok());
    EXPECT_EQ(info.packets, 5000000000ULL);
}

TEST(Rtnl, MatchallWithGact)
{
    Message msg;
    netutil::rtnl::MatchallSpec spec;
    spec.ifindex = 9;
    spec.parent = netutil::rtnl::kEgressParent;
    spec.prio = 2;
    spec.flags = TCA_CLS_FLAGS_SKIP_HW;
    spec.gact_ok = true;
    const nlmsghdr *nlh =
            netutil::rtnl::build_matchall(msg, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, spec);
    const auto *tcm = static_cast<const tcmsg *>(mnl_nlmsg_get_payload(nlh));
    EXPECT_EQ(tcm->tcm_ifindex, 9);
    EXPECT_EQ(tcm->tcm_parent, netutil::rtnl::kEgressParent);
    EXPECT_EQ(tcm->tcm_handle, 1U);
    EXPECT_EQ(TC_H_MAJ(tcm->tcm_info) >> 16, 2U);
    EXPECT_EQ(TC_H_MIN(tcm->tcm_info), htons(ETH_P_ALL));

    using netutil::nl::parse_nested;
    auto tb = netutil::nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    EXPECT_EQ(netutil::nl::attr_str(tb, TCA_KIND), "matchall");
    ASSERT_NE(tb[TCA_OPTIONS], nullptr);
    auto opts = parse_nested(tb[TCA_OPTIONS], TCA_MATCHALL_MAX);
    EXPECT_EQ(netutil::nl::attr_u32(opts, TCA_MATCHALL_FLAGS), TCA_CLS_FLAGS_SKIP_HW);
    ASSERT_NE(opts[TCA_MATCHALL_ACT], nullptr);
    auto acts = parse_nested(opts[TCA_MATCHALL_ACT], 1);
    ASSERT_NE(acts[1], nullptr);
    auto act = parse_nested(acts[1], TCA_ACT_MAX);
    EXPECT_EQ(netutil::nl::attr_str(act, TCA_ACT_KIND), "gact");
    ASSERT_NE(act[TCA_ACT_OPTIONS], nullptr);
    auto gopts = parse_nested(act[TCA_ACT_OPTIONS], TCA_GACT_MAX);
    auto parms = netutil::nl::attr_struct<tc_gact>(gopts, TCA_GACT_PARMS);
    ASSERT_TRUE(parms.has_value());
    EXPECT_EQ(parms->action, TC_ACT_OK);

    // Delete carries kind but no options.
    const nlmsghdr *del = netutil::rtnl::build_matchall(msg, RTM_DELTFILTER, 0, spec);
    auto dtb = netutil::nl::parse_attrs(del, sizeof(tcmsg), TCA_MAX);
    EXPECT_EQ(netutil::nl::attr_str(dtb, TCA_KIND), "matchall");
    EXPECT_EQ(dtb[TCA_OPTIONS], nullptr);
}

TEST(Rtnl, FifoOptions)
{
    const auto opts = netutil::rtnl::fifo_options(1000);
    ASSERT_EQ(opts.size(), sizeof(tc_fifo_qopt));
    tc_fifo_qopt q{};
    std::memcpy(&q, opts.data(), sizeof(q));
    EXPECT_EQ(q.limit, 1000U);

    // Carried as the raw TCA_OPTIONS payload, as tc sends it.
    Message msg;
    netutil::rtnl::QdiscSpec spec;
    spec.ifindex = 4;
    spec.kind = "pfifo";
    spec.options = opts;
    const nlmsghdr *nlh =
            netutil::rtnl::build_qdisc(msg, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, spec);
    auto tb = netutil::nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    auto parsed = netutil::nl::attr_struct<tc_fifo_qopt>(tb, TCA_OPTIONS);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->limit, 1000U);
}

TEST(Rtnl, CodelAndFqCodelLimitOptions)
{
    struct Case {
        const char *kind;
        std::vector<std::uint8_t> opts;
        std::uint32_t limit;
        std::uint16_t limit_attr;
        std::uint16_t max_attr;
    };
    const Case cases[] = {
            {"codel", netutil::rtnl::codel_options(0), 0, TCA_CODEL_LIMIT, TCA_CODEL_MAX},
            {"fq_codel", netutil::rtnl::fq_codel_options(1000), 1000, TCA_FQ_CODEL_LIMIT,
             TCA_FQ_CODEL_MAX},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.kind);
        // One aligned u32 attribute: 4 bytes header + 4 bytes value.
        ASSERT_EQ(c.opts.size(), 8U);

        Message msg;
        netutil::rtnl::QdiscSpec spec;
        spec.ifindex = 2;
        spec.handle = netutil::rtnl::make_handle(1, 0);
        spec.kind = c.kind;
        spec.options = c.opts;
        const nlmsghdr *nlh = netutil::rtnl::build_qdisc(msg, RTM_NEWQDISC, 0, spec);
        EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST); // "tc qdisc change"
        auto tb = netutil::nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
        EXPECT_EQ(netutil::nl::attr_str(tb, TCA_KIND), c.kind);
        ASSERT_NE(tb[TCA_OPTIONS], nullptr);
        auto opts = netutil::nl::parse_nested(tb[TCA_OPTIONS], c.max_attr);
        ASSERT_NE(opts[c.limit_attr], nullptr);
        EXPECT_EQ(mnl_attr_get_payload_len(opts[c.limit_attr]), 4U);
        EXPECT_EQ(netutil::nl::attr_u32(opts, c.limit_attr), c.limit);
        for (std::uint16_t t = 0; t <= c.max_attr; ++t) {
            if (t != c.limit_attr) {
                EXPECT_EQ(opts[t], nullptr) << "unexpected attribute " << t;
            }
        }
    }
}

TEST(Rtnl, MatchallClassidWithoutAction)
{
    Message msg;
    netutil::rtnl::MatchallSpec spec;
    spec.ifindex = 5;
    spec.parent = netutil::rtnl::make_handle(1, 0);
    spec.classid = netutil::rtnl::make_handle(1, 1);
    const nlmsghdr *nlh =
            netutil::rtnl::build_matchall(msg, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, spec);
    const auto *tcm = static_cast<const tcmsg *>(mnl_nlmsg_get_payload(nlh));
    EXPECT_EQ(tcm->tcm_parent, 0x10000U);
    auto tb = netutil::nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    ASSERT_NE(tb[TCA_OPTIONS], nullptr);
    auto opts = netutil::nl::parse_nested(tb[TCA_OPTIONS], TCA_MATCHALL_MAX);
    EXPECT_EQ(netutil::nl::attr_u32(opts, TCA_MATCHALL_CLASSID), 0x10001U);
    EXPECT_EQ(opts[TCA_MATCHALL_ACT], nullptr);
    EXPECT_EQ(opts[TCA_MATCHALL_FLAGS], nullptr);

    // Without a classid the attribute is left out.
    spec.classid.reset();
    nlh = netutil::rtnl::build_matchall(msg, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, spec);
    tb = netutil::nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    ASSERT_NE(tb[TCA_OPTIONS], nullptr);
    opts = netutil::nl::parse_nested(tb[TCA_OPTIONS], TCA_MATCHALL_MAX);
    EXPECT_EQ(opts[TCA_MATCHALL_CLASSID], nullptr);
}

TEST(Rtnl, MatchallSkbeditQueueMapping)
{
    Message msg;
    netutil::rtnl::MatchallSpec spec;
    spec.ifindex = 7;
    spec.parent = netutil::rtnl::kEgressParent;
    spec.skbedit_queue_mapping = 3;
    const nlmsghdr *nlh =
            netutil::rtnl::build_matchall(msg, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, spec);
    using netutil::nl::parse_nested;
    auto tb = netutil::nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    ASSERT_NE(tb[TCA_OPTIONS], nullptr);
    auto opts = parse_nested(tb[TCA_OPTIONS], TCA_MATCHALL_MAX);
    ASSERT_NE(opts[TCA_MATCHALL_ACT], nullptr);
    auto acts = parse_nested(opts[TCA_MATCHALL_ACT], 2);
    ASSERT_NE(acts[1], nullptr);
    EXPECT_EQ(acts[2], nullptr);
    auto act = parse_nested(acts[1], TCA_ACT_MAX);
    EXPECT_EQ(netutil::nl::attr_str(act, TCA_ACT_KIND), "skbedit");
    ASSERT_NE(act[TCA_ACT_OPTIONS], nullptr);
    auto sopts = parse_nested(act[TCA_ACT_OPTIONS], TCA_SKBEDIT_MAX);
    auto parms = netutil::nl::attr_struct<tc_skbedit>(sopts, TCA_SKBEDIT_PARMS);
    ASSERT_TRUE(parms.has_value());
    EXPECT_EQ(parms->action, TC_ACT_PIPE);
    ASSERT_NE(sopts[TCA_SKBEDIT_QUEUE_MAPPING], nullptr);
    EXPECT_EQ(mnl_attr_get_payload_len(sopts[TCA_SKBEDIT_QUEUE_MAPPING]), 2U);
    EXPECT_EQ(netutil::nl::attr_u16(sopts, TCA_SKBEDIT_QUEUE_MAPPING), 3U);

    // With gact ok as well, skbedit comes first: gact ok ends the action list.
    spec.gact_ok = true;
    nlh = netutil::rtnl::build_matchall(msg, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, spec);
    tb = netutil::nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    opts = parse_nested(tb[TCA_OPTIONS], TCA_MATCHALL_MAX);
    acts = parse_nested(opts[TCA_MATCHALL_ACT], 2);
    ASSERT_NE(acts[1], nullptr);
    ASSERT_NE(acts[2], nullptr);
    EXPECT_EQ(netutil::nl::attr_str(parse_nested(acts[1], TCA_ACT_MAX), TCA_ACT_KIND), "skbedit");
    EXPECT_EQ(netutil::nl::attr_str(parse_nested(acts[2], TCA_ACT_MAX), TCA_ACT_KIND), "gact");
}

TEST(Rtnl, FqCodelNewFlowCount)
{
    Message rep;
    nlmsghdr *nlh = rep.start(RTM_NEWQDISC, 0);
    auto *t = rep.put_extra<tcmsg>();
    t->tcm_ifindex = 3;
    t->tcm_parent = TC_H_ROOT;
    rep.put_strz(TCA_KIND, "fq_codel");
    nlattr *st2 = rep.nest_start(TCA_STATS2);
    tc_fq_codel_xstats x{};
    x.type = TCA_FQ_CODEL_XSTATS_QDISC;
    x.qdisc_stats.new_flow_count = 42;
    x.qdisc_stats.drop_overlimit = 7;
    rep.put_raw(TCA_STATS_APP, &x, sizeof(x));
    rep.nest_end(st2);

    netutil::rtnl::QdiscInfo info;
    ASSERT_TRUE(netutil::rtnl::parse_qdisc(nlh, info).ok());
    EXPECT_EQ(info.app_stats.size(), sizeof(x));
    EXPECT_EQ(netutil::rtnl::fq_codel_new_flow_count(info), 42U);

    // Class xstats, another qdisc, or too short: none.
    netutil::rtnl::QdiscInfo other = info;
    other.app_stats[0] = TCA_FQ_CODEL_XSTATS_CLASS;
    EXPECT_FALSE(netutil::rtnl::fq_codel_new_flow_count(other).has_value());
    other = info;
    other.kind = "sfq";
    EXPECT_FALSE(netutil::rtnl::fq_codel_new_flow_count(other).has_value());
    other = info;
    other.app_stats.resize(12);
    EXPECT_FALSE(netutil::rtnl::fq_codel_new_flow_count(other).has_value());
    other.app_stats.clear();
    EXPECT_FALSE(netutil::rtnl::fq_codel_new_flow_count(other).has_value());
}

} // namespace

// The requests and replies lib/netutil took over from the selftests: a link by ifindex and
// its carrier, filters by priority, u32 match-all, a replaced root's echo, codel limits.
#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/gen_stats.h>
#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>

#include "link.hpp"
#include "nl.hpp"
#include "tc.hpp"

namespace {

using netutil::nl::Message;
namespace nl = netutil::nl;
namespace rtnl = netutil::rtnl;

TEST(Link, StartWithIfindex)
{
    Message msg;
    const nlmsghdr *nlh = rtnl::start_link_msg(msg, RTM_GETLINK, 0, 7);
    EXPECT_EQ(nlh->nlmsg_type, RTM_GETLINK);
    ASSERT_GE(mnl_nlmsg_get_payload_len(nlh), sizeof(ifinfomsg));
    const auto *ifm = static_cast<const ifinfomsg *>(mnl_nlmsg_get_payload(nlh));
    EXPECT_EQ(ifm->ifi_family, AF_UNSPEC);
    EXPECT_EQ(ifm->ifi_index, 7);
}

TEST(Link, OperstateAndCarrier)
{
    Message msg;
    nlmsghdr *nlh = rtnl::start_link_msg(msg, RTM_NEWLINK, 0, 3);
    msg.put_strz(IFLA_IFNAME, "d0");
    rtnl::LinkInfo info;
    ASSERT_TRUE(rtnl::parse_link(nlh, info).ok());
    // Neither attribute sent: the state is unknown and the carrier counts as on.
    EXPECT_EQ(info.operstate, IF_OPER_UNKNOWN);
    EXPECT_TRUE(info.carrier);
    EXPECT_FALSE(info.stats.has_value());

    msg.put_u8(IFLA_OPERSTATE, IF_OPER_DOWN);
    msg.put_u8(IFLA_CARRIER, 0);
    ASSERT_TRUE(rtnl::parse_link(nlh, info).ok());
    EXPECT_EQ(info.ifindex, 3);
    EXPECT_EQ(info.operstate, IF_OPER_DOWN);
    EXPECT_FALSE(info.carrier);
}

TEST(Tc, FilterHeaderHoldsPrioAndProtocol)
{
    Message msg;
    const tcmsg *tcm = rtnl::start_filter_msg(msg, RTM_DELTFILTER, 0, 4, rtnl::kEgressParent, 2);
    EXPECT_EQ(tcm->tcm_ifindex, 4);
    EXPECT_EQ(tcm->tcm_parent, rtnl::kEgressParent);
    EXPECT_EQ(tcm->tcm_handle, 0U);
    EXPECT_EQ(tcm->tcm_info >> 16, 2U);
    EXPECT_EQ(tcm->tcm_info & 0xffffU, htons(ETH_P_ALL));

    Message other;
    tcm = rtnl::start_filter_msg(other, RTM_NEWTFILTER, 0, 4, 0, 1, ETH_P_IP, 9);
    EXPECT_EQ(tcm->tcm_handle, 9U);
    EXPECT_EQ(tcm->tcm_info & 0xffffU, htons(ETH_P_IP));
}

TEST(Tc, U32MatchAll)
{
    Message msg;
    const nlmsghdr *nlh = rtnl::build_u32_match_all(msg, {.ifindex = 5,
                                                          .parent = rtnl::make_handle(1, 0),
                                                          .prio = 2,
                                                          .classid = rtnl::make_handle(1, 2)});
    EXPECT_EQ(nlh->nlmsg_type, RTM_NEWTFILTER);
    EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL);
    const auto *tcm = static_cast<const tcmsg *>(mnl_nlmsg_get_payload(nlh));
    EXPECT_EQ(tcm->tcm_info >> 16, 2U);
    const auto tb = nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    EXPECT_EQ(nl::attr_str(tb, TCA_KIND), "u32");
    ASSERT_NE(tb[TCA_OPTIONS], nullptr);
    const auto opts = nl::parse_nested(tb[TCA_OPTIONS], TCA_U32_MAX);
    EXPECT_EQ(nl::attr_u32(opts, TCA_U32_CLASSID), rtnl::make_handle(1, 2));
    ASSERT_NE(opts[TCA_U32_SEL], nullptr);
    ASSERT_EQ(mnl_attr_get_payload_len(opts[TCA_U32_SEL]), sizeof(tc_u32_sel) + sizeof(tc_u32_key));
    tc_u32_sel sel{};
    std::memcpy(&sel, mnl_attr_get_payload(opts[TCA_U32_SEL]), sizeof(sel));
    EXPECT_EQ(sel.flags, TC_U32_TERMINAL);
    EXPECT_EQ(sel.nkeys, 1U);
    tc_u32_key key{};
    std::memcpy(&key,
                static_cast<const char *>(mnl_attr_get_payload(opts[TCA_U32_SEL])) + sizeof(sel),
                sizeof(key));
    EXPECT_EQ(key.mask, 0U); // matches every packet

    Message bare;
    const auto bare_opts = nl::parse_nested(
            nl::parse_attrs(rtnl::build_u32_match_all(
                                    bare, {.ifindex = 5, .parent = 0, .prio = 1, .classid = {}}),
                            sizeof(tcmsg), TCA_MAX)[TCA_OPTIONS],
            TCA_U32_MAX);
    EXPECT_EQ(bare_opts[TCA_U32_CLASSID], nullptr);
}

TEST(Tc, DeletedRootEchoAndCodelLimit)
{
    Message rep;
    nlmsghdr *nlh = rep.start(RTM_DELQDISC, 0);
    auto *t = rep.put_extra<tcmsg>();
    t->tcm_ifindex = 3;
    t->tcm_handle = rtnl::make_handle(2, 0);
    t->tcm_parent = TC_H_ROOT;
    rep.put_strz(TCA_KIND, "codel");
    nlattr *o = rep.nest_start(TCA_OPTIONS);
    rep.put_u32(TCA_CODEL_TARGET, 5000);
    rep.put_u32(TCA_CODEL_LIMIT, 0);
    rep.nest_end(o);
    nlattr *st2 = rep.nest_start(TCA_STATS2);
    gnet_stats_queue q{};
    q.qlen = 7;
    q.drops = 11;
    rep.put_raw(TCA_STATS_QUEUE, &q, sizeof(q));
    rep.nest_end(st2);

    rtnl::QdiscInfo info;
    ASSERT_TRUE(rtnl::parse_qdisc(nlh, info).ok());
    EXPECT_EQ(info.type, RTM_DELQDISC);
    EXPECT_EQ(info.handle, rtnl::make_handle(2, 0));
    EXPECT_EQ(info.qlen, 7U);
    EXPECT_EQ(info.drops, 11U);
    EXPECT_EQ(rtnl::codel_limit(info), 0U);
    info.kind = "pfifo";
    EXPECT_EQ(rtnl::codel_limit(info), std::nullopt);

    nlh->nlmsg_type = RTM_NEWTFILTER;
    EXPECT_EQ(rtnl::parse_qdisc(nlh, info).err, EBADMSG);
}

TEST(Tc, ParseFilter)
{
    Message rep;
    nlmsghdr *nlh = rep.start(RTM_NEWTFILTER, 0);
    auto *t = rep.put_extra<tcmsg>();
    t->tcm_ifindex = 6;
    t->tcm_parent = rtnl::make_handle(1, 0);
    t->tcm_handle = 1;
    t->tcm_info = TC_H_MAKE(1U << 16, htons(ETH_P_ALL));
    rep.put_u32(TCA_CHAIN, 3);
    rep.put_strz(TCA_KIND, "matchall");

    rtnl::FilterInfo info;
    ASSERT_TRUE(rtnl::parse_filter(nlh, info).ok());
    EXPECT_EQ(info.ifindex, 6);
    EXPECT_EQ(info.parent, rtnl::make_handle(1, 0));
    EXPECT_EQ(info.handle, 1U);
    EXPECT_EQ(info.info, TC_H_MAKE(1U << 16, htons(ETH_P_ALL)));
    EXPECT_EQ(info.chain, 3U);
    EXPECT_EQ(info.kind, "matchall");

    nlh->nlmsg_type = RTM_NEWQDISC;
    EXPECT_EQ(rtnl::parse_filter(nlh, info).err, EBADMSG);
}

} // namespace

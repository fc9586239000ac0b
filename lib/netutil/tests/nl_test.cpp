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

#include "ethtool.hpp"
#include "link.hpp"
#include "netdev.hpp"
#include "nl.hpp"
#include "tc.hpp"
#include "uapi_compat.hpp"

namespace {

using netutil::nl::Message;

int collect_link_attr(const nlattr *attr, void *data)
{
    auto *tb = static_cast<const nlattr **>(data);
    if (mnl_attr_type_valid(attr, IFLA_MAX) < 0)
        return MNL_CB_OK;
    tb[mnl_attr_get_type(attr)] = attr;
    return MNL_CB_OK;
}

int collect_info_attr(const nlattr *attr, void *data)
{
    auto *tb = static_cast<const nlattr **>(data);
    if (mnl_attr_type_valid(attr, IFLA_INFO_MAX) < 0)
        return MNL_CB_OK;
    tb[mnl_attr_get_type(attr)] = attr;
    return MNL_CB_OK;
}

TEST(Rtnl, NewlinkRequestRoundTrip)
{
    Message msg;
    netutil::rtnl::LinkSpec spec{"dq0", "dummy", 4U, {}};
    const nlmsghdr *nlh = netutil::rtnl::build_newlink(msg, spec);

    EXPECT_EQ(nlh->nlmsg_type, RTM_NEWLINK);
    EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL);
    ASSERT_GE(mnl_nlmsg_get_payload_len(nlh), sizeof(ifinfomsg));
    const auto *ifm = static_cast<const ifinfomsg *>(mnl_nlmsg_get_payload(nlh));
    EXPECT_EQ(ifm->ifi_family, AF_UNSPEC);
    EXPECT_EQ(ifm->ifi_index, 0);

    const nlattr *tb[IFLA_MAX + 1] = {};
    ASSERT_EQ(mnl_attr_parse(nlh, sizeof(ifinfomsg), collect_link_attr, tb), MNL_CB_OK);
    ASSERT_NE(tb[IFLA_IFNAME], nullptr);
    ASSERT_EQ(mnl_attr_validate(tb[IFLA_IFNAME], MNL_TYPE_NUL_STRING), 0);
    EXPECT_STREQ(mnl_attr_get_str(tb[IFLA_IFNAME]), "dq0");
    ASSERT_NE(tb[IFLA_NUM_TX_QUEUES], nullptr);
    ASSERT_EQ(mnl_attr_validate(tb[IFLA_NUM_TX_QUEUES], MNL_TYPE_U32), 0);
    EXPECT_EQ(mnl_attr_get_u32(tb[IFLA_NUM_TX_QUEUES]), 4U);
    EXPECT_EQ(tb[IFLA_NUM_RX_QUEUES], nullptr);
    ASSERT_NE(tb[IFLA_LINKINFO], nullptr);
    ASSERT_EQ(mnl_attr_validate(tb[IFLA_LINKINFO], MNL_TYPE_NESTED), 0);

    const nlattr *info[IFLA_INFO_MAX + 1] = {};
    ASSERT_EQ(mnl_attr_parse_nested(tb[IFLA_LINKINFO], collect_info_attr, info), MNL_CB_OK);
    ASSERT_NE(info[IFLA_INFO_KIND], nullptr);
    EXPECT_STREQ(mnl_attr_get_str(info[IFLA_INFO_KIND]), "dummy");
    EXPECT_EQ(info[IFLA_INFO_DATA], nullptr);
}

TEST(Rtnl, NewlinkWithBothCounts)
{
    Message msg;
    const nlmsghdr *nlh = netutil::rtnl::build_newlink(msg, {"x", "dummy", 3U, 2U});
    const auto tb = netutil::nl::parse_attrs(nlh, sizeof(ifinfomsg), IFLA_MAX);
    EXPECT_EQ(netutil::nl::attr_u32(tb, IFLA_NUM_TX_QUEUES), 3U);
    EXPECT_EQ(netutil::nl::attr_u32(tb, IFLA_NUM_RX_QUEUES), 2U);
}

TEST(Rtnl, ParseLinkReply)
{
    Message msg;
    nlmsghdr *nlh = msg.start(RTM_NEWLINK, 0);
    auto *ifm = msg.put_extra<ifinfomsg>();
    ifm->ifi_index = 5;
    ifm->ifi_flags = IFF_UP;
    msg.put_strz(IFLA_IFNAME, "dq1");
    msg.put_u32(IFLA_MTU, 1500);
    msg.put_u32(IFLA_NUM_TX_QUEUES, 8);
    msg.put_u32(IFLA_NUM_RX_QUEUES, 1);
    rtnl_link_stats64 stats{};
    stats.tx_packets = 42;
    stats.tx_bytes = 4200;
    msg.put_raw(IFLA_STATS64, &stats, sizeof(stats));
    nlattr *li = msg.nest_start(IFLA_LINKINFO);
    msg.put_strz(IFLA_INFO_KIND, "dummy");
    msg.nest_end(li);

    netutil::rtnl::LinkInfo info;
    ASSERT_TRUE(netutil::rtnl::parse_link(nlh, info).ok());
    EXPECT_EQ(info.ifindex, 5);
    EXPECT_EQ(info.name, "dq1");
    EXPECT_EQ(info.kind, "dummy");
    EXPECT_EQ(info.flags & IFF_UP, static_cast<unsigned>(IFF_UP));
    EXPECT_EQ(info.mtu, 1500U);
    EXPECT_EQ(info.num_tx_queues, 8U);
    EXPECT_EQ(info.num_rx_queues, 1U);
    ASSERT_TRUE(info.stats.has_value());
    EXPECT_EQ(info.stats->tx_packets, 42U);
    EXPECT_EQ(info.stats->tx_bytes, 4200U);

    nlh->nlmsg_type = RTM_DELLINK;
    EXPECT_EQ(netutil::rtnl::parse_link(nlh, info).err, EBADMSG);
}

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

TEST(Nl, MessageOverflowThrows)
{
    Message msg(64);
    msg.start(RTM_NEWLINK, 0);
    msg.put_extra<ifinfomsg>();
    EXPECT_THROW(msg.put_strz(IFLA_IFNAME, std::string(100, 'x')), std::length_error);
    std::vector<std::uint8_t> big(70000);
    Message large(200000);
    large.start(RTM_NEWQDISC, 0);
    EXPECT_THROW(large.put_raw(TCA_OPTIONS, big.data(), big.size()), std::length_error);
}

constexpr const char *kExtack = "Invalid number of transmit queues";

TEST(Nl, ExtackFromCappedError)
{
    Message msg;
    nlmsghdr *nlh = msg.start(NLMSG_ERROR, 0);
    nlh->nlmsg_flags = NLM_F_CAPPED | NLM_F_ACK_TLVS;
    auto *err = msg.put_extra<nlmsgerr>();
    err->error = -EINVAL;
    err->msg.nlmsg_len = 96; // the original length; payload not echoed (capped)
    err->msg.nlmsg_type = RTM_NEWLINK;
    msg.put_strz(NLMSGERR_ATTR_MSG, kExtack);
    msg.put_u32(NLMSGERR_ATTR_OFFS, 36);

    const netutil::nl::Status st = netutil::nl::parse_error_msg(nlh);
    EXPECT_EQ(st.err, EINVAL);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.extack, kExtack);
    EXPECT_EQ(st.bad_attr_offset, 36U);
    EXPECT_FALSE(st.missing_attr_type);
    EXPECT_TRUE(st.answered);
    EXPECT_EQ(st.str(), std::string("EINVAL (Invalid argument): ") + kExtack);
}

TEST(Nl, ExtackAfterEchoedRequest)
{
    Message msg;
    nlmsghdr *nlh = msg.start(NLMSG_ERROR, 0);
    nlh->nlmsg_flags = NLM_F_ACK_TLVS;
    auto *err = msg.put_extra<nlmsgerr>();
    err->error = -EOPNOTSUPP;
    // Echoed request with an unaligned 18-byte payload, padded to 20 by the kernel.
    constexpr std::size_t kEchoPayload = 18;
    err->msg.nlmsg_len = sizeof(nlmsghdr) + kEchoPayload;
    auto *echo = static_cast<std::uint8_t *>(mnl_nlmsg_put_extra_header(nlh, kEchoPayload));
    std::memset(echo, 0xab, kEchoPayload);
    msg.put_strz(NLMSGERR_ATTR_MSG, "Unknown device type");

    const netutil::nl::Status st = netutil::nl::parse_error_msg(nlh);
    EXPECT_EQ(st.err, EOPNOTSUPP);
    EXPECT_EQ(st.extack, "Unknown device type");
    EXPECT_FALSE(st.bad_attr_offset);
}

TEST(Nl, MissingAttributeType)
{
    Message msg;
    nlmsghdr *nlh = msg.start(NLMSG_ERROR, 0);
    nlh->nlmsg_flags = NLM_F_CAPPED | NLM_F_ACK_TLVS;
    auto *err = msg.put_extra<nlmsgerr>();
    err->error = -EINVAL;
    err->msg.nlmsg_len = sizeof(nlmsghdr);
    msg.put_u32(NLMSGERR_ATTR_MISS_TYPE, 7);

    const netutil::nl::Status st = netutil::nl::parse_error_msg(nlh);
    EXPECT_EQ(st.err, EINVAL);
    EXPECT_EQ(st.missing_attr_type, 7U);
    EXPECT_FALSE(st.bad_attr_offset);
    EXPECT_TRUE(st.extack.empty());
}

TEST(Nl, PlainAckAndErrors)
{
    Message msg;
    nlmsghdr *nlh = msg.start(NLMSG_ERROR, 0);
    nlh->nlmsg_flags = NLM_F_CAPPED;
    msg.put_extra<nlmsgerr>()->error = 0;
    netutil::nl::Status st = netutil::nl::parse_error_msg(nlh);
    EXPECT_TRUE(st.ok());
    EXPECT_TRUE(st.extack.empty());
    EXPECT_EQ(st.str(), "ok");

    // Error without extack TLVs.
    msg.start(NLMSG_ERROR, 0);
    msg.put_extra<nlmsgerr>()->error = -ENODEV;
    st = netutil::nl::parse_error_msg(msg.hdr());
    EXPECT_EQ(st.err, ENODEV);
    EXPECT_TRUE(st.extack.empty());

    // Truncated NLMSG_ERROR.
    msg.start(NLMSG_ERROR, 0);
    msg.put_extra<int>();
    EXPECT_EQ(netutil::nl::parse_error_msg(msg.hdr()).err, EBADMSG);
}

TEST(Nl, DoneWithErrorAndExtack)
{
    Message msg;
    nlmsghdr *nlh = msg.start(NLMSG_DONE, 0);
    nlh->nlmsg_flags = NLM_F_MULTI | NLM_F_ACK_TLVS;
    *msg.put_extra<int>() = -EOPNOTSUPP;
    msg.put_strz(NLMSGERR_ATTR_MSG, "no stats");
    netutil::nl::Status st = netutil::nl::parse_error_msg(nlh);
    EXPECT_EQ(st.err, EOPNOTSUPP);
    EXPECT_EQ(st.extack, "no stats");

    msg.start(NLMSG_DONE, NLM_F_MULTI);
    *msg.put_extra<int>() = 0;
    EXPECT_TRUE(netutil::nl::parse_error_msg(msg.hdr()).ok());
}

TEST(Nl, UintAttribute)
{
    Message msg;
    nlmsghdr *nlh = msg.start(1, 0);
    msg.put_u32(1, 7);
    msg.put_u64(2, 1ULL << 40);
    msg.put_u16(3, 9);
    auto tb = netutil::nl::parse_attrs(nlh, 0, 4);
    EXPECT_EQ(netutil::nl::attr_uint(tb, 1), 7U);
    EXPECT_EQ(netutil::nl::attr_uint(tb, 2), 1ULL << 40);
    EXPECT_FALSE(netutil::nl::attr_uint(tb, 3));
    EXPECT_FALSE(netutil::nl::attr_u32(tb, 3)); // too short
    EXPECT_EQ(netutil::nl::attr_u16(tb, 3), 9U);
    EXPECT_FALSE(netutil::nl::attr_u32(tb, 4));
    EXPECT_FALSE(netutil::nl::attr_u32(tb, 40)); // beyond the table
}

TEST(Ethtool, ChannelsMessages)
{
    Message msg;
    const nlmsghdr *nlh = netutil::ethtool::build_channels_get(msg, 21, "eth0");
    EXPECT_EQ(nlh->nlmsg_type, 21);
    const auto *g = static_cast<const genlmsghdr *>(mnl_nlmsg_get_payload(nlh));
    EXPECT_EQ(g->cmd, ETHTOOL_MSG_CHANNELS_GET);
    auto tb = netutil::nl::parse_attrs(nlh, sizeof(genlmsghdr), ETHTOOL_A_CHANNELS_MAX);
    ASSERT_NE(tb[ETHTOOL_A_CHANNELS_HEADER], nullptr);
    auto hdr = netutil::nl::parse_nested(tb[ETHTOOL_A_CHANNELS_HEADER], ETHTOOL_A_HEADER_MAX);
    EXPECT_EQ(netutil::nl::attr_str(hdr, ETHTOOL_A_HEADER_DEV_NAME), "eth0");

    netutil::ethtool::ChannelsRequest req;
    req.combined = 4;
    nlh = netutil::ethtool::build_channels_set(msg, 21, "eth1", req);
    g = static_cast<const genlmsghdr *>(mnl_nlmsg_get_payload(nlh));
    EXPECT_EQ(g->cmd, ETHTOOL_MSG_CHANNELS_SET);
    tb = netutil::nl::parse_attrs(nlh, sizeof(genlmsghdr), ETHTOOL_A_CHANNELS_MAX);
    EXPECT_EQ(netutil::nl::attr_u32(tb, ETHTOOL_A_CHANNELS_COMBINED_COUNT), 4U);
    EXPECT_EQ(tb[ETHTOOL_A_CHANNELS_TX_COUNT], nullptr);
    EXPECT_EQ(tb[ETHTOOL_A_CHANNELS_RX_COUNT], nullptr);

    nlmsghdr *rep = netutil::nl::genl_start(msg, 21, ETHTOOL_MSG_CHANNELS_GET_REPLY, 1, 0);
    msg.put_u32(ETHTOOL_A_CHANNELS_COMBINED_MAX, 8);
    msg.put_u32(ETHTOOL_A_CHANNELS_COMBINED_COUNT, 2);
    msg.put_u32(ETHTOOL_A_CHANNELS_TX_MAX, 1);
    netutil::ethtool::Channels ch;
    ASSERT_TRUE(netutil::ethtool::parse_channels(rep, ch).ok());
    EXPECT_EQ(ch.combined_max, 8U);
    EXPECT_EQ(ch.combined_count, 2U);
    EXPECT_EQ(ch.tx_max, 1U);
    EXPECT_EQ(ch.rx_max, 0U);
}

TEST(Netdev, QstatsRequestAndReply)
{
    Message msg;
    const nlmsghdr *nlh = netutil::netdev::build_qstats_get(msg, 33, 7, true);
    const auto *g = static_cast<const genlmsghdr *>(mnl_nlmsg_get_payload(nlh));
    EXPECT_EQ(g->cmd, NETDEV_CMD_QSTATS_GET);
    auto tb = netutil::nl::parse_attrs(nlh, sizeof(genlmsghdr), NETDEV_A_QSTATS_MAX);
    EXPECT_EQ(netutil::nl::attr_u32(tb, NETDEV_A_QSTATS_IFINDEX), 7U);
    EXPECT_EQ(netutil::nl::attr_u32(tb, NETDEV_A_QSTATS_SCOPE), NETDEV_QSTATS_SCOPE_QUEUE);

    nlh = netutil::netdev::build_qstats_get(msg, 33, 7, false);
    tb = netutil::nl::parse_attrs(nlh, sizeof(genlmsghdr), NETDEV_A_QSTATS_MAX);
    EXPECT_EQ(tb[NETDEV_A_QSTATS_SCOPE], nullptr);

    nlmsghdr *rep = netutil::nl::genl_start(msg, 33, NETDEV_CMD_QSTATS_GET, 1, 0);
    msg.put_u32(NETDEV_A_QSTATS_IFINDEX, 7);
    msg.put_u32(NETDEV_A_QSTATS_QUEUE_TYPE, NETDEV_QUEUE_TYPE_TX);
    msg.put_u32(NETDEV_A_QSTATS_QUEUE_ID, 3);
    msg.put_u32(NETDEV_A_QSTATS_TX_PACKETS, 100);
    msg.put_u64(NETDEV_A_QSTATS_TX_BYTES, 1ULL << 33);
    netutil::netdev::QStats q;
    ASSERT_TRUE(netutil::netdev::parse_qstats(rep, q).ok());
    EXPECT_EQ(q.ifindex, 7);
    EXPECT_EQ(q.queue_type, netutil::netdev::QueueType::tx);
    EXPECT_EQ(q.queue_id, 3U);
    EXPECT_EQ(q.tx_packets, 100U);
    EXPECT_EQ(q.tx_bytes, 1ULL << 33);
    EXPECT_FALSE(q.rx_packets);
}

TEST(Netdev, CheckQstats)
{
    using netutil::netdev::QStats;
    using netutil::netdev::QueueType;
    std::vector<QStats> queues(3);
    for (std::uint32_t i = 0; i < 3; ++i) {
        queues[i].ifindex = 7;
        queues[i].queue_type = QueueType::tx;
        queues[i].queue_id = i;
        queues[i].tx_packets = i * 10;
    }
    QStats dev;
    dev.ifindex = 7;
    dev.tx_packets = 30;
    EXPECT_EQ(netutil::netdev::sum_tx_packets(queues), 30U);
    EXPECT_EQ(netutil::netdev::active_tx_queues(queues), 2U);
    EXPECT_EQ(netutil::netdev::active_tx_queues(queues, 20), 1U);
    EXPECT_EQ(netutil::netdev::check_qstats(queues, dev), "");

    dev.tx_packets = 29;
    EXPECT_NE(netutil::netdev::check_qstats(queues, dev).find("exceeds"), std::string::npos);
    dev.tx_packets = 30;
    queues[2].queue_id = 1;
    EXPECT_NE(netutil::netdev::check_qstats(queues, dev).find("duplicate"), std::string::npos);
    queues[2].queue_id = 2;
    queues[0].rx_bytes = 5;
    EXPECT_NE(netutil::netdev::check_qstats(queues, dev).find("no total"), std::string::npos);
}

} // namespace

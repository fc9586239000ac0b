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

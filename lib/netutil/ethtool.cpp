#include "ethtool.hpp"

#include <cerrno>

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include "uapi_compat.hpp"

namespace netutil::ethtool {
namespace {

nlmsghdr *start(nl::Message &msg, std::uint16_t family, std::uint8_t cmd, std::string_view dev)
{
    nlmsghdr *nlh = nl::genl_start(msg, family, cmd, ETHTOOL_GENL_VERSION, 0);
    nlattr *hdr = msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
    msg.put_strz(ETHTOOL_A_HEADER_DEV_NAME, dev);
    msg.nest_end(hdr);
    return nlh;
}

} // namespace

nlmsghdr *build_channels_get(nl::Message &msg, std::uint16_t family, std::string_view dev)
{
    return start(msg, family, ETHTOOL_MSG_CHANNELS_GET, dev);
}

nlmsghdr *build_channels_set(nl::Message &msg, std::uint16_t family, std::string_view dev,
                             const ChannelsRequest &req)
{
    nlmsghdr *nlh = start(msg, family, ETHTOOL_MSG_CHANNELS_SET, dev);
    if (req.rx)
        msg.put_u32(ETHTOOL_A_CHANNELS_RX_COUNT, *req.rx);
    if (req.tx)
        msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, *req.tx);
    if (req.other)
        msg.put_u32(ETHTOOL_A_CHANNELS_OTHER_COUNT, *req.other);
    if (req.combined)
        msg.put_u32(ETHTOOL_A_CHANNELS_COMBINED_COUNT, *req.combined);
    return nlh;
}

Status parse_channels(const nlmsghdr *nlh, Channels &out)
{
    if (mnl_nlmsg_get_payload_len(nlh) < sizeof(genlmsghdr))
        return Status::from_errno(EBADMSG);
    const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(genlmsghdr), ETHTOOL_A_CHANNELS_MAX);
    out = Channels{};
    out.rx_max = nl::attr_u32(tb, ETHTOOL_A_CHANNELS_RX_MAX).value_or(0);
    out.tx_max = nl::attr_u32(tb, ETHTOOL_A_CHANNELS_TX_MAX).value_or(0);
    out.other_max = nl::attr_u32(tb, ETHTOOL_A_CHANNELS_OTHER_MAX).value_or(0);
    out.combined_max = nl::attr_u32(tb, ETHTOOL_A_CHANNELS_COMBINED_MAX).value_or(0);
    out.rx_count = nl::attr_u32(tb, ETHTOOL_A_CHANNELS_RX_COUNT).value_or(0);
    out.tx_count = nl::attr_u32(tb, ETHTOOL_A_CHANNELS_TX_COUNT).value_or(0);
    out.other_count = nl::attr_u32(tb, ETHTOOL_A_CHANNELS_OTHER_COUNT).value_or(0);
    out.combined_count = nl::attr_u32(tb, ETHTOOL_A_CHANNELS_COMBINED_COUNT).value_or(0);
    return {};
}

Ethtool::Ethtool() : genl_(ETHTOOL_GENL_NAME) {}

Status Ethtool::family(std::uint16_t &id)
{
    return genl_.id(id);
}

Status Ethtool::channels_get(std::string_view dev, Channels &out)
{
    std::uint16_t id = 0;
    if (Status st = family(id); !st.ok())
        return st;
    nl::Message msg(1024);
    bool got = false;
    Status parse_st;
    Status st =
            genl_.socket().request(build_channels_get(msg, id, dev), [&](const nlmsghdr *reply) {
                parse_st = parse_channels(reply, out);
                got = true;
            });
    if (!st.ok())
        return st;
    if (!got)
        return Status::from_errno(ENODATA);
    return parse_st;
}

Status Ethtool::channels_set(std::string_view dev, const ChannelsRequest &req)
{
    std::uint16_t id = 0;
    if (Status st = family(id); !st.ok())
        return st;
    nl::Message msg(1024);
    return genl_.socket().request(build_channels_set(msg, id, dev, req));
}

} // namespace netutil::ethtool

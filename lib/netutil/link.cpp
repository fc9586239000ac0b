#include "link.hpp"

#include <cerrno>

#include <sys/socket.h>

#include "sysfs.hpp"

namespace netutil::rtnl {

nlmsghdr *start_link_msg(nl::Message &msg, std::uint16_t type, std::uint16_t flags, int ifindex)
{
    nlmsghdr *nlh = msg.start(type, flags);
    auto *ifm = msg.put_extra<ifinfomsg>();
    ifm->ifi_family = AF_UNSPEC;
    ifm->ifi_index = ifindex;
    return nlh;
}

nlmsghdr *build_newlink(nl::Message &msg, const LinkSpec &spec)
{
    nlmsghdr *nlh = start_link_msg(msg, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
    msg.put_strz(IFLA_IFNAME, spec.name);
    if (spec.num_tx_queues)
        msg.put_u32(IFLA_NUM_TX_QUEUES, *spec.num_tx_queues);
    if (spec.num_rx_queues)
        msg.put_u32(IFLA_NUM_RX_QUEUES, *spec.num_rx_queues);
    nlattr *linkinfo = msg.nest_start(IFLA_LINKINFO);
    msg.put_strz(IFLA_INFO_KIND, spec.kind);
    msg.nest_end(linkinfo);
    return nlh;
}

Status parse_link(const nlmsghdr *nlh, LinkInfo &out)
{
    if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(ifinfomsg))
        return Status::from_errno(EBADMSG);
    const auto *ifm = static_cast<const ifinfomsg *>(mnl_nlmsg_get_payload(nlh));
    out = LinkInfo{};
    out.ifindex = ifm->ifi_index;
    out.flags = ifm->ifi_flags;

    const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(ifinfomsg), IFLA_MAX);
    out.name = nl::attr_str(tb, IFLA_IFNAME).value_or("");
    out.mtu = nl::attr_u32(tb, IFLA_MTU).value_or(0);
    out.num_tx_queues = nl::attr_u32(tb, IFLA_NUM_TX_QUEUES).value_or(0);
    out.num_rx_queues = nl::attr_u32(tb, IFLA_NUM_RX_QUEUES).value_or(0);
    out.operstate = nl::attr_u8(tb, IFLA_OPERSTATE).value_or(IF_OPER_UNKNOWN);
    out.carrier = nl::attr_u8(tb, IFLA_CARRIER).value_or(1) != 0;
    out.stats = nl::attr_struct<rtnl_link_stats64>(tb, IFLA_STATS64);
    if (tb[IFLA_LINKINFO] != nullptr) {
        const nl::AttrTable li = nl::parse_nested(tb[IFLA_LINKINFO], IFLA_INFO_MAX);
        out.kind = nl::attr_str(li, IFLA_INFO_KIND).value_or("");
    }
    return {};
}

nl::Socket &shared_socket()
{
    static nl::Socket sock(NETLINK_ROUTE);
    return sock;
}

Status create_link(nl::Socket &sock, const LinkSpec &spec)
{
    nl::Message msg;
    return sock.request(build_newlink(msg, spec));
}

Status delete_link(nl::Socket &sock, std::string_view name)
{
    nl::Message msg(1024);
    nlmsghdr *nlh = start_link_msg(msg, RTM_DELLINK, 0);
    msg.put_strz(IFLA_IFNAME, name);
    return sock.request(nlh);
}

Status set_link_up(nl::Socket &sock, std::string_view name, bool up)
{
    nl::Message msg(1024);
    nlmsghdr *nlh = start_link_msg(msg, RTM_NEWLINK, 0);
    auto *ifm = static_cast<ifinfomsg *>(mnl_nlmsg_get_payload(nlh));
    ifm->ifi_change = IFF_UP;
    ifm->ifi_flags = up ? IFF_UP : 0;
    msg.put_strz(IFLA_IFNAME, name);
    return sock.request(nlh);
}

Status set_carrier(nl::Socket &sock, int ifindex, bool on)
{
    nl::Message msg(1024);
    nlmsghdr *nlh = start_link_msg(msg, RTM_NEWLINK, 0, ifindex);
    msg.put_u8(IFLA_CARRIER, on ? 1 : 0);
    return sock.request(nlh);
}

namespace {

// Sends the RTM_GETLINK nlh and parses the RTM_NEWLINK it answers with; not_found when
// the kernel acked without one.
Status get_one_link(nl::Socket &sock, nlmsghdr *nlh, LinkInfo &out, Status not_found)
{
    bool found = false;
    Status parse_st;
    Status st = sock.request(nlh, [&](const nlmsghdr *reply) {
        if (reply->nlmsg_type != RTM_NEWLINK)
            return;
        parse_st = parse_link(reply, out);
        found = parse_st.ok();
    });
    if (!st.ok())
        return st;
    if (!parse_st.ok())
        return parse_st;
    if (!found)
        return not_found;
    return {};
}

} // namespace

Status get_link(nl::Socket &sock, std::string_view name, LinkInfo &out)
{
    nl::Message msg(1024);
    nlmsghdr *nlh = start_link_msg(msg, RTM_GETLINK, 0);
    msg.put_strz(IFLA_IFNAME, name);
    if (Status st = get_one_link(sock, nlh, out, Status::from_errno(ENODEV)); !st.ok())
        return st;
    out.real_num_tx_queues = sysfs::active_queue_count(out.name, "tx");
    out.real_num_rx_queues = sysfs::active_queue_count(out.name, "rx");
    return {};
}

Status get_link_stats(nl::Socket &sock, int ifindex, LinkInfo &out)
{
    nl::Message msg(1024);
    nlmsghdr *nlh = start_link_msg(msg, RTM_GETLINK, 0, ifindex);
    if (Status st = get_one_link(sock, nlh, out, Status::failed(ENODATA, "no RTM_NEWLINK reply"));
        !st.ok())
        return st;
    if (!out.stats)
        return Status::failed(ENODATA, "no IFLA_STATS64");
    return {};
}

Status link_dump(nl::Socket &sock, std::vector<LinkInfo> &out)
{
    nl::Message msg(1024);
    start_link_msg(msg, RTM_GETLINK, 0);
    out.clear();
    Status parse_st;
    Status st = sock.dump(msg.hdr(), [&](const nlmsghdr *reply) {
        if (reply->nlmsg_type != RTM_NEWLINK)
            return;
        LinkInfo info;
        Status s = parse_link(reply, info);
        if (s.ok())
            out.push_back(std::move(info));
        else
            parse_st = s;
    });
    return st.ok() ? parse_st : st;
}

LinkGuard::~LinkGuard()
{
    if (name_.empty() || sock_ == nullptr)
        return;
    try {
        delete_link(*sock_, name_);
    } catch (...) { // NOLINT(bugprone-empty-catch): best effort cleanup in a destructor
    }
}

LinkGuard::LinkGuard(LinkGuard &&other) noexcept : sock_(other.sock_), name_(std::move(other.name_))
{
    other.name_.clear();
}

} // namespace netutil::rtnl

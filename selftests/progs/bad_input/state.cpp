// The state a row checks: snapshots of the netns and the test device, and the
// environment requests are sent in.
#include <algorithm>
#include <cstdio>
#include <iterator>

#include <linux/if.h>

#include "bad_input.hpp"
#include "sysfs.hpp"

namespace bad_input {
namespace {

// A socket whose receive times out, so that a kernel that never answers fails the case.
std::unique_ptr<nl::Socket> open_socket(int bus)
{
    auto s = std::make_unique<nl::Socket>(bus);
    s->set_receive_timeout(15);
    return s;
}

std::string hex(const std::vector<std::uint8_t> &v)
{
    std::string s;
    char b[3];
    for (const std::uint8_t c : v) {
        std::snprintf(b, sizeof(b), "%02x", c);
        s += b;
    }
    return s;
}

} // namespace

std::string describe(const Ack &a)
{
    if (!a.answered)
        return concat("no answer (", errno_name(a.err), ")");
    std::string s = a.err == 0 ? std::string("accepted") : errno_name(a.err);
    if (!a.extack.empty())
        s += concat(" \"", a.extack, "\"");
    if (a.bad_attr_offset)
        s += concat(" [attribute at offset ", *a.bad_attr_offset, "]");
    if (a.missing_attr_type)
        s += concat(" [missing attribute type ", *a.missing_attr_type, "]");
    return s;
}

std::string fmt(const QdiscRow &q)
{
    return concat(q.kind, " ", rtnl::format_handle(q.handle), " parent ",
                  rtnl::format_handle(q.parent), q.options.empty() ? "" : " options ",
                  hex(q.options));
}

std::string summary(const Snapshot &s)
{
    std::string q;
    for (const QdiscRow &r : s.qdiscs)
        q += concat(q.empty() ? "" : ", ", r.kind, " ", rtnl::format_handle(r.handle));
    return concat(s.links.size(), " links; ", s.queues, "; qdiscs ", q.empty() ? "none" : q, "; ",
                  s.filters.size(), " filter(s)");
}

std::string join(const std::vector<std::string> &v)
{
    std::string s;
    for (const std::string &e : v)
        s += concat(s.empty() ? "" : " | ", e);
    return s.empty() ? std::string("none") : s;
}

std::string diff(const Snapshot &a, const Snapshot &b, bool skip_qdiscs)
{
    if (!a.error.empty() || !b.error.empty())
        return concat("state unreadable: ", a.error.empty() ? b.error : a.error);
    if (a.links != b.links) {
        std::vector<std::string> gone;
        std::vector<std::string> added;
        std::set_difference(a.links.begin(), a.links.end(), b.links.begin(), b.links.end(),
                            std::back_inserter(gone));
        std::set_difference(b.links.begin(), b.links.end(), a.links.begin(), a.links.end(),
                            std::back_inserter(added));
        return concat("links changed: before ", join(gone), "; after ", join(added));
    }
    if (a.queues != b.queues)
        return concat("active queues changed: ", a.queues, " -> ", b.queues);
    if (!skip_qdiscs) {
        std::vector<std::string> qa;
        std::vector<std::string> qb;
        for (const QdiscRow &q : a.qdiscs)
            qa.push_back(fmt(q));
        for (const QdiscRow &q : b.qdiscs)
            qb.push_back(fmt(q));
        if (qa != qb)
            return concat("qdiscs changed: ", join(qa), " -> ", join(qb));
    }
    if (a.filters != b.filters)
        return concat("filters changed: ", join(a.filters), " -> ", join(b.filters));
    return {};
}

std::string Env::open(nl::Socket *lib_socket)
{
    lib = lib_socket;
    rtnl = open_socket(NETLINK_ROUTE);
    strict = open_socket(NETLINK_ROUTE);
    strict->set_strict_check(true);
    genl = open_socket(NETLINK_GENERIC);
    if (nl::Status st = nl::genl_family_id(*genl, ETHTOOL_GENL_NAME, ethtool_id); !st.ok())
        return concat("ethtool family: ", st.str());
    if (nl::Status st = nl::genl_family_id(*genl, "netdev", netdev_id); !st.ok())
        return concat("netdev family: ", st.str());
    return {};
}

nl::Socket &Env::sock(Bus b)
{
    switch (b) {
    case Bus::rtnl:
        return *rtnl;
    case Bus::rtnl_strict:
        return *strict;
    case Bus::genl:
        break;
    }
    return *genl;
}

Ack Env::send(Request &r)
{
    return sock(r.bus).send_as_is(r.msg.hdr(), r.dump);
}

// Active queues of a device as the netdev family lists them (QUEUE_GET dump:
// queues below real_num_{rx,tx}_queues of a device that is up).
std::string Env::netdev_queues(int ifindex)
{
    Request r;
    nl::genl_start(r.msg, netdev_id, NETDEV_CMD_QUEUE_GET, NETDEV_FAMILY_VERSION, 0);
    r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(ifindex));
    unsigned rx = 0;
    unsigned tx = 0;
    const Ack a = genl->send_as_is(r.msg.hdr(), true, [&](const nlmsghdr *nlh) {
        const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(genlmsghdr), NETDEV_A_QUEUE_TYPE);
        const auto type = nl::attr_u32(tb, NETDEV_A_QUEUE_TYPE);
        if (type == NETDEV_QUEUE_TYPE_RX)
            ++rx;
        else if (type == NETDEV_QUEUE_TYPE_TX)
            ++tx;
    });
    if (a.err != 0)
        return concat("QUEUE_GET: ", describe(a));
    return concat("netdev tx/rx ", tx, "/", rx);
}

Snapshot Env::snapshot(const Fix &fx)
{
    Snapshot s;
    std::vector<rtnl::LinkInfo> links;
    if (nl::Status st = rtnl::link_dump(*lib, links); !st.ok()) {
        s.error = concat("link dump: ", st.str());
        return s;
    }
    for (const rtnl::LinkInfo &l : links) {
        // IFF_RUNNING and IFF_LOWER_UP follow the operstate, which linkwatch sets
        // later: leave them out.
        const std::uint32_t flags = l.flags & ~(IFF_RUNNING | IFF_LOWER_UP | IFF_DORMANT);
        s.links.push_back(concat(l.ifindex, " ", l.name, " kind ", l.kind.empty() ? "-" : l.kind,
                                 " flags 0x", std::hex, flags, std::dec, " mtu ", l.mtu,
                                 " numtx/rx ", l.num_tx_queues, "/", l.num_rx_queues));
    }
    std::sort(s.links.begin(), s.links.end());
    if (fx.ifindex == 0)
        return s;
    if (sysfs) {
        const auto tx = netutil::sysfs::active_queue_count(fx.name, "tx");
        const auto rx = netutil::sysfs::active_queue_count(fx.name, "rx");
        s.queues = concat("sysfs tx/rx ", tx ? concat(*tx) : std::string("?"), "/",
                          rx ? concat(*rx) : std::string("?"), ", ");
    }
    s.queues += netdev_queues(fx.ifindex);

    Request q;
    rtnl::start_tc_msg(q.msg, RTM_GETQDISC, 0, fx.ifindex, 0, 0);
    const Ack qa = rtnl->send_as_is(q.msg.hdr(), true, [&](const nlmsghdr *nlh) {
        rtnl::QdiscInfo info;
        if (!rtnl::parse_qdisc(nlh, info).ok() || info.ifindex != fx.ifindex)
            return;
        QdiscRow row;
        row.handle = info.handle;
        row.parent = info.parent;
        row.kind = info.kind;
        row.options = info.options;
        nl::for_each_attr(row.options.data(), row.options.size(), [&](const nlattr *a) {
            const auto *d = static_cast<const std::uint8_t *>(mnl_attr_get_payload(a));
            row.opt[mnl_attr_get_type(a)].assign(d, d + mnl_attr_get_payload_len(a));
        });
        s.qdiscs.push_back(std::move(row));
    });
    if (qa.err != 0) {
        s.error = concat("qdisc dump: ", describe(qa));
        return s;
    }
    // Filters of the root qdisc (if it has a block) and of the ingress side.
    for (const std::uint32_t parent : {0U, rtnl::kIngressParent}) {
        Request f;
        rtnl::start_tc_msg(f.msg, RTM_GETTFILTER, 0, fx.ifindex, parent, 0);
        const Ack fa = rtnl->send_as_is(f.msg.hdr(), true, [&](const nlmsghdr *nlh) {
            rtnl::FilterInfo info;
            if (!rtnl::parse_filter(nlh, info).ok())
                return;
            s.filters.push_back(concat("parent ", rtnl::format_handle(info.parent), " info 0x",
                                       std::hex, info.info, std::dec, " handle ", info.handle,
                                       " chain ", info.chain, " ", info.kind.value_or("?")));
        });
        if (fa.err != 0) {
            s.error = concat("filter dump: ", describe(fa));
            return s;
        }
    }
    return s;
}
} // namespace bad_input

// Building the requests of the catalogue, the test device and the accept checks.
#include <cstring>

#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_ether.h>

#include "bad_input.hpp"

namespace bad_input {

// Offset the next attribute gets.
std::uint32_t tail(const Request &r)
{
    return MNL_ALIGN(r.msg.hdr()->nlmsg_len);
}

// One attribute as bytes (header, payload, padding), to be nested by hand.
std::vector<std::uint8_t> attr_bytes(std::uint16_t type, const void *data, std::size_t len)
{
    std::vector<std::uint8_t> out(MNL_ALIGN(MNL_ATTR_HDRLEN + len), 0);
    nlattr a{};
    a.nla_type = type;
    a.nla_len = static_cast<std::uint16_t>(MNL_ATTR_HDRLEN + len);
    std::memcpy(out.data(), &a, sizeof(a));
    if (len > 0)
        std::memcpy(out.data() + MNL_ATTR_HDRLEN, data, len);
    return out;
}

std::vector<std::uint8_t> u32_bytes(std::uint16_t type, std::uint32_t v)
{
    return attr_bytes(type, &v, sizeof(v));
}

Device make_device(std::uint32_t tx_queues)
{
    Device d;
    d.dev = std::make_unique<testdev::TestDummy>(testdev::DummySpec{.prefix = "bi",
                                                                    .tx_queues = tx_queues,
                                                                    .ipv6_off = true,
                                                                    .up = true,
                                                                    .verify_queues = true});
    if (!d.dev->ok()) {
        d.error = d.dev->error();
        return d;
    }
    d.fix = {d.dev->name(), d.dev->ifindex()};
    nl::Socket &s = rtnl::shared_socket();
    if (nl::Status st = rtnl::add_clsact(s, d.fix.ifindex); !st.ok()) {
        d.error = CaseResult::fail(concat("add clsact to ", d.fix.name, ": ", st.str()));
        return d;
    }
    rtnl::MatchallSpec f;
    f.ifindex = d.fix.ifindex;
    f.parent = rtnl::kIngressParent;
    f.handle = 1;
    f.prio = 1;
    if (nl::Status st = rtnl::filter_add(s, f); !st.ok())
        d.error =
                CaseResult::fail(concat("add matchall on ingress of ", d.fix.name, ": ", st.str()));
    return d;
}

// ---- request builders ----

// Generic netlink message of the ethtool family with a header naming dev.
Request ethtool_msg(Env &e, std::uint8_t cmd)
{
    Request r;
    r.bus = Bus::genl;
    nl::genl_start(r.msg, e.ethtool_id, cmd, ETHTOOL_GENL_VERSION, 0);
    return r;
}

void put_header(Request &r, std::string_view dev)
{
    nlattr *h = r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
    r.msg.put_strz(ETHTOOL_A_HEADER_DEV_NAME, dev);
    r.msg.nest_end(h);
}

// CHANNELS_SET on dev with the given counts; the attribute of type blame is marked.
Request channels_set(Env &e, std::string_view dev, std::initializer_list<Count> counts,
                     std::uint16_t blame)
{
    Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
    put_header(r, dev);
    for (const Count &c : counts) {
        if (c.type == blame)
            r.mark = tail(r);
        r.msg.put_u32(c.type, c.value);
    }
    return r;
}

Request netdev_msg(Env &e, std::uint8_t cmd, bool dump)
{
    Request r;
    r.bus = Bus::genl;
    r.dump = dump;
    nl::genl_start(r.msg, e.netdev_id, cmd, NETDEV_FAMILY_VERSION, 0);
    return r;
}

// RTM_NEWLINK creating a dummy named name (NLM_F_CREATE | NLM_F_EXCL), with the
// attributes add puts after IFLA_IFNAME and before IFLA_LINKINFO.
Request newlink(std::string name, const std::function<void(Request &)> &add)
{
    Request r;
    rtnl::start_link_msg(r.msg, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
    r.msg.put_strz(IFLA_IFNAME, name);
    if (add)
        add(r);
    nlattr *li = r.msg.nest_start(IFLA_LINKINFO);
    r.msg.put_strz(IFLA_INFO_KIND, testdev::kDummyKind);
    r.msg.nest_end(li);
    r.created = std::move(name);
    return r;
}

Request newlink_queues(std::optional<std::uint32_t> tx, std::optional<std::uint32_t> rx)
{
    return newlink(testdev::unique_name("bn"), [&](Request &r) {
        if (tx)
            r.msg.put_u32(IFLA_NUM_TX_QUEUES, *tx);
        if (rx)
            r.msg.put_u32(IFLA_NUM_RX_QUEUES, *rx);
    });
}

// RTM_NEWQDISC at the root of fx with flags; options are nested attributes.
Request qdisc_msg(const Fix &fx, std::uint16_t flags, std::string_view kind,
                  const std::vector<std::vector<std::uint8_t>> &options, bool with_kind)
{
    Request r;
    rtnl::start_tc_msg(r.msg, RTM_NEWQDISC, flags, fx.ifindex, TC_H_ROOT, kRootHandle);
    if (with_kind)
        r.msg.put_strz(TCA_KIND, kind);
    if (!options.empty()) {
        nlattr *o = r.msg.nest_start(TCA_OPTIONS);
        for (const auto &a : options) {
            // Each element is a whole attribute (attr_bytes()).
            nlattr h{};
            std::memcpy(&h, a.data(), sizeof(h));
            r.msg.put_raw(h.nla_type, a.data() + MNL_ATTR_HDRLEN, h.nla_len - MNL_ATTR_HDRLEN);
        }
        r.msg.nest_end(o);
    }
    return r;
}

// Replace the root qdisc of fx (a setup step).
std::string set_root(Env &e, const Fix &fx, std::string_view kind)
{
    Request r = qdisc_msg(fx, kCreateReplace, kind, {});
    const Ack a = e.send(r);
    return a.err == 0 ? std::string() : concat("replace root ", kind, ": ", describe(a));
}

// RTM_NEWTFILTER on fx, parent and tcm_info as given; with a kind, TCA_OPTIONS holds
// TCA_MATCHALL_FLAGS if mall_flags is set.
Request filter_msg(const Fix &fx, std::uint16_t flags, std::uint32_t parent, std::uint16_t prio,
                   std::uint32_t handle, std::optional<std::string_view> kind,
                   std::optional<std::uint32_t> mall_flags)
{
    Request r;
    rtnl::start_filter_msg(r.msg, RTM_NEWTFILTER, flags, fx.ifindex, parent, prio, ETH_P_ALL,
                           handle);
    if (kind) {
        r.msg.put_strz(TCA_KIND, *kind);
        nlattr *o = r.msg.nest_start(TCA_OPTIONS);
        if (mall_flags)
            r.msg.put_u32(TCA_MATCHALL_FLAGS, *mall_flags);
        r.msg.nest_end(o);
    }
    return r;
}

// The root qdisc is kind with nested option type == value; links, queues and filters
// are unchanged.
std::string root_qdisc_is(const Snapshot &before, const Snapshot &after, std::string_view kind,
                          std::uint16_t type, std::uint32_t value)
{
    if (std::string d = diff(before, after, true); !d.empty())
        return d;
    for (const QdiscRow &q : after.qdiscs) {
        if (q.parent != TC_H_ROOT)
            continue;
        if (q.kind != kind || q.handle != kRootHandle)
            return concat("root qdisc is ", fmt(q), ", expected ", kind, " 1:");
        const auto it = q.opt.find(type);
        if (it == q.opt.end() || it->second.size() < 4)
            return concat("root ", kind, " reports no option ", type);
        std::uint32_t v = 0;
        std::memcpy(&v, it->second.data(), 4);
        if (v != value)
            return concat("root ", kind, " option ", type, " is ", v, ", expected ", value);
        return {};
    }
    return "no root qdisc in the dump";
}

// The request created r.created with value TX queues; everything else is unchanged.
std::string link_created(Env &e, const Fix &fx, const Request &r, const Snapshot &before,
                         const Snapshot &after)
{
    rtnl::LinkInfo info;
    if (nl::Status st = rtnl::get_link(*e.lib, r.created, info); !st.ok())
        return concat("accepted, but ", r.created, " cannot be read: ", st.str());
    if (info.kind != testdev::kDummyKind || info.num_tx_queues != r.value)
        return concat(r.created, " is kind ", info.kind, " with ", info.num_tx_queues,
                      " TX queues, expected dummy with ", r.value);
    rtnl::delete_link(*e.lib, r.created);
    const Snapshot now = e.snapshot(fx);
    if (std::string d = diff(before, now); !d.empty())
        return concat("after removing ", r.created, ": ", d);
    (void)after;
    return {};
}
} // namespace bad_input

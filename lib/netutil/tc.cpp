#include "tc.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include <arpa/inet.h>
#include <linux/gen_stats.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_gact.h>
#include <linux/tc_act/tc_skbedit.h>
#include <sys/socket.h>

namespace netutil::rtnl {
namespace {

// A TCA_OPTIONS payload holding one u32 attribute.
std::vector<std::uint8_t> u32_attr_payload(std::uint16_t type, std::uint32_t value)
{
    std::vector<std::uint8_t> out(MNL_ATTR_HDRLEN + MNL_ALIGN(sizeof(value)), 0);
    nlattr attr{};
    attr.nla_type = type;
    attr.nla_len = static_cast<std::uint16_t>(MNL_ATTR_HDRLEN + sizeof(value));
    std::memcpy(out.data(), &attr, sizeof(attr));
    std::memcpy(out.data() + MNL_ATTR_HDRLEN, &value, sizeof(value));
    return out;
}

std::optional<std::uint32_t> parse_hex16(std::string_view s)
{
    if (s.empty() || s.size() > 4)
        return std::nullopt;
    std::uint32_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || ptr != s.data() + s.size())
        return std::nullopt;
    return v;
}

std::vector<std::uint8_t> payload_bytes(const nlattr *attr)
{
    const auto *p = static_cast<const std::uint8_t *>(mnl_attr_get_payload(attr));
    return {p, p + mnl_attr_get_payload_len(attr)};
}

} // namespace

tcmsg *start_tc_msg(nl::Message &msg, std::uint16_t type, std::uint16_t flags, int ifindex,
                    std::uint32_t parent, std::uint32_t handle)
{
    msg.start(type, flags);
    auto *tcm = msg.put_extra<tcmsg>();
    tcm->tcm_family = AF_UNSPEC;
    tcm->tcm_ifindex = ifindex;
    tcm->tcm_parent = parent;
    tcm->tcm_handle = handle;
    return tcm;
}

std::string format_handle(std::uint32_t h)
{
    if (h == TC_H_ROOT)
        return "root";
    if (h == TC_H_UNSPEC)
        return "none";
    char buf[16];
    if (handle_minor(h) == 0)
        std::snprintf(buf, sizeof(buf), "%x:", handle_major(h));
    else
        std::snprintf(buf, sizeof(buf), "%x:%x", handle_major(h), handle_minor(h));
    return buf;
}

std::optional<std::uint32_t> parse_handle(std::string_view s)
{
    if (s == "root")
        return TC_H_ROOT;
    if (s == "ingress" || s == "clsact")
        return TC_H_CLSACT;
    if (s == "none")
        return TC_H_UNSPEC;
    const std::size_t colon = s.find(':');
    const auto maj = parse_hex16(s.substr(0, colon));
    if (!maj)
        return std::nullopt;
    if (colon == std::string_view::npos || colon + 1 == s.size())
        return make_handle(*maj, 0);
    const auto min = parse_hex16(s.substr(colon + 1));
    if (!min)
        return std::nullopt;
    return make_handle(*maj, *min);
}

tcmsg *start_filter_msg(nl::Message &msg, std::uint16_t type, std::uint16_t flags, int ifindex,
                        std::uint32_t parent, std::uint16_t prio, std::uint16_t protocol,
                        std::uint32_t handle)
{
    tcmsg *tcm = start_tc_msg(msg, type, flags, ifindex, parent, handle);
    tcm->tcm_info = TC_H_MAKE(static_cast<std::uint32_t>(prio) << 16, htons(protocol));
    return tcm;
}

nlmsghdr *build_qdisc(nl::Message &msg, std::uint16_t type, std::uint16_t flags,
                      const QdiscSpec &spec)
{
    start_tc_msg(msg, type, flags, spec.ifindex, spec.parent, spec.handle);
    if (!spec.kind.empty())
        msg.put_strz(TCA_KIND, spec.kind);
    if (!spec.options.empty())
        msg.put_raw(TCA_OPTIONS, spec.options.data(), spec.options.size());
    return msg.hdr();
}

std::vector<std::uint8_t> fifo_options(std::uint32_t limit)
{
    tc_fifo_qopt qopt{};
    qopt.limit = limit;
    std::vector<std::uint8_t> out(sizeof(qopt));
    std::memcpy(out.data(), &qopt, sizeof(qopt));
    return out;
}

std::vector<std::uint8_t> codel_options(std::uint32_t limit)
{
    return u32_attr_payload(TCA_CODEL_LIMIT, limit);
}

std::vector<std::uint8_t> fq_codel_options(std::uint32_t limit)
{
    return u32_attr_payload(TCA_FQ_CODEL_LIMIT, limit);
}

Status parse_qdisc(const nlmsghdr *nlh, QdiscInfo &out)
{
    if ((nlh->nlmsg_type != RTM_NEWQDISC && nlh->nlmsg_type != RTM_DELQDISC) ||
        mnl_nlmsg_get_payload_len(nlh) < sizeof(tcmsg))
        return Status::from_errno(EBADMSG);
    const auto *tcm = static_cast<const tcmsg *>(mnl_nlmsg_get_payload(nlh));
    out = QdiscInfo{};
    out.type = nlh->nlmsg_type;
    out.ifindex = tcm->tcm_ifindex;
    out.handle = tcm->tcm_handle;
    out.parent = tcm->tcm_parent;

    const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    out.kind = nl::attr_str(tb, TCA_KIND).value_or("");
    if (tb[TCA_OPTIONS] != nullptr)
        out.options = payload_bytes(tb[TCA_OPTIONS]);
    if (tb[TCA_STATS2] == nullptr)
        return {};
    out.has_stats = true;
    const nl::AttrTable st = nl::parse_nested(tb[TCA_STATS2], TCA_STATS_MAX);
    if (auto basic = nl::attr_struct<gnet_stats_basic>(st, TCA_STATS_BASIC)) {
        out.bytes = basic->bytes;
        out.packets = basic->packets;
    }
    if (auto pkt64 = nl::attr_u64(st, TCA_STATS_PKT64))
        out.packets = *pkt64;
    if (auto q = nl::attr_struct<gnet_stats_queue>(st, TCA_STATS_QUEUE)) {
        out.qlen = q->qlen;
        out.backlog = q->backlog;
        out.drops = q->drops;
        out.requeues = q->requeues;
        out.overlimits = q->overlimits;
    }
    if (st[TCA_STATS_APP] != nullptr)
        out.app_stats = payload_bytes(st[TCA_STATS_APP]);
    return {};
}

std::optional<std::uint32_t> codel_limit(const QdiscInfo &q)
{
    const std::uint16_t key = q.kind == "codel"      ? TCA_CODEL_LIMIT
                              : q.kind == "fq_codel" ? TCA_FQ_CODEL_LIMIT
                                                     : 0;
    if (key == 0 || q.options.empty())
        return std::nullopt;
    std::optional<std::uint32_t> limit;
    nl::for_each_attr(q.options.data(), q.options.size(), [&](const nlattr *a) {
        if (mnl_attr_get_type(a) == key && mnl_attr_get_payload_len(a) >= sizeof(std::uint32_t))
            limit = mnl_attr_get_u32(a);
    });
    return limit;
}

std::optional<std::uint32_t> fq_codel_new_flow_count(const QdiscInfo &q)
{
    tc_fq_codel_xstats x{};
    constexpr std::size_t need = offsetof(tc_fq_codel_xstats, qdisc_stats) +
                                 offsetof(tc_fq_codel_qd_stats, new_flows_len);
    if (q.kind != "fq_codel" || q.app_stats.size() < need)
        return std::nullopt;
    std::memcpy(&x, q.app_stats.data(), std::min(q.app_stats.size(), sizeof(x)));
    if (x.type != TCA_FQ_CODEL_XSTATS_QDISC)
        return std::nullopt;
    return x.qdisc_stats.new_flow_count;
}

Status qdisc_replace(nl::Socket &sock, const QdiscSpec &spec)
{
    nl::Message msg;
    return sock.request(build_qdisc(msg, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, spec));
}

Status qdisc_replace_echo(nl::Socket &sock, const QdiscSpec &spec, std::vector<QdiscInfo> &deleted)
{
    nl::Message msg;
    nlmsghdr *nlh = build_qdisc(msg, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ECHO, spec);
    deleted.clear();
    return sock.request(nlh, [&](const nlmsghdr *m) {
        QdiscInfo info;
        if (m->nlmsg_type == RTM_DELQDISC && parse_qdisc(m, info).ok())
            deleted.push_back(std::move(info));
    });
}

Status qdisc_change(nl::Socket &sock, const QdiscSpec &spec)
{
    nl::Message msg;
    return sock.request(build_qdisc(msg, RTM_NEWQDISC, 0, spec));
}

Status qdisc_delete(nl::Socket &sock, const QdiscSpec &spec)
{
    nl::Message msg;
    QdiscSpec del = spec;
    del.options.clear();
    return sock.request(build_qdisc(msg, RTM_DELQDISC, 0, del));
}

Status qdisc_dump(nl::Socket &sock, int ifindex, std::vector<QdiscInfo> &out)
{
    nl::Message msg(1024);
    start_tc_msg(msg, RTM_GETQDISC, 0, ifindex, 0, 0);
    out.clear();
    Status parse_st;
    Status st = sock.dump(msg.hdr(), [&](const nlmsghdr *reply) {
        QdiscInfo info;
        Status s = parse_qdisc(reply, info);
        if (!s.ok()) {
            parse_st = s;
            return;
        }
        if (ifindex == 0 || info.ifindex == ifindex)
            out.push_back(std::move(info));
    });
    return st.ok() ? parse_st : st;
}

Status root_qdisc(nl::Socket &sock, int ifindex, std::optional<QdiscInfo> &out)
{
    std::vector<QdiscInfo> qdiscs;
    out.reset();
    Status st = qdisc_dump(sock, ifindex, qdiscs);
    if (!st.ok())
        return st;
    for (QdiscInfo &q : qdiscs) {
        if (q.parent == TC_H_ROOT && q.has_stats)
            out = std::move(q);
    }
    return {};
}

Status add_clsact(nl::Socket &sock, int ifindex)
{
    QdiscSpec spec;
    spec.ifindex = ifindex;
    spec.parent = kClsactParent;
    spec.handle = kClsactHandle;
    spec.kind = "clsact";
    return qdisc_replace(sock, spec);
}

nlmsghdr *build_matchall(nl::Message &msg, std::uint16_t type, std::uint16_t flags,
                         const MatchallSpec &spec)
{
    start_filter_msg(msg, type, flags, spec.ifindex, spec.parent, spec.prio, spec.protocol,
                     spec.handle);
    msg.put_strz(TCA_KIND, "matchall");
    if (type != RTM_NEWTFILTER)
        return msg.hdr();

    nlattr *opts = msg.nest_start(TCA_OPTIONS);
    if (spec.classid)
        msg.put_u32(TCA_MATCHALL_CLASSID, *spec.classid);
    if (spec.flags != 0)
        msg.put_u32(TCA_MATCHALL_FLAGS, spec.flags);
    nlattr *acts = nullptr;
    if (spec.gact_ok || spec.skbedit_queue_mapping)
        acts = msg.nest_start(TCA_MATCHALL_ACT);
    if (spec.skbedit_queue_mapping) {
        nlattr *act = msg.nest_start(1); // action order/priority
        msg.put_strz(TCA_ACT_KIND, "skbedit");
        nlattr *act_opts = msg.nest_start(TCA_ACT_OPTIONS);
        tc_skbedit parms{};
        parms.action = TC_ACT_PIPE;
        msg.put_raw(TCA_SKBEDIT_PARMS, &parms, sizeof(parms));
        msg.put_u16(TCA_SKBEDIT_QUEUE_MAPPING, *spec.skbedit_queue_mapping);
        msg.nest_end(act_opts);
        msg.nest_end(act);
    }
    if (spec.gact_ok) {
        nlattr *act = msg.nest_start(spec.skbedit_queue_mapping ? 2 : 1);
        msg.put_strz(TCA_ACT_KIND, "gact");
        nlattr *act_opts = msg.nest_start(TCA_ACT_OPTIONS);
        tc_gact parms{};
        parms.action = TC_ACT_OK;
        msg.put_raw(TCA_GACT_PARMS, &parms, sizeof(parms));
        msg.nest_end(act_opts);
        msg.nest_end(act);
    }
    if (acts != nullptr)
        msg.nest_end(acts);
    msg.nest_end(opts);
    return msg.hdr();
}

Status filter_add(nl::Socket &sock, const MatchallSpec &spec)
{
    nl::Message msg;
    return sock.request(build_matchall(msg, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, spec));
}

Status filter_delete(nl::Socket &sock, const MatchallSpec &spec)
{
    nl::Message msg;
    return sock.request(build_matchall(msg, RTM_DELTFILTER, 0, spec));
}

nlmsghdr *build_u32_match_all(nl::Message &msg, const U32MatchAllSpec &spec)
{
    start_filter_msg(msg, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, spec.ifindex, spec.parent,
                     spec.prio);
    msg.put_strz(TCA_KIND, "u32");
    nlattr *opts = msg.nest_start(TCA_OPTIONS);
    std::vector<std::uint8_t> sel(sizeof(tc_u32_sel) + sizeof(tc_u32_key), 0);
    tc_u32_sel hdr{};
    hdr.flags = TC_U32_TERMINAL;
    hdr.nkeys = 1;
    std::memcpy(sel.data(), &hdr, sizeof(hdr));
    msg.put_raw(TCA_U32_SEL, sel.data(), sel.size());
    if (spec.classid)
        msg.put_u32(TCA_U32_CLASSID, *spec.classid);
    msg.nest_end(opts);
    return msg.hdr();
}

Status filter_add(nl::Socket &sock, const U32MatchAllSpec &spec)
{
    nl::Message msg;
    return sock.request(build_u32_match_all(msg, spec));
}

Status filter_delete_prio(nl::Socket &sock, int ifindex, std::uint32_t parent, std::uint16_t prio,
                          std::string_view kind)
{
    nl::Message msg(1024);
    start_filter_msg(msg, RTM_DELTFILTER, 0, ifindex, parent, prio);
    msg.put_strz(TCA_KIND, kind);
    return sock.request(msg.hdr());
}

Status parse_filter(const nlmsghdr *nlh, FilterInfo &out)
{
    if (nlh->nlmsg_type != RTM_NEWTFILTER || mnl_nlmsg_get_payload_len(nlh) < sizeof(tcmsg))
        return Status::from_errno(EBADMSG);
    const auto *tcm = static_cast<const tcmsg *>(mnl_nlmsg_get_payload(nlh));
    out = FilterInfo{};
    out.ifindex = tcm->tcm_ifindex;
    out.parent = tcm->tcm_parent;
    out.handle = tcm->tcm_handle;
    out.info = tcm->tcm_info;
    const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    out.chain = nl::attr_u32(tb, TCA_CHAIN).value_or(0);
    out.kind = nl::attr_str(tb, TCA_KIND);
    return {};
}

Status filter_dump(nl::Socket &sock, int ifindex, std::uint32_t parent,
                   std::vector<FilterInfo> &out)
{
    nl::Message msg(1024);
    start_tc_msg(msg, RTM_GETTFILTER, 0, ifindex, parent, 0);
    out.clear();
    Status parse_st;
    Status st = sock.dump(msg.hdr(), [&](const nlmsghdr *reply) {
        if (reply->nlmsg_type != RTM_NEWTFILTER)
            return;
        FilterInfo info;
        if (Status s = parse_filter(reply, info); s.ok())
            out.push_back(std::move(info));
        else
            parse_st = s;
    });
    return st.ok() ? parse_st : st;
}

} // namespace netutil::rtnl

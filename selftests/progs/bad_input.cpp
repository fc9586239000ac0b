// kselftest: a catalogue of invalid requests to the interfaces the series touches.
//
// Each case sends one request the kernel must refuse (or, where the catalogue says so,
// accept as a valid configuration) and checks three things: the errno, the extack
// (message, and the attribute it points at or names as missing) and that the state
// is what it was before: the links of the netns, the test device's active queue
// counts (sysfs queues/{tx,rx}-* and the netdev family's QUEUE_GET), its qdiscs and
// its filters. Requests are built by hand with libmnl so that malformed attributes,
// zero limits that tc would not send and truncated headers reach the kernel as such.
//
// Every row states what it expects on the base and on the patched kernel. Which one
// is running is found by capability, not by version: CHANNELS_GET on a dummy with
// two TX queues succeeds only with the series. The case checks the row for that
// kernel, so every case passes on both kernels when they behave as documented.
//
// `bad_input --markdown` prints the catalogue as the table of
// Documentation/bad-input.md (a host test compares the two).
//
// Needs root. Cases in the areas unpriv and userns run in a child process that drops
// to uid/gid 65534 (and, for userns, then enters a new user and network namespace);
// the init netns state is compared before and after that child.

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "ethtool.hpp"
#include "ktap.hpp"
#include "nl.hpp"
#include "rtnl.hpp"
#include "sysfs.hpp"
#include "testdev.hpp"
#include "uapi_compat.hpp"

namespace {

using ksft::Outcome;
using netutil::cat;
namespace nl = netutil::nl;
namespace rtnl = netutil::rtnl;
namespace testdev = ksft::testdev;
namespace ethtool = netutil::ethtool;

// The test device: numtxqueues 4, one RX queue (the default), so tx above 4 and rx above
// 1 are above the maxima the series reports.
constexpr std::uint32_t kTxQueues = 4;
constexpr std::uint32_t kRxQueues = 1;
constexpr std::uint32_t kRootHandle = rtnl::make_handle(1, 0);
constexpr std::uint32_t kNobody = 65534;

// ---- expectations ----

enum class Kernel { base, patched };

enum class Point {
    none,    // the ack is not checked for an attribute
    bad,     // NLMSGERR_ATTR_OFFS must point at the attribute the request marks
    missing, // NLMSGERR_ATTR_MISS_TYPE must name the attribute type
};

struct Expect {
    int err = 0;               // positive errno; 0: the request is accepted
    std::string_view msg{};    // the exact extack message; empty: none may be sent
    Point point = Point::none; // for errors
    std::string_view attr{};   // name of the attribute for Point::bad/missing
    std::uint32_t miss = 0;    // attribute type for Point::missing
    std::string_view why{};    // for accepted requests: why that is right
};

constexpr Expect accepted(std::string_view why)
{
    return {0, {}, Point::none, {}, 0, why};
}
constexpr Expect error(int err, std::string_view msg = {})
{
    return {err, msg, Point::none, {}, 0, {}};
}
constexpr Expect error_at(int err, std::string_view msg, std::string_view attr)
{
    return {err, msg, Point::bad, attr, 0, {}};
}
constexpr Expect error_missing(int err, std::string_view attr, std::uint32_t type)
{
    return {err, {}, Point::missing, attr, type, {}};
}

// ---- netlink transport with the whole extended ACK ----

struct Ack {
    bool answered = false; // an NLMSG_ERROR/NLMSG_DONE (or a syscall result) arrived
    int err = 0;
    std::string msg;
    std::optional<std::uint32_t> offs;
    std::optional<std::uint32_t> miss_type;
    unsigned replies = 0; // data messages before the ACK/DONE
};

std::string errno_name(int e)
{
    const char *n = strerrorname_np(e);
    return n != nullptr ? std::string(n) : cat("errno ", e);
}

std::string describe(const Ack &a)
{
    if (!a.answered)
        return cat("no answer (", errno_name(a.err), ")");
    std::string s = a.err == 0 ? std::string("accepted") : errno_name(a.err);
    if (!a.msg.empty())
        s += cat(" \"", a.msg, "\"");
    if (a.offs)
        s += cat(" [attribute at offset ", *a.offs, "]");
    if (a.miss_type)
        s += cat(" [missing attribute type ", *a.miss_type, "]");
    return s;
}

void parse_ack_tlvs(const nlmsghdr *nlh, std::size_t offset, Ack &a)
{
    nl::for_each_attr(nlh, offset, [&](const nlattr *attr) {
        const std::uint16_t type = mnl_attr_get_type(attr);
        const std::size_t len = mnl_attr_get_payload_len(attr);
        const auto *data = static_cast<const char *>(mnl_attr_get_payload(attr));
        if (type == NLMSGERR_ATTR_MSG) {
            a.msg.assign(data, strnlen(data, len));
        } else if (type == NLMSGERR_ATTR_OFFS && len >= 4) {
            a.offs = mnl_attr_get_u32(attr);
        } else if (type == NLMSGERR_ATTR_MISS_TYPE && len >= 4) {
            a.miss_type = mnl_attr_get_u32(attr);
        }
    });
}

void parse_final(const nlmsghdr *nlh, Ack &a)
{
    a.answered = true;
    const std::size_t len = mnl_nlmsg_get_payload_len(nlh);
    if (nlh->nlmsg_type == NLMSG_ERROR) {
        if (len < sizeof(nlmsgerr)) {
            a.err = EBADMSG;
            return;
        }
        nlmsgerr e{};
        std::memcpy(&e, mnl_nlmsg_get_payload(nlh), sizeof(e));
        a.err = -e.error;
        if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) == 0)
            return;
        std::size_t offset = sizeof(nlmsgerr);
        if ((nlh->nlmsg_flags & NLM_F_CAPPED) == 0 && e.msg.nlmsg_len >= sizeof(nlmsghdr))
            offset += MNL_ALIGN(e.msg.nlmsg_len - sizeof(nlmsghdr));
        parse_ack_tlvs(nlh, offset, a);
        return;
    }
    // NLMSG_DONE: an int error, then the TLVs.
    int err = 0;
    if (len >= sizeof(int))
        std::memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(int));
    a.err = -err;
    if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) != 0)
        parse_ack_tlvs(nlh, sizeof(int), a);
}

using OnReply = std::function<void(const nlmsghdr *)>;

// Sends nlh as it is (nlmsg_len included: it may lie about the payload) as a request
// with NLM_F_ACK, or as a dump, and collects everything up to the ACK or NLMSG_DONE.
Ack transact(nl::Socket &sock, nlmsghdr *nlh, bool dump, const OnReply &cb = {})
{
    static std::uint32_t seq = 0x5eed0000;
    Ack a;
    nlh->nlmsg_seq = ++seq;
    nlh->nlmsg_pid = 0;
    nlh->nlmsg_flags |= dump ? NLM_F_DUMP : NLM_F_ACK;
    if (mnl_socket_sendto(sock.raw(), nlh, nlh->nlmsg_len) < 0) {
        a.err = errno;
        return a;
    }
    std::vector<char> buf(std::size_t{128} * 1024);
    while (true) {
        const ssize_t n = mnl_socket_recvfrom(sock.raw(), buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            a.err = errno == EAGAIN ? ETIMEDOUT : errno;
            return a;
        }
        int len = static_cast<int>(n);
        const auto *msg = reinterpret_cast<const nlmsghdr *>(buf.data());
        for (; mnl_nlmsg_ok(msg, len); msg = mnl_nlmsg_next(msg, &len)) {
            if (msg->nlmsg_seq != nlh->nlmsg_seq || !mnl_nlmsg_portid_ok(msg, sock.portid()))
                continue;
            if (msg->nlmsg_type == NLMSG_ERROR || msg->nlmsg_type == NLMSG_DONE) {
                parse_final(msg, a);
                return a;
            }
            if (msg->nlmsg_type == NLMSG_NOOP)
                continue;
            ++a.replies;
            if (cb)
                cb(msg);
        }
    }
}

// A socket whose receive times out, so that a kernel that never answers fails the case.
std::unique_ptr<nl::Socket> open_socket(int bus, bool strict = false)
{
    auto s = std::make_unique<nl::Socket>(bus);
    timeval tv{15, 0};
    setsockopt(mnl_socket_get_fd(s->raw()), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (strict) {
        int one = 1;
        mnl_socket_setsockopt(s->raw(), NETLINK_GET_STRICT_CHK, &one, sizeof(one));
    }
    return s;
}

// ---- requests ----

enum class Bus { rtnl, rtnl_strict, genl };

struct Request {
    nl::Message msg{8192};
    Bus bus = Bus::rtnl;
    bool dump = false;
    std::uint32_t mark = 0;  // offset from the netlink header of the attribute to blame
    std::string created;     // a link the request may create (removed afterwards)
    std::uint32_t value = 0; // a number the accept check needs
    std::string error;       // building the request failed (a setup error)
};

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

struct Env; // sockets and family ids

// Identity of a test device as the requests need it.
struct Fix {
    std::string name;
    int ifindex = 0;
};

// ---- state snapshots ----

struct QdiscRow {
    std::uint32_t handle = 0;
    std::uint32_t parent = 0;
    std::string kind;
    std::vector<std::uint8_t> options;                      // TCA_OPTIONS payload
    std::map<std::uint16_t, std::vector<std::uint8_t>> opt; // its attributes, if nested
};

struct Snapshot {
    std::string error;              // taking it failed
    std::vector<std::string> links; // every link of the netns
    std::string queues;             // active queue counts of the test device
    std::vector<QdiscRow> qdiscs;   // of the test device
    std::vector<std::string> filters;
};

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

std::string fmt(const QdiscRow &q)
{
    return cat(q.kind, " ", rtnl::format_handle(q.handle), " parent ",
               rtnl::format_handle(q.parent), q.options.empty() ? "" : " options ", hex(q.options));
}

std::string summary(const Snapshot &s)
{
    std::string q;
    for (const QdiscRow &r : s.qdiscs)
        q += cat(q.empty() ? "" : ", ", r.kind, " ", rtnl::format_handle(r.handle));
    return cat(s.links.size(), " links; ", s.queues, "; qdiscs ", q.empty() ? "none" : q, "; ",
               s.filters.size(), " filter(s)");
}

std::string join(const std::vector<std::string> &v)
{
    std::string s;
    for (const std::string &e : v)
        s += cat(s.empty() ? "" : " | ", e);
    return s.empty() ? std::string("none") : s;
}

// What differs between two snapshots (the first of links, queues, qdiscs, filters), or
// an empty string. Qdiscs are left out with skip_qdiscs.
std::string diff(const Snapshot &a, const Snapshot &b, bool skip_qdiscs = false)
{
    if (!a.error.empty() || !b.error.empty())
        return cat("state unreadable: ", a.error.empty() ? b.error : a.error);
    if (a.links != b.links) {
        std::vector<std::string> gone;
        std::vector<std::string> added;
        std::set_difference(a.links.begin(), a.links.end(), b.links.begin(), b.links.end(),
                            std::back_inserter(gone));
        std::set_difference(b.links.begin(), b.links.end(), a.links.begin(), a.links.end(),
                            std::back_inserter(added));
        return cat("links changed: before ", join(gone), "; after ", join(added));
    }
    if (a.queues != b.queues)
        return cat("active queues changed: ", a.queues, " -> ", b.queues);
    if (!skip_qdiscs) {
        std::vector<std::string> qa;
        std::vector<std::string> qb;
        for (const QdiscRow &q : a.qdiscs)
            qa.push_back(fmt(q));
        for (const QdiscRow &q : b.qdiscs)
            qb.push_back(fmt(q));
        if (qa != qb)
            return cat("qdiscs changed: ", join(qa), " -> ", join(qb));
    }
    if (a.filters != b.filters)
        return cat("filters changed: ", join(a.filters), " -> ", join(b.filters));
    return {};
}

struct Env {
    Kernel kernel = Kernel::patched;
    // Lib operations (test devices, clsact, filters) use this one.
    nl::Socket *lib = nullptr;
    std::unique_ptr<nl::Socket> rtnl;
    std::unique_ptr<nl::Socket> strict;
    std::unique_ptr<nl::Socket> genl;
    std::uint16_t ethtool_id = 0;
    std::uint16_t netdev_id = 0;
    // Whether sysfs shows this netns (not after entering a new one).
    bool sysfs = true;

    // Opens the sockets and resolves the families; an error message or "".
    std::string open(nl::Socket *lib_socket)
    {
        lib = lib_socket;
        rtnl = open_socket(NETLINK_ROUTE);
        strict = open_socket(NETLINK_ROUTE, true);
        genl = open_socket(NETLINK_GENERIC);
        if (nl::Status st = nl::genl_family_id(*genl, ETHTOOL_GENL_NAME, ethtool_id); !st.ok())
            return cat("ethtool family: ", st.str());
        if (nl::Status st = nl::genl_family_id(*genl, "netdev", netdev_id); !st.ok())
            return cat("netdev family: ", st.str());
        return {};
    }

    nl::Socket &sock(Bus b)
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

    Ack send(Request &r) { return transact(sock(r.bus), r.msg.hdr(), r.dump); }

    // Active queues of a device as the netdev family lists them (QUEUE_GET dump:
    // queues below real_num_{rx,tx}_queues of a device that is up).
    std::string netdev_queues(int ifindex)
    {
        Request r;
        nl::genl_start(r.msg, netdev_id, NETDEV_CMD_QUEUE_GET, NETDEV_FAMILY_VERSION, 0);
        r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(ifindex));
        unsigned rx = 0;
        unsigned tx = 0;
        const Ack a = transact(*genl, r.msg.hdr(), true, [&](const nlmsghdr *nlh) {
            const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(genlmsghdr), NETDEV_A_QUEUE_TYPE);
            const auto type = nl::attr_u32(tb, NETDEV_A_QUEUE_TYPE);
            if (type == NETDEV_QUEUE_TYPE_RX)
                ++rx;
            else if (type == NETDEV_QUEUE_TYPE_TX)
                ++tx;
        });
        if (a.err != 0)
            return cat("QUEUE_GET: ", describe(a));
        return cat("netdev tx/rx ", tx, "/", rx);
    }

    Snapshot snapshot(const Fix &fx)
    {
        Snapshot s;
        std::vector<rtnl::LinkInfo> links;
        if (nl::Status st = rtnl::link_dump(*lib, links); !st.ok()) {
            s.error = cat("link dump: ", st.str());
            return s;
        }
        for (const rtnl::LinkInfo &l : links) {
            // IFF_RUNNING and IFF_LOWER_UP follow the operstate, which linkwatch sets
            // later: leave them out.
            const std::uint32_t flags = l.flags & ~(IFF_RUNNING | IFF_LOWER_UP | IFF_DORMANT);
            s.links.push_back(cat(l.ifindex, " ", l.name, " kind ", l.kind.empty() ? "-" : l.kind,
                                  " flags 0x", std::hex, flags, std::dec, " mtu ", l.mtu,
                                  " numtx/rx ", l.num_tx_queues, "/", l.num_rx_queues));
        }
        std::sort(s.links.begin(), s.links.end());
        if (fx.ifindex == 0)
            return s;
        if (sysfs) {
            const auto tx = rtnl::sysfs_queue_count(fx.name, "tx");
            const auto rx = rtnl::sysfs_queue_count(fx.name, "rx");
            s.queues = cat("sysfs tx/rx ", tx ? cat(*tx) : std::string("?"), "/",
                           rx ? cat(*rx) : std::string("?"), ", ");
        }
        s.queues += netdev_queues(fx.ifindex);

        Request q;
        auto *t = static_cast<tcmsg *>(nullptr);
        q.msg.start(RTM_GETQDISC, 0);
        t = q.msg.put_extra<tcmsg>();
        t->tcm_family = AF_UNSPEC;
        t->tcm_ifindex = fx.ifindex;
        const Ack qa = transact(*rtnl, q.msg.hdr(), true, [&](const nlmsghdr *nlh) {
            const auto *tm = static_cast<const tcmsg *>(mnl_nlmsg_get_payload(nlh));
            if (tm->tcm_ifindex != fx.ifindex)
                return;
            QdiscRow row;
            row.handle = tm->tcm_handle;
            row.parent = tm->tcm_parent;
            const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
            row.kind = nl::attr_str(tb, TCA_KIND).value_or("");
            if (tb[TCA_OPTIONS] != nullptr) {
                const auto *p =
                        static_cast<const std::uint8_t *>(mnl_attr_get_payload(tb[TCA_OPTIONS]));
                row.options.assign(p, p + mnl_attr_get_payload_len(tb[TCA_OPTIONS]));
                nl::for_each_nested(tb[TCA_OPTIONS], [&](const nlattr *a) {
                    const auto *d = static_cast<const std::uint8_t *>(mnl_attr_get_payload(a));
                    row.opt[mnl_attr_get_type(a)].assign(d, d + mnl_attr_get_payload_len(a));
                });
            }
            s.qdiscs.push_back(std::move(row));
        });
        if (qa.err != 0) {
            s.error = cat("qdisc dump: ", describe(qa));
            return s;
        }
        // Filters of the root qdisc (if it has a block) and of the ingress side.
        for (const std::uint32_t parent : {0U, rtnl::kIngressParent}) {
            Request f;
            f.msg.start(RTM_GETTFILTER, 0);
            auto *ft = f.msg.put_extra<tcmsg>();
            ft->tcm_family = AF_UNSPEC;
            ft->tcm_ifindex = fx.ifindex;
            ft->tcm_parent = parent;
            const Ack fa = transact(*rtnl, f.msg.hdr(), true, [&](const nlmsghdr *nlh) {
                const auto *tm = static_cast<const tcmsg *>(mnl_nlmsg_get_payload(nlh));
                const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
                s.filters.push_back(cat("parent ", rtnl::format_handle(tm->tcm_parent), " info 0x",
                                        std::hex, tm->tcm_info, std::dec, " handle ",
                                        tm->tcm_handle, " chain ",
                                        nl::attr_u32(tb, TCA_CHAIN).value_or(0), " ",
                                        nl::attr_str(tb, TCA_KIND).value_or("?")));
            });
            if (fa.err != 0) {
                s.error = cat("filter dump: ", describe(fa));
                return s;
            }
        }
        return s;
    }
};

// ---- test devices ----

// A dummy made for one case: up, IPv6 off, clsact with one matchall filter on ingress
// (so that a filter is there to stay unchanged).
struct Device {
    std::unique_ptr<testdev::TestDummy> dev;
    std::optional<Outcome> error;
    Fix fix;
};

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
        d.error = Outcome::fail(cat("add clsact to ", d.fix.name, ": ", st.str()));
        return d;
    }
    rtnl::MatchallSpec f;
    f.ifindex = d.fix.ifindex;
    f.parent = rtnl::kIngressParent;
    f.handle = 1;
    f.prio = 1;
    if (nl::Status st = rtnl::filter_add(s, f); !st.ok())
        d.error = Outcome::fail(cat("add matchall on ingress of ", d.fix.name, ": ", st.str()));
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

struct Count {
    std::uint16_t type;
    std::uint32_t value;
};

// CHANNELS_SET on dev with the given counts; the attribute of type blame is marked.
Request channels_set(Env &e, std::string_view dev, std::initializer_list<Count> counts,
                     std::uint16_t blame = 0)
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
Request newlink(std::string name, const std::function<void(Request &)> &add = {})
{
    Request r;
    r.msg.start(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
    auto *ifm = r.msg.put_extra<ifinfomsg>();
    ifm->ifi_family = AF_UNSPEC;
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
                  const std::vector<std::vector<std::uint8_t>> &options, bool with_kind = true)
{
    Request r;
    r.msg.start(RTM_NEWQDISC, flags);
    auto *t = r.msg.put_extra<tcmsg>();
    t->tcm_family = AF_UNSPEC;
    t->tcm_ifindex = fx.ifindex;
    t->tcm_parent = TC_H_ROOT;
    t->tcm_handle = kRootHandle;
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

constexpr std::uint16_t kCreateReplace = NLM_F_CREATE | NLM_F_REPLACE;

// Replace the root qdisc of fx (a setup step).
std::string set_root(Env &e, const Fix &fx, std::string_view kind)
{
    Request r = qdisc_msg(fx, kCreateReplace, kind, {});
    const Ack a = e.send(r);
    return a.err == 0 ? std::string() : cat("replace root ", kind, ": ", describe(a));
}

// RTM_NEWTFILTER on fx, parent and tcm_info as given; with a kind, TCA_OPTIONS holds
// TCA_MATCHALL_FLAGS if mall_flags is set.
Request filter_msg(const Fix &fx, std::uint16_t flags, std::uint32_t parent, std::uint16_t prio,
                   std::uint32_t handle, std::optional<std::string_view> kind,
                   std::optional<std::uint32_t> mall_flags = std::nullopt)
{
    Request r;
    r.msg.start(RTM_NEWTFILTER, flags);
    auto *t = r.msg.put_extra<tcmsg>();
    t->tcm_family = AF_UNSPEC;
    t->tcm_ifindex = fx.ifindex;
    t->tcm_parent = parent;
    t->tcm_handle = handle;
    t->tcm_info = TC_H_MAKE(static_cast<std::uint32_t>(prio) << 16, htons(0x0003));
    if (kind) {
        r.msg.put_strz(TCA_KIND, *kind);
        nlattr *o = r.msg.nest_start(TCA_OPTIONS);
        if (mall_flags)
            r.msg.put_u32(TCA_MATCHALL_FLAGS, *mall_flags);
        r.msg.nest_end(o);
    }
    return r;
}

// ---- accept checks: the state a valid request leads to ----

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
            return cat("root qdisc is ", fmt(q), ", expected ", kind, " 1:");
        const auto it = q.opt.find(type);
        if (it == q.opt.end() || it->second.size() < 4)
            return cat("root ", kind, " reports no option ", type);
        std::uint32_t v = 0;
        std::memcpy(&v, it->second.data(), 4);
        if (v != value)
            return cat("root ", kind, " option ", type, " is ", v, ", expected ", value);
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
        return cat("accepted, but ", r.created, " cannot be read: ", st.str());
    if (info.kind != testdev::kDummyKind || info.num_tx_queues != r.value)
        return cat(r.created, " is kind ", info.kind, " with ", info.num_tx_queues,
                   " TX queues, expected dummy with ", r.value);
    rtnl::delete_link(*e.lib, r.created);
    const Snapshot now = e.snapshot(fx);
    if (std::string d = diff(before, now); !d.empty())
        return cat("after removing ", r.created, ": ", d);
    (void)after;
    return {};
}

// ---- the catalogue ----

struct RunResult {
    Ack ack{};
    std::string state{}; // why the state is wrong, or empty
    std::string note{};  // what was seen
    std::string skip{};  // the case cannot run here
};

struct ChildCtx; // the unprivileged child (below)

using Build = Request (*)(Env &, const Fix &);
using Prep = std::string (*)(Env &, const Fix &);
using Check = std::string (*)(Env &, const Fix &, const Request &, const Snapshot &,
                              const Snapshot &);
using ChildBody = RunResult (*)(ChildCtx &);

enum class Where {
    init,   // as root, in the init netns, on a fresh test device
    unpriv, // in the child, as uid 65534 in the init user and network namespace
    userns, // in the child, as uid 65534 in its own user and network namespace
};

struct Row {
    std::string_view name;
    std::string_view request; // what is asked
    std::string_view how;     // how it is sent
    Expect patched;
    Expect base;
    std::string_view state; // what state is checked afterwards
    Where where = Where::init;
    Build build = nullptr;
    Prep prep = nullptr;   // before the "before" snapshot
    Check check = nullptr; // when accepted; default: state unchanged
    std::uint32_t tx_queues = kTxQueues;
    ChildBody child = nullptr;
};

// Attribute names used in the table.
constexpr std::string_view kTxAttr = "ETHTOOL_A_CHANNELS_TX_COUNT";
constexpr std::string_view kRxAttr = "ETHTOOL_A_CHANNELS_RX_COUNT";
constexpr std::string_view kCombinedAttr = "ETHTOOL_A_CHANNELS_COMBINED_COUNT";
constexpr std::string_view kOtherAttr = "ETHTOOL_A_CHANNELS_OTHER_COUNT";
constexpr std::string_view kHeaderAttr = "ETHTOOL_A_CHANNELS_HEADER";
constexpr std::string_view kDevNameAttr = "ETHTOOL_A_HEADER_DEV_NAME";

// Extack messages, as the kernel words them.
constexpr std::string_view kExceedsMax = "requested channel count exceeds maximum";
constexpr std::string_view kNoChannel =
        "requested channel counts would result in no RX or TX channel being configured";
constexpr std::string_view kTxQueuesMsg = "Invalid number of transmit queues";
constexpr std::string_view kRxQueuesMsg = "Invalid number of receive queues";
constexpr std::string_view kPolicyFailed = "Attribute failed policy validation";
constexpr std::string_view kUnknownAttr = "Unknown attribute type";
constexpr std::string_view kBadLength = "invalid attribute length";
constexpr std::string_view kOutOfRange = "integer out of range";
constexpr std::string_view kReservedBit = "reserved bit set";

constexpr std::string_view kHowChannels = "ethtool genl CHANNELS_SET (as `ethtool -L`)";
constexpr std::string_view kHowEthtool = "ethtool genl, hand-built";
constexpr std::string_view kHowNewlink = "rtnetlink RTM_NEWLINK";
constexpr std::string_view kHowQdisc = "rtnetlink RTM_NEWQDISC, TCA_OPTIONS built by hand";
constexpr std::string_view kHowFilter = "rtnetlink RTM_NEWTFILTER";
constexpr std::string_view kHowQstats = "netdev genl QSTATS_GET dump";
constexpr std::string_view kHowQueue = "netdev genl QUEUE_GET";

constexpr std::string_view kAllState = "links, active queues, qdiscs, filters unchanged";
constexpr std::string_view kOwnState = "links of its netns, active queues of its dummy unchanged";
constexpr std::string_view kInitState =
        "init netns: links, active queues, qdiscs, filters unchanged";

const Expect kNoChannelsOps = error(EOPNOTSUPP);

// ---- the unprivileged child ----

struct ChildCtx {
    Kernel kernel = Kernel::patched;
    Fix init_dev{};             // the test device in the init netns
    Env init{};                 // sockets opened as uid 65534 before any unshare
    std::optional<Env> own{};   // sockets of its own netns, once entered
    std::string userns_error{}; // why it has no own netns
    std::optional<nl::Socket> own_lib{};
    std::string own_dev{}; // its own dummy (numtxqueues 4)
    int own_ifindex = 0;
    std::string big_dev{}; // its own dummy with 4096 TX queues
    int big_ifindex = 0;
};

RunResult send_init(ChildCtx &c, Request r)
{
    RunResult res;
    res.ack = c.init.send(r);
    return res;
}

// Sends r in the child's own netns and checks that its links and its dummy's active
// queues stay as they were (unless check says what they must be after an accepted
// request).
RunResult send_own(ChildCtx &c, Request r,
                   const std::function<std::string(const Snapshot &, const Snapshot &)> &check = {})
{
    RunResult res;
    if (!c.own) {
        res.skip = c.userns_error;
        return res;
    }
    const Fix fx{c.own_dev, c.own_ifindex};
    Snapshot before = c.own->snapshot(fx);
    res.ack = c.own->send(r);
    Snapshot after = c.own->snapshot(fx);
    if (res.ack.err == 0 && check)
        res.state = check(before, after);
    else
        res.state = diff(before, after);
    res.note = summary(after);
    if (res.ack.err == 0 && !r.created.empty() && r.created != c.own_dev && r.created != c.big_dev)
        rtnl::delete_link(*c.own_lib, r.created);
    return res;
}

// Drops to uid/gid 65534 with no supplementary groups (and so no capabilities), keeping
// the process dumpable so that it may write its own uid_map later.
std::string drop_privileges()
{
    if (setgroups(0, nullptr) != 0)
        return cat("setgroups: ", errno_name(errno));
    if (setresgid(kNobody, kNobody, kNobody) != 0)
        return cat("setresgid: ", errno_name(errno));
    if (setresuid(kNobody, kNobody, kNobody) != 0)
        return cat("setresuid: ", errno_name(errno));
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    return {};
}

std::string write_proc(const char *path, std::string_view value)
{
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return cat(path, ": ", errno_name(errno));
    const ssize_t n = ::write(fd, value.data(), value.size());
    const int e = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(value.size()))
        return cat(path, ": ", errno_name(e));
    return {};
}

// unshare(CLONE_NEWUSER | CLONE_NEWNET), map root of the new user namespace to 65534,
// open the sockets of the new netns and create the dummy the userns cases work on.
void enter_userns(ChildCtx &c)
{
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
        const int e = errno;
        // Without CONFIG_USER_NS there is no /proc/self/ns/user; Debian's kernels then
        // answer EPERM, not EINVAL (their kernel.unprivileged_userns_clone check).
        std::string why;
        if (access("/proc/self/ns/user", F_OK) != 0)
            why = " (kernel built without CONFIG_USER_NS)";
        else if (netutil::sysfs::read_file("/proc/sys/kernel/unprivileged_userns_clone")
                         .value_or("1")
                         .starts_with("0"))
            why = " (kernel.unprivileged_userns_clone is 0)";
        c.userns_error =
                cat("unshare(CLONE_NEWUSER | CLONE_NEWNET) as uid 65534: ", errno_name(e), why);
        return;
    }
    // Best effort: the capabilities in the new namespace do not depend on the maps.
    write_proc("/proc/self/setgroups", "deny");
    write_proc("/proc/self/uid_map", cat("0 ", kNobody, " 1\n"));
    write_proc("/proc/self/gid_map", cat("0 ", kNobody, " 1\n"));
    try {
        c.own_lib.emplace(NETLINK_ROUTE);
        Env env;
        env.kernel = c.kernel;
        env.sysfs = false; // /sys still shows the init netns
        if (std::string err = env.open(&*c.own_lib); !err.empty()) {
            c.userns_error = cat("in the new netns: ", err);
            return;
        }
        c.own = std::move(env);
    } catch (const std::exception &ex) {
        c.userns_error = cat("in the new netns: ", ex.what());
    }
}

std::string own_device_ready(ChildCtx &c)
{
    if (!c.own)
        return c.userns_error;
    if (c.own_ifindex == 0)
        return "the dummy of the own netns was not created (see userns.newlink_own_netns)";
    return {};
}

// Active TX/RX queues of the child's dummy must be tx/rx.
std::string own_queues_are(ChildCtx &c, unsigned tx, unsigned rx)
{
    const std::string q = c.own->netdev_queues(c.own_ifindex);
    const std::string want = cat("netdev tx/rx ", tx, "/", rx);
    return q == want ? std::string() : cat(q, ", expected ", want);
}

RunResult own_channels(ChildCtx &c, std::initializer_list<Count> counts)
{
    if (std::string err = own_device_ready(c); !err.empty())
        return RunResult{.skip = err};
    return send_own(c, channels_set(*c.own, c.own_dev, counts));
}

// ---- rows ----

std::vector<Row> catalogue()
{
    std::vector<Row> rows = {
            // ethtool -L: argument checks of the ethtool core, reached only with the
            // driver's get_channels/set_channels.
            {"channels.tx_zero", "`ethtool -L DEV tx 0`", kHowChannels,
             error_at(EINVAL, kNoChannel, kTxAttr), kNoChannelsOps, kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, 0}},
                                     ETHTOOL_A_CHANNELS_TX_COUNT);
             }},
            {"channels.rx_zero", "`ethtool -L DEV rx 0`", kHowChannels,
             error_at(EINVAL, kNoChannel, kRxAttr), kNoChannelsOps, kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_RX_COUNT, 0}},
                                     ETHTOOL_A_CHANNELS_RX_COUNT);
             }},
            {"channels.tx_above_max", "`ethtool -L DEV tx 5` (4 TX queues)", kHowChannels,
             error_at(EINVAL, kExceedsMax, kTxAttr), kNoChannelsOps, kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, kTxQueues + 1}},
                                     ETHTOOL_A_CHANNELS_TX_COUNT);
             }},
            {"channels.tx_u32_max", "`ethtool -L DEV tx 4294967295`", kHowChannels,
             error_at(EINVAL, kExceedsMax, kTxAttr), kNoChannelsOps, kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, 0xffffffffU}},
                                     ETHTOOL_A_CHANNELS_TX_COUNT);
             }},
            {"channels.rx_above_max", "`ethtool -L DEV rx 2` (1 RX queue)", kHowChannels,
             error_at(EINVAL, kExceedsMax, kRxAttr), kNoChannelsOps, kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_RX_COUNT, kRxQueues + 1}},
                                     ETHTOOL_A_CHANNELS_RX_COUNT);
             }},
            {"channels.combined", "`ethtool -L DEV combined 1` (no combined channels)",
             kHowChannels, error_at(EINVAL, kExceedsMax, kCombinedAttr), kNoChannelsOps,
             kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_COMBINED_COUNT, 1}},
                                     ETHTOOL_A_CHANNELS_COMBINED_COUNT);
             }},
            {"channels.other", "`ethtool -L DEV other 1` (no other channels)", kHowChannels,
             error_at(EINVAL, kExceedsMax, kOtherAttr), kNoChannelsOps, kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_OTHER_COUNT, 1}},
                                     ETHTOOL_A_CHANNELS_OTHER_COUNT);
             }},
            {"channels.tx_zero_combined_zero",
             "`ethtool -L DEV tx 0 combined 0` (combined was 0)", kHowChannels,
             error_at(EINVAL, kNoChannel, kTxAttr), kNoChannelsOps, kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 return channels_set(e, f.name,
                                     {{ETHTOOL_A_CHANNELS_TX_COUNT, 0},
                                      {ETHTOOL_A_CHANNELS_COMBINED_COUNT, 0}},
                                     ETHTOOL_A_CHANNELS_TX_COUNT);
             }},
            {"channels.nothing_to_change", "CHANNELS_SET with a header and no count",
             kHowChannels, accepted("nothing to change, no notification"), kNoChannelsOps,
             kAllState, Where::init,
             [](Env &e, const Fix &f) { return channels_set(e, f.name, {}); }},
            // Malformed ethtool requests: the policy is checked before the driver is
            // asked, so both kernels answer alike.
            {"channels.no_header", "CHANNELS_SET tx 2 without ETHTOOL_A_CHANNELS_HEADER",
             kHowEthtool,
             error_missing(EINVAL, kHeaderAttr, ETHTOOL_A_CHANNELS_HEADER),
             error_missing(EINVAL, kHeaderAttr, ETHTOOL_A_CHANNELS_HEADER), kAllState,
             Where::init,
             [](Env &e, const Fix &) {
                 Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
                 r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
                 return r;
             }},
            {"channels.header_empty", "CHANNELS_SET tx 2, header with neither index nor name",
             kHowEthtool, error_at(EINVAL, "neither ifindex nor name specified", kHeaderAttr),
             error_at(EINVAL, "neither ifindex nor name specified", kHeaderAttr), kAllState,
             Where::init,
             [](Env &e, const Fix &) {
                 Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
                 r.mark = tail(r);
                 r.msg.nest_end(r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER));
                 r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
                 return r;
             }},
            {"channels.unknown_device", "CHANNELS_SET tx 2 on a name no device has",
             kHowEthtool, error_at(ENODEV, "no device matches name", kDevNameAttr),
             error_at(ENODEV, "no device matches name", kDevNameAttr), kAllState, Where::init,
             [](Env &e, const Fix &) {
                 Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
                 nlattr *h = r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
                 r.mark = tail(r);
                 r.msg.put_strz(ETHTOOL_A_HEADER_DEV_NAME, testdev::unique_name("bx"));
                 r.msg.nest_end(h);
                 r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
                 return r;
             }},
            {"channels.ifindex_name_mismatch",
             "CHANNELS_SET tx 2, header with the device's index and the name `lo`", kHowEthtool,
             error_at(ENODEV, "ifindex and name do not match", kHeaderAttr),
             error_at(ENODEV, "ifindex and name do not match", kHeaderAttr), kAllState,
             Where::init,
             [](Env &e, const Fix &f) {
                 Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
                 r.mark = tail(r);
                 nlattr *h = r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
                 r.msg.put_u32(ETHTOOL_A_HEADER_DEV_INDEX, static_cast<std::uint32_t>(f.ifindex));
                 r.msg.put_strz(ETHTOOL_A_HEADER_DEV_NAME, "lo");
                 r.msg.nest_end(h);
                 r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
                 return r;
             }},
            {"channels.tx_count_short", "CHANNELS_SET with a 2-byte TX_COUNT (wrong length)",
             kHowEthtool, error_at(EINVAL, kBadLength, kTxAttr),
             error_at(EINVAL, kBadLength, kTxAttr), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
                 put_header(r, f.name);
                 const std::uint16_t two = 2;
                 r.mark = tail(r);
                 r.msg.put_raw(ETHTOOL_A_CHANNELS_TX_COUNT, &two, sizeof(two));
                 return r;
             }},
            {"channels.unknown_attr",
             "CHANNELS_SET tx 2 plus attribute type 10 (above the maximum)",
             kHowEthtool, error_at(EINVAL, kUnknownAttr, "type 10"),
             error_at(EINVAL, kUnknownAttr, "type 10"), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, 2}});
                 r.mark = tail(r);
                 r.msg.put_u32(ETHTOOL_A_CHANNELS_MAX + 1, 2);
                 return r;
             }},
            {"channels.header_not_nested", "CHANNELS_SET tx 2, header without NLA_F_NESTED",
             kHowEthtool, error_at(EINVAL, "NLA_F_NESTED is missing", kHeaderAttr),
             error_at(EINVAL, "NLA_F_NESTED is missing", kHeaderAttr), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
                 const std::string name = f.name;
                 const auto inner =
                         attr_bytes(ETHTOOL_A_HEADER_DEV_NAME, name.c_str(), name.size() + 1);
                 r.mark = tail(r);
                 r.msg.put_raw(ETHTOOL_A_CHANNELS_HEADER, inner.data(), inner.size());
                 r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
                 return r;
             }},
            {"channels.dev_name_not_string",
             "CHANNELS_SET tx 2, DEV_NAME of 4 bytes without a NUL (wrong type)", kHowEthtool,
             error_at(EINVAL, kPolicyFailed, kDevNameAttr),
             error_at(EINVAL, kPolicyFailed, kDevNameAttr), kAllState, Where::init,
             [](Env &e, const Fix &) {
                 Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
                 nlattr *h = r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
                 r.mark = tail(r);
                 r.msg.put_u32(ETHTOOL_A_HEADER_DEV_NAME, 0x64636261); // "abcd"
                 r.msg.nest_end(h);
                 r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
                 return r;
             }},
            {"channels.header_flags_reserved",
             "CHANNELS_SET tx 2, header flags ETHTOOL_FLAG_STATS (not allowed here)",
             kHowEthtool, error_at(EINVAL, kReservedBit, "ETHTOOL_A_HEADER_FLAGS"),
             error_at(EINVAL, kReservedBit, "ETHTOOL_A_HEADER_FLAGS"), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
                 nlattr *h = r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
                 r.msg.put_strz(ETHTOOL_A_HEADER_DEV_NAME, f.name);
                 r.mark = tail(r);
                 r.msg.put_u32(ETHTOOL_A_HEADER_FLAGS, ETHTOOL_FLAG_STATS);
                 r.msg.nest_end(h);
                 r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
                 return r;
             }},
            {"ethtool.unknown_cmd", "ethtool family, command 200", kHowEthtool,
             error(EOPNOTSUPP), error(EOPNOTSUPP), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = ethtool_msg(e, 200);
                 put_header(r, f.name);
                 return r;
             }},
            {"ethtool.short_genl_header", "ethtool family, 2 bytes of payload (no genlmsghdr)",
             kHowEthtool, error(EINVAL), error(EINVAL), kAllState, Where::init,
             [](Env &e, const Fix &) {
                 Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
                 r.msg.hdr()->nlmsg_len = NLMSG_HDRLEN + 2;
                 return r;
             }},

            // rtnetlink: new links.
            {"newlink.txq_zero", "`ip link add NAME numtxqueues 0 type dummy`", kHowNewlink,
             error(EINVAL, kTxQueuesMsg), error(EINVAL, kTxQueuesMsg), kAllState, Where::init,
             [](Env &, const Fix &) { return newlink_queues(0, std::nullopt); }},
            {"newlink.txq_4097", "`ip link add NAME numtxqueues 4097 type dummy`", kHowNewlink,
             error(EINVAL, kTxQueuesMsg), error(EINVAL, kTxQueuesMsg), kAllState, Where::init,
             [](Env &, const Fix &) { return newlink_queues(4097, std::nullopt); }},
            {"newlink.rxq_zero", "`ip link add NAME numrxqueues 0 type dummy`", kHowNewlink,
             error(EINVAL, kRxQueuesMsg), error(EINVAL, kRxQueuesMsg), kAllState, Where::init,
             [](Env &, const Fix &) { return newlink_queues(std::nullopt, 0); }},
            {"newlink.rxq_4097", "`ip link add NAME numrxqueues 4097 type dummy`", kHowNewlink,
             error(EINVAL, kRxQueuesMsg), error(EINVAL, kRxQueuesMsg), kAllState, Where::init,
             [](Env &, const Fix &) { return newlink_queues(std::nullopt, 4097); }},
            {"newlink.txq_short", "new dummy with a 2-byte IFLA_NUM_TX_QUEUES (wrong length)",
             kHowNewlink, error_at(ERANGE, kPolicyFailed, "IFLA_NUM_TX_QUEUES"),
             error_at(ERANGE, kPolicyFailed, "IFLA_NUM_TX_QUEUES"), kAllState, Where::init,
             [](Env &, const Fix &) {
                 return newlink(testdev::unique_name("bn"), [](Request &r) {
                     const std::uint16_t four = 4;
                     r.mark = tail(r);
                     r.msg.put_raw(IFLA_NUM_TX_QUEUES, &four, sizeof(four));
                 });
             }},
            {"newlink.txq_long",
             "new dummy with an 8-byte IFLA_NUM_TX_QUEUES holding 2 (wrong length)", kHowNewlink,
             accepted("rtnetlink parses NEWLINK liberally: the first 4 bytes are used, a dummy "
                      "with 2 TX queues is created"),
             accepted("as on the patched kernel"),
             "the new dummy has 2 TX queues; after removing it, all unchanged", Where::init,
             [](Env &, const Fix &) {
                 Request r = newlink(testdev::unique_name("bn"), [](Request &q) {
                     const std::uint64_t two = 2;
                     q.msg.put_raw(IFLA_NUM_TX_QUEUES, &two, sizeof(two));
                 });
                 r.value = 2;
                 return r;
             },
             nullptr, link_created},
            {"newlink.unknown_attr", "new dummy plus attribute type 1000 (above IFLA_MAX)",
             kHowNewlink,
             accepted("RTM_NEWLINK is not strictly validated: unknown attributes are ignored"),
             accepted("as on the patched kernel"),
             "the new dummy has 1 TX queue; after removing it, all unchanged", Where::init,
             [](Env &, const Fix &) {
                 Request r = newlink(testdev::unique_name("bn"),
                                     [](Request &q) { q.msg.put_u32(1000, 1); });
                 r.value = 1;
                 return r;
             },
             nullptr, link_created},
            {"newlink.unknown_kind", "`ip link add NAME type nosuchkind`", kHowNewlink,
             error(EOPNOTSUPP, "Unknown device type"), error(EOPNOTSUPP, "Unknown device type"),
             kAllState, Where::init,
             [](Env &, const Fix &) {
                 Request r;
                 r.msg.start(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
                 r.msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
                 r.created = testdev::unique_name("bn");
                 r.msg.put_strz(IFLA_IFNAME, r.created);
                 nlattr *li = r.msg.nest_start(IFLA_LINKINFO);
                 r.msg.put_strz(IFLA_INFO_KIND, "nosuchkind");
                 r.msg.nest_end(li);
                 return r;
             }},
            {"newlink.ifname_too_long", "new dummy named with 16 characters", kHowNewlink,
             error_at(ERANGE, kPolicyFailed, "IFLA_IFNAME"),
             error_at(ERANGE, kPolicyFailed, "IFLA_IFNAME"), kAllState, Where::init,
             [](Env &, const Fix &) {
                 Request r;
                 r.msg.start(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
                 r.msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
                 r.mark = tail(r);
                 r.msg.put_strz(IFLA_IFNAME, "bad_input_16char");
                 nlattr *li = r.msg.nest_start(IFLA_LINKINFO);
                 r.msg.put_strz(IFLA_INFO_KIND, testdev::kDummyKind);
                 r.msg.nest_end(li);
                 return r;
             }},
            {"newlink.address_short", "new dummy with a 5-byte IFLA_ADDRESS", kHowNewlink,
             error(EINVAL), error(EINVAL), kAllState, Where::init,
             [](Env &, const Fix &) {
                 return newlink(testdev::unique_name("bn"), [](Request &r) {
                     const std::uint8_t mac[5] = {0x02, 0, 0, 0, 1};
                     r.msg.put_raw(IFLA_ADDRESS, mac, sizeof(mac));
                 });
             }},
            {"newlink.address_multicast", "new dummy with address 01:00:5e:00:00:01",
             kHowNewlink, error(EADDRNOTAVAIL), error(EADDRNOTAVAIL), kAllState, Where::init,
             [](Env &, const Fix &) {
                 return newlink(testdev::unique_name("bn"), [](Request &r) {
                     const std::uint8_t mac[6] = {0x01, 0x00, 0x5e, 0, 0, 1};
                     r.msg.put_raw(IFLA_ADDRESS, mac, sizeof(mac));
                 });
             }},
            {"newlink.negative_ifindex", "new dummy with ifi_index -1", kHowNewlink,
             error(EINVAL, "ifindex can't be negative"), error(EINVAL, "ifindex can't be negative"),
             kAllState, Where::init,
             [](Env &, const Fix &) {
                 Request r = newlink(testdev::unique_name("bn"));
                 auto *ifm = static_cast<ifinfomsg *>(mnl_nlmsg_get_payload(r.msg.hdr()));
                 ifm->ifi_index = -1;
                 return r;
             }},
            {"newlink.short_header", "RTM_NEWLINK with 4 bytes of payload (ifinfomsg is 16)",
             kHowNewlink, error(EINVAL, "Invalid header length"),
             error(EINVAL, "Invalid header length"), kAllState, Where::init,
             [](Env &, const Fix &) {
                 Request r;
                 r.msg.start(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
                 r.msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
                 r.msg.hdr()->nlmsg_len = NLMSG_HDRLEN + 4;
                 return r;
             }},
            {"newlink.empty_payload", "RTM_NEWLINK with no payload at all", kHowNewlink,
             accepted("rtnetlink ignores a message shorter than struct rtgenmsg and acks it"),
             accepted("as on the patched kernel"), kAllState, Where::init,
             [](Env &, const Fix &) {
                 Request r;
                 r.msg.start(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
                 return r;
             }},
            {"newlink.change_numtxqueues",
             "RTM_NEWLINK on the existing device with IFLA_NUM_TX_QUEUES 8 (no NLM_F_CREATE)",
             kHowNewlink,
             accepted("the allocated counts are fixed at creation; a change ignores them"),
             accepted("as on the patched kernel"), kAllState, Where::init,
             [](Env &, const Fix &f) {
                 Request r;
                 r.msg.start(RTM_NEWLINK, 0);
                 auto *ifm = r.msg.put_extra<ifinfomsg>();
                 ifm->ifi_family = AF_UNSPEC;
                 ifm->ifi_index = f.ifindex;
                 r.msg.put_u32(IFLA_NUM_TX_QUEUES, 8);
                 r.msg.put_u32(IFLA_NUM_RX_QUEUES, 8);
                 return r;
             }},
            {"dellink.unknown_name", "`ip link del NAME` for a name no device has",
             "rtnetlink RTM_DELLINK", error(ENODEV), error(ENODEV), kAllState, Where::init,
             [](Env &, const Fix &) {
                 Request r;
                 r.msg.start(RTM_DELLINK, 0);
                 r.msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
                 r.msg.put_strz(IFLA_IFNAME, testdev::unique_name("bx"));
                 return r;
             }},
            {"getlink.strict_unknown_attr", "link dump with attribute type 1000",
             "rtnetlink RTM_GETLINK dump, NETLINK_GET_STRICT_CHK",
             error_at(EINVAL, kUnknownAttr, "type 1000"),
             error_at(EINVAL, kUnknownAttr, "type 1000"), kAllState, Where::init,
             [](Env &, const Fix &) {
                 Request r;
                 r.bus = Bus::rtnl_strict;
                 r.dump = true;
                 r.msg.start(RTM_GETLINK, 0);
                 r.msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
                 r.mark = tail(r);
                 r.msg.put_u32(1000, 1);
                 return r;
             }},
            {"getlink.strict_unsupported_attr", "link dump with IFLA_MTU (not a dump filter)",
             "rtnetlink RTM_GETLINK dump, NETLINK_GET_STRICT_CHK",
             error(EINVAL, "Unsupported attribute in link dump request"),
             error(EINVAL, "Unsupported attribute in link dump request"), kAllState, Where::init,
             [](Env &, const Fix &) {
                 Request r;
                 r.bus = Bus::rtnl_strict;
                 r.dump = true;
                 r.msg.start(RTM_GETLINK, 0);
                 r.msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
                 r.msg.put_u32(IFLA_MTU, 1500);
                 return r;
             }},
            {"getlink.strict_ifindex", "link dump with ifi_index set in the header",
             "rtnetlink RTM_GETLINK dump, NETLINK_GET_STRICT_CHK",
             error(EINVAL, "Filter by device index not supported for link dumps"),
             error(EINVAL, "Filter by device index not supported for link dumps"), kAllState,
             Where::init,
             [](Env &, const Fix &f) {
                 Request r;
                 r.bus = Bus::rtnl_strict;
                 r.dump = true;
                 r.msg.start(RTM_GETLINK, 0);
                 auto *ifm = r.msg.put_extra<ifinfomsg>();
                 ifm->ifi_family = AF_UNSPEC;
                 ifm->ifi_index = f.ifindex;
                 return r;
             }},

            // Qdiscs: zero limits that tc does not send.
            {"qdisc.codel_limit_zero", "`tc qdisc replace dev DEV root handle 1: codel limit 0`",
             kHowQdisc,
             accepted("valid configuration: every packet is dropped; the patched codel also "
                      "stops bypassing it (TCQ_F_CAN_BYPASS cleared)"),
             accepted("valid configuration: every packet should be dropped, but an idle codel "
                      "is still bypassed (the bug the series fixes)"),
             "root is codel 1: with TCA_CODEL_LIMIT 0; links, queues, filters unchanged",
             Where::init,
             [](Env &, const Fix &f) {
                 return qdisc_msg(f, kCreateReplace, "codel", {u32_bytes(TCA_CODEL_LIMIT, 0)});
             },
             nullptr,
             [](Env &, const Fix &, const Request &, const Snapshot &b, const Snapshot &a) {
                 return root_qdisc_is(b, a, "codel", TCA_CODEL_LIMIT, 0);
             }},
            {"qdisc.fq_codel_limit_zero",
             "`tc qdisc replace dev DEV root handle 1: fq_codel limit 0`", kHowQdisc,
             accepted("valid configuration: every packet is dropped; the patched fq_codel also "
                      "stops bypassing it"),
             accepted("valid configuration, but an idle fq_codel is still bypassed (the bug the "
                      "series fixes)"),
             "root is fq_codel 1: with TCA_FQ_CODEL_LIMIT 0; links, queues, filters unchanged",
             Where::init,
             [](Env &, const Fix &f) {
                 return qdisc_msg(f, kCreateReplace, "fq_codel",
                                  {u32_bytes(TCA_FQ_CODEL_LIMIT, 0)});
             },
             nullptr,
             [](Env &, const Fix &, const Request &, const Snapshot &b, const Snapshot &a) {
                 return root_qdisc_is(b, a, "fq_codel", TCA_FQ_CODEL_LIMIT, 0);
             }},
            {"qdisc.fq_codel_memory_limit_zero",
             "`tc qdisc replace dev DEV root handle 1: fq_codel memory_limit 0`", kHowQdisc,
             accepted("valid configuration: non-socket packets are dropped; the bypass stays "
                      "(memory_limit is not part of it, Documentation/design.md #7)"),
             accepted("as on the patched kernel"),
             "root is fq_codel 1: with TCA_FQ_CODEL_MEMORY_LIMIT 0; links, queues, filters "
             "unchanged",
             Where::init,
             [](Env &, const Fix &f) {
                 return qdisc_msg(f, kCreateReplace, "fq_codel",
                                  {u32_bytes(TCA_FQ_CODEL_MEMORY_LIMIT, 0)});
             },
             nullptr,
             [](Env &, const Fix &, const Request &, const Snapshot &b, const Snapshot &a) {
                 return root_qdisc_is(b, a, "fq_codel", TCA_FQ_CODEL_MEMORY_LIMIT, 0);
             }},
            {"qdisc.fq_codel_flows_zero", "`tc qdisc replace dev DEV root fq_codel flows 0`",
             kHowQdisc, error(EINVAL), error(EINVAL), kAllState, Where::init,
             [](Env &, const Fix &f) {
                 return qdisc_msg(f, kCreateReplace, "fq_codel",
                                  {u32_bytes(TCA_FQ_CODEL_FLOWS, 0)});
             }},
            {"qdisc.fq_codel_flows_change",
             "`tc qdisc change dev DEV root handle 1: fq_codel flows 1024` on an fq_codel",
             kHowQdisc, error(EINVAL), error(EINVAL),
             "as before: root fq_codel 1: keeps its options",
             Where::init,
             [](Env &, const Fix &f) {
                 return qdisc_msg(f, 0, "fq_codel", {u32_bytes(TCA_FQ_CODEL_FLOWS, 1024)});
             },
             [](Env &e, const Fix &f) { return set_root(e, f, "fq_codel"); }},
            {"qdisc.fq_codel_quantum_too_big",
             "`tc qdisc replace dev DEV root fq_codel quantum 1048577`", kHowQdisc,
             error(EINVAL, "Invalid quantum"), error(EINVAL, "Invalid quantum"), kAllState,
             Where::init,
             [](Env &, const Fix &f) {
                 return qdisc_msg(f, kCreateReplace, "fq_codel",
                                  {u32_bytes(TCA_FQ_CODEL_QUANTUM, (1U << 20) + 1)});
             }},
            {"qdisc.codel_limit_short", "codel with a 2-byte TCA_CODEL_LIMIT (wrong length)",
             kHowQdisc, error(ERANGE), error(ERANGE), kAllState, Where::init,
             [](Env &, const Fix &f) {
                 const std::uint16_t zero = 0;
                 return qdisc_msg(f, kCreateReplace, "codel",
                                  {attr_bytes(TCA_CODEL_LIMIT, &zero, sizeof(zero))});
             }},
            {"qdisc.unknown_kind", "`tc qdisc replace dev DEV root nosuchqdisc`", kHowQdisc,
             error(ENOENT, "Specified qdisc kind is unknown"),
             error(ENOENT, "Specified qdisc kind is unknown"), kAllState, Where::init,
             [](Env &, const Fix &f) { return qdisc_msg(f, kCreateReplace, "nosuchqdisc", {}); }},
            {"qdisc.missing_kind", "RTM_NEWQDISC create at the root without TCA_KIND", kHowQdisc,
             error(ENOENT, "Specified qdisc kind is unknown"),
             error(ENOENT, "Specified qdisc kind is unknown"), kAllState, Where::init,
             [](Env &, const Fix &f) { return qdisc_msg(f, kCreateReplace, "", {}, false); }},
            {"qdisc.change_other_kind",
             "`tc qdisc change dev DEV root handle 1: codel limit 0` on an fq_codel", kHowQdisc,
             error(EINVAL, "Invalid qdisc name: must match existing qdisc"),
             error(EINVAL, "Invalid qdisc name: must match existing qdisc"),
             "as before: root fq_codel 1: keeps its options", Where::init,
             [](Env &, const Fix &f) {
                 return qdisc_msg(f, 0, "codel", {u32_bytes(TCA_CODEL_LIMIT, 0)});
             },
             [](Env &e, const Fix &f) { return set_root(e, f, "fq_codel"); }},
            {"qdisc.no_device", "RTM_NEWQDISC codel on an ifindex no device has", kHowQdisc,
             error(ENODEV), error(ENODEV), kAllState, Where::init,
             [](Env &, const Fix &) {
                 Request r = qdisc_msg(Fix{"", 0x7ffffff0}, kCreateReplace, "codel",
                                       {u32_bytes(TCA_CODEL_LIMIT, 0)});
                 return r;
             }},

            // Filters.
            {"filter.classless_parent", "`tc filter add dev DEV parent 1: matchall` on a codel",
             kHowFilter, error(EINVAL, "Qdisc not classful"), error(EINVAL, "Qdisc not classful"),
             "as before: root codel 1:, ingress filter kept", Where::init,
             [](Env &, const Fix &f) {
                 return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, kRootHandle, 1, 1, "matchall");
             },
             [](Env &e, const Fix &f) { return set_root(e, f, "codel"); }},
            {"filter.unknown_kind", "`tc filter add dev DEV ingress prio 2 nosuchcls`", kHowFilter,
             error(ENOENT, "TC classifier not found"), error(ENOENT, "TC classifier not found"),
             kAllState, Where::init,
             [](Env &, const Fix &f) {
                 return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, rtnl::kIngressParent, 2, 1,
                                   "nosuchcls");
             }},
            {"filter.matchall_second_handle",
             "matchall at ingress prio 1 with handle 2 (the prio 1 matchall has handle 1)",
             kHowFilter, error(EEXIST), error(EEXIST), kAllState, Where::init,
             [](Env &, const Fix &f) {
                 return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, rtnl::kIngressParent, 1, 2,
                                   "matchall");
             }},
            {"filter.fq_codel_flags_invalid",
             "`tc filter add dev DEV parent 1: prio 1 matchall skip_hw skip_sw` on an fq_codel",
             kHowFilter, error(EINVAL), error(EINVAL),
             "as before: root fq_codel 1: without filters, ingress filter kept", Where::init,
             [](Env &, const Fix &f) {
                 // cls_api links the new classifier into chain 0 (fq_codel's chain head
                 // callback runs) before matchall refuses the flags and it is unlinked.
                 return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, kRootHandle, 1, 1, "matchall",
                                   TCA_CLS_FLAGS_SKIP_HW | TCA_CLS_FLAGS_SKIP_SW);
             },
             [](Env &e, const Fix &f) { return set_root(e, f, "fq_codel"); }},
            {"filter.duplicate", "the ingress matchall again (prio 1 handle 1, NLM_F_EXCL)",
             kHowFilter, error(EEXIST, "Filter already exists"),
             error(EEXIST, "Filter already exists"), kAllState, Where::init,
             [](Env &, const Fix &f) {
                 return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, rtnl::kIngressParent, 1, 1,
                                   "matchall");
             }},
            {"filter.missing_kind", "RTM_NEWTFILTER create at ingress prio 2 without TCA_KIND",
             kHowFilter, error(EINVAL, "Filter kind and protocol must be specified"),
             error(EINVAL, "Filter kind and protocol must be specified"), kAllState, Where::init,
             [](Env &, const Fix &f) {
                 return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, rtnl::kIngressParent, 2, 1,
                                   std::nullopt);
             }},
            {"filter.prio_zero_change", "RTM_NEWTFILTER without NLM_F_CREATE and with prio 0",
             kHowFilter, error(ENOENT, "Invalid filter command with priority of zero"),
             error(ENOENT, "Invalid filter command with priority of zero"), kAllState,
             Where::init,
             [](Env &, const Fix &f) {
                 return filter_msg(f, 0, rtnl::kIngressParent, 0, 1, "matchall");
             }},

            // netdev family: per-queue statistics and queues.
            {"qstats.missing_ifindex", "qstats of the ifindex of a deleted dummy", kHowQstats,
             error_at(ENODEV, {}, "NETDEV_A_QSTATS_IFINDEX"),
             error_at(ENODEV, {}, "NETDEV_A_QSTATS_IFINDEX"), kAllState, Where::init,
             [](Env &e, const Fix &) {
                 Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
                 int gone = 0;
                 {
                     testdev::TestDummy d({.prefix = "bg"});
                     if (!d.ok()) {
                         r.error = d.error().message;
                         return r;
                     }
                     gone = d.ifindex();
                 }
                 r.mark = tail(r);
                 r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(gone));
                 return r;
             }},
            {"qstats.ifindex_zero", "qstats of ifindex 0 (the policy's minimum is 1)", kHowQstats,
             error_at(ERANGE, kOutOfRange, "NETDEV_A_QSTATS_IFINDEX"),
             error_at(ERANGE, kOutOfRange, "NETDEV_A_QSTATS_IFINDEX"), kAllState, Where::init,
             [](Env &e, const Fix &) {
                 Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
                 r.mark = tail(r);
                 r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, 0);
                 return r;
             }},
            {"qstats.scope_reserved", "qstats of the device with scope 2 (only bit 0 is defined)",
             kHowQstats, error_at(EINVAL, kReservedBit, "NETDEV_A_QSTATS_SCOPE"),
             error_at(EINVAL, kReservedBit, "NETDEV_A_QSTATS_SCOPE"), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
                 r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
                 r.mark = tail(r);
                 r.msg.put_u32(NETDEV_A_QSTATS_SCOPE, 2);
                 return r;
             }},
            {"qstats.ifindex_short", "qstats with a 2-byte NETDEV_A_QSTATS_IFINDEX", kHowQstats,
             error_at(EINVAL, kBadLength, "NETDEV_A_QSTATS_IFINDEX"),
             error_at(EINVAL, kBadLength, "NETDEV_A_QSTATS_IFINDEX"), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
                 const auto idx = static_cast<std::uint16_t>(f.ifindex);
                 r.mark = tail(r);
                 r.msg.put_raw(NETDEV_A_QSTATS_IFINDEX, &idx, sizeof(idx));
                 return r;
             }},
            {"qstats.unknown_attr", "qstats of the device plus attribute type 5", kHowQstats,
             error_at(EINVAL, kUnknownAttr, "type 5"), error_at(EINVAL, kUnknownAttr, "type 5"),
             kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
                 r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
                 r.mark = tail(r);
                 r.msg.put_u32(NETDEV_A_QSTATS_SCOPE + 1, 1);
                 return r;
             }},
            {"qstats.genl_reserved", "qstats with genlmsghdr.reserved 1", kHowQstats,
             error(EINVAL, "genlmsghdr.reserved field is not 0"),
             error(EINVAL, "genlmsghdr.reserved field is not 0"), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
                 static_cast<genlmsghdr *>(mnl_nlmsg_get_payload(r.msg.hdr()))->reserved = 1;
                 r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
                 return r;
             }},
            {"qstats.no_stat_ops", "qstats of `lo` (its driver has no netdev_stat_ops)",
             kHowQstats, error_at(EOPNOTSUPP, {}, "NETDEV_A_QSTATS_IFINDEX"),
             error_at(EOPNOTSUPP, {}, "NETDEV_A_QSTATS_IFINDEX"), kAllState, Where::init,
             [](Env &e, const Fix &) {
                 Request r = netdev_msg(e, NETDEV_CMD_QSTATS_GET, true);
                 rtnl::LinkInfo lo;
                 if (nl::Status st = rtnl::get_link(*e.lib, "lo", lo); !st.ok()) {
                     r.error = cat("get lo: ", st.str());
                     return r;
                 }
                 r.mark = tail(r);
                 r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(lo.ifindex));
                 return r;
             }},
            {"queue.missing_id", "QUEUE_GET of TX queues of the device without NETDEV_A_QUEUE_ID",
             kHowQueue, error_missing(EINVAL, "NETDEV_A_QUEUE_ID", NETDEV_A_QUEUE_ID),
             error_missing(EINVAL, "NETDEV_A_QUEUE_ID", NETDEV_A_QUEUE_ID), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = netdev_msg(e, NETDEV_CMD_QUEUE_GET, false);
                 r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
                 r.msg.put_u32(NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_TX);
                 return r;
             }},
            {"queue.tx_id_out_of_range", "QUEUE_GET of TX queue 4 (4 TX queues)", kHowQueue,
             error(EINVAL), error(EINVAL), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = netdev_msg(e, NETDEV_CMD_QUEUE_GET, false);
                 r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
                 r.msg.put_u32(NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_TX);
                 r.msg.put_u32(NETDEV_A_QUEUE_ID, kTxQueues);
                 return r;
             }},
            {"queue.type_invalid", "QUEUE_GET of queue 0 of type 2 (rx 0, tx 1)", kHowQueue,
             error_at(ERANGE, kOutOfRange, "NETDEV_A_QUEUE_TYPE"),
             error_at(ERANGE, kOutOfRange, "NETDEV_A_QUEUE_TYPE"), kAllState, Where::init,
             [](Env &e, const Fix &f) {
                 Request r = netdev_msg(e, NETDEV_CMD_QUEUE_GET, false);
                 r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
                 r.mark = tail(r);
                 r.msg.put_u32(NETDEV_A_QUEUE_TYPE, 2);
                 r.msg.put_u32(NETDEV_A_QUEUE_ID, 0);
                 return r;
             }},
            {"queue.create_flag", "QUEUE_GET with NLM_F_CREATE in nlmsg_flags", kHowQueue,
             error(EINVAL, "ambiguous or reserved bits set in nlmsg_flags"),
             error(EINVAL, "ambiguous or reserved bits set in nlmsg_flags"), kAllState,
             Where::init,
             [](Env &e, const Fix &f) {
                 Request r = netdev_msg(e, NETDEV_CMD_QUEUE_GET, false);
                 r.msg.hdr()->nlmsg_flags |= NLM_F_CREATE;
                 r.msg.put_u32(NETDEV_A_QUEUE_IFINDEX, static_cast<std::uint32_t>(f.ifindex));
                 r.msg.put_u32(NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_TX);
                 r.msg.put_u32(NETDEV_A_QUEUE_ID, 0);
                 return r;
             }},
    };

    // Unprivileged, in the init user and network namespace: nothing may change.
    const Expect eperm = error(EPERM);
    const std::vector<Row> unpriv = {
            {"unpriv.channels_set", "`ethtool -L DEV tx 2` on the root-owned test device",
             kHowChannels, eperm, eperm, kInitState, Where::unpriv, nullptr, nullptr, nullptr,
             kTxQueues,
             [](ChildCtx &c) {
                 return send_init(c, channels_set(c.init, c.init_dev.name,
                                                  {{ETHTOOL_A_CHANNELS_TX_COUNT, 2}}));
             }},
            {"unpriv.newlink", "`ip link add NAME numtxqueues 4 type dummy`", kHowNewlink, eperm,
             eperm, kInitState, Where::unpriv, nullptr, nullptr, nullptr, kTxQueues,
             [](ChildCtx &c) {
                 return send_init(c, newlink_queues(4, std::nullopt));
             }},
            {"unpriv.qdisc_replace", "`tc qdisc replace dev DEV root handle 1: fq_codel limit 0`",
             kHowQdisc, eperm, eperm, kInitState, Where::unpriv, nullptr, nullptr, nullptr,
             kTxQueues,
             [](ChildCtx &c) {
                 return send_init(c, qdisc_msg(c.init_dev, kCreateReplace, "fq_codel",
                                               {u32_bytes(TCA_FQ_CODEL_LIMIT, 0)}));
             }},
            {"unpriv.filter_delete", "`tc filter del dev DEV ingress prio 1`",
             "rtnetlink RTM_DELTFILTER", eperm, eperm, kInitState, Where::unpriv, nullptr, nullptr,
             nullptr, kTxQueues,
             [](ChildCtx &c) {
                 Request r = filter_msg(c.init_dev, 0, rtnl::kIngressParent, 1, 0, std::nullopt);
                 r.msg.hdr()->nlmsg_type = RTM_DELTFILTER;
                 return send_init(c, std::move(r));
             }},
            {"unpriv.unshare_netns", "unshare(CLONE_NEWNET) without a user namespace", "syscall",
             eperm, eperm, kInitState, Where::unpriv, nullptr, nullptr, nullptr, kTxQueues,
             [](ChildCtx &) {
                 RunResult res;
                 res.ack.answered = true;
                 res.ack.err = unshare(CLONE_NEWNET) == 0 ? 0 : errno;
                 return res;
             }},
    };

    // In its own user and network namespace (entered after the rows above): it may
    // create dummies there and change them, up to the same limits as root; the init
    // netns stays out of reach.
    const std::vector<Row> userns = {
            {"userns.newlink_own_netns",
             "`ip link add NAME numtxqueues 4 type dummy` in its own netns", kHowNewlink,
             accepted("CAP_NET_ADMIN over its own netns is enough to create a dummy"),
             accepted("as on the patched kernel"),
             "its netns has the new dummy with 4/1 queues, 4/1 active once up", Where::userns,
             nullptr, nullptr, nullptr, kTxQueues,
             [](ChildCtx &c) {
                 RunResult res;
                 if (!c.own) {
                     res.skip = c.userns_error;
                     return res;
                 }
                 Request r = newlink_queues(kTxQueues, std::nullopt);
                 const std::string name = r.created;
                 res = send_own(c, std::move(r), [&](const Snapshot &, const Snapshot &) {
                     rtnl::LinkInfo info;
                     if (nl::Status st = rtnl::get_link(*c.own_lib, name, info); !st.ok())
                         return cat("get ", name, ": ", st.str());
                     if (info.num_tx_queues != kTxQueues || info.num_rx_queues != kRxQueues)
                         return cat(name, " has ", info.num_tx_queues, "/", info.num_rx_queues,
                                    " queues");
                     c.own_dev = name;
                     c.own_ifindex = info.ifindex;
                     if (nl::Status st = rtnl::set_link_up(*c.own_lib, name); !st.ok())
                         return cat("set ", name, " up: ", st.str());
                     return own_queues_are(c, kTxQueues, kRxQueues);
                 });
                 return res;
             }},
            {"userns.newlink_txq_zero", "`ip link add NAME numtxqueues 0 type dummy` there",
             kHowNewlink, error(EINVAL, kTxQueuesMsg), error(EINVAL, kTxQueuesMsg), kOwnState,
             Where::userns, nullptr, nullptr, nullptr, kTxQueues,
             [](ChildCtx &c) {
                 return send_own(c, newlink_queues(0, std::nullopt));
             }},
            {"userns.newlink_txq_4097", "`ip link add NAME numtxqueues 4097 type dummy` there",
             kHowNewlink, error(EINVAL, kTxQueuesMsg), error(EINVAL, kTxQueuesMsg), kOwnState,
             Where::userns, nullptr, nullptr, nullptr, kTxQueues,
             [](ChildCtx &c) {
                 return send_own(c, newlink_queues(4097, std::nullopt));
             }},
            {"userns.newlink_rxq_zero", "`ip link add NAME numrxqueues 0 type dummy` there",
             kHowNewlink, error(EINVAL, kRxQueuesMsg), error(EINVAL, kRxQueuesMsg), kOwnState,
             Where::userns, nullptr, nullptr, nullptr, kTxQueues,
             [](ChildCtx &c) {
                 return send_own(c, newlink_queues(std::nullopt, 0));
             }},
            {"userns.channels_tx_zero", "`ethtool -L OWN tx 0` on its own dummy", kHowChannels,
             error(EINVAL, kNoChannel), kNoChannelsOps, kOwnState, Where::userns, nullptr, nullptr,
             nullptr, kTxQueues,
             [](ChildCtx &c) {
                 return own_channels(c, {{ETHTOOL_A_CHANNELS_TX_COUNT, 0}});
             }},
            {"userns.channels_tx_above_max", "`ethtool -L OWN tx 5` on its own dummy", kHowChannels,
             error(EINVAL, kExceedsMax), kNoChannelsOps, kOwnState, Where::userns, nullptr, nullptr,
             nullptr, kTxQueues,
             [](ChildCtx &c) {
                 return own_channels(c, {{ETHTOOL_A_CHANNELS_TX_COUNT, 5}});
             }},
            {"userns.channels_tx_two", "`ethtool -L OWN tx 2` on its own dummy", kHowChannels,
             accepted("allowed: its own device, within the maximum"), kNoChannelsOps,
             "patched: 2 active TX queues; base: unchanged", Where::userns, nullptr, nullptr,
             nullptr, kTxQueues,
             [](ChildCtx &c) {
                 if (std::string err = own_device_ready(c); !err.empty())
                     return RunResult{.skip = err};
                 return send_own(
                         c, channels_set(*c.own, c.own_dev, {{ETHTOOL_A_CHANNELS_TX_COUNT, 2}}),
                         [&](const Snapshot &, const Snapshot &) {
                             return own_queues_are(c, 2, kRxQueues);
                         });
             }},
            {"userns.channels_init_netns",
             "`ethtool -L DEV tx 2` on the init netns device, through a socket opened there",
             kHowChannels, eperm, eperm, kInitState, Where::userns, nullptr, nullptr, nullptr,
             kTxQueues,
             [](ChildCtx &c) {
                 if (!c.own)
                     return RunResult{.skip = c.userns_error};
                 return send_init(c, channels_set(c.init, c.init_dev.name,
                                                  {{ETHTOOL_A_CHANNELS_TX_COUNT, 2}}));
             }},
            {"userns.newlink_into_init_netns",
             "new dummy from its own netns with IFLA_NET_NS_PID 1 (the init netns)", kHowNewlink,
             eperm, eperm, "init netns and its own: links unchanged", Where::userns, nullptr,
             nullptr, nullptr, kTxQueues,
             [](ChildCtx &c) {
                 if (!c.own)
                     return RunResult{.skip = c.userns_error};
                 return send_own(c, newlink(testdev::unique_name("bn"),
                                            [](Request &r) { r.msg.put_u32(IFLA_NET_NS_PID, 1); }));
             }},
            {"userns.newlink_txq_4096",
             "`ip link add NAME numtxqueues 4096 type dummy` in its own netns", kHowNewlink,
             accepted("4096 is the most rtnetlink allows, for any user with CAP_NET_ADMIN over "
                      "the netns"),
             accepted("as on the patched kernel"),
             "its netns has the new dummy with 4096 TX queues", Where::userns, nullptr, nullptr,
             nullptr, kTxQueues,
             [](ChildCtx &c) {
                 if (!c.own)
                     return RunResult{.skip = c.userns_error};
                 Request r = newlink_queues(4096, std::nullopt);
                 const std::string name = r.created;
                 return send_own(c, std::move(r), [&](const Snapshot &, const Snapshot &) {
                     rtnl::LinkInfo info;
                     if (nl::Status st = rtnl::get_link(*c.own_lib, name, info); !st.ok())
                         return cat("get ", name, ": ", st.str());
                     if (info.num_tx_queues != 4096)
                         return cat(name, " has ", info.num_tx_queues, " TX queues");
                     c.big_dev = name;
                     c.big_ifindex = info.ifindex;
                     return std::string();
                 });
             }},
            {"userns.qstats_4096_queues", "qstats of its dummy with 4096 TX queues", kHowQstats,
             accepted("every dummy has per-queue statistics, whatever its queue count: one "
                      "counter set per TX queue, charged to the creator's memory cgroup"),
             error(EOPNOTSUPP),
             "links of its netns, active queues of its dummy unchanged; patched: the one "
             "device entry is dumped",
             Where::userns, nullptr, nullptr, nullptr, kTxQueues,
             [](ChildCtx &c) {
                 if (!c.own)
                     return RunResult{.skip = c.userns_error};
                 if (c.big_ifindex == 0)
                     return RunResult{.skip = "no 4096-queue dummy (see userns.newlink_txq_4096)"};
                 Request r = netdev_msg(*c.own, NETDEV_CMD_QSTATS_GET, true);
                 r.msg.put_u32(NETDEV_A_QSTATS_IFINDEX, static_cast<std::uint32_t>(c.big_ifindex));
                 RunResult res = send_own(c, std::move(r));
                 // Device scope: one entry, the device's totals.
                 if (res.ack.answered && res.ack.err == 0 && res.state.empty() &&
                     res.ack.replies != 1)
                     res.state = cat(res.ack.replies, " entries dumped, expected the one of ",
                                     c.big_dev);
                 return res;
             }},
    };
    rows.insert(rows.end(), unpriv.begin(), unpriv.end());
    rows.insert(rows.end(), userns.begin(), userns.end());
    return rows;
}

// ---- running a row ----

// Checks the answer against the row's expectation for this kernel: an empty string if it
// matches, else what differs.
std::string judge(const Expect &want, const Ack &got, std::uint32_t mark)
{
    if (!got.answered)
        return cat("no answer: ", describe(got));
    if (got.err != want.err)
        return cat("expected ", want.err == 0 ? std::string("acceptance") : errno_name(want.err),
                   ", got ", describe(got));
    if (got.msg != want.msg)
        return cat("extack \"", got.msg, "\", expected ",
                   want.msg.empty() ? std::string("none") : cat("\"", want.msg, "\""));
    if (want.point == Point::bad && got.offs != mark)
        return cat("extack points at ",
                   got.offs ? cat("offset ", *got.offs) : std::string("no attribute"),
                   ", expected ", want.attr, " at offset ", mark);
    if (want.point == Point::missing && got.miss_type != want.miss)
        return cat("extack names ",
                   got.miss_type ? cat("missing type ", *got.miss_type) : std::string("nothing"),
                   " as missing, expected ", want.attr, " (", want.miss, ")");
    return {};
}

Outcome finish(const Row &row, Kernel k, const RunResult &res, std::uint32_t mark)
{
    if (!res.skip.empty())
        return Outcome::skip(res.skip);
    const Expect &want = k == Kernel::patched ? row.patched : row.base;
    std::string msg = cat("got ", describe(res.ack));
    if (std::string bad = judge(want, res.ack, mark); !bad.empty())
        return Outcome::fail(cat(msg, "\n", bad));
    if (!res.state.empty())
        return Outcome::fail(cat(msg, "\nstate: ", res.state));
    return Outcome::pass(cat(msg, res.note.empty() ? "" : "\nstate: ", res.note));
}

RunResult run_init(Env &e, const Row &row, std::uint32_t &mark)
{
    RunResult res;
    Device d = make_device(row.tx_queues);
    if (d.error) {
        if (d.error->result == ksft::Result::skip)
            res.skip = d.error->message;
        else
            res.state = cat("setup: ", d.error->message);
        return res;
    }
    if (row.prep) {
        if (std::string err = row.prep(e, d.fix); !err.empty()) {
            res.state = cat("setup: ", err);
            return res;
        }
    }
    const Snapshot before = e.snapshot(d.fix);
    Request req = row.build(e, d.fix);
    if (!req.error.empty()) {
        res.state = cat("setup: ", req.error);
        return res;
    }
    mark = req.mark;
    res.ack = e.send(req);
    const Snapshot after = e.snapshot(d.fix);
    if (res.ack.err == 0 && row.check)
        res.state = row.check(e, d.fix, req, before, after);
    else
        res.state = diff(before, after);
    res.note = summary(after);
    // A link the request may have created, whatever the answer: do not leave it behind.
    if (!req.created.empty()) {
        rtnl::LinkInfo info;
        if (rtnl::get_link(*e.lib, req.created, info).ok())
            rtnl::delete_link(*e.lib, req.created);
    }
    return res;
}

// The child's results, one per unpriv/userns row, sent through a pipe.
void put_field(std::string &out, std::string_view s)
{
    out += cat(s.size(), ":");
    out += s;
}

std::optional<std::string> get_field(std::string_view &in)
{
    const auto colon = in.find(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    const std::size_t n = std::stoul(std::string(in.substr(0, colon)));
    if (in.size() < colon + 1 + n)
        return std::nullopt;
    std::string s(in.substr(colon + 1, n));
    in.remove_prefix(colon + 1 + n);
    return s;
}

std::string opt_u32(const std::optional<std::uint32_t> &v)
{
    return v ? cat(*v) : std::string("-");
}

std::optional<std::uint32_t> parse_opt(const std::string &s)
{
    if (s == "-")
        return std::nullopt;
    return static_cast<std::uint32_t>(std::stoul(s));
}

struct ChildRun {
    Device dev; // the init netns test device
    std::map<std::string, RunResult> results;
    std::string error;     // the child itself failed
    std::string init_diff; // init netns state before vs after the child
    std::string init_note;
};

[[noreturn]] void child_main(int fd, Kernel k, const Fix &fx, const std::vector<Row> &rows)
{
    alarm(300);
    std::string out;
    auto emit = [&](std::string_view name, const RunResult &r) {
        put_field(out, name);
        put_field(out, r.ack.answered ? "1" : "0");
        put_field(out, cat(r.ack.err));
        put_field(out, r.ack.msg);
        put_field(out, opt_u32(r.ack.offs));
        put_field(out, opt_u32(r.ack.miss_type));
        put_field(out, r.state);
        put_field(out, r.note);
        put_field(out, r.skip);
    };
    ChildCtx c{.kernel = k, .init_dev = fx};
    std::string setup = drop_privileges();
    if (setup.empty()) {
        try {
            // Opened as uid 65534 in the init netns; kept after unshare.
            c.init.kernel = k;
            static nl::Socket lib_sock(NETLINK_ROUTE);
            setup = c.init.open(&lib_sock);
        } catch (const std::exception &ex) {
            setup = ex.what();
        }
    }
    bool entered = false;
    for (const Row &row : rows) {
        if (row.where == Where::init)
            continue;
        RunResult r;
        if (!setup.empty()) {
            r.state = cat("child setup: ", setup);
        } else {
            if (row.where == Where::userns && !entered) {
                enter_userns(c);
                entered = true;
            }
            try {
                r = row.child(c);
            } catch (const std::exception &ex) {
                r.state = cat("exception: ", ex.what());
            }
        }
        emit(row.name, r);
    }
    std::size_t off = 0;
    while (off < out.size()) {
        const ssize_t n = ::write(fd, out.data() + off, out.size() - off);
        if (n <= 0)
            break;
        off += static_cast<std::size_t>(n);
    }
    ::close(fd);
    _exit(0); // no destructors: the parent's devices and sockets are not ours
}

ChildRun run_child(Env &e, const std::vector<Row> &rows)
{
    ChildRun run;
    run.dev = make_device(kTxQueues);
    if (run.dev.error) {
        run.error = cat("test device: ", run.dev.error->message);
        return run;
    }
    const Snapshot before = e.snapshot(run.dev.fix);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        run.error = cat("pipe: ", errno_name(errno));
        return run;
    }
    std::cout.flush();
    const pid_t pid = fork();
    if (pid < 0) {
        run.error = cat("fork: ", errno_name(errno));
        return run;
    }
    if (pid == 0) {
        ::close(fds[0]);
        child_main(fds[1], e.kernel, run.dev.fix, rows);
    }
    ::close(fds[1]);
    std::string in;
    char buf[4096];
    while (true) {
        const ssize_t n = ::read(fds[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        in.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        run.error = cat("the child ended with status 0x", std::hex, status);

    std::string_view rest = in;
    while (!rest.empty()) {
        std::vector<std::string> f;
        for (int i = 0; i < 9; ++i) {
            auto v = get_field(rest);
            if (!v)
                break;
            f.push_back(std::move(*v));
        }
        if (f.size() != 9) {
            run.error = "malformed results from the child";
            break;
        }
        RunResult r;
        r.ack.answered = f[1] == "1";
        r.ack.err = std::stoi(f[2]);
        r.ack.msg = f[3];
        r.ack.offs = parse_opt(f[4]);
        r.ack.miss_type = parse_opt(f[5]);
        r.state = f[6];
        r.note = f[7];
        r.skip = f[8];
        run.results[f[0]] = std::move(r);
    }
    const Snapshot after = e.snapshot(run.dev.fix);
    run.init_diff = diff(before, after);
    run.init_note = summary(after);
    return run;
}

// ---- markdown ----

std::string md_expect(const Expect &x)
{
    if (x.err == 0)
        return cat("accepted: ", x.why);
    std::string s = cat("`", errno_name(x.err), "`");
    s += x.msg.empty() ? std::string(", no message") : cat(", \"", x.msg, "\"");
    if (x.point == Point::bad)
        s += cat(", points at ", x.attr.starts_with("type") ? "" : "`", x.attr,
                 x.attr.starts_with("type") ? "" : "`");
    else if (x.point == Point::missing)
        s += cat(", missing `", x.attr, "` (", x.miss, ")");
    return s;
}

bool same(const Expect &a, const Expect &b)
{
    return a.err == b.err && a.msg == b.msg && a.point == b.point && a.attr == b.attr &&
           a.miss == b.miss;
}

void print_markdown(const std::vector<Row> &rows, std::ostream &out)
{
    out << "| case | request | sent as | patched kernel | base kernel | state checked after |\n"
        << "|---|---|---|---|---|---|\n";
    for (const Row &r : rows) {
        const std::string base = same(r.base, r.patched) && r.base.err != 0 ? std::string("same")
                                                                            : md_expect(r.base);
        out << "| `" << r.name << "` | " << r.request << " | " << r.how << " | "
            << md_expect(r.patched) << " | " << base << " | " << r.state << " |\n";
    }
}

// ---- kernel detection ----

// The series gives dummy get_channels: CHANNELS_GET on a dummy with two TX queues
// succeeds on the patched kernel and fails with EOPNOTSUPP on the base.
std::optional<Kernel> detect(std::string &how)
{
    const testdev::TestDummy d({.prefix = "bk", .tx_queues = 2});
    if (!d.ok()) {
        how = cat("cannot create a dummy: ", d.error().message);
        return std::nullopt;
    }
    ethtool::Ethtool eth;
    ethtool::Channels ch;
    const nl::Status st = eth.channels_get(d.name(), ch);
    if (st.ok()) {
        how = cat("CHANNELS_GET on a dummy with numtxqueues 2 succeeds (tx ", ch.tx_count, "/",
                  ch.tx_max, ")");
        return Kernel::patched;
    }
    how = cat("CHANNELS_GET on a dummy with numtxqueues 2: ", st.str());
    if (st.err == EOPNOTSUPP)
        return Kernel::base;
    return std::nullopt;
}

} // namespace

int main(int argc, char **argv)
{
    const std::vector<Row> rows = catalogue();
    if (argc > 1 && std::string_view(argv[1]) == "--markdown") {
        print_markdown(rows, std::cout);
        return 0;
    }
    if (argc > 1) {
        std::cerr << "usage: " << argv[0] << " [--markdown]\n";
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);

    ksft::KtapWriter w(std::cout);
    w.header();
    w.plan(rows.size());
    std::string skip_all;
    Kernel kernel = Kernel::patched;
    Env env;
    if (geteuid() != 0) {
        skip_all = "must be run as root";
    } else {
        try {
            std::string how;
            if (const auto k = detect(how)) {
                kernel = *k;
                w.diag(cat("kernel: ", kernel == Kernel::patched ? "patched" : "base", " (", how,
                           ")"));
                env.kernel = kernel;
                if (std::string err = env.open(&rtnl::shared_socket()); !err.empty())
                    skip_all = err;
            } else {
                skip_all = cat("cannot tell the kernel: ", how);
            }
        } catch (const std::exception &ex) {
            skip_all = ex.what();
        }
    }
    std::optional<ChildRun> child;
    for (const Row &row : rows) {
        Outcome o;
        if (!skip_all.empty()) {
            o = Outcome::skip(skip_all);
        } else {
            try {
                std::uint32_t mark = 0;
                RunResult res;
                if (row.where == Where::init) {
                    res = run_init(env, row, mark);
                } else {
                    if (!child)
                        child = run_child(env, rows);
                    const auto it = child->results.find(std::string(row.name));
                    if (it == child->results.end()) {
                        res.state = cat("no result from the child: ", child->error);
                    } else {
                        res = it->second;
                        if (res.state.empty() && res.skip.empty() && !child->error.empty())
                            res.state = child->error;
                        // The init netns is compared across the whole child.
                        const bool init = row.state.find("init netns") != std::string_view::npos;
                        if (init && res.state.empty() && res.skip.empty())
                            res.state = child->init_diff;
                        if (init && res.note.empty())
                            res.note = cat("init netns: ", child->init_note);
                    }
                }
                o = finish(row, kernel, res, mark);
            } catch (const std::exception &ex) {
                o = Outcome::fail(cat("exception: ", ex.what()));
            }
        }
        w.result(row.name, o);
        std::cout.flush();
    }
    child.reset();
    w.totals();
    return w.exit_code();
}

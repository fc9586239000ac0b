// rtnetlink helpers: links, qdiscs and matchall filters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "nl.hpp"

namespace netutil::rtnl {

using nl::Status;

struct LinkSpec {
    std::string name;
    std::string kind;
    std::optional<std::uint32_t> num_tx_queues;
    std::optional<std::uint32_t> num_rx_queues;
};

struct LinkInfo {
    int ifindex = 0;
    std::string name;
    std::string kind; // IFLA_INFO_KIND, empty for kind-less devices
    std::uint32_t flags = 0;
    std::uint32_t mtu = 0;
    std::uint32_t num_tx_queues = 0;
    std::uint32_t num_rx_queues = 0;
    // No netlink attribute carries these; they come from the number of
    // /sys/class/net/<name>/queues/{tx,rx}-* entries (current netns only).
    std::optional<std::uint32_t> real_num_tx_queues;
    std::optional<std::uint32_t> real_num_rx_queues;
    std::optional<rtnl_link_stats64> stats;
};

// Message builders (exposed for unit tests) and the operations that send them.
nlmsghdr *build_newlink(nl::Message &msg, const LinkSpec &spec);
Status parse_link(const nlmsghdr *nlh, LinkInfo &out);

// The process's NETLINK_ROUTE socket, opened on first use (throws std::system_error
// like nl::Socket). It is a function-local static: whatever still uses it at exit (a
// LinkGuard in a static, say) must be destroyed before static destruction reaches it.
nl::Socket &shared_socket();

Status create_link(nl::Socket &sock, const LinkSpec &spec);
Status delete_link(nl::Socket &sock, std::string_view name);
Status set_link_up(nl::Socket &sock, std::string_view name, bool up = true);
Status get_link(nl::Socket &sock, std::string_view name, LinkInfo &out);
// Every link of the current network namespace (without the sysfs queue counts).
Status link_dump(nl::Socket &sock, std::vector<LinkInfo> &out);

// Deletes the link on destruction unless release() was called.
class LinkGuard {
public:
    LinkGuard(nl::Socket &sock, std::string name) : sock_(&sock), name_(std::move(name)) {}
    ~LinkGuard();
    LinkGuard(const LinkGuard &) = delete;
    LinkGuard &operator=(const LinkGuard &) = delete;
    LinkGuard(LinkGuard &&other) noexcept;
    LinkGuard &operator=(LinkGuard &&) = delete;

    const std::string &name() const { return name_; }
    void release() { name_.clear(); }

private:
    nl::Socket *sock_;
    std::string name_;
};

// Traffic control handles.
constexpr std::uint32_t make_handle(std::uint32_t maj, std::uint32_t min)
{
    return ((maj << 16) & TC_H_MAJ_MASK) | (min & TC_H_MIN_MASK);
}
constexpr std::uint32_t handle_major(std::uint32_t h)
{
    return (h & TC_H_MAJ_MASK) >> 16;
}
constexpr std::uint32_t handle_minor(std::uint32_t h)
{
    return h & TC_H_MIN_MASK;
}
constexpr std::uint32_t kRootParent = TC_H_ROOT;
constexpr std::uint32_t kClsactParent = TC_H_CLSACT;
constexpr std::uint32_t kClsactHandle = TC_H_MAKE(TC_H_CLSACT, 0);
constexpr std::uint32_t kIngressParent = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS);
constexpr std::uint32_t kEgressParent = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS);
// "root", "ingress", "clsact", "none" or "maj:min" in hex, as tc prints them.
std::string format_handle(std::uint32_t h);
// Parses "maj:min", "maj:" (hex) or "root"/"ingress"/"clsact"/"none".
std::optional<std::uint32_t> parse_handle(std::string_view s);

struct QdiscSpec {
    int ifindex = 0;
    std::uint32_t parent = kRootParent;
    std::uint32_t handle = 0; // 0: kernel picks
    std::string kind;
    std::vector<std::uint8_t> options; // TCA_OPTIONS payload as-is (omitted if empty)
};

// TCA_OPTIONS payloads for QdiscSpec::options.
// pfifo/bfifo: struct tc_fifo_qopt.
std::vector<std::uint8_t> fifo_options(std::uint32_t limit);
// codel: nested TCA_CODEL_LIMIT (packets).
std::vector<std::uint8_t> codel_options(std::uint32_t limit);
// fq_codel: nested TCA_FQ_CODEL_LIMIT (packets).
std::vector<std::uint8_t> fq_codel_options(std::uint32_t limit);

struct QdiscInfo {
    int ifindex = 0;
    std::uint32_t handle = 0;
    std::uint32_t parent = 0;
    std::string kind;
    bool has_stats = false; // TCA_STATS2 present
    std::uint64_t bytes = 0;
    std::uint64_t packets = 0;
    std::uint32_t qlen = 0;
    std::uint32_t backlog = 0;
    std::uint32_t drops = 0;
    std::uint32_t requeues = 0;
    std::uint32_t overlimits = 0;
    // TCA_STATS_APP: the qdisc's own statistics (xstats) as the kernel sent them.
    std::vector<std::uint8_t> app_stats;
};

// new_flow_count of fq_codel's qdisc xstats (struct tc_fq_codel_xstats of type
// TCA_FQ_CODEL_XSTATS_QDISC); nullopt for other qdiscs or missing/short xstats.
std::optional<std::uint32_t> fq_codel_new_flow_count(const QdiscInfo &q);

// Starts a traffic control request (qdisc, class or filter) with its tcmsg filled in.
tcmsg *start_tc_msg(nl::Message &msg, std::uint16_t type, std::uint16_t flags, int ifindex,
                    std::uint32_t parent, std::uint32_t handle);

nlmsghdr *build_qdisc(nl::Message &msg, std::uint16_t type, std::uint16_t flags,
                      const QdiscSpec &spec);
Status parse_qdisc(const nlmsghdr *nlh, QdiscInfo &out);

Status qdisc_replace(nl::Socket &sock, const QdiscSpec &spec);
Status qdisc_change(nl::Socket &sock, const QdiscSpec &spec);
Status qdisc_delete(nl::Socket &sock, const QdiscSpec &spec);
// ifindex 0 dumps every device.
Status qdisc_dump(nl::Socket &sock, int ifindex, std::vector<QdiscInfo> &out);
Status add_clsact(nl::Socket &sock, int ifindex);

struct MatchallSpec {
    int ifindex = 0;
    std::uint32_t parent = kIngressParent;
    std::uint32_t handle = 1;
    std::uint16_t prio = 1;
    std::uint16_t protocol = 0x0003; // ETH_P_ALL, host order
    std::uint32_t flags = 0;         // TCA_CLS_FLAGS_*
    bool gact_ok = false;            // attach "action gact ok"
    // TCA_MATCHALL_CLASSID ("classid maj:min"), none if unset.
    std::optional<std::uint32_t> classid;
    // Attach "action skbedit queue_mapping N" (before gact, if both are set: gact ok ends
    // the action list). At tc egress it picks the TX queue; the kernel ignores queues at or
    // above real_num_tx_queues.
    std::optional<std::uint16_t> skbedit_queue_mapping;
};

// The matchall filter the bypass tests add to a root qdisc 1: (handle 1, prio 1), every
// packet classified to flow 1:1: fq_codel and sfq drop what a filter classifies to minor 0.
inline MatchallSpec root_matchall_to_flow1(int ifindex)
{
    MatchallSpec spec;
    spec.ifindex = ifindex;
    spec.parent = make_handle(1, 0);
    spec.classid = make_handle(1, 1);
    return spec;
}

nlmsghdr *build_matchall(nl::Message &msg, std::uint16_t type, std::uint16_t flags,
                         const MatchallSpec &spec);
Status filter_add(nl::Socket &sock, const MatchallSpec &spec);
Status filter_delete(nl::Socket &sock, const MatchallSpec &spec);

} // namespace netutil::rtnl

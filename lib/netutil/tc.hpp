// rtnetlink traffic control: handles, qdiscs, and matchall and u32 filters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "nl.hpp"

namespace netutil::rtnl {

using nl::Status;

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
    std::uint16_t type = RTM_NEWQDISC; // RTM_DELQDISC for a deleted qdisc's echo
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
    // TCA_OPTIONS as the kernel sent it (the payload, without the attribute header).
    std::vector<std::uint8_t> options;
    // TCA_STATS_APP: the qdisc's own statistics (xstats) as the kernel sent them.
    std::vector<std::uint8_t> app_stats;
};

// The limit of a codel or fq_codel qdisc (TCA_CODEL_LIMIT / TCA_FQ_CODEL_LIMIT in its
// options); nullopt for other qdiscs or when the options lack it.
std::optional<std::uint32_t> codel_limit(const QdiscInfo &q);

// new_flow_count of fq_codel's qdisc xstats (struct tc_fq_codel_xstats of type
// TCA_FQ_CODEL_XSTATS_QDISC); nullopt for other qdiscs or missing/short xstats.
std::optional<std::uint32_t> fq_codel_new_flow_count(const QdiscInfo &q);

// Starts a traffic control request (qdisc, class or filter) with its tcmsg filled in.
tcmsg *start_tc_msg(nl::Message &msg, std::uint16_t type, std::uint16_t flags, int ifindex,
                    std::uint32_t parent, std::uint32_t handle);

// Starts a filter request: tcm_info holds prio and protocol (host order; ETH_P_ALL by
// default), the handle is 0 unless given.
tcmsg *start_filter_msg(nl::Message &msg, std::uint16_t type, std::uint16_t flags, int ifindex,
                        std::uint32_t parent, std::uint16_t prio, std::uint16_t protocol = 0x0003,
                        std::uint32_t handle = 0);

nlmsghdr *build_qdisc(nl::Message &msg, std::uint16_t type, std::uint16_t flags,
                      const QdiscSpec &spec);
// An RTM_NEWQDISC (a dump's or a request's reply) or an RTM_DELQDISC (a replaced root's
// echo).
Status parse_qdisc(const nlmsghdr *nlh, QdiscInfo &out);

Status qdisc_replace(nl::Socket &sock, const QdiscSpec &spec);
// The same with NLM_F_ECHO: the qdiscs the replace deleted, as the kernel's RTM_DELQDISC
// echoes report them (their final counters), go to deleted.
Status qdisc_replace_echo(nl::Socket &sock, const QdiscSpec &spec, std::vector<QdiscInfo> &deleted);
Status qdisc_change(nl::Socket &sock, const QdiscSpec &spec);
Status qdisc_delete(nl::Socket &sock, const QdiscSpec &spec);
// ifindex 0 dumps every device.
Status qdisc_dump(nl::Socket &sock, int ifindex, std::vector<QdiscInfo> &out);
// The root qdisc of ifindex (parent TC_H_ROOT) with statistics; none when it has none.
Status root_qdisc(nl::Socket &sock, int ifindex, std::optional<QdiscInfo> &out);
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

// A u32 filter with one key that matches every packet (mask 0), terminal: a match ends
// the classification with the filter's class (TCA_U32_CLASSID, none if unset).
struct U32MatchAllSpec {
    int ifindex = 0;
    std::uint32_t parent = 0;
    std::uint16_t prio = 1;
    std::optional<std::uint32_t> classid;
};
nlmsghdr *build_u32_match_all(nl::Message &msg, const U32MatchAllSpec &spec);
Status filter_add(nl::Socket &sock, const U32MatchAllSpec &spec);

// Deletes the whole filter of this kind and priority (handle 0), as "tc filter del ...
// prio N" does.
Status filter_delete_prio(nl::Socket &sock, int ifindex, std::uint32_t parent, std::uint16_t prio,
                          std::string_view kind);

struct FilterInfo {
    int ifindex = 0;
    std::uint32_t parent = 0;
    std::uint32_t handle = 0; // 0: the classifier's bare tcf_proto line
    std::uint32_t info = 0;   // tcm_info: prio << 16 | protocol (network order)
    std::uint32_t chain = 0;  // TCA_CHAIN
    std::optional<std::string> kind;
};
Status parse_filter(const nlmsghdr *nlh, FilterInfo &out);
// The filters of parent on ifindex.
Status filter_dump(nl::Socket &sock, int ifindex, std::uint32_t parent,
                   std::vector<FilterInfo> &out);

} // namespace netutil::rtnl

// rtnetlink links: create, delete, switch up/down and the carrier, read one or all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linux/if.h>
#include <linux/if_link.h>
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
    std::uint8_t operstate = IF_OPER_UNKNOWN; // IFLA_OPERSTATE
    bool carrier = true;                      // IFLA_CARRIER (on when absent)
    // No netlink attribute carries these; they come from the number of
    // /sys/class/net/<name>/queues/{tx,rx}-* entries (current netns only).
    std::optional<std::uint32_t> real_num_tx_queues;
    std::optional<std::uint32_t> real_num_rx_queues;
    std::optional<rtnl_link_stats64> stats;
};

// Starts a link request with its ifinfomsg (AF_UNSPEC, ifi_index as given).
nlmsghdr *start_link_msg(nl::Message &msg, std::uint16_t type, std::uint16_t flags,
                         int ifindex = 0);

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
// IFLA_CARRIER on or off (as "ip link set DEV carrier on|off").
Status set_carrier(nl::Socket &sock, int ifindex, bool on);
// The link by name, with the sysfs queue counts.
Status get_link(nl::Socket &sock, std::string_view name, LinkInfo &out);
// The link by ifindex, from netlink alone (no sysfs queue counts); ENODATA when the
// reply has no IFLA_STATS64.
Status get_link_stats(nl::Socket &sock, int ifindex, LinkInfo &out);
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

} // namespace netutil::rtnl

// mqbench qstats: what one device reports per queue through netdev QSTATS_GET (scope queue
// and device scope, or the kernel's error), next to its rtnetlink TX counters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "netdev.hpp"

namespace mqbench::qstats {

// One QSTATS_GET request's answer: the entries, or why there are none. supported is true
// when the kernel answered the request (an answer may hold no entries: a device that is
// down reports no queues).
struct Scope {
    bool supported = false;
    std::string error; // "EOPNOTSUPP (Operation not supported)", ... when !supported
    std::vector<netutil::netdev::QStats> entries;
};

// The device's rtnetlink view: its queue counts and link TX counters.
struct Link {
    std::string kind; // IFLA_INFO_KIND, empty for devices without one
    std::uint32_t num_tx_queues = 0;
    std::uint32_t num_rx_queues = 0;
    std::optional<std::uint32_t> real_num_tx_queues;
    std::optional<std::uint64_t> tx_packets;
    std::optional<std::uint64_t> tx_bytes;
    std::optional<std::uint64_t> tx_dropped;
};

struct Dump {
    nlohmann::ordered_json args; // options_to_json()
    std::string device;
    int ifindex = 0;
    std::string kernel;
    Scope queue;        // NETDEV_A_QSTATS_SCOPE queue: one entry per RX / TX queue
    Scope device_scope; // no scope: the device totals (base plus every queue)
    std::optional<Link> link;
    std::vector<std::string> errors; // failures of the tool itself (no such device, ...)
};

// The TX entries of a queue-scope answer.
std::vector<netutil::netdev::QStats> tx_entries(const std::vector<netutil::netdev::QStats> &e);
// Sum of tx-packets over the TX entries; nullopt when no TX entry reports it.
std::optional<std::uint64_t> tx_packets_sum(const std::vector<netutil::netdev::QStats> &e);

// Asks the kernel (netdev generic netlink and rtnetlink). Never throws: what failed is in
// the scopes' errors (the kernel's answer) or in errors (the tool's own failures).
Dump take(const Options &o);

// The dump as mqbench qstats --json prints it; keys keep this order.
nlohmann::ordered_json to_json(const Dump &d);
std::string to_table(const Dump &d);

// Exit status of the subcommand: 0 when the kernel was asked (EOPNOTSUPP is an answer),
// 1 on the tool's own failures.
int run(const Options &o);

} // namespace mqbench::qstats

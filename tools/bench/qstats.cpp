#include "qstats.hpp"

#include <cerrno>
#include <exception>
#include <iostream>

#include <net/if.h>

#include "link.hpp"
#include "run.hpp"

namespace mqbench::qstats {
namespace {

using netutil::netdev::QStats;
using netutil::netdev::QueueType;
using Json = nlohmann::ordered_json;
using Counter = std::optional<std::uint64_t> QStats::*;

// The counters QStats carries, in the netdev family's order.
constexpr std::pair<const char *, Counter> kCounters[] = {
        {"rx_packets", &QStats::rx_packets},   {"rx_bytes", &QStats::rx_bytes},
        {"tx_packets", &QStats::tx_packets},   {"tx_bytes", &QStats::tx_bytes},
        {"tx_hw_drops", &QStats::tx_hw_drops}, {"tx_stop", &QStats::tx_stop},
        {"tx_wake", &QStats::tx_wake},
};

// The counters an entry reports (absent ones are left out).
Json counters_json(const QStats &q)
{
    Json j = Json::object();
    for (const auto &[name, c] : kCounters) {
        if (q.*c)
            j[name] = *(q.*c);
    }
    return j;
}

std::string counters_text(const QStats &q)
{
    std::string s;
    for (const auto &[name, c] : kCounters) {
        if (q.*c)
            s += std::string(s.empty() ? "" : " ") + name + " " + std::to_string(*(q.*c));
    }
    return s.empty() ? "no counters" : s;
}

std::string_view type_name(const QStats &q)
{
    if (!q.queue_type)
        return "?";
    return *q.queue_type == QueueType::tx ? "tx" : "rx";
}

Json error_or_null(const std::string &e)
{
    return e.empty() ? Json(nullptr) : Json(e);
}

void ask_kernel(Dump &d)
{
    netutil::netdev::Netdev nd;
    std::uint16_t family = 0;
    if (const auto st = nd.family(family); !st.ok()) {
        // A kernel without the netdev family has no qstats at all: an answer, not a failure.
        d.queue.error = "netdev generic netlink family: " + st.str();
        d.device_scope.error = d.queue.error;
        return;
    }
    std::vector<QStats> entries;
    if (const auto st = nd.queue_stats(d.ifindex, entries); st.ok()) {
        d.queue.supported = true;
        for (const QStats &q : entries) {
            if (q.ifindex == d.ifindex)
                d.queue.entries.push_back(q);
        }
    } else {
        d.queue.error = st.str();
    }
    QStats total;
    if (const auto st = nd.device_stats(d.ifindex, total); st.ok()) {
        d.device_scope.supported = true;
        d.device_scope.entries.push_back(total);
    } else if (st.err == ENODATA) {
        d.device_scope.supported = true; // answered, with nothing for this device
    } else {
        d.device_scope.error = st.str();
    }
}

void ask_link(Dump &d)
{
    netutil::nl::Socket sock(NETLINK_ROUTE);
    netutil::rtnl::LinkInfo info;
    if (const auto st = netutil::rtnl::get_link(sock, d.device, info); !st.ok()) {
        d.errors.push_back("rtnetlink link " + d.device + ": " + st.str());
        return;
    }
    Link l;
    l.kind = info.kind;
    l.num_tx_queues = info.num_tx_queues;
    l.num_rx_queues = info.num_rx_queues;
    l.real_num_tx_queues = info.real_num_tx_queues;
    if (info.stats) {
        l.tx_packets = info.stats->tx_packets;
        l.tx_bytes = info.stats->tx_bytes;
        l.tx_dropped = info.stats->tx_dropped;
    }
    d.link = l;
}

} // namespace

std::vector<QStats> tx_entries(const std::vector<QStats> &e)
{
    std::vector<QStats> out;
    for (const QStats &q : e) {
        if (q.queue_type == QueueType::tx)
            out.push_back(q);
    }
    return out;
}

std::optional<std::uint64_t> tx_packets_sum(const std::vector<QStats> &e)
{
    std::optional<std::uint64_t> sum;
    for (const QStats &q : tx_entries(e)) {
        if (q.tx_packets)
            sum = sum.value_or(0) + *q.tx_packets;
    }
    return sum;
}

Dump take(const Options &o)
{
    Dump d;
    const Report r = make_report(o);
    d.args = r.args;
    d.device = o.dev;
    d.kernel = r.kernel;
    d.ifindex = static_cast<int>(if_nametoindex(o.dev.c_str()));
    if (d.ifindex == 0) {
        d.errors.push_back("network device '" + o.dev + "' not found (ip link show " + o.dev + ")");
        d.queue.error = "not asked: no such device";
        d.device_scope.error = d.queue.error;
        return d;
    }
    try {
        ask_kernel(d);
    } catch (const std::exception &e) {
        d.errors.push_back(std::string("netdev generic netlink: ") + e.what());
    }
    try {
        ask_link(d);
    } catch (const std::exception &e) {
        d.errors.push_back(std::string("rtnetlink: ") + e.what());
    }
    return d;
}

Json to_json(const Dump &d)
{
    Json j;
    j["tool"] = kToolName;
    j["version"] = kToolVersion;
    j["subcommand"] = "qstats";
    j["args"] = d.args;
    j["device"] = d.device;
    j["ifindex"] = d.ifindex;
    j["kernel"] = d.kernel;

    Json queues = Json::array();
    for (const QStats &q : d.queue.entries) {
        Json e;
        e["type"] = type_name(q);
        e["id"] = json_or_null(q.queue_id);
        const Json counters = counters_json(q);
        for (const auto &[k, v] : counters.items())
            e[k] = v;
        queues.push_back(std::move(e));
    }
    j["queue_scope"] = {{"supported", d.queue.supported},
                        {"error", error_or_null(d.queue.error)},
                        {"queues", std::move(queues)}};
    j["tx_queues_reported"] = tx_entries(d.queue.entries).size();
    j["tx_packets_sum"] = json_or_null(tx_packets_sum(d.queue.entries));
    j["device_scope"] = {{"supported", d.device_scope.supported},
                         {"error", error_or_null(d.device_scope.error)},
                         {"stats", d.device_scope.entries.empty()
                                           ? Json(nullptr)
                                           : counters_json(d.device_scope.entries.front())}};
    if (d.link) {
        j["link"] = {{"kind", d.link->kind},
                     {"num_tx_queues", d.link->num_tx_queues},
                     {"num_rx_queues", d.link->num_rx_queues},
                     {"real_num_tx_queues", json_or_null(d.link->real_num_tx_queues)},
                     {"tx_packets", json_or_null(d.link->tx_packets)},
                     {"tx_bytes", json_or_null(d.link->tx_bytes)},
                     {"tx_dropped", json_or_null(d.link->tx_dropped)}};
    } else {
        j["link"] = nullptr;
    }
    j["errors"] = d.errors;
    return j;
}

std::string to_table(const Dump &d)
{
    std::string out = std::string(kToolName) + " qstats on " + d.device + " (ifindex " +
                      std::to_string(d.ifindex) + ")\n";
    if (d.queue.supported) {
        out += "queue scope: " + std::to_string(d.queue.entries.size()) + " entr" +
               (d.queue.entries.size() == 1 ? "y" : "ies") + "\n";
        for (const QStats &q : d.queue.entries) {
            out += "  " + std::string(type_name(q)) + "-" +
                   (q.queue_id ? std::to_string(*q.queue_id) : std::string("?")) + "  " +
                   counters_text(q) + "\n";
        }
        const auto sum = tx_packets_sum(d.queue.entries);
        out += "tx_packets over TX queues: " + (sum ? std::to_string(*sum) : std::string("-")) +
               "\n";
    } else {
        out += "queue scope: " + d.queue.error + "\n";
    }
    if (!d.device_scope.supported)
        out += "device scope: " + d.device_scope.error + "\n";
    else if (d.device_scope.entries.empty())
        out += "device scope: no totals reported\n";
    else
        out += "device scope: " + counters_text(d.device_scope.entries.front()) + "\n";
    if (d.link) {
        auto n = [](const std::optional<std::uint64_t> &v) {
            return v ? std::to_string(*v) : std::string("-");
        };
        out += "link: " + std::to_string(d.link->num_tx_queues) + " TX queues, tx_packets " +
               n(d.link->tx_packets) + " tx_bytes " + n(d.link->tx_bytes) + " tx_dropped " +
               n(d.link->tx_dropped) + "\n";
    }
    for (const std::string &e : d.errors)
        out += "error: " + e + "\n";
    return out;
}

int run(const Options &o)
{
    const Dump d = take(o);
    if (o.json)
        std::cout << to_json(d).dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    else
        std::cout << to_table(d);
    std::cout.flush();
    return d.errors.empty() ? 0 : 1;
}

} // namespace mqbench::qstats

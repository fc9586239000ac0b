// "netdev" generic netlink family: per-queue and per-device statistics (QSTATS_GET).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nl.hpp"

namespace netutil::netdev {

using nl::Status;

enum class QueueType : std::uint32_t { rx = 0, tx = 1 };

// One QSTATS_GET reply. queue_type/queue_id are set for queue scope only; counters the
// driver does not report are nullopt.
struct QStats {
    int ifindex = 0;
    std::optional<QueueType> queue_type;
    std::optional<std::uint32_t> queue_id;
    std::optional<std::uint64_t> rx_packets;
    std::optional<std::uint64_t> rx_bytes;
    std::optional<std::uint64_t> tx_packets;
    std::optional<std::uint64_t> tx_bytes;
    std::optional<std::uint64_t> tx_hw_drops;
    std::optional<std::uint64_t> tx_stop;
    std::optional<std::uint64_t> tx_wake;
};

nlmsghdr *build_qstats_get(nl::Message &msg, std::uint16_t family, int ifindex, bool per_queue);
Status parse_qstats(const nlmsghdr *nlh, QStats &out);

class Netdev {
public:
    // Opens a generic netlink socket; throws std::system_error on failure.
    Netdev();

    // Resolves (once) the "netdev" family id; ENOENT if the kernel lacks it.
    Status family(std::uint16_t &id);
    // Per-queue counters of one device (ifindex > 0) or of all devices (0).
    Status queue_stats(int ifindex, std::vector<QStats> &out);
    // Device totals (base stats plus all queues). ENODATA if the driver reports none.
    Status device_stats(int ifindex, QStats &out);
    // Device totals of every device that reports any.
    Status all_device_stats(std::vector<QStats> &out);

private:
    Status qstats(int ifindex, bool per_queue, std::vector<QStats> &out);

    nl::GenlFamily genl_;
};

// Sum of one counter over the queues of the given type (absent counters count as 0).
std::uint64_t sum_tx_packets(const std::vector<QStats> &queues);
std::uint64_t sum_tx_bytes(const std::vector<QStats> &queues);
// Number of TX queues with at least min_packets transmitted packets.
std::size_t active_tx_queues(const std::vector<QStats> &queues, std::uint64_t min_packets = 1);

// Checks that queue entries are unique per (type, id) and that the sum of every per-queue
// counter does not exceed the device total. Returns an empty string if consistent, else a
// description of the first problem.
std::string check_qstats(const std::vector<QStats> &queues, const QStats &device);

} // namespace netutil::netdev

// Per-TX-queue packet counters: netdev qstats, else the mq qdisc's per-queue children.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tc.hpp"

namespace mqbench::queues {

using Counts = std::map<std::uint32_t, std::uint64_t>; // TX queue id -> packets

struct Snapshot {
    // "qstats" (netdev QSTATS_GET), "qdisc" (children of an mq root qdisc) or "unavailable".
    std::string source = "unavailable";
    Counts tx_packets;
    std::string note; // why qstats (and qdisc) were not used
};

// Queue id -> packets from a qdisc dump of one device: the children of its root mq qdisc
// (class :N+1 feeds TX queue N). nullopt if the root qdisc is not mq.
std::optional<Counts> from_qdiscs(const std::vector<netutil::rtnl::QdiscInfo> &qdiscs);

// Takes a snapshot; source is decided by the first one and later snapshots must use the
// same source (pass it as want to force it).
Snapshot take(int ifindex, const std::string &want = {});

// after - before per queue (queues missing in before count from 0; negative deltas as 0).
Counts delta(const Counts &before, const Counts &after);

} // namespace mqbench::queues

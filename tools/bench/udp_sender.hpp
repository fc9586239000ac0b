// UDP senders through the IP stack: one socket per thread, bound to a device with
// SO_BINDTODEVICE, sendmmsg batches to a fixed destination.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sender_common.hpp"

namespace mqbench {

struct UdpConfig {
    std::string dev;
    std::vector<int> cpus;      // one thread per entry, pinned to that CPU
    std::uint64_t count = 1000; // datagrams per thread
    std::size_t payload = 18;   // UDP payload bytes
    unsigned batch = 64;
    std::uint32_t dst_ip = 0xc6120001; // 198.18.0.1, host order
    std::uint16_t dst_port = 9;
};

// Same result type and start/stop behaviour as netutil::pkt::run_senders(cfg, stop): the
// threads of netutil::pkt::run_pinned_threads().
std::vector<netutil::pkt::ThreadResult> run_udp_senders(const UdpConfig &cfg,
                                                        const std::atomic<bool> &stop);

} // namespace mqbench

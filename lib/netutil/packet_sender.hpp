// Multi-threaded AF_PACKET traffic generator (sendmmsg or TPACKET_V2 TX ring).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sender_common.hpp"

namespace netutil::pkt {

using Mac = std::array<std::uint8_t, 6>;

inline constexpr std::size_t kEthHdrLen = 14;
inline constexpr std::size_t kIpv4HdrLen = 20;
inline constexpr std::size_t kUdpHdrLen = 8;
inline constexpr std::size_t kMinFrameLen = kEthHdrLen + kIpv4HdrLen + kUdpHdrLen;
inline constexpr std::size_t kMaxFrameLen = 9000;

struct FrameSpec {
    // Total frame length: Ethernet header + IPv4 + UDP + payload, without FCS.
    std::size_t frame_len = 64;
    Mac dst_mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
    Mac src_mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
    std::uint32_t src_ip = 0xc0000201; // 192.0.2.1, host order
    std::uint32_t dst_ip = 0xc0000202; // 192.0.2.2
    std::uint16_t src_port = 9000;
    std::uint16_t dst_port = 9;
    std::uint8_t ttl = 64;
};

// Internet checksum (RFC 1071) over data.
std::uint16_t inet_checksum(const void *data, std::size_t len);
// Ethernet/IPv4/UDP frame; UDP checksum 0, payload bytes are a counting pattern.
// Throws std::invalid_argument if frame_len is outside [kMinFrameLen, kMaxFrameLen].
std::vector<std::uint8_t> build_frame(const FrameSpec &spec);

enum class TxMode { sendmmsg, tx_ring };

struct SenderConfig {
    int ifindex = 0;
    TxMode mode = TxMode::sendmmsg;
    bool qdisc_bypass = false;   // PACKET_QDISC_BYPASS
    std::vector<int> cpus;       // one thread per entry, pinned to that CPU
    std::uint64_t count = 1000;  // packets per thread
    unsigned batch = 64;         // sendmmsg batch / ring frames between kicks
    unsigned ring_frames = 1024; // TX ring size in frames
    FrameSpec frame;             // thread i uses src_port + i
    // sendmmsg only: ENOBUFS from the stack means the packet was dropped (by a qdisc, for
    // example); count it in ThreadResult::dropped and go on instead of retrying it. The
    // packets are then sent one per call, so that every failure belongs to one packet.
    bool count_drops = false;
};

// The results of the sender threads: ThreadResult, in sender_common.hpp.

// Runs all threads to completion; the threads start together after setup.
std::vector<ThreadResult> run_senders(const SenderConfig &cfg);
// Same, but each thread also stops (between batches) once stop becomes true. With
// cfg.count = UINT64_MAX the threads send until then.
std::vector<ThreadResult> run_senders(const SenderConfig &cfg, const std::atomic<bool> &stop);

// Parses a kernel CPU list such as "0-3,8,10-11". nullopt on malformed input.
std::optional<std::vector<int>> parse_cpu_list(std::string_view list);
// CPUs listed in /sys/devices/system/cpu/{possible,online}; empty on error.
std::vector<int> possible_cpus();
std::vector<int> online_cpus();

} // namespace netutil::pkt

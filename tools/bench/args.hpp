// Command line of mqbench (parsed with CLI11).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mqbench {

inline constexpr std::string_view kToolName = "mqbench";
inline constexpr std::string_view kToolVersion = "0.1.0";

enum class Subcommand { pktgen, gen, qstats };
enum class GenMode { sendmmsg, tx_ring, udp };

inline constexpr std::uint64_t kDefaultCount = 100000; // packets per thread
inline constexpr std::uint64_t kMaxCount = 9999999999; // pktgen reads at most 10 digits
inline constexpr double kMaxDuration = 86400.0;
inline constexpr std::size_t kDefaultSize = 60; // pktgen's default pkt_size (ETH_ZLEN)
inline constexpr std::size_t kMinSize = 42;     // Ethernet + IPv4 + UDP headers
inline constexpr std::size_t kMaxSize = 9000;
inline constexpr unsigned kMaxThreads = 1024;
inline constexpr unsigned kDefaultBatch = 64;
inline constexpr std::string_view kDefaultDstMac = "02:00:00:00:00:02";
inline constexpr std::string_view kDstIp = "198.18.0.1"; // RFC 2544 benchmarking range
inline constexpr std::string_view kSrcIp = "198.18.0.2";
inline constexpr std::uint16_t kDstPort = 9; // discard

struct Options {
    Subcommand cmd = Subcommand::gen;
    std::string dev;
    unsigned threads = 0; // pktgen, gen
    // Packets per thread. For pktgen and gen exactly one of count and duration is set after
    // parsing; count defaults to kDefaultCount when neither is given. qstats sets neither.
    std::optional<std::uint64_t> count;
    std::optional<double> duration;  // seconds
    std::size_t size = kDefaultSize; // frame bytes without FCS (pktgen's pkt_size)
    bool json = false;
    bool quiet = false; // no live progress on stderr
    std::string dst_mac{kDefaultDstMac};

    // pktgen
    bool xps = false;
    bool one_queue = false; // every thread on queue 0 (pktgen's default queue_map)
    unsigned burst = 1;
    unsigned clone_skb = 0;
    unsigned flows = 1;
    std::string xmit_mode = "queue_xmit"; // or start_xmit

    // gen
    GenMode mode = GenMode::sendmmsg;
    bool qdisc_bypass = false;
    unsigned batch = kDefaultBatch;

    std::vector<std::string> argv; // as given, without the program name

    // Not settable from the command line: lets tests point pktgen at a fake directory.
    std::string pktgen_root = "/proc/net/pktgen";
};

struct ParseResult {
    std::optional<Options> options; // set on success
    bool help = false;              // -h/--help: print usage, exit 0
    std::string error;              // set on failure
};

// args excludes the program name. The syntax (subcommands, option values, ranges, the
// options of each subcommand, --count excluding --duration) is CLI11's; the checks across
// options are done here after it.
ParseResult parse_args(const std::vector<std::string> &args);
std::string usage();

std::string_view to_string(Subcommand c);
std::string_view to_string(GenMode m);

// An optional as JSON: its value, or null.
template <typename T>
nlohmann::ordered_json json_or_null(const std::optional<T> &v)
{
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// Effective options as a JSON object (the report's "args").
nlohmann::ordered_json options_to_json(const Options &o);

// Parses "aa:bb:cc:dd:ee:ff" (hex, case-insensitive).
bool valid_mac(std::string_view mac);

} // namespace mqbench

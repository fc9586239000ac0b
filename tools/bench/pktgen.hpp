// Kernel pktgen through /proc/net/pktgen: configuration, start/stop, result parsing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mqbench::pktgen {

inline constexpr std::string_view kDefaultRoot = "/proc/net/pktgen";

struct Config {
    std::string dev;
    unsigned threads = 1;
    std::uint64_t count = 0; // per device; 0 = until stopped
    std::size_t pkt_size = 60;
    std::string xmit_mode = "queue_xmit";
    unsigned burst = 1;
    unsigned clone_skb = 0;
    unsigned flows = 1; // > 1: random UDP source port over this many values (UDPSRC_RND)
    std::string dst_mac = "02:00:00:00:00:02";
    std::string dst = "198.18.0.1";
    std::uint32_t tx_queues = 1; // the device's real TX queue count (queue maps are clamped)
};

// One write to a file below the pktgen root ("kpktgend_0", "dummy0@0", "pgctrl").
struct Command {
    std::string file;
    std::string text; // without the trailing newline

    bool operator==(const Command &) const = default;
};

// "NAME@i": the pktgen device of thread i.
std::string device_name(std::string_view dev, unsigned thread);

// Every write that sets the run up, in order: rem_device_all on every existing thread (so
// stale devices from earlier runs do not start with ours), add_device NAME@i on kpktgend_i
// for i < threads, then per device: count, pkt_size, xmit_mode, queue_map_min/max (i
// clamped to tx_queues - 1), dst_mac, dst, burst, clone_skb, and for flows > 1
// udp_src_min/max and flag UDPSRC_RND.
std::vector<Command> setup_plan(const Config &cfg, const std::vector<unsigned> &thread_ids);

// Parsed "Result:" of a device file (show_results() in net/core/pktgen.c):
//   Result: OK: <usec>(c<usec>+d<usec>) usec, <pkts> (<size>byte,<frags>frags)
//     <pps>pps <mbps>Mb/sec (<bps>bps) errors: <errors>
struct Result {
    std::uint64_t usec = 0;      // elapsed, started to stopped
    std::uint64_t busy_usec = 0; // elapsed minus idle
    std::uint64_t idle_usec = 0;
    std::uint64_t packets = 0;
    std::int64_t pkt_size = 0;
    std::int64_t frags = 0; // -1 when no skb was left
    std::uint64_t pps = 0;
    std::uint64_t mbps = 0;
    std::uint64_t bps = 0;
    std::uint64_t errors = 0;
};

// Parses the whole device file text (or just the result text after "Result: "). nullopt for
// "Result: Idle", the "OK: <param>=..." echo of the last write, or malformed text.
std::optional<Result> parse_result(std::string_view text);
// The "pkts-sofar: N" of the "Current:" section.
std::optional<std::uint64_t> parse_pkts_sofar(std::string_view text);
// Thread ids of the kpktgend_<id> files present in root, sorted.
std::vector<unsigned> list_threads(const std::filesystem::path &root);

class Proc {
public:
    explicit Proc(std::filesystem::path root = std::filesystem::path(kDefaultRoot))
        : root_(std::move(root))
    {
    }

    const std::filesystem::path &root() const { return root_; }
    // pgctrl present (the pktgen module is loaded).
    bool available() const;
    std::vector<unsigned> threads() const { return list_threads(root_); }

    // One write(2) of text + "\n" to root/file. Empty string on success, else a message
    // naming the file, the command and the error. add_device is retried for a while on
    // EBUSY, since rem_device_all takes effect asynchronously.
    std::string write(const Command &cmd);
    // Runs the commands in order; stops at the first failure and returns its message.
    std::string apply(const std::vector<Command> &cmds);
    // "start" to pgctrl: blocks until every device has finished or was stopped.
    std::string start() { return write({"pgctrl", "start"}); }
    std::string stop() { return write({"pgctrl", "stop"}); }

    std::optional<std::string> read(const std::string &file) const;

    // Every successful write so far.
    std::vector<Command> journal() const;

private:
    std::filesystem::path root_;
    mutable std::mutex mu_; // start() and stop() run on different threads
    std::vector<Command> journal_;
};

} // namespace mqbench::pktgen

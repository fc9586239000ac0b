// dummy_qstats: what its cases share: the readings of queue, device and link statistics
// and the senders.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "prog.hpp"

namespace dummy_qstats {

using namespace ksft::prog;

constexpr std::uint32_t kQueues = 4;
constexpr std::uint64_t kRoundPackets = 100;
constexpr std::uint64_t kRoundStep = 25;
constexpr std::uint64_t kFrameLen = 64;
constexpr unsigned kMinReads = 100;
constexpr auto kMinReadTime = std::chrono::milliseconds(300);
// The cap only matters on slow kernels: on the KASAN kernel under TCG, with the
// senders on every CPU, 20 s gave 57 reads; a normal kernel reaches kMinReads
// in well under a second.
constexpr auto kMaxReadTime = std::chrono::seconds(90);
// How long the senders may make no progress before concurrent_reads gives up, and how
// often it looks.
constexpr auto kStallTimeout = std::chrono::seconds(5);
constexpr auto kPollGap = std::chrono::microseconds(200);

netdev::Netdev &nd();

// An up dummy device ("dqs" + pid + "_" + n) with IPv6 off that must have tx_queues TX
// queues (the default count if unset).
ksft::testdev::DummySpec dummy(std::optional<std::uint32_t> tx_queues);

struct Counters {
    std::uint64_t packets = 0;
    std::uint64_t bytes = 0;

    bool operator==(const Counters &) const = default;
};

std::string fmt(const Counters &c);
// As fmt() does, for the assertions.
std::ostream &operator<<(std::ostream &os, const Counters &c);

Counters operator-(const Counters &a, const Counters &b);

Counters operator+(const Counters &a, const Counters &b);

bool less_equal(const Counters &a, const Counters &b);

bool less(const Counters &a, const Counters &b);

Counters sent_counters(std::uint64_t packets);

// One reading, in this order: queue scope, device scope, link (rtnl) statistics.
struct Snapshot {
    Status queues_st;
    std::vector<netdev::QStats> entries; // every queue entry of the device
    std::map<std::uint32_t, Counters> txq;
    std::size_t rx_entries = 0;
    Status device_st;
    netdev::QStats device_raw;
    Counters device;
    Status link_st;
    Counters link;

    bool ok() const { return queues_st.ok() && device_st.ok() && link_st.ok(); }
    Counters queue_sum() const
    {
        Counters sum;
        for (const auto &[id, c] : txq)
            sum = sum + c;
        return sum;
    }
    // Device total minus the active queues; nullopt if the queues exceed the total.
    std::optional<Counters> base() const
    {
        const Counters sum = queue_sum();
        if (!less_equal(sum, device))
            return std::nullopt;
        return device - sum;
    }
};

Snapshot snapshot(netdev::Netdev &n, netutil::nl::Socket &rt, const std::string &name, int ifindex);

Snapshot snapshot(const TestDummy &dev);

// SKIP if the kernel has no netdev family, FAIL for any other error.
std::optional<CaseResult> snapshot_error(const Snapshot &s, std::string_view dev);
// The device's first reading, into out: nullopt when the device exists and the reading
// is good, else the case's result (the device's error or snapshot_error()'s).
std::optional<CaseResult> first_reading(const TestDummy &dev, Snapshot &out);

// AF_PACKET senders, one per CPU. With bypass (PACKET_QDISC_BYPASS) the packets go
// through dev_direct_xmit() on the queue XPS (or, without it, the sending CPU) picks;
// without, through dev_queue_xmit() and the egress hook.
std::vector<pkt::ThreadResult> send(int ifindex, const std::vector<int> &cpus,
                                    std::uint64_t per_cpu, bool bypass,
                                    const std::atomic<bool> *stop = nullptr);

// Empty if every sender sent what it was asked to (count 0: whatever it could).
std::string sender_problem(const std::vector<pkt::ThreadResult> &res, std::uint64_t count);

std::uint64_t total_sent(const std::vector<pkt::ThreadResult> &res);

// The packets the i-th round of a spread puts on the wire.
std::uint64_t round_packets(std::uint32_t i);

// Sends count packets of one flow (UDP source port src_port) from one sender pinned to
// cpu: through dev_queue_xmit(), or with bypass through dev_direct_xmit(). Returns an
// error message, or an empty string.
std::string send_flow(int ifindex, int cpu, std::uint16_t src_port, std::uint64_t count,
                      bool bypass);

// The TX queues whose counters grew from a to b, with their growth. Sets err if a queue
// appeared, went missing or went back.
std::map<std::uint32_t, Counters> grown(const Snapshot &a, const Snapshot &b, std::string &err);

std::string fmt(const std::map<std::uint32_t, Counters> &growth);

std::string fmt_cpus(const std::vector<int> &cpus);

// Source port of the flows the spread cases send, and how many packets a send has.
constexpr std::uint16_t kFlowPort = 9000;
constexpr std::uint64_t kFlowPackets = 20;
// Flows spread_without_xps sends through dev_queue_xmit().
constexpr std::uint16_t kFlows = 8;

// The kernel the run is labelled with (SELFTEST_KERNEL, see selftests/programs.txt): true
// for "patched", false for "base"; a FAIL outcome in err's place for anything else.
std::optional<bool> patched_label(std::optional<CaseResult> &err);

// Whether queues/tx-<queue>/xps_cpus of dev is an empty mask (value: what it holds);
// nullopt if it cannot be read (a kernel without CONFIG_XPS has no map either).
std::optional<bool> xps_empty(const std::string &dev, std::uint32_t queue, std::string &value);

// Stops and joins the sender thread on every path.
class SenderThread {
public:
    SenderThread(int ifindex, std::vector<int> cpus)
        : thread_([this, ifindex, cpus = std::move(cpus)] {
              results_ = send(ifindex, cpus, UINT64_MAX, true, &stop_);
          })
    {
    }
    ~SenderThread() { stop(); }
    SenderThread(const SenderThread &) = delete;
    SenderThread &operator=(const SenderThread &) = delete;
    SenderThread(SenderThread &&) = delete;
    SenderThread &operator=(SenderThread &&) = delete;

    const std::vector<pkt::ThreadResult> &stop()
    {
        stop_ = true;
        if (thread_.joinable())
            thread_.join();
        return results_;
    }

private:
    std::atomic<bool> stop_{false};
    std::vector<pkt::ThreadResult> results_;
    std::thread thread_; // last: starts after the members it uses exist
};

// Why reading cur right after prev, both taken while the senders run, shows counters that
// went backwards or did not move; empty if every counter is monotonic and the totals grew.
std::string check_progress(const Snapshot &prev, const Snapshot &cur);

// Waits until the link has counted more than `packets` transmitted packets; seen: the
// link counters of the reading that showed it. Returns an error message, or an empty
// string.
std::string wait_for_link(const TestDummy &dev, std::uint64_t packets, Counters &seen);

} // namespace dummy_qstats

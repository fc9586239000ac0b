// kselftest: per-queue TX statistics of dummy devices (netdev QSTATS_GET).
//
// Needs root. The devices are up, with IPv6 switched off so that they send nothing but
// the test's packets, and no qdisc (dummy is IFF_NO_QUEUE: noqueue).
//
// Only what the upstream tests do not do is here (Documentation/design.md, "The C++
// selftests and the upstream tests"): traffic spread over the queues by the stack, with
// XPS and without it, and qstats read while packets are sent. Per-queue counts of steered
// traffic, the device totals against the link statistics, the RX totals, channel changes
// and single-queue devices are the series' net/dummy_queues.py and the tree's
// drivers/net/stats.py. Each case uses a device of its own, with a unique name, removed on
// every path.
//
// "base" below is what the device-scope dump adds to the queues: the device total minus
// the sum over the active queues (for dummy, the counters of disabled queues).

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ethtool.hpp"
#include "harness.hpp"
#include "ktap.hpp"
#include "link.hpp"
#include "netdev.hpp"
#include "nl.hpp"
#include "packet_sender.hpp"
#include "sysfs.hpp"
#include "testdev.hpp"

namespace {

using ksft::CaseResult;
using ksft::testdev::TestDummy;
using netutil::concat;
using netutil::nl::Status;
namespace netdev = netutil::netdev;
namespace pkt = netutil::pkt;
namespace rtnl = netutil::rtnl;

constexpr std::uint32_t kQueues = 4;
constexpr std::uint64_t kRoundPackets = 100;
constexpr std::uint64_t kRoundStep = 25;
constexpr std::uint64_t kFrameLen = 64;
constexpr unsigned kMinReads = 100;
constexpr auto kMinReadTime = std::chrono::milliseconds(300);
constexpr auto kMaxReadTime = std::chrono::seconds(20);
// How long the senders may make no progress before concurrent_reads gives up, and how
// often it looks.
constexpr auto kStallTimeout = std::chrono::seconds(5);
constexpr auto kPollGap = std::chrono::microseconds(200);

netdev::Netdev &nd()
{
    static netdev::Netdev n;
    return n;
}

// An up dummy device ("dqs" + pid + "_" + n) with IPv6 off that must have tx_queues TX
// queues (the default count if unset).
ksft::testdev::DummySpec dummy(std::optional<std::uint32_t> tx_queues)
{
    return {.prefix = "dqs",
            .tx_queues = tx_queues,
            .ipv6_off = true,
            .up = true,
            .verify_queues = true};
}

struct Counters {
    std::uint64_t packets = 0;
    std::uint64_t bytes = 0;

    bool operator==(const Counters &) const = default;
};

std::string fmt(const Counters &c)
{
    return concat(c.packets, " packets/", c.bytes, " bytes");
}

Counters operator-(const Counters &a, const Counters &b)
{
    return {a.packets - b.packets, a.bytes - b.bytes};
}

Counters operator+(const Counters &a, const Counters &b)
{
    return {a.packets + b.packets, a.bytes + b.bytes};
}

bool less_equal(const Counters &a, const Counters &b)
{
    return a.packets <= b.packets && a.bytes <= b.bytes;
}

bool less(const Counters &a, const Counters &b)
{
    return a.packets < b.packets && a.bytes < b.bytes;
}

Counters sent_counters(std::uint64_t packets)
{
    return {packets, packets * kFrameLen};
}

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

Snapshot snapshot(netdev::Netdev &n, netutil::nl::Socket &rt, const std::string &name, int ifindex)
{
    Snapshot s;
    std::vector<netdev::QStats> all;
    s.queues_st = n.queue_stats(ifindex, all);
    for (const netdev::QStats &q : all) {
        if (q.ifindex != ifindex)
            continue;
        s.entries.push_back(q);
        if (q.queue_type == netdev::QueueType::tx && q.queue_id)
            s.txq[*q.queue_id] = {q.tx_packets.value_or(0), q.tx_bytes.value_or(0)};
        if (q.queue_type == netdev::QueueType::rx)
            ++s.rx_entries;
    }
    s.device_st = n.device_stats(ifindex, s.device_raw);
    s.device = {s.device_raw.tx_packets.value_or(0), s.device_raw.tx_bytes.value_or(0)};
    rtnl::LinkInfo info;
    s.link_st = rtnl::get_link(rt, name, info);
    if (s.link_st.ok() && !info.stats)
        s.link_st = Status::failed(ENODATA, "no IFLA_STATS64");
    if (info.stats)
        s.link = {info.stats->tx_packets, info.stats->tx_bytes};
    return s;
}

Snapshot snapshot(const TestDummy &dev)
{
    return snapshot(nd(), rtnl::shared_socket(), dev.name(), dev.ifindex());
}

// SKIP if the kernel has no netdev family, FAIL for any other error.
std::optional<CaseResult> snapshot_error(const Snapshot &s, std::string_view dev)
{
    const std::pair<const Status *, const char *> parts[] = {
            {&s.queues_st, "QSTATS_GET scope queue"},
            {&s.device_st, "QSTATS_GET device scope"},
            {&s.link_st, "RTM_GETLINK"},
    };
    for (const auto &[st, what] : parts) {
        if (st->ok())
            continue;
        if (st != &s.link_st && st->err == ENOENT)
            return CaseResult::skip(
                    concat("netdev generic netlink family not available (", st->str(), ")"));
        std::string msg = concat(what, " for ", dev, ": ", st->str());
        if (st->err == EOPNOTSUPP)
            msg += " (the driver reports no queue statistics)";
        return CaseResult::fail(msg);
    }
    return std::nullopt;
}

// AF_PACKET senders, one per CPU. With bypass (PACKET_QDISC_BYPASS) the packets go
// through dev_direct_xmit() on the queue XPS (or, without it, the sending CPU) picks;
// without, through dev_queue_xmit() and the egress hook.
std::vector<pkt::ThreadResult> send(int ifindex, const std::vector<int> &cpus,
                                    std::uint64_t per_cpu, bool bypass,
                                    const std::atomic<bool> *stop = nullptr)
{
    pkt::SenderConfig cfg;
    cfg.ifindex = ifindex;
    cfg.mode = pkt::TxMode::sendmmsg;
    cfg.qdisc_bypass = bypass;
    cfg.cpus = cpus;
    cfg.count = per_cpu;
    cfg.frame.frame_len = kFrameLen;
    return stop != nullptr ? pkt::run_senders(cfg, *stop) : pkt::run_senders(cfg);
}

// Empty if every sender sent what it was asked to (count 0: whatever it could).
std::string sender_problem(const std::vector<pkt::ThreadResult> &res, std::uint64_t count)
{
    for (const pkt::ThreadResult &r : res) {
        if (!r.error.empty())
            return concat("sender on CPU ", r.cpu, ": ", r.error);
        if (count != 0 && r.sent != count)
            return concat("sender on CPU ", r.cpu, " sent ", r.sent, " of ", count);
    }
    return {};
}

std::uint64_t total_sent(const std::vector<pkt::ThreadResult> &res)
{
    std::uint64_t n = 0;
    for (const pkt::ThreadResult &r : res)
        n += r.sent;
    return n;
}

// The packets the i-th round of a spread puts on the wire.
std::uint64_t round_packets(std::uint32_t i)
{
    return kRoundPackets + kRoundStep * i;
}

// Sends count packets of one flow (UDP source port src_port) from one sender pinned to
// cpu: through dev_queue_xmit(), or with bypass through dev_direct_xmit(). Returns an
// error message, or an empty string.
std::string send_flow(int ifindex, int cpu, std::uint16_t src_port, std::uint64_t count,
                      bool bypass)
{
    pkt::SenderConfig cfg;
    cfg.ifindex = ifindex;
    cfg.mode = pkt::TxMode::sendmmsg;
    cfg.qdisc_bypass = bypass;
    cfg.cpus = {cpu};
    cfg.count = count;
    cfg.frame.frame_len = kFrameLen;
    cfg.frame.src_port = src_port; // the only sender: thread 0 uses src_port itself
    return sender_problem(pkt::run_senders(cfg), count);
}

// The TX queues whose counters grew from a to b, with their growth. Sets err if a queue
// appeared, went missing or went back.
std::map<std::uint32_t, Counters> grown(const Snapshot &a, const Snapshot &b, std::string &err)
{
    std::map<std::uint32_t, Counters> out;
    if (a.txq.size() != b.txq.size())
        err = concat("the TX queue entries went from ", a.txq.size(), " to ", b.txq.size());
    for (const auto &[q, c] : b.txq) {
        const auto it = a.txq.find(q);
        if (it == a.txq.end())
            err = concat("tx-", q, " appeared");
        else if (!less_equal(it->second, c))
            err = concat("tx-", q, " went back from ", fmt(it->second), " to ", fmt(c));
        else if (c != it->second)
            out[q] = c - it->second;
    }
    return out;
}

std::string fmt(const std::map<std::uint32_t, Counters> &growth)
{
    std::string s;
    for (const auto &[q, c] : growth)
        s += concat(s.empty() ? "" : ", ", "tx-", q, " +", fmt(c));
    return s.empty() ? std::string("no queue grew") : s;
}

std::string fmt_cpus(const std::vector<int> &cpus)
{
    std::string s;
    for (const int c : cpus)
        s += concat(s.empty() ? "" : ", ", c);
    return s;
}

// Source port of the flows the spread cases send, and how many packets a send has.
constexpr std::uint16_t kFlowPort = 9000;
constexpr std::uint64_t kFlowPackets = 20;
// Flows spread_without_xps sends through dev_queue_xmit().
constexpr std::uint16_t kFlows = 8;

// XPS, set here, maps the i-th online CPU to TX queue i (CPUs past kQueues left out).
// One sender pinned to each of those CPUs in turn sends round_packets(i) packets of one
// and the same flow through dev_queue_xmit(), where netdev_pick_tx() takes the queue from
// the XPS map of the sending CPU: after each send exactly tx-i has grown, by exactly what
// CPU i sent. Without the map the flow hash would have put every send on one queue
// (spread_without_xps).
TEST_RESULT(per_queue_spread)
{
    std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    if (cpus.size() > kQueues)
        cpus.resize(kQueues);
    if (cpus.size() < 2)
        return CaseResult::skip(
                concat("a spread over the queues needs two online CPUs, found ", cpus.size()));
    const TestDummy dev(dummy(kQueues));
    if (!dev.ok())
        return dev.error();
    Snapshot prev = snapshot(dev);
    if (auto o = snapshot_error(prev, dev.name()))
        return *o;
    if (std::string err = netutil::sysfs::map_cpus_to_queues(dev.name(), cpus); !err.empty())
        return CaseResult::fail(concat("setting XPS CPU i -> tx-i: ", err));
    std::string notes = concat("XPS CPU i -> tx-i for CPUs ", fmt_cpus(cpus), "; flow ", kFlowPort,
                               " sent from each CPU in turn");
    std::string mismatches;
    for (std::uint32_t i = 0; i < cpus.size(); ++i) {
        const std::uint64_t n = round_packets(i);
        if (std::string err = send_flow(dev.ifindex(), cpus[i], kFlowPort, n, false); !err.empty())
            return CaseResult::fail(
                    concat("sending ", n, " packets from CPU ", cpus[i], ": ", err));
        Snapshot s = snapshot(dev);
        if (auto o = snapshot_error(s, dev.name()))
            return *o;
        std::string err;
        const auto growth = grown(prev, s, err);
        if (!err.empty())
            return CaseResult::fail(concat("after CPU ", cpus[i], " sent: ", err));
        const std::map<std::uint32_t, Counters> want{{i, sent_counters(n)}};
        notes += concat("\nCPU ", cpus[i], ": ", fmt(growth));
        if (growth != want)
            mismatches +=
                    concat(" CPU ", cpus[i], ": ", fmt(growth), ", expected ", fmt(want), ";");
        prev = std::move(s);
    }
    if (!mismatches.empty())
        return CaseResult::fail(concat("per-queue growth with XPS CPU i -> tx-i:", mismatches));
    return CaseResult::pass(notes);
}

// Whether queues/tx-<queue>/xps_cpus of dev is an empty mask (value: what it holds);
// nullopt if it cannot be read (a kernel without CONFIG_XPS has no map either).
std::optional<bool> xps_empty(const std::string &dev, std::uint32_t queue, std::string &value)
{
    const auto text = netutil::sysfs::read_file(netutil::sysfs::xps_path(dev, queue));
    if (!text)
        return std::nullopt;
    value = text->substr(0, text->find('\n'));
    return value.find_first_not_of("0,") == std::string::npos;
}

// The queue spread a device created with numtxqueues kQueues gets without XPS (a new
// device has no XPS map: every tx-N/xps_cpus is an empty mask). Each send is one sender
// pinned to one CPU with one flow, and must land on exactly one queue, whole:
// - through dev_queue_xmit(), netdev_pick_tx() falls back to skb_tx_hash(), the flow
//   hash scaled to the queue count: every packet of a flow takes one queue, the same
//   from every CPU (each of kFlows flows is sent from every online CPU, up to kQueues).
//   Which queue a flow gets depends on the hash key drawn at boot, so how the flows
//   share the queues changes from boot to boot: it is reported, not asserted;
// - with PACKET_QDISC_BYPASS, packet_pick_tx_queue() records the sending CPU modulo the
//   queue count as the packet's RX queue, which skb_tx_hash() then returns: every
//   packet sent from CPU c takes tx-(c % kQueues), whatever its flow (two flows from
//   each online CPU).
TEST_RESULT(spread_without_xps)
{
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    const TestDummy dev(dummy(kQueues));
    if (!dev.ok())
        return dev.error();
    Snapshot prev = snapshot(dev);
    if (auto o = snapshot_error(prev, dev.name()))
        return *o;
    std::string notes = concat("no XPS map: xps_cpus of tx-0..tx-", kQueues - 1, " empty");
    for (std::uint32_t q = 0; q < kQueues; ++q) {
        std::string value;
        const auto empty = xps_empty(dev.name(), q, value);
        if (empty && !*empty)
            return CaseResult::fail(concat("tx-", q, " of a new device has the XPS map ", value));
        if (!empty)
            notes = "no XPS map: xps_cpus unreadable (a kernel without XPS)";
    }

    // Sends kFlowPackets packets of flow port from cpu; queue: the one queue they took.
    auto send_one = [&](int cpu, std::uint16_t port, bool bypass,
                        std::uint32_t &queue) -> std::optional<CaseResult> {
        const std::string what =
                concat("flow ", port, bypass ? " with PACKET_QDISC_BYPASS" : "", " from CPU ", cpu);
        if (std::string err = send_flow(dev.ifindex(), cpu, port, kFlowPackets, bypass);
            !err.empty())
            return CaseResult::fail(concat(what, ": ", err));
        Snapshot s = snapshot(dev);
        if (auto o = snapshot_error(s, dev.name()))
            return o;
        std::string err;
        const auto growth = grown(prev, s, err);
        if (!err.empty())
            return CaseResult::fail(concat(what, ": ", err));
        const Counters want = sent_counters(kFlowPackets);
        if (growth.size() != 1 || growth.begin()->second != want)
            return CaseResult::fail(
                    concat(what, ": ", fmt(growth), ", expected one queue +", fmt(want)));
        queue = growth.begin()->first;
        prev = std::move(s);
        return std::nullopt;
    };

    std::vector<int> senders = cpus;
    if (senders.size() > kQueues)
        senders.resize(kQueues);
    std::map<std::uint32_t, unsigned> flows_on;
    std::string flows;
    for (std::uint16_t f = 0; f < kFlows; ++f) {
        const auto port = static_cast<std::uint16_t>(kFlowPort + f);
        std::uint32_t first = 0;
        for (std::size_t c = 0; c < senders.size(); ++c) {
            std::uint32_t q = 0;
            if (auto o = send_one(senders[c], port, false, q))
                return *o;
            if (c == 0)
                first = q;
            else if (q != first)
                return CaseResult::fail(concat("flow ", port, " took tx-", first, " from CPU ",
                                               senders[0], " and tx-", q, " from CPU ",
                                               senders[c]));
        }
        ++flows_on[first];
        flows += concat(f == 0 ? "" : ", ", port, " tx-", first);
    }
    notes += concat("\ndev_queue_xmit(), flow (UDP source port) -> queue, the same from CPU(s) ",
                    fmt_cpus(senders), ": ", flows, "; ", kFlows, " flows on ", flows_on.size(),
                    " of ", kQueues, " queues");

    std::string by_cpu;
    for (const int cpu : cpus) {
        const auto want = static_cast<std::uint32_t>(cpu) % kQueues;
        for (std::uint16_t f = 0; f < 2; ++f) {
            const auto port = static_cast<std::uint16_t>(kFlowPort + f);
            std::uint32_t q = 0;
            if (auto o = send_one(cpu, port, true, q))
                return *o;
            if (q != want)
                return CaseResult::fail(concat("flow ", port, " with PACKET_QDISC_BYPASS from CPU ",
                                               cpu, " took tx-", q, ", expected tx-", want,
                                               " (CPU % ", kQueues, ")"));
        }
        by_cpu += concat(by_cpu.empty() ? "" : ", ", "CPU ", cpu, " tx-", want);
    }
    notes += concat("\nPACKET_QDISC_BYPASS, sending CPU -> queue (CPU % ", kQueues, ") for flows ",
                    kFlowPort, " and ", kFlowPort + 1, ": ", by_cpu);
    return CaseResult::pass(notes);
}

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
std::string check_progress(const Snapshot &prev, const Snapshot &cur)
{
    for (const auto &[q, c] : cur.txq) {
        const auto it = prev.txq.find(q);
        if (it == prev.txq.end())
            return concat("tx-", q, " appeared");
        if (!less_equal(it->second, c))
            return concat("tx-", q, " went back from ", fmt(it->second), " to ", fmt(c));
    }
    if (cur.txq.size() != prev.txq.size())
        return concat("the TX queue entries went from ", prev.txq.size(), " to ", cur.txq.size());
    const std::pair<const char *, std::pair<Counters, Counters>> totals[] = {
            {"the sum over the queues", {prev.queue_sum(), cur.queue_sum()}},
            {"the device total", {prev.device, cur.device}},
            {"the link statistics", {prev.link, cur.link}},
    };
    for (const auto &[what, pc] : totals) {
        if (!less(pc.first, pc.second))
            return concat(what, " went from ", fmt(pc.first), " to ", fmt(pc.second));
    }
    return {};
}

// Waits until the link has counted more than `packets` transmitted packets; seen: the
// link counters of the reading that showed it. Returns an error message, or an empty
// string.
std::string wait_for_link(const TestDummy &dev, std::uint64_t packets, Counters &seen)
{
    const auto t0 = std::chrono::steady_clock::now();
    while (true) {
        rtnl::LinkInfo info;
        if (Status st = rtnl::get_link(rtnl::shared_socket(), dev.name(), info); !st.ok())
            return concat("RTM_GETLINK ", dev.name(), ": ", st.str());
        if (!info.stats)
            return concat("no IFLA_STATS64 for ", dev.name());
        if (info.stats->tx_packets > packets) {
            seen = {info.stats->tx_packets, info.stats->tx_bytes};
            return {};
        }
        if (std::chrono::steady_clock::now() - t0 > kStallTimeout)
            return concat("the link counted no more than ", packets, " packets for ",
                          std::chrono::duration_cast<std::chrono::seconds>(kStallTimeout).count(),
                          " s with the senders running");
        std::this_thread::sleep_for(kPollGap);
    }
}

// Reads queue, device and link statistics over and over while one sender per CPU
// transmits, each read once the link has counted more packets than several per sender
// since the previous read. As each sender adds to its queue's counters before it sends
// its next packet, every read must then see every counter at least where the previous
// read saw it, and the sum over the queues, the device total and the link statistics
// strictly above it. The link is also read right before each read: at least one read
// must have the link counters move between that reading and its own link reading, that
// is while the queues and the device total were being read, so that the counters are
// shown to be read live, while they are being written. After the senders stop, the
// queues plus the base add up exactly to the link statistics, grown by what was sent.
TEST_RESULT(concurrent_reads)
{
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    const std::uint32_t queues = static_cast<std::uint32_t>(std::max<std::size_t>(cpus.size(), 2));
    const TestDummy dev(dummy(queues));
    if (!dev.ok())
        return dev.error();
    const std::string xps_error = netutil::sysfs::map_cpus_to_queues(dev.name(), cpus);
    // More than two packets per sender: one sender has then counted at least three after
    // the previous read, and finished counting (in every counter) at least two of them.
    const std::uint64_t margin = 2 * cpus.size();

    const Snapshot start = snapshot(dev);
    if (auto o = snapshot_error(start, dev.name()))
        return *o;
    const auto base_start = start.base();
    if (!base_start)
        return CaseResult::fail(concat("before sending, the queues ", fmt(start.queue_sum()),
                                       " exceed the device total ", fmt(start.device)));

    unsigned reads = 0;
    unsigned moving = 0;        // reads during which the link counters moved
    unsigned between_dumps = 0; // reads whose device total passed the queues plus base
    std::string violation;
    std::optional<CaseResult> read_error;
    SenderThread senders(dev.ifindex(), cpus);
    Snapshot prev = start;
    const auto t0 = std::chrono::steady_clock::now();
    while (true) {
        Counters link_before;
        if (std::string err = wait_for_link(dev, prev.link.packets + margin, link_before);
            !err.empty()) {
            violation = concat("after ", reads, " reads: ", err);
            break;
        }
        const Snapshot s = snapshot(dev);
        if (auto o = snapshot_error(s, dev.name())) {
            read_error = *o;
            break;
        }
        ++reads;
        if (std::string err = check_progress(prev, s); !err.empty()) {
            violation = concat("read ", reads, " while sending: ", err);
            break;
        }
        // Within one reading, queues <= device (queues + base) <= link, read in that order.
        if (!less_equal(s.queue_sum(), s.device) || !less_equal(s.device, s.link)) {
            violation = concat("read ", reads, ": queues ", fmt(s.queue_sum()),
                               ", device (queues + base) ", fmt(s.device),
                               ", link read right after ", fmt(s.link));
            break;
        }
        if (!less_equal(link_before, s.link)) {
            violation = concat("read ", reads, ": the link went back from ", fmt(link_before),
                               " to ", fmt(s.link), " during the read");
            break;
        }
        moving += less(link_before, s.link) ? 1 : 0;
        between_dumps += s.device.packets > s.queue_sum().packets + base_start->packets ? 1 : 0;
        prev = s;
        const auto elapsed = std::chrono::steady_clock::now() - t0;
        if ((reads >= kMinReads && elapsed >= kMinReadTime) || elapsed >= kMaxReadTime)
            break;
    }
    const auto &results = senders.stop();
    if (read_error)
        return *read_error;
    if (std::string err = sender_problem(results, 0); !err.empty())
        return CaseResult::fail(err);
    if (!violation.empty())
        return CaseResult::fail(violation);
    if (reads < kMinReads)
        return CaseResult::fail(concat(
                "only ", reads, " reads in ",
                std::chrono::duration_cast<std::chrono::seconds>(kMaxReadTime).count(), " s"));
    if (moving == 0)
        return CaseResult::fail(concat("none of the ", reads,
                                       " reads ran while the counters moved: "
                                       "the link counted as many packets right before each read as "
                                       "right after it"));

    const Counters want = sent_counters(total_sent(results));
    const Snapshot end = snapshot(dev);
    if (auto o = snapshot_error(end, dev.name()))
        return *o;
    const auto base_end = end.base();
    const std::string sums =
            concat("queues ", fmt(end.queue_sum()), " + base ",
                   base_end ? fmt(*base_end) : std::string("?"), ", link ", fmt(end.link));
    if (end.link - start.link != want)
        return CaseResult::fail(concat("after the senders stopped: link grew by ",
                                       fmt(end.link - start.link), ", sent ", fmt(want)));
    if (!base_end || *base_end != *base_start || end.queue_sum() + *base_end != end.link)
        return CaseResult::fail(
                concat("after the senders stopped: ", sums, ", base before ", fmt(*base_start)));
    if (end.queue_sum() - start.queue_sum() != want)
        return CaseResult::fail(concat("after the senders stopped: the queues grew by ",
                                       fmt(end.queue_sum() - start.queue_sum()), ", sent ",
                                       fmt(want)));
    std::string notes =
            concat(reads, " reads while sending, each once the link had counted more than ", margin,
                   " packets since the read before: every counter at or past "
                   "that read, the totals above it; ",
                   moving,
                   " read(s) while the counters moved (the link counted more right after "
                   "the read than right before it), in ",
                   between_dumps,
                   " of them the device total already past the queues read before "
                   "it plus the base; after stopping: ",
                   sums, ", sent ", fmt(want));
    if (!xps_error.empty())
        notes += concat("\nXPS not set (", xps_error, ")");
    return CaseResult::pass(notes);
}

} // namespace

int main(int argc, char **argv)
{
    return ksft::main(argc, argv);
}

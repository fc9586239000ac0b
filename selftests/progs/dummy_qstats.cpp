// kselftest: per-queue TX statistics of dummy devices (netdev QSTATS_GET).
//
// Needs root. The devices are up, with IPv6 switched off so that they send nothing but
// the test's packets, and no qdisc (dummy is IFF_NO_QUEUE: noqueue).
//
// The first five cases share one device with kQueues TX queues and its first round of
// traffic, steered queue by queue: queue q gets kRoundPackets + q * kRoundStep packets,
// so that counts landing on the wrong queue show. The steering is a clsact egress
// matchall filter with "action skbedit queue_mapping q" (the packets go through
// dev_queue_xmit(), where the egress hook's choice of queue is final), or, without
// act_skbedit, XPS mapping the q-th online CPU to queue q and one sender pinned to that
// CPU. after_channel_change leaves the shared device with one TX queue.
// per_queue_spread, spread_without_xps, single_queue, queue_counts_across_channels and
// concurrent_reads use devices of their own. Devices have unique names and are removed
// on every path.
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
#include "netdev.hpp"
#include "nl.hpp"
#include "packet_sender.hpp"
#include "rtnl.hpp"
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
constexpr std::uint64_t kPerCpu = 500;
constexpr std::uint64_t kFrameLen = 64;
// The TX queue counts queue_counts_across_channels checks: the single-queue device (its
// queue 0 is the device), a few multi-queue ones and the most rtnetlink allows.
constexpr std::uint32_t kQueueCounts[] = {1, 2, 64, 65, 4096};
// What it sends on the first and on the last TX queue, and on tx-0 while it is the only
// active queue.
constexpr std::uint64_t kFirstQueuePackets = 40;
constexpr std::uint64_t kLastQueuePackets = 70;
constexpr std::uint64_t kShrunkPackets = 30;
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

// Puts each packet on a chosen TX queue of a device: any queue with act_skbedit; without
// it, XPS maps the i-th online CPU to the i-th of the queues given and a sender pinned to
// that CPU sends, so that only as many of them as there are CPUs can be reached.
class Steering {
public:
    Steering(const TestDummy &dev, std::vector<int> cpus, std::vector<std::uint32_t> queues)
        : dev_(dev), cpus_(std::move(cpus)), queues_(std::move(queues))
    {
        const std::string skbedit_error = try_skbedit();
        if (skbedit_error.empty()) {
            skbedit_ = true;
            how_ = "clsact egress matchall, action skbedit queue_mapping";
            return;
        }
        how_ = concat("no skbedit steering (", skbedit_error, ")");
        if (cpus_.size() > queues_.size())
            cpus_.resize(queues_.size());
        if (cpus_.size() < 2) {
            error_ = concat(how_, ", and XPS needs two online CPUs, found ", cpus_.size());
            return;
        }
        std::string map;
        for (std::size_t i = 0; i < cpus_.size(); ++i) {
            if (std::string err = netutil::sysfs::set_xps_cpus(dev_.name(), queues_[i], {cpus_[i]});
                !err.empty()) {
                error_ = concat(how_, ", and XPS could not be set: ", err);
                return;
            }
            map += concat(map.empty() ? "" : ", ", "CPU ", cpus_[i], " -> tx-", queues_[i]);
        }
        how_ += concat("; XPS ", map, ", the sender pinned to the queue's CPU");
    }

    // Empty if packets can be steered, else why not.
    const std::string &error() const { return error_; }
    const std::string &how() const { return how_; }
    // Whether queue q can receive packets (with XPS only the queues that have a CPU).
    bool reachable(std::uint32_t q) const { return error_.empty() && (skbedit_ || xps_cpu(q)); }

    // Sends count packets on queue q from one sender. Returns an error message or "".
    std::string send_on(std::uint32_t q, std::uint64_t count)
    {
        int cpu = 0;
        if (skbedit_) {
            if (std::string err = steer(q); !err.empty())
                return err;
            cpu = cpus_.empty() ? 0 : cpus_[0];
        } else if (const auto c = xps_cpu(q)) {
            cpu = *c;
        } else {
            return concat("no CPU is mapped to tx-", q, " (", how_, ")");
        }
        const auto res = send(dev_.ifindex(), {cpu}, count, false);
        return sender_problem(res, count);
    }

private:
    // The CPU XPS maps to queue q, if any.
    std::optional<int> xps_cpu(std::uint32_t q) const
    {
        for (std::size_t i = 0; i < cpus_.size() && i < queues_.size(); ++i) {
            if (queues_[i] == q)
                return cpus_[i];
        }
        return std::nullopt;
    }

    rtnl::MatchallSpec filter(std::uint16_t q) const
    {
        rtnl::MatchallSpec spec;
        spec.ifindex = dev_.ifindex();
        spec.parent = rtnl::kEgressParent;
        spec.skbedit_queue_mapping = q;
        return spec;
    }

    std::string steer(std::uint32_t q)
    {
        if (filter_) {
            if (Status st = rtnl::filter_delete(rtnl::shared_socket(), *filter_); !st.ok())
                return concat("delete the skbedit filter: ", st.str());
            filter_.reset();
        }
        const rtnl::MatchallSpec spec = filter(static_cast<std::uint16_t>(q));
        if (Status st = rtnl::filter_add(rtnl::shared_socket(), spec); !st.ok())
            return concat("egress matchall skbedit queue_mapping ", q, ": ", st.str());
        filter_ = spec;
        return {};
    }

    std::string try_skbedit()
    {
        if (Status st = rtnl::add_clsact(rtnl::shared_socket(), dev_.ifindex()); !st.ok())
            return concat("clsact: ", st.str());
        if (std::string err = steer(0); !err.empty()) {
            rtnl::QdiscSpec clsact;
            clsact.ifindex = dev_.ifindex();
            clsact.parent = rtnl::kClsactParent;
            clsact.handle = rtnl::kClsactHandle;
            clsact.kind = "clsact";
            rtnl::qdisc_delete(rtnl::shared_socket(), clsact);
            return err;
        }
        return {};
    }

    const TestDummy &dev_;
    std::vector<int> cpus_;
    std::vector<std::uint32_t> queues_;
    bool skbedit_ = false;
    std::optional<rtnl::MatchallSpec> filter_;
    std::string how_;
    std::string error_;
};

// The packets the first round puts on queue q.
std::uint64_t round_packets(std::uint32_t q)
{
    return kRoundPackets + kRoundStep * q;
}

// The device shared by the first cases, after one round of traffic steered queue by queue.
struct Fixture {
    std::optional<CaseResult> error; // reported by every case that needs the fixture
    std::vector<int> cpus;
    std::unique_ptr<TestDummy> dev;
    std::unique_ptr<Steering> steering;
    std::map<std::uint32_t, std::uint64_t> sent; // per queue, first round
    std::uint64_t sent1 = 0;
    Snapshot before;
    Snapshot after;
};

std::unique_ptr<Fixture> build_fixture()
{
    auto f = std::make_unique<Fixture>();
    f->cpus = pkt::online_cpus();
    if (f->cpus.empty()) {
        f->error = CaseResult::fail("cannot read /sys/devices/system/cpu/online");
        return f;
    }
    f->dev = std::make_unique<TestDummy>(dummy(kQueues));
    if (!f->dev->ok()) {
        f->error = f->dev->error();
        return f;
    }
    std::vector<std::uint32_t> queues(kQueues);
    for (std::uint32_t q = 0; q < kQueues; ++q)
        queues[q] = q;
    f->steering = std::make_unique<Steering>(*f->dev, f->cpus, std::move(queues));
    f->before = snapshot(*f->dev);
    if (!f->steering->error().empty()) {
        // Everything on one queue, whichever the stack picks: per_queue_steered skips.
        const std::uint64_t n = round_packets(0);
        if (std::string err = sender_problem(send(f->dev->ifindex(), {f->cpus[0]}, n, false), n);
            !err.empty()) {
            f->error = CaseResult::fail(concat("sending ", n, " packets: ", err));
            return f;
        }
        f->sent1 = n;
    }
    for (std::uint32_t q = 0; q < kQueues && f->steering->error().empty(); ++q) {
        if (!f->steering->reachable(q))
            continue;
        const std::uint64_t n = round_packets(q);
        if (std::string err = f->steering->send_on(q, n); !err.empty()) {
            f->error = CaseResult::fail(concat("sending ", n, " packets on tx-", q, ": ", err));
            return f;
        }
        f->sent[q] = n;
        f->sent1 += n;
    }
    f->after = snapshot(*f->dev);
    return f;
}

std::unique_ptr<Fixture> &fixture_slot()
{
    static std::unique_ptr<Fixture> f;
    return f;
}

Fixture &fixture()
{
    return ksft::lazy_fixture(fixture_slot(), build_fixture);
}

// The fixture's setup error, else the first error of the given snapshots of it.
std::optional<CaseResult> fixture_error(const Fixture &f,
                                        std::initializer_list<const Snapshot *> snapshots)
{
    if (f.error)
        return f.error;
    for (const Snapshot *s : snapshots) {
        if (auto o = snapshot_error(*s, f.dev->name()))
            return o;
    }
    return std::nullopt;
}

// Why the TX queue entries of s are not exactly tx-0 .. tx-<queues - 1>, each with
// tx-packets and tx-bytes; empty if they are.
std::string check_tx_entries(const Snapshot &s, std::uint32_t queues)
{
    std::string problems;
    for (std::uint32_t q = 0; q < queues; ++q) {
        if (s.txq.count(q) == 0)
            problems += concat(" tx-", q, " missing;");
    }
    if (s.txq.size() != queues)
        problems += concat(" ", s.txq.size(), " TX queue entries for ", queues, " queues;");
    for (const netdev::QStats &q : s.entries) {
        if (q.queue_type == netdev::QueueType::tx && (!q.tx_packets || !q.tx_bytes))
            problems += concat(" tx-", q.queue_id.value_or(0), " without tx-packets/tx-bytes;");
    }
    return problems;
}

// dummy never receives. Why the receive statistics of s are not exactly what says so: no
// RX queue entry (per-queue RX counters are not collected, so not reported) and the
// device-scope RX totals present and zero (get_base_stats reports them, as the link
// statistics do). Empty if they are.
std::string rx_problems(const Snapshot &s)
{
    std::string problems;
    if (s.rx_entries != 0)
        problems += concat(" ", s.rx_entries, " RX queue entries;");
    const std::pair<const char *, const std::optional<std::uint64_t> *> totals[] = {
            {"rx-packets", &s.device_raw.rx_packets},
            {"rx-bytes", &s.device_raw.rx_bytes},
    };
    for (const auto &[what, value] : totals) {
        if (!*value)
            problems += concat(" no device ", what, ";");
        else if (**value != 0)
            problems += concat(" device ", what, " ", **value, ";");
    }
    return problems;
}

// ---- cases ----

TEST_RESULT(qstats_supported)
{
    const Fixture &f = fixture();
    if (auto o = fixture_error(f, {&f.after}))
        return *o;
    const Snapshot &s = f.after;
    if (s.entries.empty())
        return CaseResult::fail(
                concat("QSTATS_GET scope queue returned no entry for ", f.dev->name()));
    if (std::string problems = check_tx_entries(s, kQueues); !problems.empty())
        return CaseResult::fail(concat("per-queue statistics of ", f.dev->name(), ":", problems));
    if (std::string err = netdev::check_qstats(s.entries, s.device_raw); !err.empty())
        return CaseResult::fail(concat("queue and device statistics disagree: ", err));
    return CaseResult::pass(concat(s.txq.size(), " TX queue entries"));
}

// dummy never receives: no RX queue is reported, and the device's RX totals are zero.
TEST_RESULT(rx_totals_zero)
{
    const Fixture &f = fixture();
    if (auto o = fixture_error(f, {&f.after}))
        return *o;
    if (f.after.txq.empty())
        return CaseResult::fail(
                concat("no TX queue entries for ", f.dev->name(), ": nothing reported at all"));
    if (std::string problems = rx_problems(f.after); !problems.empty())
        return CaseResult::fail(concat("receive statistics of ", f.dev->name(), ":", problems));
    return CaseResult::pass(concat(f.after.txq.size(), " TX queue entries, no RX entry, device "
                                                       "rx-packets and rx-bytes 0"));
}

TEST_RESULT(sum_equals_link_stats)
{
    const Fixture &f = fixture();
    if (auto o = fixture_error(f, {&f.before, &f.after}))
        return *o;
    const Snapshot &b = f.before;
    const Snapshot &a = f.after;
    const auto base0 = b.base();
    const auto base1 = a.base();
    if (!base0 || !base1)
        return CaseResult::fail(concat("the queues add up to more than the device total: queues ",
                                       fmt(a.queue_sum()), ", device ", fmt(a.device)));
    const Counters want = sent_counters(f.sent1);
    const std::string sums =
            concat("queues ", fmt(a.queue_sum()), " + base ", fmt(*base1), ", link ", fmt(a.link));
    if (a.link - b.link != want)
        return CaseResult::fail(concat("link statistics grew by ", fmt(a.link - b.link), ", sent ",
                                       fmt(want), " (", sums, ")"));
    if (a.queue_sum() + *base1 != a.link)
        return CaseResult::fail(concat("queues + base != link statistics: ", sums));
    if (*base1 != *base0)
        return CaseResult::fail(concat("base changed from ", fmt(*base0), " to ", fmt(*base1),
                                       " with every queue active"));
    if (a.queue_sum() - b.queue_sum() != want)
        return CaseResult::fail(concat("the queues grew by ", fmt(a.queue_sum() - b.queue_sum()),
                                       ", sent ", fmt(want)));
    return CaseResult::pass(concat("sent ", fmt(want), ": ", sums));
}

// The per-queue counters follow the queue each packet of the first round was put on:
// by skbedit where the kernel has act_skbedit, else by the XPS fallback of Steering.
TEST_RESULT(per_queue_steered)
{
    const Fixture &f = fixture();
    if (auto o = fixture_error(f, {&f.before, &f.after}))
        return *o;
    if (!f.steering->error().empty())
        return CaseResult::skip(
                concat("cannot steer packets to chosen queues: ", f.steering->error()));
    std::string mismatches;
    std::string notes = f.steering->how();
    for (std::uint32_t q = 0; q < kQueues; ++q) {
        const auto it0 = f.before.txq.find(q);
        const auto it1 = f.after.txq.find(q);
        if (it0 == f.before.txq.end() || it1 == f.after.txq.end()) {
            mismatches += concat(" tx-", q, " missing;");
            continue;
        }
        const Counters got = it1->second - it0->second;
        const auto sent = f.sent.find(q);
        const Counters expect = sent_counters(sent == f.sent.end() ? 0 : sent->second);
        notes += concat("\ntx-", q, ": +", fmt(got), ", sent ", fmt(expect));
        if (got != expect)
            mismatches += concat(" tx-", q, " +", fmt(got), ", sent ", fmt(expect), ";");
    }
    if (!mismatches.empty())
        return CaseResult::fail(concat("per-queue counts (", f.steering->how(), "):", mismatches));
    return CaseResult::pass(notes);
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

TEST_RESULT(after_channel_change)
{
    Fixture &f = fixture();
    if (auto o = fixture_error(f, {&f.after}))
        return *o;
    if (f.after.txq.count(0) == 0)
        return CaseResult::fail(concat("no statistics for tx-0 of ", f.dev->name()));
    const std::string &name = f.dev->name();
    const int ifindex = f.dev->ifindex();

    netutil::ethtool::Ethtool eth;
    std::uint16_t family = 0;
    if (Status st = eth.family(family); !st.ok())
        return CaseResult::skip(concat("ethtool netlink family not available (", st.str(), ")"));
    netutil::ethtool::ChannelsRequest req;
    req.tx = 1;
    if (Status st = eth.channels_set(name, req); !st.ok())
        return CaseResult::fail(concat("ETHTOOL_MSG_CHANNELS_SET tx 1 on ", name, ": ", st.str()));

    const Snapshot mid = snapshot(*f.dev);
    if (auto o = snapshot_error(mid, name))
        return *o;
    if (mid.txq.size() != 1 || mid.txq.count(0) == 0)
        return CaseResult::fail(
                concat("after tx 1: ", mid.txq.size(), " TX queue entries, expected only tx-0"));
    // The counters of the queues just disabled move into the base, unchanged.
    Counters disabled;
    for (const auto &[q, c] : f.after.txq) {
        if (q != 0)
            disabled = disabled + c;
    }
    const auto base_mid = mid.base();
    if (!base_mid || *base_mid != disabled || mid.txq.at(0) != f.after.txq.at(0))
        return CaseResult::fail(concat("after tx 1: tx-0 ", fmt(mid.txq.at(0)), " (was ",
                                       fmt(f.after.txq.at(0)), "), device ", fmt(mid.device),
                                       "; the disabled queues held ", fmt(disabled)));
    if (mid.device != mid.link)
        return CaseResult::fail(
                concat("after tx 1: device ", fmt(mid.device), " != link ", fmt(mid.link)));

    const auto round2 = send(ifindex, f.cpus, kPerCpu, true);
    if (std::string err = sender_problem(round2, kPerCpu); !err.empty())
        return CaseResult::fail(err);
    const Counters want = sent_counters(total_sent(round2));
    const Snapshot end = snapshot(*f.dev);
    if (auto o = snapshot_error(end, name))
        return *o;
    const auto base_end = end.base();
    const std::string sums =
            concat("tx-0 ", fmt(end.queue_sum()), " + base ",
                   base_end ? fmt(*base_end) : std::string("?"), ", link ", fmt(end.link));
    if (end.txq.size() != 1 || end.txq.count(0) == 0)
        return CaseResult::fail(concat("after sending: ", end.txq.size(), " TX queue entries"));
    if (end.link - mid.link != want)
        return CaseResult::fail(concat("link statistics grew by ", fmt(end.link - mid.link),
                                       ", sent ", fmt(want), " (", sums, ")"));
    if (end.txq.at(0) - mid.txq.at(0) != want)
        return CaseResult::fail(concat("tx-0 grew by ", fmt(end.txq.at(0) - mid.txq.at(0)),
                                       ", sent ", fmt(want), " (", sums, ")"));
    if (!base_end || *base_end != *base_mid)
        return CaseResult::fail(concat("base changed from ", fmt(*base_mid), ": ", sums));
    if (end.queue_sum() + *base_end != end.link)
        return CaseResult::fail(concat("queues + base != link statistics: ", sums));
    return CaseResult::pass(concat("sent ", fmt(want), " on one TX queue: ", sums));
}

// A device with the default single TX queue reports it, from the device's own counters:
// queue 0 is the whole device, and the base is zero.
TEST_RESULT(single_queue)
{
    const TestDummy dev(dummy(std::nullopt));
    if (!dev.ok())
        return dev.error();
    if (dev.info().num_tx_queues != 1)
        return CaseResult::fail(concat(dev.name(), " has ", dev.info().num_tx_queues,
                                       " TX queues by default, expected 1"));
    const std::vector<int> cpus = pkt::online_cpus();
    const Snapshot before = snapshot(dev);
    if (auto o = snapshot_error(before, dev.name()))
        return *o;
    if (std::string problems = check_tx_entries(before, 1); !problems.empty())
        return CaseResult::fail(concat("per-queue statistics of ", dev.name(), ":", problems));
    const auto res = send(dev.ifindex(), {cpus.empty() ? 0 : cpus[0]}, kPerCpu, false);
    if (std::string err = sender_problem(res, kPerCpu); !err.empty())
        return CaseResult::fail(err);
    const Snapshot s = snapshot(dev);
    if (auto o = snapshot_error(s, dev.name()))
        return *o;
    if (std::string problems = check_tx_entries(s, 1); !problems.empty())
        return CaseResult::fail(concat("per-queue statistics of ", dev.name(), ":", problems));
    if (std::string problems = rx_problems(s); !problems.empty())
        return CaseResult::fail(concat("receive statistics of ", dev.name(), ":", problems));
    const Counters want = sent_counters(kPerCpu);
    const std::string sums =
            concat("tx-0 ", fmt(s.txq.at(0)), ", device ", fmt(s.device), ", link ", fmt(s.link));
    if (s.link - before.link != want || s.txq.at(0) - before.txq.at(0) != want)
        return CaseResult::fail(concat("sent ", fmt(want), ": link grew by ",
                                       fmt(s.link - before.link), ", tx-0 by ",
                                       fmt(s.txq.at(0) - before.txq.at(0))));
    if (s.txq.at(0) != s.link || s.device != s.link)
        return CaseResult::fail(concat("tx-0, device and link totals differ: ", sums));
    return CaseResult::pass(concat("sent ", fmt(want), ": ", sums));
}

// Why s is not exactly this: the active TX queues tx-0 .. tx-<want.size() - 1> holding
// want[q], each with tx-packets and tx-bytes; no RX queue and device RX totals of zero
// (rx_problems()); the base (device total minus the active queues) holding base; the
// device total and the link statistics both holding total. Empty if it is.
std::string check_exact(const Snapshot &s, const std::vector<Counters> &want, const Counters &base,
                        const Counters &total)
{
    if (std::string problems = check_tx_entries(s, static_cast<std::uint32_t>(want.size()));
        !problems.empty())
        return concat("per-queue statistics:", problems);
    if (std::string problems = rx_problems(s); !problems.empty())
        return concat("receive statistics:", problems);
    constexpr unsigned kShown = 4;
    unsigned wrong = 0;
    std::string queues;
    for (std::uint32_t q = 0; q < want.size(); ++q) {
        if (s.txq.at(q) == want[q])
            continue;
        if (++wrong <= kShown)
            queues += concat(" tx-", q, " ", fmt(s.txq.at(q)), ", expected ", fmt(want[q]), ";");
    }
    if (wrong > kShown)
        queues += concat(" and ", wrong - kShown, " more queue(s);");
    if (wrong != 0)
        return concat("per-queue counters:", queues);
    const auto b = s.base();
    if (!b)
        return concat("the active queues ", fmt(s.queue_sum()), " exceed the device total ",
                      fmt(s.device));
    if (*b != base)
        return concat("base (device ", fmt(s.device), " minus the active queues) ", fmt(*b),
                      ", expected ", fmt(base));
    if (s.device != total || s.link != total)
        return concat("device total ", fmt(s.device), ", link statistics ", fmt(s.link),
                      ", expected both ", fmt(total));
    return {};
}

// For each count of kQueueCounts, a new device with that many TX queues, every counter of
// which is known at each step:
// - new: every queue listed, at zero, and so the base, the device and the link;
// - kFirstQueuePackets sent on tx-0 and kLastQueuePackets on the last queue (on tx-0 too
//   with one queue), steered as per_queue_steered does: exactly those two queues grew;
// - ETHTOOL_MSG_CHANNELS_SET tx 1: only tx-0 is listed, unchanged, and the base holds
//   exactly the counters of the queues just disabled;
// - kShrunkPackets sent on tx-0, the only active queue: tx-0 grew, the base did not;
// - CHANNELS_SET tx <count> again: every queue is listed with its own counters, the
//   disabled ones' back from the base, which is zero again.
// At every step the device total is the base plus the active queues and the link
// statistics equal it, both counting every packet sent. With one TX queue the channel
// requests change nothing and queue 0 is the whole device.
TEST_RESULT(queue_counts_across_channels)
{
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    netutil::ethtool::Ethtool eth;
    std::uint16_t family = 0;
    if (Status st = eth.family(family); !st.ok())
        return CaseResult::skip(concat("ethtool netlink family not available (", st.str(), ")"));
    std::string notes;
    for (const std::uint32_t txqs : kQueueCounts) {
        const std::string what = concat(txqs, txqs == 1 ? " TX queue" : " TX queues");
        const std::uint32_t last = txqs - 1;
        const TestDummy dev(dummy(txqs));
        if (!dev.ok())
            return dev.error();
        const std::string &name = dev.name();

        std::vector<Counters> want(txqs);
        Counters total;
        const Snapshot fresh = snapshot(dev);
        if (auto o = snapshot_error(fresh, name))
            return *o;
        if (std::string err = check_exact(fresh, want, {}, total); !err.empty())
            return CaseResult::fail(concat(what, ", new device ", name, ": ", err));

        std::unique_ptr<Steering> steering;
        if (txqs > 1) {
            steering = std::make_unique<Steering>(dev, cpus, std::vector<std::uint32_t>{0, last});
            if (!steering->reachable(0) || !steering->reachable(last))
                return CaseResult::skip(concat(what, ": cannot steer packets to tx-0 and tx-", last,
                                               ": ", steering->error()));
        }
        // Sends count packets on queue q (the only queue of a single-queue device).
        auto send_on = [&](std::uint32_t q, std::uint64_t count) -> std::string {
            std::string err =
                    steering ? steering->send_on(q, count)
                             : sender_problem(send(dev.ifindex(), {cpus[0]}, count, false), count);
            if (!err.empty())
                return concat(what, ": sending ", count, " packets on tx-", q, ": ", err);
            want[q] = want[q] + sent_counters(count);
            total = total + sent_counters(count);
            return {};
        };
        auto set_tx = [&](std::uint32_t tx) -> std::string {
            netutil::ethtool::ChannelsRequest req;
            req.tx = tx;
            if (Status st = eth.channels_set(name, req); !st.ok())
                return concat(what, ": ETHTOOL_MSG_CHANNELS_SET tx ", tx, " on ", name, ": ",
                              st.str());
            return {};
        };
        // Checks the device against want[0 .. active), base and total.
        auto check = [&](std::string_view step, std::uint32_t active,
                         const Counters &base) -> std::optional<CaseResult> {
            const Snapshot s = snapshot(dev);
            if (auto o = snapshot_error(s, name))
                return o;
            const std::vector<Counters> queues(want.begin(), want.begin() + active);
            if (std::string err = check_exact(s, queues, base, total); !err.empty())
                return CaseResult::fail(concat(what, ", ", step, ": ", err));
            return std::nullopt;
        };

        if (std::string err = send_on(0, kFirstQueuePackets); !err.empty())
            return CaseResult::fail(err);
        if (std::string err = send_on(last, kLastQueuePackets); !err.empty())
            return CaseResult::fail(err);
        if (auto o = check(concat("after sending on tx-0 and tx-", last), txqs, {}))
            return *o;

        if (std::string err = set_tx(1); !err.empty())
            return CaseResult::fail(err);
        Counters disabled;
        for (std::uint32_t q = 1; q < txqs; ++q)
            disabled = disabled + want[q];
        if (auto o = check("after tx 1", 1, disabled))
            return *o;
        if (std::string err = send_on(0, kShrunkPackets); !err.empty())
            return CaseResult::fail(err);
        if (auto o = check("after sending on tx-0 with tx 1", 1, disabled))
            return *o;

        if (std::string err = set_tx(txqs); !err.empty())
            return CaseResult::fail(err);
        if (auto o = check(concat("after tx ", txqs, " again"), txqs, {}))
            return *o;
        notes += concat(notes.empty() ? "" : "\n", what, ": tx-0 ", fmt(want[0]));
        if (txqs > 1)
            notes +=
                    concat(", tx-", last, " ", fmt(want[last]), "; base with tx 1 ", fmt(disabled));
        notes += concat("; device = link = ", fmt(total));
        if (steering)
            notes += concat(" (", steering->how(), ")");
    }
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

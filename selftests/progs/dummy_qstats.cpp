// kselftest: per-queue TX statistics of dummy devices (netdev QSTATS_GET).
//
// Needs root. The device gets one TX queue per online CPU (at least 2), IPv6 switched
// off so that it sends nothing but the test's packets, no qdisc (dummy is
// IFF_NO_QUEUE: noqueue) and XPS mapping the i-th online CPU to TX queue i. One
// AF_PACKET sender per CPU, pinned, uses PACKET_QDISC_BYPASS: its packets go through
// dev_direct_xmit() on the queue netdev_pick_tx() picks for the sending CPU.
//
// "base" below is what the device-scope dump adds to the queues: the device total minus
// the sum over the active queues (for dummy, the counters of disabled queues).
//
// The first four cases share one device and its first round of traffic;
// after_channel_change leaves that device with one TX queue. concurrent_reads uses a
// device of its own. Devices have unique names and are removed on every path.

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
#include <vector>

#include "ethtool.hpp"
#include "ktap.hpp"
#include "netdev.hpp"
#include "nl.hpp"
#include "packet_sender.hpp"
#include "rtnl.hpp"
#include "sysfs.hpp"
#include "testdev.hpp"

namespace {

using ksft::cat;
using ksft::Outcome;
using ksft::nl::Status;
using ksft::testdev::TestDummy;
namespace netdev = ksft::netdev;
namespace pkt = ksft::pkt;
namespace rtnl = ksft::rtnl;

constexpr std::uint64_t kPerCpu = 500;
constexpr std::uint64_t kFrameLen = 64;
constexpr unsigned kMinReads = 100;
constexpr auto kMinReadTime = std::chrono::milliseconds(300);
constexpr auto kMaxReadTime = std::chrono::seconds(10);

netdev::Netdev &nd()
{
    static netdev::Netdev n;
    return n;
}

// An up dummy device ("dqs" + pid + "_" + n) with IPv6 off that must have tx_queues TX
// queues.
ksft::testdev::DummySpec dummy(std::uint32_t tx_queues)
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
    return cat(c.packets, " packets/", c.bytes, " bytes");
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

Counters sent_counters(std::uint64_t packets)
{
    return {packets, packets * kFrameLen};
}

// One reading, in this order: queue scope, device scope, link (rtnl) statistics.
struct Snapshot {
    Status queues_st;
    std::vector<netdev::QStats> entries; // every queue entry of the device
    std::map<std::uint32_t, Counters> txq;
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

Snapshot snapshot(netdev::Netdev &n, ksft::nl::Socket &rt, const std::string &name, int ifindex)
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
    }
    s.device_st = n.device_stats(ifindex, s.device_raw);
    s.device = {s.device_raw.tx_packets.value_or(0), s.device_raw.tx_bytes.value_or(0)};
    rtnl::LinkInfo info;
    s.link_st = rtnl::get_link(rt, name, info);
    if (s.link_st.ok() && !info.stats)
        s.link_st = Status{ENODATA, "no IFLA_STATS64", false, 0};
    if (info.stats)
        s.link = {info.stats->tx_packets, info.stats->tx_bytes};
    return s;
}

// SKIP if the kernel has no netdev family, FAIL for any other error.
std::optional<Outcome> snapshot_error(const Snapshot &s, std::string_view dev)
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
            return Outcome::skip(
                    cat("netdev generic netlink family not available (", st->str(), ")"));
        std::string msg = cat(what, " for ", dev, ": ", st->str());
        if (st->err == EOPNOTSUPP)
            msg += " (the driver reports no queue statistics)";
        return Outcome::fail(msg);
    }
    return std::nullopt;
}

std::vector<pkt::ThreadResult> send(int ifindex, const std::vector<int> &cpus,
                                    std::uint64_t per_cpu, const std::atomic<bool> *stop = nullptr)
{
    pkt::SenderConfig cfg;
    cfg.ifindex = ifindex;
    cfg.mode = pkt::TxMode::sendmmsg;
    cfg.qdisc_bypass = true;
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
            return cat("sender on CPU ", r.cpu, ": ", r.error);
        if (count != 0 && r.sent != count)
            return cat("sender on CPU ", r.cpu, " sent ", r.sent, " of ", count);
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

// Maps the i-th CPU to TX queue i. Returns an empty string, or why it could not.
std::string setup_xps(const std::string &dev, const std::vector<int> &cpus)
{
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        std::string err = ksft::sysfs::set_xps_cpus(dev, static_cast<unsigned>(i), {cpus[i]});
        if (!err.empty()) {
            for (std::size_t j = 0; j < i; ++j)
                ksft::sysfs::set_xps_cpus(dev, static_cast<unsigned>(j), {});
            return err;
        }
    }
    return {};
}

std::uint32_t queue_count(const std::vector<int> &cpus)
{
    return static_cast<std::uint32_t>(std::max<std::size_t>(cpus.size(), 2));
}

// The device shared by the first cases, after one round of kPerCpu packets per CPU.
struct Fixture {
    std::optional<Outcome> error; // reported by every case that needs the fixture
    std::vector<int> cpus;
    std::uint32_t queues = 0;
    std::unique_ptr<TestDummy> dev;
    std::string xps_error; // empty: CPU i -> queue i
    std::vector<pkt::ThreadResult> round1;
    std::uint64_t sent1 = 0;
    Snapshot before;
    Snapshot after;
};

std::unique_ptr<Fixture> build_fixture()
{
    auto f = std::make_unique<Fixture>();
    f->cpus = pkt::online_cpus();
    if (f->cpus.empty()) {
        f->error = Outcome::fail("cannot read /sys/devices/system/cpu/online");
        return f;
    }
    f->queues = queue_count(f->cpus);
    f->dev = std::make_unique<TestDummy>(dummy(f->queues));
    if (!f->dev->ok()) {
        f->error = f->dev->error();
        return f;
    }
    f->xps_error = setup_xps(f->dev->name(), f->cpus);
    f->before = snapshot(nd(), rtnl::shared_socket(), f->dev->name(), f->dev->ifindex());
    f->round1 = send(f->dev->ifindex(), f->cpus, kPerCpu);
    if (std::string err = sender_problem(f->round1, kPerCpu); !err.empty()) {
        f->error = Outcome::fail(err);
        return f;
    }
    f->sent1 = total_sent(f->round1);
    f->after = snapshot(nd(), rtnl::shared_socket(), f->dev->name(), f->dev->ifindex());
    return f;
}

std::unique_ptr<Fixture> &fixture_slot()
{
    static std::unique_ptr<Fixture> f;
    return f;
}

Fixture &fixture()
{
    std::unique_ptr<Fixture> &f = fixture_slot();
    if (!f) {
        try {
            f = build_fixture();
        } catch (const std::exception &e) {
            f = std::make_unique<Fixture>();
            f->error = Outcome::fail(cat("setup: ", e.what()));
        }
    }
    return *f;
}

// The fixture's setup error, else the first error of the given snapshots of it.
std::optional<Outcome> fixture_error(const Fixture &f,
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

// ---- cases ----

Outcome qstats_supported()
{
    const Fixture &f = fixture();
    if (auto o = fixture_error(f, {&f.after}))
        return *o;
    const Snapshot &s = f.after;
    if (s.entries.empty())
        return Outcome::fail(cat("QSTATS_GET scope queue returned no entry for ", f.dev->name()));
    std::string problems;
    for (std::uint32_t q = 0; q < f.queues; ++q) {
        if (s.txq.count(q) == 0)
            problems += cat(" tx-", q, " missing;");
    }
    if (s.txq.size() != f.queues)
        problems += cat(" ", s.txq.size(), " TX queue entries for ", f.queues, " queues;");
    for (const netdev::QStats &q : s.entries) {
        if (q.queue_type == netdev::QueueType::tx && (!q.tx_packets || !q.tx_bytes))
            problems += cat(" tx-", q.queue_id.value_or(0), " without tx-packets/tx-bytes;");
    }
    if (!problems.empty())
        return Outcome::fail(cat("per-queue statistics of ", f.dev->name(), ":", problems));
    if (std::string err = netdev::check_qstats(s.entries, s.device_raw); !err.empty())
        return Outcome::fail(cat("queue and device statistics disagree: ", err));
    return Outcome::pass(cat(s.txq.size(), " TX queue entries, ", s.entries.size() - s.txq.size(),
                             " RX queue entries"));
}

Outcome sum_equals_link_stats()
{
    const Fixture &f = fixture();
    if (auto o = fixture_error(f, {&f.before, &f.after}))
        return *o;
    const Snapshot &b = f.before;
    const Snapshot &a = f.after;
    const auto base0 = b.base();
    const auto base1 = a.base();
    if (!base0 || !base1)
        return Outcome::fail(cat("the queues add up to more than the device total: queues ",
                                 fmt(a.queue_sum()), ", device ", fmt(a.device)));
    const Counters want = sent_counters(f.sent1);
    const std::string sums =
            cat("queues ", fmt(a.queue_sum()), " + base ", fmt(*base1), ", link ", fmt(a.link));
    if (a.link - b.link != want)
        return Outcome::fail(cat("link statistics grew by ", fmt(a.link - b.link), ", sent ",
                                 fmt(want), " (", sums, ")"));
    if (a.queue_sum() + *base1 != a.link)
        return Outcome::fail(cat("queues + base != link statistics: ", sums));
    if (*base1 != *base0)
        return Outcome::fail(cat("base changed from ", fmt(*base0), " to ", fmt(*base1),
                                 " with every queue active"));
    if (a.queue_sum() - b.queue_sum() != want)
        return Outcome::fail(cat("the queues grew by ", fmt(a.queue_sum() - b.queue_sum()),
                                 ", sent ", fmt(want)));
    return Outcome::pass(cat("sent ", fmt(want), ": ", sums));
}

Outcome per_queue_spread()
{
    const Fixture &f = fixture();
    if (auto o = fixture_error(f, {&f.before, &f.after}))
        return *o;
    const Counters grown = f.after.queue_sum() - f.before.queue_sum();
    if (!f.xps_error.empty()) {
        if (grown != sent_counters(f.sent1))
            return Outcome::fail(
                    cat("the queues grew by ", fmt(grown), ", sent ", fmt(sent_counters(f.sent1))));
        return Outcome::pass(cat("XPS could not be set (", f.xps_error,
                                 "): the queue of each sender is not known, checked the sum "
                                 "over the queues only: ",
                                 fmt(grown)));
    }
    std::map<std::uint32_t, std::uint64_t> want;
    for (std::size_t i = 0; i < f.round1.size(); ++i)
        want[static_cast<std::uint32_t>(i)] += f.round1[i].sent;
    std::string mismatches;
    std::string notes;
    for (std::uint32_t q = 0; q < f.queues; ++q) {
        const auto it0 = f.before.txq.find(q);
        const auto it1 = f.after.txq.find(q);
        if (it0 == f.before.txq.end() || it1 == f.after.txq.end()) {
            mismatches += cat(" tx-", q, " missing;");
            continue;
        }
        const Counters got = it1->second - it0->second;
        const Counters expect = sent_counters(want[q]);
        const std::string cpu =
                q < f.cpus.size() ? cat(" (CPU ", f.cpus[q], ")") : std::string(" (no sender)");
        notes += cat(notes.empty() ? "" : "\n", "tx-", q, cpu, ": +", fmt(got));
        if (got != expect)
            mismatches += cat(" tx-", q, cpu, " +", fmt(got), ", expected +", fmt(expect), ";");
    }
    if (!mismatches.empty())
        return Outcome::fail(cat("per-queue counts with XPS CPU i -> queue i:", mismatches));
    return Outcome::pass(notes);
}

Outcome after_channel_change()
{
    Fixture &f = fixture();
    if (auto o = fixture_error(f, {&f.after}))
        return *o;
    if (f.after.txq.count(0) == 0)
        return Outcome::fail(cat("no statistics for tx-0 of ", f.dev->name()));
    const std::string &name = f.dev->name();
    const int ifindex = f.dev->ifindex();

    ksft::ethtool::Ethtool eth;
    std::uint16_t family = 0;
    if (Status st = eth.family(family); !st.ok())
        return Outcome::skip(cat("ethtool netlink family not available (", st.str(), ")"));
    ksft::ethtool::ChannelsRequest req;
    req.tx = 1;
    if (Status st = eth.channels_set(name, req); !st.ok())
        return Outcome::fail(cat("ETHTOOL_MSG_CHANNELS_SET tx 1 on ", name, ": ", st.str()));

    const Snapshot mid = snapshot(nd(), rtnl::shared_socket(), name, ifindex);
    if (auto o = snapshot_error(mid, name))
        return *o;
    if (mid.txq.size() != 1 || mid.txq.count(0) == 0)
        return Outcome::fail(
                cat("after tx 1: ", mid.txq.size(), " TX queue entries, expected only tx-0"));
    // The counters of the queues just disabled move into the base, unchanged.
    Counters disabled;
    for (const auto &[q, c] : f.after.txq) {
        if (q != 0)
            disabled = disabled + c;
    }
    const auto base_mid = mid.base();
    if (!base_mid || *base_mid != disabled || mid.txq.at(0) != f.after.txq.at(0))
        return Outcome::fail(cat("after tx 1: tx-0 ", fmt(mid.txq.at(0)), " (was ",
                                 fmt(f.after.txq.at(0)), "), device ", fmt(mid.device),
                                 "; the disabled queues held ", fmt(disabled)));
    if (mid.device != mid.link)
        return Outcome::fail(
                cat("after tx 1: device ", fmt(mid.device), " != link ", fmt(mid.link)));

    const auto round2 = send(ifindex, f.cpus, kPerCpu);
    if (std::string err = sender_problem(round2, kPerCpu); !err.empty())
        return Outcome::fail(err);
    const Counters want = sent_counters(total_sent(round2));
    const Snapshot end = snapshot(nd(), rtnl::shared_socket(), name, ifindex);
    if (auto o = snapshot_error(end, name))
        return *o;
    const auto base_end = end.base();
    const std::string sums =
            cat("tx-0 ", fmt(end.queue_sum()), " + base ",
                base_end ? fmt(*base_end) : std::string("?"), ", link ", fmt(end.link));
    if (end.txq.size() != 1 || end.txq.count(0) == 0)
        return Outcome::fail(cat("after sending: ", end.txq.size(), " TX queue entries"));
    if (end.link - mid.link != want)
        return Outcome::fail(cat("link statistics grew by ", fmt(end.link - mid.link), ", sent ",
                                 fmt(want), " (", sums, ")"));
    if (end.txq.at(0) - mid.txq.at(0) != want)
        return Outcome::fail(cat("tx-0 grew by ", fmt(end.txq.at(0) - mid.txq.at(0)), ", sent ",
                                 fmt(want), " (", sums, ")"));
    if (!base_end || *base_end != *base_mid)
        return Outcome::fail(cat("base changed from ", fmt(*base_mid), ": ", sums));
    if (end.queue_sum() + *base_end != end.link)
        return Outcome::fail(cat("queues + base != link statistics: ", sums));
    return Outcome::pass(cat("sent ", fmt(want), " on one TX queue: ", sums));
}

// Stops and joins the sender thread on every path.
class SenderThread {
public:
    SenderThread(int ifindex, std::vector<int> cpus)
        : thread_([this, ifindex, cpus = std::move(cpus)] {
              results_ = send(ifindex, cpus, UINT64_MAX, &stop_);
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

Outcome concurrent_reads()
{
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return Outcome::fail("cannot read /sys/devices/system/cpu/online");
    const TestDummy dev(dummy(queue_count(cpus)));
    if (!dev.ok())
        return dev.error();
    const std::string xps_error = setup_xps(dev.name(), cpus);

    const Snapshot start = snapshot(nd(), rtnl::shared_socket(), dev.name(), dev.ifindex());
    if (auto o = snapshot_error(start, dev.name()))
        return *o;
    const auto base_start = start.base();
    if (!base_start)
        return Outcome::fail(cat("before sending, the queues ", fmt(start.queue_sum()),
                                 " exceed the device total ", fmt(start.device)));

    unsigned reads = 0;
    unsigned moving = 0; // reads that saw the link counters grow
    std::string violation;
    std::optional<Outcome> read_error;
    {
        SenderThread senders(dev.ifindex(), cpus);
        const auto t0 = std::chrono::steady_clock::now();
        Counters prev_link = start.link;
        while (true) {
            const Snapshot s = snapshot(nd(), rtnl::shared_socket(), dev.name(), dev.ifindex());
            if (auto o = snapshot_error(s, dev.name())) {
                read_error = *o;
                break;
            }
            ++reads;
            if (s.link != prev_link)
                ++moving;
            prev_link = s.link;
            // Counters only grow, and each reading comes after the previous one.
            if (violation.empty() &&
                (!less_equal(s.queue_sum(), s.device) || !less_equal(s.device, s.link)))
                violation = cat("read ", reads, ": queues ", fmt(s.queue_sum()),
                                ", device (queues + base) ", fmt(s.device),
                                ", link read right after ", fmt(s.link));
            const auto elapsed = std::chrono::steady_clock::now() - t0;
            if ((reads >= kMinReads && elapsed >= kMinReadTime) || elapsed >= kMaxReadTime)
                break;
        }
        const auto &results = senders.stop();
        if (read_error)
            return *read_error;
        if (std::string err = sender_problem(results, 0); !err.empty())
            return Outcome::fail(err);
        if (!violation.empty())
            return Outcome::fail(violation);

        const Counters want = sent_counters(total_sent(results));
        const Snapshot end = snapshot(nd(), rtnl::shared_socket(), dev.name(), dev.ifindex());
        if (auto o = snapshot_error(end, dev.name()))
            return *o;
        const auto base_end = end.base();
        const std::string sums =
                cat("queues ", fmt(end.queue_sum()), " + base ",
                    base_end ? fmt(*base_end) : std::string("?"), ", link ", fmt(end.link));
        if (end.link - start.link != want)
            return Outcome::fail(cat("after the senders stopped: link grew by ",
                                     fmt(end.link - start.link), ", sent ", fmt(want)));
        if (!base_end || *base_end != *base_start || end.queue_sum() + *base_end != end.link)
            return Outcome::fail(
                    cat("after the senders stopped: ", sums, ", base before ", fmt(*base_start)));
        std::string notes = cat(reads, " reads while sending, ", moving,
                                " saw the link counters move; after stopping: ", sums);
        if (!xps_error.empty())
            notes += cat("\nXPS not set (", xps_error, ")");
        return Outcome::pass(notes);
    }
}

} // namespace

int main()
{
    ksft::TestSuite suite;
    suite.add("qstats_supported", qstats_supported);
    suite.add("sum_equals_link_stats", sum_equals_link_stats);
    suite.add("per_queue_spread", per_queue_spread);
    suite.add("after_channel_change", after_channel_change);
    suite.add("concurrent_reads", concurrent_reads);
    suite.require_root();
    const int rc = suite.run();
    // Delete the shared device while the netlink socket it needs still exists.
    fixture_slot().reset();
    return rc;
}

// The transmit paths that neither a qdisc nor net:net_dev_start_xmit sees: facts about the
// core, the same on both kernels, that the dummy series' cover letter quotes (mq class
// stats count what the qdisc handed on; the tracepoint is per packet, not a counter).
//
// A dummy with two TX queues and an mq root (handle 1:, one child per queue) gets
// kHiddenPackets packets from one of three senders:
//   - pktgen in xmit_mode start_xmit: pktgen_xmit() calls netdev_start_xmit() itself;
//   - an AF_PACKET socket with PACKET_QDISC_BYPASS: packet_direct_xmit() ->
//     __dev_direct_xmit() -> netdev_start_xmit();
//   - an AF_PACKET socket without it (the control): dev_queue_xmit() -> the mq child ->
//     dev_hard_start_xmit() -> xmit_one(), which fires net_dev_start_xmit per packet.
// Counted for each, in the same window: the net_dev_start_xmit events of the device (a
// trace instance of its own), the packets of mq's classes (the stats of its children,
// which `tc -s class show` prints for mq), the link's tx_packets and, on the patched
// kernel, the sum over the TX queues' qstats. The first two must see nothing of the hidden
// paths, and everything of the control; the link and the qstats count every packet. After
// a hidden path, kProbePackets more go through the qdisc in the same setup, and the
// tracepoint and the classes must count those: their zero was the path's, not a tracer or
// a dump that counts nothing.

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cmd.hpp"
#include "pktgen.hpp"
#include "qstats.hpp"
#include "tracefs.hpp"

namespace dummy_qstats {
namespace {

constexpr std::uint64_t kHiddenPackets = 200;
constexpr std::uint64_t kProbePackets = 10;
constexpr std::uint32_t kMqHandle = rtnl::make_handle(1, 0);
constexpr std::uint32_t kHiddenQueues = 2;
// How long the link may take to count what a sender was told was sent (a packet left on
// the qdisc for the NET_TX softirq).
constexpr auto kSettle = std::chrono::seconds(5);

// net:net_dev_start_xmit in a trace instance of its own.
class StartXmitTracer {
public:
    StartXmitTracer()
        : instance_(ksft::tracefs::instance_name("dummy_qstats")),
          event_(instance_, "net", "net_dev_start_xmit")
    {
    }

    // SKIP when tracefs, its instances or the event are missing.
    std::optional<CaseResult> unavailable() const
    {
        if (!instance_.available())
            return CaseResult::skip(instance_.error());
        if (!event_.available())
            return CaseResult::skip(event_.error());
        return std::nullopt;
    }

    ksft::tracefs::Event &event() { return event_; }

private:
    ksft::tracefs::Instance instance_; // first: the event is disabled before it goes
    ksft::tracefs::Event event_;
};

// pktgen's /proc/net/pktgen in this netns: loads the module (CONFIG_NET_PKTGEN=m, from the
// tree's net/config) if it is not there, and unloads it again at the end if it loaded it.
class Pktgen {
public:
    Pktgen()
    {
        if (proc_.available())
            return;
        const ksft::CmdResult r = ksft::run_cmd({"modprobe", "pktgen"});
        if (r.status != 0) {
            error_ = concat("modprobe pktgen: exit ", r.status, r.output.empty() ? "" : ": ",
                            r.output, " (CONFIG_NET_PKTGEN)");
            return;
        }
        loaded_here_ = true;
        if (!proc_.available())
            error_ = concat("no ", (proc_.root() / "pgctrl").string(), " after modprobe pktgen");
    }
    ~Pktgen()
    {
        try {
            if (proc_.available())
                proc_.write({"kpktgend_0", "rem_device_all"});
            if (loaded_here_)
                ksft::run_cmd({"modprobe", "-r", "pktgen"});
        } catch (...) { // NOLINT(bugprone-empty-catch): best effort in a destructor
        }
    }
    Pktgen(const Pktgen &) = delete;
    Pktgen &operator=(const Pktgen &) = delete;
    Pktgen(Pktgen &&) = delete;
    Pktgen &operator=(Pktgen &&) = delete;

    // Why pktgen cannot be used (a SKIP reason), or empty.
    const std::string &error() const { return error_; }

    // count packets from one pktgen thread (kpktgend_0) in xmit_mode start_xmit on TX
    // queue 0 of dev. Returns an error message, or an empty string.
    std::string start_xmit(const std::string &dev, std::uint64_t count)
    {
        const std::vector<unsigned> threads = proc_.threads();
        if (threads.empty() || threads.front() != 0)
            return "pktgen has no thread kpktgend_0";
        mqbench::pktgen::Config cfg;
        cfg.dev = dev;
        cfg.threads = 1;
        cfg.count = count;
        cfg.xmit_mode = "start_xmit";
        cfg.tx_queues = kHiddenQueues;
        if (std::string e = proc_.apply(mqbench::pktgen::setup_plan(cfg, threads)); !e.empty())
            return e;
        if (std::string e = proc_.start(); !e.empty())
            return e;
        const std::string file = mqbench::pktgen::device_name(dev, 0);
        const auto text = proc_.read(file);
        if (!text)
            return concat("pktgen: cannot read ", file);
        const auto result = mqbench::pktgen::parse_result(*text);
        if (!result)
            return concat("pktgen: no result in ", file, ": ", *text);
        if (result->packets != count || result->errors != 0)
            return concat("pktgen sent ", result->packets, " of ", count, " packets, ",
                          result->errors, " errors");
        return {};
    }

private:
    mqbench::pktgen::Proc proc_;
    std::string error_;
    bool loaded_here_ = false;
};

struct Reading {
    std::uint64_t link = 0;    // the link's tx_packets
    std::uint64_t classes = 0; // packets of mq's classes: its children's stats
    std::uint64_t mq = 0;      // the mq root's own packets (the children summed)
    std::uint64_t queues = 0;  // patched: sum of tx-packets over the TX queues' qstats
};

// Reads dev's counters. patched: the qstats must answer; base: they must not (EOPNOTSUPP,
// no netdev_stat_ops). A FAIL outcome on error.
std::optional<CaseResult> read(const TestDummy &dev, bool patched, Reading &out)
{
    out = {};
    rtnl::LinkInfo info;
    if (Status st = rtnl::get_link(rtnl::shared_socket(), dev.name(), info); !st.ok())
        return CaseResult::fail(concat("get ", dev.name(), ": ", st.str()));
    if (!info.stats)
        return CaseResult::fail(concat("no IFLA_STATS64 for ", dev.name()));
    out.link = info.stats->tx_packets;

    std::vector<rtnl::QdiscInfo> qdiscs;
    if (Status st = rtnl::qdisc_dump(rtnl::shared_socket(), dev.ifindex(), qdiscs); !st.ok())
        return CaseResult::fail(concat("qdisc dump: ", st.str()));
    unsigned children = 0;
    bool root = false;
    for (const rtnl::QdiscInfo &q : qdiscs) {
        if (q.parent == rtnl::kRootParent && q.kind == "mq" && q.handle == kMqHandle) {
            root = true;
            out.mq = q.packets;
        } else if (q.parent != rtnl::kRootParent && rtnl::handle_major(q.parent) == 1) {
            ++children;
            out.classes += q.packets;
        }
    }
    if (!root || children != kHiddenQueues)
        return CaseResult::fail(concat(dev.name(), ": root mq 1: ", root ? "present" : "missing",
                                       ", ", children, " children, expected ", kHiddenQueues));

    std::vector<netdev::QStats> entries;
    const Status st = nd().queue_stats(dev.ifindex(), entries);
    if (!patched) {
        if (st.err != EOPNOTSUPP)
            return CaseResult::fail(concat("QSTATS_GET of ", dev.name(), " on the base kernel: ",
                                           st.str(), ", expected EOPNOTSUPP (no netdev_stat_ops)"),
                                    {st.err});
        return std::nullopt;
    }
    if (!st.ok())
        return CaseResult::fail(concat("QSTATS_GET of ", dev.name(), ": ", st.str()), {st.err});
    for (const netdev::QStats &q : entries) {
        if (q.ifindex == dev.ifindex() && q.queue_type == netdev::QueueType::tx)
            out.queues += q.tx_packets.value_or(0);
    }
    return std::nullopt;
}

// Waits until the link has counted at least `packets` transmitted packets, at most kSettle.
void settle(const TestDummy &dev, std::uint64_t packets)
{
    const auto end = std::chrono::steady_clock::now() + kSettle;
    while (std::chrono::steady_clock::now() < end) {
        rtnl::LinkInfo info;
        if (rtnl::get_link(rtnl::shared_socket(), dev.name(), info).ok() && info.stats &&
            info.stats->tx_packets >= packets)
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

struct Counts {
    std::size_t events = 0; // net:net_dev_start_xmit of the device
    std::uint64_t classes = 0;
    std::uint64_t mq = 0;
    std::uint64_t link = 0;
    std::uint64_t queues = 0;
};

std::string fmt(const Counts &c, bool patched)
{
    return concat("net_dev_start_xmit events ", c.events, ", mq classes ", c.classes,
                  " packets (mq root ", c.mq, "), link tx_packets +", c.link,
                  patched ? concat(", qstats queue sum +", c.queues) : std::string());
}

// Runs send (which sends packets, or returns an error message) with the tracepoint on,
// and what grew meanwhile into out.
std::optional<CaseResult> measure(const TestDummy &dev, StartXmitTracer &tracer, bool patched,
                                  std::uint64_t packets, const std::function<std::string()> &send,
                                  Counts &out)
{
    Reading a;
    if (auto o = read(dev, patched, a))
        return o;
    std::string err;
    const auto events = tracer.event().count(dev.name(), [&] {
        err = send();
        if (err.empty())
            settle(dev, a.link + packets);
    });
    if (!err.empty())
        return CaseResult::fail(err);
    if (!events)
        return CaseResult::fail(concat("tracing: ", tracer.event().error()));
    Reading b;
    if (auto o = read(dev, patched, b))
        return o;
    out = {*events, b.classes - a.classes, b.mq - a.mq, b.link - a.link, b.queues - a.queues};
    return std::nullopt;
}

enum class Path { start_xmit, packet_bypass, qdisc };

CaseResult run_path(Path path)
{
    std::optional<CaseResult> err;
    const std::optional<bool> patched = patched_label(err);
    if (!patched)
        return *err;
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        return CaseResult::fail("cannot read /sys/devices/system/cpu/online");
    StartXmitTracer tracer;
    if (auto o = tracer.unavailable())
        return *o;
    std::optional<Pktgen> pktgen;
    if (path == Path::start_xmit) {
        pktgen.emplace();
        if (!pktgen->error().empty())
            return CaseResult::skip(pktgen->error());
    }
    const TestDummy dev(dummy(kHiddenQueues));
    if (!dev.ok())
        return dev.error();
    rtnl::QdiscSpec mq;
    mq.ifindex = dev.ifindex();
    mq.handle = kMqHandle;
    mq.kind = "mq";
    if (Status st = rtnl::qdisc_replace(rtnl::shared_socket(), mq); !st.ok())
        return CaseResult::fail(concat("replace the root of ", dev.name(), " with mq: ", st.str()));

    auto through_qdisc = [&](std::uint64_t n) {
        return [&dev, &cpus, n] {
            return send_flow(dev.ifindex(), cpus[0], kFlowPort, n, false);
        };
    };
    std::function<std::string()> send;
    const char *how = "";
    switch (path) {
    case Path::start_xmit:
        how = "by pktgen in xmit_mode start_xmit";
        send = [&] {
            return pktgen->start_xmit(dev.name(), kHiddenPackets);
        };
        break;
    case Path::packet_bypass:
        how = "over AF_PACKET with PACKET_QDISC_BYPASS";
        send = [&] {
            return send_flow(dev.ifindex(), cpus[0], kFlowPort, kHiddenPackets, true);
        };
        break;
    case Path::qdisc:
        how = "over AF_PACKET through the qdisc";
        send = through_qdisc(kHiddenPackets);
        break;
    }
    Counts c;
    if (auto o = measure(dev, tracer, *patched, kHiddenPackets, send, c))
        return *o;
    const std::string seen = fmt(c, *patched);
    const std::uint64_t want = path == Path::qdisc ? kHiddenPackets : 0;
    ASSERT_EQ(c.link, kHiddenPackets) << "link tx_packets growth, " << kHiddenPackets
                                      << " packets sent " << how << ": " << seen;
    ASSERT_EQ(c.events, want) << "net:net_dev_start_xmit events of " << dev.name() << ", "
                              << kHiddenPackets << " packets sent " << how << ": " << seen;
    ASSERT_EQ(c.classes, want) << "packets counted by mq's classes, " << kHiddenPackets
                               << " packets sent " << how << ": " << seen;
    if (*patched) {
        ASSERT_EQ(c.queues, kHiddenPackets) << "qstats: sum over the TX queues, " << kHiddenPackets
                                            << " packets sent " << how << ": " << seen;
    }
    std::string notes = concat(kHiddenPackets, " packets sent ", how, ": ", seen,
                               *patched ? "" : "; qstats: EOPNOTSUPP (base)");
    if (path == Path::qdisc)
        return CaseResult::pass(notes);

    // The probe: the same tracer and dump see packets that go through the qdisc.
    Counts p;
    if (auto o = measure(dev, tracer, *patched, kProbePackets, through_qdisc(kProbePackets), p))
        return *o;
    const std::string probe = fmt(p, *patched);
    ASSERT_EQ(p.events, kProbePackets)
            << "probe through the qdisc: net_dev_start_xmit events: " << probe;
    ASSERT_EQ(p.classes, kProbePackets) << "probe through the qdisc: mq classes: " << probe;
    ASSERT_EQ(p.link, kProbePackets) << "probe through the qdisc: link: " << probe;
    return CaseResult::pass(
            concat(notes, "\nprobe, ", kProbePackets, " packets through the qdisc: ", probe));
}

TEST_RESULT_OPTS(hidden_start_xmit_skips_qdisc_and_tracepoint, {.timeout_s = 180})
{
    return run_path(Path::start_xmit);
}

TEST_RESULT_OPTS(hidden_packet_bypass_skips_qdisc_and_tracepoint, {.timeout_s = 180})
{
    return run_path(Path::packet_bypass);
}

TEST_RESULT_OPTS(through_qdisc_counts_in_qdisc_and_tracepoint, {.timeout_s = 180})
{
    return run_path(Path::qdisc);
}

} // namespace
} // namespace dummy_qstats

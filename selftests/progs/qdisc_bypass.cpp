// kselftest: the bypass of empty, idle work-conserving qdiscs (TCQ_F_CAN_BYPASS).
//
// Needs root. AF_PACKET senders without PACKET_QDISC_BYPASS go through
// dev_queue_xmit() and __dev_xmit_skb(). dummy's ndo_start_xmit never stops a queue,
// so a single sender always finds the qdisc empty and idle: a qdisc that may be
// bypassed hands every packet straight to the driver and qdisc:qdisc_enqueue never
// fires; one that may not enqueues (and dequeues) every packet.
//
// qdisc:qdisc_enqueue prints the ifindex but not the device name, so events are
// counted by ifindex. They are recorded in a private trace instance
// (instances/qdisc_bypass_<pid>), removed at the end of each case: the global trace
// buffer and its event switches are left as they were. fq_codel also counts, in its
// xstats, every packet that makes an idle flow active (new_flow_count): a bypassed
// packet is never enqueued, so that count must not move either.
//
// Each case creates its own dummy device (unique name, IPv6 off so that nothing else
// is sent, up) and removes it on every path.

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ktap.hpp"
#include "nl.hpp"
#include "packet_sender.hpp"
#include "rtnl.hpp"
#include "sysfs.hpp"
#include "testdev.hpp"
#include "tracefs.hpp"

namespace {

using ksft::Outcome;
using ksft::testdev::TestDummy;
using netutil::cat;
using netutil::nl::Status;
namespace pkt = netutil::pkt;
namespace rtnl = netutil::rtnl;

constexpr std::uint64_t kPackets = 200;
constexpr std::uint64_t kLimit0Packets = 100;
constexpr std::uint32_t kRootHandle = rtnl::make_handle(1, 0);
constexpr std::uint32_t kDefaultLimit = 1000;

// An up dummy device ("qb" + pid + "_" + n) with IPv6 off.
ksft::testdev::DummySpec dummy(std::uint32_t tx_queues)
{
    return {.prefix = "qb", .tx_queues = tx_queues, .ipv6_off = true, .up = true};
}

// qdisc:qdisc_enqueue, in a trace instance of its own.
class Tracer {
public:
    Tracer()
        : instance_(ksft::tracefs::instance_name("qdisc_bypass")),
          enqueue_(instance_, "qdisc", "qdisc_enqueue")
    {
    }

    // SKIP when tracefs, its instances or qdisc:qdisc_enqueue are missing.
    std::optional<Outcome> unavailable() const
    {
        if (!instance_.available())
            return Outcome::skip(instance_.error());
        if (!enqueue_.available())
            return Outcome::skip(enqueue_.error());
        return std::nullopt;
    }

    // Counts the enqueue events of ifindex while window runs. Returns an error message or "".
    std::string count(int ifindex, const std::function<void()> &window, std::size_t &enqueues)
    {
        const auto n = enqueue_.count_field("ifindex", std::to_string(ifindex), window);
        if (!n)
            return enqueue_.error();
        enqueues = *n;
        return {};
    }

private:
    ksft::tracefs::Instance instance_; // first: the event is disabled before it goes
    ksft::tracefs::Event enqueue_;
};

std::vector<int> cpus_for(std::size_t threads)
{
    std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty())
        cpus.push_back(0);
    if (cpus.size() > threads)
        cpus.resize(threads);
    return cpus;
}

std::optional<std::uint64_t> link_tx_packets(const TestDummy &dev, std::string &err)
{
    rtnl::LinkInfo info;
    if (Status st = rtnl::get_link(rtnl::shared_socket(), dev.name(), info); !st.ok()) {
        err = cat("get ", dev.name(), ": ", st.str());
        return std::nullopt;
    }
    if (!info.stats) {
        err = cat("no IFLA_STATS64 for ", dev.name());
        return std::nullopt;
    }
    return info.stats->tx_packets;
}

std::optional<rtnl::QdiscInfo> root_qdisc(const TestDummy &dev, std::string &err)
{
    std::vector<rtnl::QdiscInfo> qdiscs;
    if (Status st = rtnl::qdisc_dump(rtnl::shared_socket(), dev.ifindex(), qdiscs); !st.ok()) {
        err = cat("qdisc dump: ", st.str());
        return std::nullopt;
    }
    for (const rtnl::QdiscInfo &q : qdiscs) {
        if (q.parent == rtnl::kRootParent)
            return q;
    }
    err = cat("no root qdisc on ", dev.name());
    return std::nullopt;
}

struct Traffic {
    std::uint64_t sent = 0;    // accepted by the stack
    std::uint64_t dropped = 0; // refused with ENOBUFS (count_drops only)
    std::uint64_t link_tx = 0; // growth of the link's tx_packets
    std::size_t enqueues = 0;
    // Growth of fq_codel's new_flow_count, when the root qdisc is fq_codel.
    std::optional<std::uint32_t> new_flows;
};

// Sends per_thread packets from each CPU through the qdisc, optionally counting the
// qdisc_enqueue events (tracer may be null). Returns a SKIP/FAIL outcome on error.
std::optional<Outcome> send(const TestDummy &dev, const std::vector<int> &cpus,
                            std::uint64_t per_thread, bool count_drops, Tracer *tracer,
                            Traffic &out)
{
    pkt::SenderConfig cfg;
    cfg.ifindex = dev.ifindex();
    cfg.mode = pkt::TxMode::sendmmsg;
    cfg.qdisc_bypass = false;
    cfg.cpus = cpus;
    cfg.count = per_thread;
    cfg.count_drops = count_drops;

    std::string err;
    const auto link0 = link_tx_packets(dev, err);
    if (!link0)
        return Outcome::fail(err);
    const auto root0 = root_qdisc(dev, err);
    if (!root0)
        return Outcome::fail(err);
    std::vector<pkt::ThreadResult> results;
    auto window = [&] {
        results = pkt::run_senders(cfg);
    };
    out = Traffic{};
    if (tracer != nullptr) {
        if (std::string terr = tracer->count(dev.ifindex(), window, out.enqueues); !terr.empty())
            return Outcome::fail(cat("tracing: ", terr));
    } else {
        window();
    }
    for (const pkt::ThreadResult &r : results) {
        if (!r.error.empty())
            return Outcome::fail(cat("sender on CPU ", r.cpu, ": ", r.error));
        if (r.sent + r.dropped != per_thread)
            return Outcome::fail(cat("sender on CPU ", r.cpu, " sent ", r.sent, " and saw ",
                                     r.dropped, " drops of ", per_thread));
        out.sent += r.sent;
        out.dropped += r.dropped;
    }
    const auto link1 = link_tx_packets(dev, err);
    if (!link1)
        return Outcome::fail(err);
    out.link_tx = *link1 - *link0;
    const auto root1 = root_qdisc(dev, err);
    if (!root1)
        return Outcome::fail(err);
    const auto flows0 = rtnl::fq_codel_new_flow_count(*root0);
    const auto flows1 = rtnl::fq_codel_new_flow_count(*root1);
    if (root1->kind == "fq_codel" && (!flows0 || !flows1))
        return Outcome::fail(cat("no fq_codel xstats (new_flow_count) on ", dev.name()));
    if (flows0 && flows1)
        out.new_flows = *flows1 - *flows0;
    return std::nullopt;
}

// SKIP when the kernel lacks the qdisc (ENOENT: no such kind, module missing).
std::optional<Outcome> qdisc_failed(const Status &st, std::string_view what, std::string_view kind)
{
    if (st.ok())
        return std::nullopt;
    if (st.err == ENOENT)
        return Outcome::skip(cat("qdisc kind ", kind, " not available (", st.str(), ")"));
    return Outcome::fail(cat(what, ": ", st.str()));
}

std::optional<Outcome> set_root(const TestDummy &dev, const std::string &kind,
                                std::vector<std::uint8_t> options = {})
{
    rtnl::QdiscSpec spec;
    spec.ifindex = dev.ifindex();
    spec.handle = kRootHandle;
    spec.kind = kind;
    spec.options = std::move(options);
    return qdisc_failed(rtnl::qdisc_replace(rtnl::shared_socket(), spec),
                        cat("replace root ", kind, " handle 1: on ", dev.name()), kind);
}

rtnl::MatchallSpec matchall_at_root(const TestDummy &dev)
{
    rtnl::MatchallSpec spec;
    spec.ifindex = dev.ifindex();
    spec.parent = kRootHandle;
    spec.handle = 1;
    spec.prio = 1;
    // fq_codel and sfq drop packets that a filter classifies to minor 0: send them to
    // flow 1.
    spec.classid = rtnl::make_handle(1, 1);
    return spec;
}

std::optional<Outcome> add_filter(const TestDummy &dev)
{
    const Status st = rtnl::filter_add(rtnl::shared_socket(), matchall_at_root(dev));
    if (st.ok())
        return std::nullopt;
    if (st.err == ENOENT)
        return Outcome::skip(cat("matchall classifier not available (", st.str(), ")"));
    return Outcome::fail(cat("add matchall filter at parent 1: of ", dev.name(), ": ", st.str()));
}

std::optional<Outcome> add_and_delete_filter(const TestDummy &dev)
{
    if (auto o = add_filter(dev))
        return o;
    if (Status st = rtnl::filter_delete(rtnl::shared_socket(), matchall_at_root(dev)); !st.ok())
        return Outcome::fail(cat("delete the matchall filter: ", st.str()));
    return std::nullopt;
}

std::string fmt_new_flows(const Traffic &t)
{
    return t.new_flows ? cat(", fq_codel new_flow_count +", *t.new_flows) : std::string();
}

// Expects every packet to reach the driver with `enqueues` qdisc_enqueue events (0 or
// kPackets). For fq_codel, new_flow_count must not move when nothing is enqueued, and
// must when everything is.
Outcome expect_traffic(const Traffic &t, std::size_t enqueues, std::string_view qdisc)
{
    if (t.link_tx != kPackets)
        return Outcome::fail(cat("link tx_packets grew by ", t.link_tx, ", sent ", kPackets,
                                 " through ", qdisc));
    if (t.enqueues != enqueues)
        return Outcome::fail(cat(t.enqueues, " of ", kPackets, " packets were enqueued on ", qdisc,
                                 ", expected ", enqueues, fmt_new_flows(t)));
    if (t.new_flows && (enqueues == 0) != (*t.new_flows == 0))
        return Outcome::fail(cat(t.enqueues, " qdisc_enqueue events on ", qdisc,
                                 " as expected, but fq_codel's new_flow_count grew by ",
                                 *t.new_flows));
    return Outcome::pass(
            cat(t.enqueues, " enqueues, ", t.link_tx, " packets transmitted", fmt_new_flows(t)));
}

// Filters (or none) put on a device after its root qdisc, before the traffic.
using Prepare = std::function<std::optional<Outcome>(const TestDummy &)>;

// kPackets from one sender on an idle single-queue device with this root qdisc, prepared
// by prepare (if set), with the qdisc events counted into t. SKIP/FAIL outcome on error.
std::optional<Outcome> traced_send(const std::string &kind, std::vector<std::uint8_t> options,
                                   const Prepare &prepare, Traffic &t)
{
    Tracer tracer;
    if (auto o = tracer.unavailable())
        return o;
    const TestDummy dev(dummy(1));
    if (!dev.ok())
        return dev.error();
    if (auto o = set_root(dev, kind, std::move(options)))
        return o;
    if (prepare) {
        if (auto o = prepare(dev))
            return o;
    }
    return send(dev, cpus_for(1), kPackets, false, &tracer, t);
}

// One sender on an idle single-queue device with this root qdisc: no packet may be
// enqueued.
Outcome idle_bypass(const std::string &kind, std::vector<std::uint8_t> options = {})
{
    Traffic t;
    if (auto o = traced_send(kind, std::move(options), {}, t))
        return *o;
    return expect_traffic(t, 0, cat("the idle ", kind, " root"));
}

// A filter on the qdisc: every packet must be enqueued (and classified).
Outcome filter_disables_bypass(const std::string &kind)
{
    Traffic t;
    if (auto o = traced_send(kind, {}, add_filter, t))
        return *o;
    return expect_traffic(t, kPackets, cat(kind, " with a matchall filter"));
}

// The qdisc's only filter added and deleted again: back to bypassing.
Outcome filter_removed_restores_bypass(const std::string &kind)
{
    Traffic t;
    if (auto o = traced_send(kind, {}, add_and_delete_filter, t))
        return *o;
    Outcome res = expect_traffic(t, 0, cat(kind, " whose only filter was deleted"));
    if (res.result == ksft::Result::fail && t.enqueues == kPackets)
        res.message += "\nthe bypass stayed disabled after the last filter was removed";
    return res;
}

// A qdisc whose limit is changed to 0 must drop every packet offered to it. The change
// goes out over netlink with TCA_*_LIMIT = 0 (tc leaves a zero limit out of its request).
Outcome limit0_drops(const std::string &kind,
                     const std::function<std::vector<std::uint8_t>(std::uint32_t)> &limit_opts)
{
    const TestDummy dev(dummy(1));
    if (!dev.ok())
        return dev.error();
    if (auto o = set_root(dev, kind, limit_opts(kDefaultLimit)))
        return *o;
    rtnl::QdiscSpec change;
    change.ifindex = dev.ifindex();
    change.handle = kRootHandle;
    change.kind = kind;
    change.options = limit_opts(0);
    if (auto o = qdisc_failed(rtnl::qdisc_change(rtnl::shared_socket(), change),
                              cat("change ", kind, " limit 0"), kind))
        return *o;

    std::string err;
    const auto q0 = root_qdisc(dev, err);
    if (!q0)
        return Outcome::fail(err);
    Traffic t;
    if (auto o = send(dev, cpus_for(1), kLimit0Packets, true, nullptr, t))
        return *o;
    const auto q1 = root_qdisc(dev, err);
    if (!q1)
        return Outcome::fail(err);
    if (q1->kind != kind)
        return Outcome::fail(cat("the root qdisc is ", q1->kind, ", not ", kind));
    const std::uint64_t drops = q1->drops - q0->drops;
    const std::uint64_t qdisc_sent = q1->packets - q0->packets;
    const std::string summary =
            cat("sent ", kLimit0Packets, ": link tx_packets +", t.link_tx, ", qdisc drops +", drops,
                ", qdisc sent +", qdisc_sent, ", sender saw ", t.dropped, " ENOBUFS");
    if (t.link_tx != 0 || drops != kLimit0Packets)
        return Outcome::fail(
                cat(summary, "; expected link +0 and drops +", kLimit0Packets,
                    t.link_tx == kLimit0Packets ? ": the packets bypassed the limit-0 qdisc" : ""));
    return Outcome::pass(summary);
}

// ---- cases ----

Outcome pfifo_fast_idle_bypass()
{
    return idle_bypass("pfifo_fast");
}

Outcome pfifo_idle_bypass()
{
    return idle_bypass("pfifo", rtnl::fifo_options(kDefaultLimit));
}

Outcome fq_codel_idle_bypass()
{
    return idle_bypass("fq_codel");
}

Outcome sfq_idle_bypass()
{
    return idle_bypass("sfq");
}

Outcome fq_codel_filter_disables_bypass()
{
    return filter_disables_bypass("fq_codel");
}

Outcome sfq_filter_disables_bypass()
{
    return filter_disables_bypass("sfq");
}

Outcome fq_codel_filter_removed_restores_bypass()
{
    return filter_removed_restores_bypass("fq_codel");
}

Outcome sfq_filter_removed_restores_bypass()
{
    return filter_removed_restores_bypass("sfq");
}

Outcome codel_limit0_drops()
{
    return limit0_drops("codel", rtnl::codel_options);
}

Outcome fq_codel_limit0_drops()
{
    return limit0_drops("fq_codel", rtnl::fq_codel_options);
}

Outcome mq_children_bypass()
{
    Tracer tracer;
    if (auto o = tracer.unavailable())
        return *o;
    const TestDummy dev(dummy(2));
    if (!dev.ok())
        return dev.error();
    if (auto o = set_root(dev, "mq"))
        return *o;

    // mq gives every TX queue the default qdisc (pfifo_fast unless net.core.default_qdisc
    // says otherwise): make sure both are pfifo_fast.
    std::vector<rtnl::QdiscInfo> qdiscs;
    if (Status st = rtnl::qdisc_dump(rtnl::shared_socket(), dev.ifindex(), qdiscs); !st.ok())
        return Outcome::fail(cat("qdisc dump: ", st.str()));
    std::string notes;
    unsigned children = 0;
    for (const rtnl::QdiscInfo &q : qdiscs) {
        if (q.parent == rtnl::kRootParent || rtnl::handle_major(q.parent) != 1)
            continue;
        ++children;
        if (q.kind == "pfifo_fast")
            continue;
        rtnl::QdiscSpec spec;
        spec.ifindex = dev.ifindex();
        spec.parent = q.parent;
        spec.kind = "pfifo_fast";
        if (Status st = rtnl::qdisc_replace(rtnl::shared_socket(), spec); !st.ok())
            return Outcome::fail(cat("replace ", q.kind, " at ", rtnl::format_handle(q.parent),
                                     " with pfifo_fast: ", st.str()));
        notes += cat("replaced default ", q.kind, " at ", rtnl::format_handle(q.parent),
                     " with pfifo_fast\n");
    }
    if (children != 2)
        return Outcome::fail(cat("mq has ", children, " children, expected 2"));

    // One sender per queue, each on its own CPU and queue (XPS), so that no sender ever
    // finds the other one's qdisc busy.
    const std::vector<int> cpus = cpus_for(2);
    if (cpus.size() > 1) {
        if (std::string err = netutil::sysfs::map_cpus_to_queues(dev.name(), cpus); !err.empty())
            return Outcome::skip(cat("cannot map CPU i to tx-i with XPS: ", err));
    }
    Traffic t;
    if (auto o = send(dev, cpus, kPackets / cpus.size(), false, &tracer, t))
        return *o;
    Outcome res = expect_traffic(t, 0, "the idle pfifo_fast children of mq");
    if (!notes.empty())
        res.message = notes + res.message;
    return res;
}

} // namespace

int main()
{
    ksft::TestSuite suite;
    suite.add("pfifo_fast_idle_bypass", pfifo_fast_idle_bypass);
    suite.add("pfifo_idle_bypass", pfifo_idle_bypass);
    suite.add("fq_codel_idle_bypass", fq_codel_idle_bypass);
    suite.add("sfq_idle_bypass", sfq_idle_bypass);
    suite.add("fq_codel_filter_disables_bypass", fq_codel_filter_disables_bypass);
    suite.add("sfq_filter_disables_bypass", sfq_filter_disables_bypass);
    suite.add("fq_codel_filter_removed_restores_bypass", fq_codel_filter_removed_restores_bypass);
    suite.add("sfq_filter_removed_restores_bypass", sfq_filter_removed_restores_bypass);
    suite.add("codel_limit0_drops", codel_limit0_drops);
    suite.add("fq_codel_limit0_drops", fq_codel_limit0_drops);
    suite.add("mq_children_bypass", mq_children_bypass);
    suite.require_root();
    return suite.run();
}

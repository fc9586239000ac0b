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

#include "prog.hpp"
#include "tracefs.hpp"

namespace {

using namespace ksft::prog;

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
    std::optional<CaseResult> unavailable() const
    {
        if (!instance_.available())
            return CaseResult::skip(instance_.error());
        if (!enqueue_.available())
            return CaseResult::skip(enqueue_.error());
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
        err = concat("get ", dev.name(), ": ", st.str());
        return std::nullopt;
    }
    if (!info.stats) {
        err = concat("no IFLA_STATS64 for ", dev.name());
        return std::nullopt;
    }
    return info.stats->tx_packets;
}

std::optional<rtnl::QdiscInfo> root_qdisc(const TestDummy &dev, std::string &err)
{
    std::vector<rtnl::QdiscInfo> qdiscs;
    if (Status st = rtnl::qdisc_dump(rtnl::shared_socket(), dev.ifindex(), qdiscs); !st.ok()) {
        err = concat("qdisc dump: ", st.str());
        return std::nullopt;
    }
    for (const rtnl::QdiscInfo &q : qdiscs) {
        if (q.parent == rtnl::kRootParent)
            return q;
    }
    err = concat("no root qdisc on ", dev.name());
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
std::optional<CaseResult> send(const TestDummy &dev, const std::vector<int> &cpus,
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
        return CaseResult::fail(err);
    const auto root0 = root_qdisc(dev, err);
    if (!root0)
        return CaseResult::fail(err);
    std::vector<pkt::ThreadResult> results;
    auto window = [&] {
        results = pkt::run_senders(cfg);
    };
    out = Traffic{};
    if (tracer != nullptr) {
        if (std::string terr = tracer->count(dev.ifindex(), window, out.enqueues); !terr.empty())
            return CaseResult::fail(concat("tracing: ", terr));
    } else {
        window();
    }
    for (const pkt::ThreadResult &r : results) {
        if (!r.error.empty())
            return CaseResult::fail(concat("sender on CPU ", r.cpu, ": ", r.error));
        ASSERT_EQ(r.sent + r.dropped, per_thread) << "sender on CPU " << r.cpu << ": " << r.sent
                                                  << " sent, " << r.dropped << " drops";
        out.sent += r.sent;
        out.dropped += r.dropped;
    }
    const auto link1 = link_tx_packets(dev, err);
    if (!link1)
        return CaseResult::fail(err);
    out.link_tx = *link1 - *link0;
    const auto root1 = root_qdisc(dev, err);
    if (!root1)
        return CaseResult::fail(err);
    const auto flows0 = rtnl::fq_codel_new_flow_count(*root0);
    const auto flows1 = rtnl::fq_codel_new_flow_count(*root1);
    if (root1->kind == "fq_codel" && (!flows0 || !flows1))
        return CaseResult::fail(concat("no fq_codel xstats (new_flow_count) on ", dev.name()));
    if (flows0 && flows1)
        out.new_flows = *flows1 - *flows0;
    return std::nullopt;
}

// SKIP when the kernel lacks the qdisc (ENOENT: no such kind, module missing).
std::optional<CaseResult> qdisc_failed(const Status &st, std::string_view what,
                                       std::string_view kind)
{
    if (st.ok())
        return std::nullopt;
    if (st.err == ENOENT)
        return CaseResult::skip(concat("qdisc kind ", kind, " not available (", st.str(), ")"));
    return CaseResult::fail(concat(what, ": ", st.str()));
}

std::optional<CaseResult> set_root(const TestDummy &dev, const std::string &kind,
                                   std::vector<std::uint8_t> options = {})
{
    rtnl::QdiscSpec spec;
    spec.ifindex = dev.ifindex();
    spec.handle = kRootHandle;
    spec.kind = kind;
    spec.options = std::move(options);
    return qdisc_failed(rtnl::qdisc_replace(rtnl::shared_socket(), spec),
                        concat("replace root ", kind, " handle 1: on ", dev.name()), kind);
}

rtnl::MatchallSpec matchall_at_root(const TestDummy &dev)
{
    return rtnl::root_matchall_to_flow1(dev.ifindex());
}

// Adds the matchall filter; a kernel without matchall skips the case.
std::optional<CaseResult> add_matchall(const TestDummy &dev, const rtnl::MatchallSpec &filter)
{
    const Status st = rtnl::filter_add(rtnl::shared_socket(), filter);
    if (st.ok())
        return std::nullopt;
    if (st.err == ENOENT)
        return CaseResult::skip(concat("matchall classifier not available (", st.str(), ")"));
    return CaseResult::fail(concat("add matchall filter at parent ",
                                   rtnl::format_handle(filter.parent), " of ", dev.name(), ": ",
                                   st.str()));
}

std::optional<CaseResult> add_and_delete_matchall(const TestDummy &dev,
                                                  const rtnl::MatchallSpec &filter)
{
    if (auto o = add_matchall(dev, filter))
        return o;
    if (Status st = rtnl::filter_delete(rtnl::shared_socket(), filter); !st.ok())
        return CaseResult::fail(concat("delete the matchall filter at parent ",
                                       rtnl::format_handle(filter.parent), ": ", st.str()));
    return std::nullopt;
}

// The root's filter, as traced_send() prepares a root.
std::optional<CaseResult> add_filter(const TestDummy &dev)
{
    return add_matchall(dev, matchall_at_root(dev));
}

std::optional<CaseResult> add_and_delete_filter(const TestDummy &dev)
{
    return add_and_delete_matchall(dev, matchall_at_root(dev));
}

std::string fmt_new_flows(const Traffic &t)
{
    return t.new_flows ? concat(", fq_codel new_flow_count +", *t.new_flows) : std::string();
}

// Expects every packet to reach the driver with `enqueues` qdisc_enqueue events (0 or
// kPackets). For fq_codel, new_flow_count must not move when nothing is enqueued, and
// must when everything is.
CaseResult expect_traffic(const Traffic &t, std::size_t enqueues, std::string_view qdisc)
{
    ASSERT_EQ(t.link_tx, kPackets) << "link tx_packets growth, through " << qdisc;
    // The count is said again in the words selftests/expectations.json looks for.
    ASSERT_EQ(t.enqueues, enqueues) << t.enqueues << " of " << kPackets
                                    << " packets were enqueued on " << qdisc << fmt_new_flows(t);
    if (t.new_flows && (enqueues == 0) != (*t.new_flows == 0))
        return CaseResult::fail(concat(t.enqueues, " qdisc_enqueue events on ", qdisc,
                                       " as expected, but fq_codel's new_flow_count grew by ",
                                       *t.new_flows));
    return CaseResult::pass(
            concat(t.enqueues, " enqueues, ", t.link_tx, " packets transmitted", fmt_new_flows(t)));
}

// Filters (or none) put on a device after its root qdisc, before the traffic.
using Prepare = std::function<std::optional<CaseResult>(const TestDummy &)>;

// kPackets from one sender on an idle single-queue device with this root qdisc, prepared
// by prepare (if set), with the qdisc events counted into t. SKIP/FAIL outcome on error.
std::optional<CaseResult> traced_send(const std::string &kind, std::vector<std::uint8_t> options,
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
CaseResult idle_bypass(const std::string &kind, std::vector<std::uint8_t> options = {})
{
    Traffic t;
    if (auto o = traced_send(kind, std::move(options), {}, t))
        return *o;
    return expect_traffic(t, 0, concat("the idle ", kind, " root"));
}

// A filter on the qdisc: every packet must be enqueued (and classified).
CaseResult filter_disables_bypass(const std::string &kind)
{
    Traffic t;
    if (auto o = traced_send(kind, {}, add_filter, t))
        return *o;
    return expect_traffic(t, kPackets, concat(kind, " with a matchall filter"));
}

// The qdisc's only filter added and deleted again: back to bypassing.
CaseResult filter_removed_restores_bypass(const std::string &kind)
{
    Traffic t;
    if (auto o = traced_send(kind, {}, add_and_delete_filter, t))
        return *o;
    CaseResult res = expect_traffic(t, 0, concat(kind, " whose only filter was deleted"));
    if (res.result == ksft::Result::fail && t.enqueues == kPackets)
        res.message += "\nthe bypass stayed disabled after the last filter was removed";
    return res;
}

// The root holding a filter replaced by pfifo_fast (another handle: the same handle
// takes the same kind only). The old root is destroyed after the graft, and
// tcf_block_put_ext() runs its chain-0 callback once more (head NULL) while chain 0 still
// exists: sch_tree_lock() of the old root then takes the new root's lock
// (qdisc_root_sleeping()), and the flag written must be the old root's. The new root
// must bypass as a fresh one does, with no splat or hang (the VM runner reads the
// console and times out).
CaseResult replaced_with_filter_bypasses(const std::string &kind)
{
    const std::string what = concat("the pfifo_fast root that replaced ", kind, " with a filter");
    Traffic t;
    auto replace = [&](const TestDummy &dev) -> std::optional<CaseResult> {
        if (auto o = add_filter(dev))
            return o;
        rtnl::QdiscSpec spec;
        spec.ifindex = dev.ifindex();
        spec.handle = rtnl::make_handle(2, 0);
        spec.kind = "pfifo_fast";
        return qdisc_failed(rtnl::qdisc_replace(rtnl::shared_socket(), spec),
                            concat("replace root ", kind, " by pfifo_fast handle 2:"),
                            "pfifo_fast");
    };
    if (auto o = traced_send(kind, {}, replace, t))
        return *o;
    return expect_traffic(t, 0, what);
}

// A qdisc whose limit is changed to 0 must drop every packet offered to it. The change
// goes out over netlink with TCA_*_LIMIT = 0 (tc leaves a zero limit out of its request).
CaseResult limit0_drops(const std::string &kind,
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
                              concat("change ", kind, " limit 0"), kind))
        return *o;

    std::string err;
    const auto q0 = root_qdisc(dev, err);
    if (!q0)
        return CaseResult::fail(err);
    Traffic t;
    if (auto o = send(dev, cpus_for(1), kLimit0Packets, true, nullptr, t))
        return *o;
    const auto q1 = root_qdisc(dev, err);
    if (!q1)
        return CaseResult::fail(err);
    ASSERT_EQ(q1->kind, kind) << "the root qdisc";
    const std::uint64_t drops = q1->drops - q0->drops;
    const std::uint64_t qdisc_sent = q1->packets - q0->packets;
    const std::string summary =
            concat("sent ", kLimit0Packets, ": link tx_packets +", t.link_tx, ", qdisc drops +",
                   drops, ", qdisc sent +", qdisc_sent, ", sender saw ", t.dropped, " ENOBUFS");
    if (t.link_tx != 0 || drops != kLimit0Packets)
        return CaseResult::fail(concat(
                summary, "; expected link +0 and drops +", kLimit0Packets,
                t.link_tx == kLimit0Packets ? ": the packets bypassed the limit-0 qdisc" : ""));
    return CaseResult::pass(summary);
}

// ---- cases ----

// Root qdiscs that bypass when idle; "options": TCA_OPTIONS for a given limit, or none.
using OptionsFn = std::vector<std::uint8_t> (*)(std::uint32_t);

FIXTURE(idle){};
FIXTURE_VARIANT(idle)
{
    const char *kind;
    OptionsFn options;
};
FIXTURE_VARIANT_ADD(idle, pfifo_fast){.kind = "pfifo_fast", .options = nullptr};
FIXTURE_VARIANT_ADD(idle, pfifo){.kind = "pfifo", .options = rtnl::fifo_options};
FIXTURE_VARIANT_ADD(idle, fq_codel){.kind = "fq_codel", .options = nullptr};
FIXTURE_VARIANT_ADD(idle, sfq){.kind = "sfq", .options = nullptr};
FIXTURE_SETUP(idle) {}

TEST_F(idle, idle_bypass)
{
    ksft::report(idle_bypass(variant->kind, variant->options != nullptr
                                                    ? variant->options(kDefaultLimit)
                                                    : std::vector<std::uint8_t>{}));
}

// Roots that take filters: a filter must stop the bypass, its removal restore it.
FIXTURE(filter){};
FIXTURE_VARIANT(filter)
{
    const char *kind;
};
FIXTURE_VARIANT_ADD(filter, fq_codel){.kind = "fq_codel"};
FIXTURE_VARIANT_ADD(filter, sfq){.kind = "sfq"};
FIXTURE_SETUP(filter) {}

TEST_F(filter, filter_disables_bypass)
{
    ksft::report(filter_disables_bypass(variant->kind));
}

TEST_F(filter, filter_removed_restores_bypass)
{
    ksft::report(filter_removed_restores_bypass(variant->kind));
}

TEST_F(filter, replaced_with_filter_bypasses)
{
    ksft::report(replaced_with_filter_bypasses(variant->kind));
}

// The roots with a limit that may be 0.
FIXTURE(limit0){};
FIXTURE_VARIANT(limit0)
{
    const char *kind;
    OptionsFn options;
};
FIXTURE_VARIANT_ADD(limit0, codel){.kind = "codel", .options = rtnl::codel_options};
FIXTURE_VARIANT_ADD(limit0, fq_codel){.kind = "fq_codel", .options = rtnl::fq_codel_options};
FIXTURE_SETUP(limit0) {}

TEST_F(limit0, limit0_drops)
{
    ksft::report(limit0_drops(variant->kind, variant->options));
}

// A traced 2-queue dummy with an mq root: where the mq cases start.
struct MqDummy {
    Tracer tracer;
    const TestDummy dev{dummy(2)};

    std::optional<CaseResult> setup()
    {
        if (auto o = tracer.unavailable())
            return o;
        if (!dev.ok())
            return dev.error();
        return set_root(dev, "mq");
    }
};

TEST_RESULT(mq_children_bypass)
{
    MqDummy mq;
    if (auto o = mq.setup())
        return *o;
    const TestDummy &dev = mq.dev;

    // mq gives every TX queue the default qdisc (pfifo_fast unless net.core.default_qdisc
    // says otherwise): make sure both are pfifo_fast.
    std::vector<rtnl::QdiscInfo> qdiscs;
    if (Status st = rtnl::qdisc_dump(rtnl::shared_socket(), dev.ifindex(), qdiscs); !st.ok())
        return CaseResult::fail(concat("qdisc dump: ", st.str()));
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
            return CaseResult::fail(concat("replace ", q.kind, " at ",
                                           rtnl::format_handle(q.parent),
                                           " with pfifo_fast: ", st.str()));
        notes += concat("replaced default ", q.kind, " at ", rtnl::format_handle(q.parent),
                        " with pfifo_fast\n");
    }
    ASSERT_EQ(children, 2U) << "mq's children";

    // One sender per queue, each on its own CPU and queue (XPS), so that no sender ever
    // finds the other one's qdisc busy.
    const std::vector<int> cpus = cpus_for(2);
    if (cpus.size() > 1) {
        if (std::string err = netutil::sysfs::map_cpus_to_queues(dev.name(), cpus); !err.empty())
            return CaseResult::skip(concat("cannot map CPU i to tx-i with XPS: ", err));
    }
    Traffic t;
    if (auto o = send(dev, cpus, kPackets / cpus.size(), false, &mq.tracer, t))
        return *o;
    CaseResult res = expect_traffic(t, 0, "the idle pfifo_fast children of mq");
    if (!notes.empty())
        res.message = notes + res.message;
    return res;
}

// fq_codel as each child of mq, where net.core.default_qdisc=fq_codel puts it on a
// multi-queue device: a filter added to and deleted from every child, then one sender.
// Each child is its own root lock's qdisc (qdisc_root_sleeping() of an mq child is the
// child): no packet may be enqueued once the children have no filter left.
TEST_RESULT(mq_fq_codel_children_filter_removed_restores_bypass)
{
    MqDummy mq;
    if (auto o = mq.setup())
        return *o;
    const TestDummy &dev = mq.dev;
    for (std::uint32_t queue = 1; queue <= 2; ++queue) {
        rtnl::QdiscSpec child;
        child.ifindex = dev.ifindex();
        child.parent = rtnl::make_handle(1, queue);
        child.handle = rtnl::make_handle(1 + queue, 0);
        child.kind = "fq_codel";
        if (auto o = qdisc_failed(rtnl::qdisc_replace(rtnl::shared_socket(), child),
                                  concat("replace mq child 1:", queue, " with fq_codel"),
                                  "fq_codel"))
            return *o;
        rtnl::MatchallSpec filter;
        filter.ifindex = dev.ifindex();
        filter.parent = child.handle;
        filter.classid = rtnl::make_handle(1 + queue, 1);
        if (auto o = add_and_delete_matchall(dev, filter))
            return *o;
    }
    Traffic t;
    if (auto o = send(dev, cpus_for(1), kPackets, false, &mq.tracer, t))
        return *o;
    CaseResult res = expect_traffic(t, 0, "the fq_codel children of mq whose filters were deleted");
    if (res.result == ksft::Result::fail && t.enqueues == kPackets)
        res.message += "\nthe bypass stayed disabled after the last filter was removed";
    return res;
}

} // namespace

int main(int argc, char **argv)
{
    return ksft::main(argc, argv);
}

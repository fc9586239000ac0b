// kselftest: fault injection on the requests the series adds or changes.
//
// Needs root and a kernel with CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC,
// FAULT_INJECTION_DEBUG_FS and FAULT_INJECTION_STACKTRACE_FILTER
// (kernel/configs/debug.config); kmemleak for the leak column. Every case SKIPs on a
// kernel without /proc/thread-self/fail-nth.
//
// For each request (one KTAP case), n = 1, 2, ...: the n-th fault-injectable
// allocation of the request (slab or page, GFP_KERNEL included) fails
// (/proc/thread-self/fail-nth), until the request completes with no fault left to
// inject. A fault site counts only when the stack at the allocation runs through the
// request's focus (failslab's and fail_page_alloc's require-start/end): the netlink
// code (netlink_sendmsg .. netlink_recvmsg, the whole request) when the request has at
// most --whole-max sites there, else the function or module of the series it runs
// through. netlink_ack() is always excluded (reject-start/end), so that an answer is
// never lost: a fault there would report an error for a request that took effect.
//
// After each try the state must agree with the answer: an error leaves the device,
// its queues, its filters and its qdisc as they were, a success made the change and
// the result is usable (packets go through). The bypass of an idle qdisc must follow
// chain 0 and the limit: a single sender's packets are not enqueued (qdisc:
// qdisc_enqueue) when the qdisc has no chain 0 filter and a limit of 1 or more, all
// are when it has a filter, none reaches the driver with a limit of 0. After each
// request kmemleak scans; objects it reports that were not reported before are that
// request's leaks.
//
// The program runs in network and mount namespaces of its own (sysfs, debugfs and
// tracefs mounted there again), so that its devices and tracing see no other traffic.
// It ends with a table: request, fault sites (whole request and focus), faults
// injected, inconsistencies, leaks; --table FILE writes it there too.

#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "ethtool.hpp"
#include "netdev.hpp"
#include "runner.hpp"

namespace fault_inject {
namespace {

// -- the requests --------------------------------------------------------------------

std::optional<Dev> g_dev;
std::optional<netutil::ethtool::Ethtool> g_ethtool;
std::optional<netutil::netdev::Netdev> g_netdev;

std::string make_dev(std::uint32_t tx, std::uint32_t rx)
{
    g_dev.emplace(tx, rx);
    return g_dev->error();
}

std::string queue_counts(const std::string &name, std::uint32_t tx, std::uint32_t rx)
{
    const auto t = sysfs::active_queue_count(name, "tx");
    const auto r = sysfs::active_queue_count(name, "rx");
    if (t != tx || r != rx)
        return concat(name, " has ", t.value_or(0), " TX and ", r.value_or(0),
                      " RX queues in sysfs, expected ", tx, "/", rx);
    return {};
}

// qstats of the device: consistent, and the per-queue TX packets add up to at least
// `min_tx` with `tx` TX queues reported.
std::string qstats_ok(int ifindex, std::uint32_t tx, std::uint64_t min_tx)
{
    netutil::netdev::Netdev nd;
    std::vector<netutil::netdev::QStats> queues;
    if (Status st = nd.queue_stats(ifindex, queues); !st.ok())
        return concat("qstats per queue: ", st.str());
    netutil::netdev::QStats dev;
    if (Status st = nd.device_stats(ifindex, dev); !st.ok())
        return concat("qstats of the device: ", st.str());
    if (std::string p = netutil::netdev::check_qstats(queues, dev); !p.empty())
        return p;
    const auto ntx = std::count_if(queues.begin(), queues.end(), [](const auto &q) {
        return q.queue_type == netutil::netdev::QueueType::tx;
    });
    if (static_cast<std::uint32_t>(ntx) != tx)
        return concat(ntx, " TX queues in qstats, expected ", tx);
    if (netutil::netdev::sum_tx_packets(queues) < min_tx)
        return concat("qstats count ", netutil::netdev::sum_tx_packets(queues),
                      " TX packets over the queues, at least ", min_tx, " sent");
    return {};
}

Request link_add()
{
    auto name = std::make_shared<std::string>();
    Request r;
    r.name = concat("link_add_txq", kTxQueues);
    r.focus = [](const Symbols &s) {
        return s.function("register_netdevice");
    };
    r.setup = [] {
        return std::string();
    };
    r.run = [name] {
        *name = dev_name("fa");
        return rtnl::create_link(rtnl_socket(), rtnl::LinkSpec{*name, "dummy", kTxQueues, 1});
    };
    r.check = [name](const Status &st) -> std::string {
        rtnl::LinkInfo info;
        const Status got = rtnl::get_link(rtnl_socket(), *name, info);
        if (!st.ok()) {
            if (got.ok()) {
                rtnl::delete_link(rtnl_socket(), *name);
                return concat("the error left ", *name, " behind");
            }
            return got.err == ENODEV ? "" : concat("get ", *name, ": ", got.str());
        }
        if (!got.ok())
            return concat("created, but get ", *name, ": ", got.str());
        rtnl::LinkGuard guard(rtnl_socket(), *name);
        if (info.num_tx_queues != kTxQueues)
            return concat(*name, " has ", info.num_tx_queues, " TX queues, asked for ", kTxQueues);
        if (std::string e = queue_counts(*name, kTxQueues, 1); !e.empty())
            return e;
        if (std::string e = sysfs::disable_ipv6(*name); !e.empty())
            return e;
        if (Status up = rtnl::set_link_up(rtnl_socket(), *name); !up.ok())
            return concat("set ", *name, " up: ", up.str());
        // Usable: the default qdisc (mq over pfifo_fast) passes packets, counted per queue.
        pkt::SenderConfig cfg;
        cfg.ifindex = info.ifindex;
        cfg.cpus = {0};
        cfg.count = kPackets;
        for (const pkt::ThreadResult &res : pkt::run_senders(cfg)) {
            if (!res.error.empty() || res.sent != kPackets)
                return concat("sending on ", *name, ": ", res.error, " sent ", res.sent);
        }
        return qstats_ok(info.ifindex, kTxQueues, kPackets);
    };
    return r;
}

struct Counts {
    std::uint32_t tx = 0;
    std::uint32_t rx = 0;
};

std::string set_channels(Counts c)
{
    netutil::ethtool::ChannelsRequest req;
    req.tx = c.tx;
    req.rx = c.rx;
    if (Status st = g_ethtool->channels_set(g_dev->name(), req); !st.ok())
        return concat("channels set tx ", c.tx, " rx ", c.rx, ": ", st.str());
    return {};
}

// The channels and the queues are `want`, and packets pass (qstats count them).
std::string channels_state(Counts want)
{
    netutil::ethtool::Channels ch;
    if (Status got = g_ethtool->channels_get(g_dev->name(), ch); !got.ok())
        return concat("channels get: ", got.str());
    if (ch.tx_count != want.tx || ch.rx_count != want.rx)
        return concat("channels tx ", ch.tx_count, " rx ", ch.rx_count, ", expected ", want.tx, "/",
                      want.rx);
    if (std::string e = queue_counts(g_dev->name(), want.tx, want.rx); !e.empty())
        return e;
    Traffic t;
    if (std::string e = send(*g_dev, t); !e.empty())
        return e;
    if (t.link_tx != kPackets)
        return concat(t.link_tx, " of ", kPackets, " packets transmitted with ", want.tx,
                      " TX queues");
    return qstats_ok(g_dev->ifindex(), want.tx, 0);
}

// ethtool channels set from `from` to `to` on a dummy with kTxQueues TX and RX queues.
// netif_set_real_num_queues() sets the TX count, then the RX count, and undoes the first
// if the second fails: an error must leave both as they were.
Request channels(std::string name, Counts from, Counts to)
{
    Request r;
    r.name = std::move(name);
    // dummy_set_channels() tail-calls netif_set_real_num_queues(): by the time anything
    // allocates, the module's frame has left the stack, and the focus is the callee.
    r.focus = [](const Symbols &s) {
        return s.function("netif_set_real_num_queues");
    };
    // The socket and the family id before the faults.
    r.setup = [from] {
        g_ethtool.emplace();
        std::uint16_t id = 0;
        if (Status st = g_ethtool->family(id); !st.ok())
            return concat("ethtool family: ", st.str());
        if (std::string e = make_dev(kTxQueues, kTxQueues); !e.empty())
            return e;
        if (std::string e = set_channels(from); !e.empty())
            return e;
        return channels_state(from);
    };
    r.run = [to] {
        netutil::ethtool::ChannelsRequest req;
        req.tx = to.tx;
        req.rx = to.rx;
        return g_ethtool->channels_set(g_dev->name(), req);
    };
    r.check = [from, to](const Status &st) -> std::string {
        if (std::string e = channels_state(st.ok() ? to : from); !e.empty())
            return e;
        if (st.ok()) {
            if (std::string e = set_channels(from); !e.empty())
                return e;
            return channels_state(from);
        }
        return {};
    };
    r.teardown = [] {
        g_dev.reset();
    };
    return r;
}

Request qstats_dump()
{
    Request r;
    r.name = "qstats_dump";
    r.focus = [](const Symbols &s) {
        return s.module("dummy");
    };
    auto partial = std::make_shared<std::string>();
    r.setup = [] {
        g_netdev.emplace();
        std::uint16_t id = 0;
        if (Status st = g_netdev->family(id); !st.ok())
            return concat("netdev family: ", st.str());
        if (std::string e = make_dev(kTxQueues, 1); !e.empty())
            return e;
        Traffic t;
        return send(*g_dev, t);
    };
    // A dump that ends without an error must be complete.
    r.run = [partial] {
        std::vector<netutil::netdev::QStats> queues;
        Status st = g_netdev->queue_stats(g_dev->ifindex(), queues);
        partial->clear();
        const auto ntx = std::count_if(queues.begin(), queues.end(), [](const auto &q) {
            return q.queue_type == netutil::netdev::QueueType::tx;
        });
        if (st.ok() && (netutil::netdev::sum_tx_packets(queues) != kPackets ||
                        static_cast<std::uint32_t>(ntx) != kTxQueues))
            *partial = concat("the dump succeeded with ", ntx, " TX queues and ",
                              netutil::netdev::sum_tx_packets(queues), " packets, expected ",
                              kTxQueues, " and ", kPackets);
        return st;
    };
    r.check = [partial](const Status &st) {
        if (!partial->empty())
            return *partial;
        // A dump that failed in recvmsg stays running on its socket: the next try
        // gets a socket of its own.
        if (!st.ok()) {
            g_netdev.emplace();
            std::uint16_t id = 0;
            if (Status f = g_netdev->family(id); !f.ok())
                return concat("netdev family: ", f.str());
        }
        return qstats_ok(g_dev->ifindex(), kTxQueues, kPackets);
    };
    r.teardown = [] {
        g_dev.reset();
    };
    return r;
}

// A root qdisc of this kind on a single-queue dummy, with a matchall filter at the start
// if `filtered`.
std::string qdisc_setup(const std::string &kind, bool filtered)
{
    if (std::string e = make_dev(1, 1); !e.empty())
        return e;
    std::vector<std::uint8_t> opts;
    if (kind == "codel")
        opts = rtnl::codel_options(kLimit);
    else if (kind == "fq_codel")
        opts = rtnl::fq_codel_options(kLimit);
    if (std::string e = set_root(*g_dev, kind, opts); !e.empty())
        return e;
    if (filtered) {
        if (Status st = rtnl::filter_add(rtnl_socket(), matchall(*g_dev)); !st.ok())
            return concat("filter add: ", st.str());
    }
    return expect_path(*g_dev, filtered ? Path::enqueue : Path::bypass);
}

// The filters and the path after a filter request: `present` filters expected.
std::string filter_state(bool present)
{
    std::string err;
    const auto n = filter_count(*g_dev, err);
    if (!n)
        return err;
    if (*n != (present ? 1u : 0u))
        return concat(*n, " filter(s) at 1:, expected ", present ? 1 : 0);
    return expect_path(*g_dev, present ? Path::enqueue : Path::bypass);
}

Request filter_add(const std::string &kind)
{
    Request r;
    r.name = concat("filter_add_", kind);
    r.focus = [](const Symbols &s) {
        return s.function("tc_new_tfilter");
    };
    r.setup = [kind] {
        return qdisc_setup(kind, false);
    };
    r.run = [] {
        return rtnl::filter_add(rtnl_socket(), matchall(*g_dev));
    };
    r.check = [](const Status &st) -> std::string {
        if (std::string e = filter_state(st.ok()); !e.empty())
            return e;
        if (st.ok()) {
            if (Status d = rtnl::filter_delete(rtnl_socket(), matchall(*g_dev)); !d.ok())
                return concat("deleting the filter again: ", d.str());
            return filter_state(false);
        }
        return {};
    };
    r.teardown = [] {
        g_dev.reset();
    };
    return r;
}

Request filter_delete(const std::string &kind)
{
    Request r;
    r.name = concat("filter_delete_", kind);
    r.focus = [](const Symbols &s) {
        return s.function("tc_del_tfilter");
    };
    r.setup = [kind] {
        return qdisc_setup(kind, true);
    };
    r.run = [] {
        return rtnl::filter_delete(rtnl_socket(), matchall(*g_dev));
    };
    r.check = [](const Status &st) -> std::string {
        if (std::string e = filter_state(!st.ok()); !e.empty())
            return e;
        if (st.ok()) {
            if (Status a = rtnl::filter_add(rtnl_socket(), matchall(*g_dev)); !a.ok())
                return concat("adding the filter again: ", a.str());
            return filter_state(true);
        }
        return {};
    };
    r.teardown = [] {
        g_dev.reset();
    };
    return r;
}

std::vector<std::uint8_t> limit_options(const std::string &kind, std::uint32_t limit)
{
    return kind == "codel" ? rtnl::codel_options(limit) : rtnl::fq_codel_options(limit);
}

rtnl::QdiscSpec limit_spec(const std::string &kind, std::uint32_t limit)
{
    rtnl::QdiscSpec spec;
    spec.ifindex = g_dev->ifindex();
    spec.handle = kRootHandle;
    spec.kind = kind;
    spec.options = limit_options(kind, limit);
    return spec;
}

std::string limit_state(std::uint32_t want)
{
    std::string err;
    const auto q = root_qdisc(*g_dev, err);
    if (!q)
        return err;
    if (q->limit != want)
        return concat(q->kind, " limit ", q->limit ? std::to_string(*q->limit) : "unknown",
                      ", expected ", want);
    return expect_path(*g_dev, want >= 1 ? Path::bypass : Path::drop);
}

Request limit0(const std::string &kind)
{
    Request r;
    r.name = concat("limit0_", kind);
    r.focus = [kind](const Symbols &s) {
        return s.module(concat("sch_", kind));
    };
    r.setup = [kind] {
        return qdisc_setup(kind, false);
    };
    r.run = [kind] {
        return rtnl::qdisc_change(rtnl_socket(), limit_spec(kind, 0));
    };
    r.check = [kind](const Status &st) -> std::string {
        if (std::string e = limit_state(st.ok() ? 0 : kLimit); !e.empty())
            return e;
        if (st.ok()) {
            if (Status b = rtnl::qdisc_change(rtnl_socket(), limit_spec(kind, kLimit)); !b.ok())
                return concat("limit back to ", kLimit, ": ", b.str());
            return limit_state(kLimit);
        }
        return {};
    };
    r.teardown = [] {
        g_dev.reset();
    };
    return r;
}

// -- output ----------------------------------------------------------------------------

// What every step shares, set up in the sequence's process by its first step.
struct FaultEnv {
    Symbols syms;
    std::optional<FailNth> nth;
    std::optional<Tracer> tracer;
    Kmemleak leaks;
    std::string skip; // why no request can run, or ""
};

FaultEnv &fault_env()
{
    static std::unique_ptr<FaultEnv> env;
    if (env)
        return *env;
    env = std::make_unique<FaultEnv>();
    if (::access("/proc/thread-self/fail-nth", W_OK) != 0)
        env->skip = "no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION off)";
    else if (::access(fault_dir("failslab").c_str(), F_OK) != 0 ||
             ::access(fault_dir("fail_page_alloc").c_str(), F_OK) != 0)
        env->skip = "no failslab or fail_page_alloc in debugfs (FAILSLAB, FAIL_PAGE_ALLOC, "
                    "FAULT_INJECTION_DEBUG_FS)";
    else if (!env->syms.load())
        env->skip = "no text symbols in /proc/kallsyms";
    else if (std::string err = configure_faults(); !err.empty())
        env->skip = concat("fault injection knobs: ", err);
    if (env->skip.empty()) {
        env->tracer.emplace();
        if (!env->tracer->unavailable().empty())
            env->skip = env->tracer->unavailable();
        g_tracer = &*env->tracer;
        env->nth.emplace();
        // Leaks from before the first request are not any request's.
        env->leaks.new_leaks();
    }
    return *env;
}

// After the last step: the table as diagnostics (and to --table), faults disarmed.
void finish_table()
{
    const std::string t = table();
    ksft::KtapWriter(std::cout).diag(t);
    if (!g_opts.table_path.empty())
        std::ofstream(g_opts.table_path) << t;
    for (std::string_view attr : kAttrs)
        write_knob(attr, "probability", "0");
}

int usage()
{
    std::cerr << "usage: fault_inject [--whole-max N] [--table FILE] [--only NAME,...]\n";
    return 2;
}

// Parses the options, registers the requests as the steps of one sequence, runs them.
int run(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (i + 1 >= argc)
            return usage();
        if (a == "--whole-max")
            g_opts.whole_max = static_cast<unsigned>(std::stoul(argv[++i]));
        else if (a == "--table")
            g_opts.table_path = argv[++i];
        else if (a == "--only") {
            std::istringstream in(argv[++i]);
            for (std::string n; std::getline(in, n, ',');)
                g_opts.only.insert(n);
        } else
            return usage();
    }

    std::vector<Request> requests = {
            link_add(),
            channels(concat("channels_set_tx", kChannelsTx), {kTxQueues, kTxQueues},
                     {kChannelsTx, kTxQueues}),
            channels(concat("channels_grow_tx", kTxQueues, "_rx", kTxQueues),
                     {kChannelsTx, kChannelsTx}, {kTxQueues, kTxQueues}),
            qstats_dump(),
            filter_add("fq_codel"),
            filter_add("sfq"),
            filter_delete("fq_codel"),
            filter_delete("sfq"),
            limit0("codel"),
            limit0("fq_codel")};
    // The requests are the steps of one sequence: one process (its own network and
    // mount namespaces, from the harness) whose fail-nth file, trace instance and
    // kmemleak baseline every step shares, set up by the first step.
    static std::size_t steps_left = 0;
    for (Request &req : requests) {
        if (!g_opts.only.empty() && !g_opts.only.count(req.name))
            continue;
        steps_left++;
        ksft::add_step("faults", req.name,
                       [&req] {
                           FaultEnv &env = fault_env();
                           const CaseResult r = env.skip.empty()
                                                        ? run_request(*env.nth, env.leaks, req)
                                                        : CaseResult::skip(env.skip);
                           if (--steps_left == 0 && env.skip.empty())
                               finish_table();
                           ksft::report(r);
                       },
                       {.timeout_s = 3600});
    }
    ksft::RunConfig config;
    if (::geteuid() != 0)
        config.skip_all = "must be run as root";
    return ksft::run_cases(config);
}

} // namespace
} // namespace fault_inject

int main(int argc, char **argv)
{
    return fault_inject::run(argc, argv);
}

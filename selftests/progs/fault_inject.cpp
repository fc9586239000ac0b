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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include "ethtool.hpp"
#include "harness.hpp"
#include "ktap.hpp"
#include "link.hpp"
#include "netdev.hpp"
#include "nl.hpp"
#include "packet_sender.hpp"
#include "sysfs.hpp"
#include "tc.hpp"
#include "testdev.hpp"
#include "tracefs.hpp"

namespace {

using ksft::CaseResult;
using netutil::concat;
using netutil::nl::Status;
namespace nl = netutil::nl;
namespace pkt = netutil::pkt;
namespace rtnl = netutil::rtnl;
namespace sysfs = netutil::sysfs;

constexpr std::string_view kDebugfs = "/sys/kernel/debug";
constexpr std::uint32_t kTxQueues = 4;
constexpr std::uint32_t kChannelsTx = 2;
constexpr std::uint32_t kRootHandle = rtnl::make_handle(1, 0);
constexpr std::uint32_t kLimit = 1000;
constexpr std::uint64_t kPackets = 8;
// A request that still faults after this many tries is reported, not run further.
constexpr unsigned kMaxTries = 3000;

struct Options {
    unsigned whole_max = 40;
    std::string table_path;
    std::set<std::string> only;
};
Options g_opts;

// -- kernel symbols ------------------------------------------------------------------

struct Range {
    unsigned long start = 0;
    unsigned long end = 0;
    std::string what;
    bool valid() const { return start != 0 && end > start; }
};

class Symbols {
public:
    bool load()
    {
        std::ifstream in("/proc/kallsyms");
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream ls(line);
            std::string addr, type, name, mod;
            ls >> addr >> type >> name >> mod;
            if (type.empty() || (type[0] != 't' && type[0] != 'T'))
                continue;
            const unsigned long a = std::stoul(addr, nullptr, 16);
            if (a == 0)
                continue;
            text_.push_back(a);
            if (mod.size() > 2 && mod.front() == '[')
                mod = mod.substr(1, mod.size() - 2);
            syms_.emplace(name, Sym{a, mod});
        }
        std::sort(text_.begin(), text_.end());
        text_.erase(std::unique(text_.begin(), text_.end()), text_.end());
        return !text_.empty();
    }

    // [name, next text symbol).
    Range function(const std::string &name) const
    {
        auto it = syms_.find(name);
        if (it == syms_.end())
            return {};
        return {it->second.addr, next_after(it->second.addr), name};
    }

    // From the lowest to past the highest text symbol of a module.
    Range module(const std::string &mod) const
    {
        unsigned long lo = 0, hi = 0;
        for (const auto &[name, s] : syms_) {
            if (s.mod != mod)
                continue;
            lo = lo == 0 ? s.addr : std::min(lo, s.addr);
            hi = std::max(hi, s.addr);
        }
        if (lo == 0)
            return {};
        return {lo, next_after(hi), concat("module ", mod)};
    }

    // From the lower to past the higher of two functions (the code between included).
    Range span(const std::string &a, const std::string &b) const
    {
        const Range ra = function(a), rb = function(b);
        if (!ra.valid() || !rb.valid())
            return {};
        return {std::min(ra.start, rb.start), std::max(ra.end, rb.end), concat(a, "..", b)};
    }

private:
    struct Sym {
        unsigned long addr;
        std::string mod;
    };

    unsigned long next_after(unsigned long a) const
    {
        auto it = std::upper_bound(text_.begin(), text_.end(), a);
        return it == text_.end() ? a + 4096 : *it;
    }

    std::vector<unsigned long> text_;
    std::multimap<std::string, Sym> syms_;
};

// -- fault injection -----------------------------------------------------------------

std::string fault_dir(std::string_view attr)
{
    return concat(kDebugfs, "/", attr);
}

std::string write_knob(std::string_view attr, std::string_view knob, std::string_view value)
{
    return sysfs::write_file(concat(fault_dir(attr), "/", knob), value);
}

std::string hex(unsigned long v)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%lx", v);
    return buf;
}

constexpr std::string_view kAttrs[] = {"failslab", "fail_page_alloc"};

// failslab and fail_page_alloc: nothing fails but the n-th site of fail-nth (probability
// 100 for tasks with make-it-fail only, which none has), GFP_KERNEL and order 0 included,
// silent (a stack dump would read as a kernel splat), the deepest stack trace.
std::string configure_faults()
{
    for (std::string_view attr : kAttrs) {
        for (auto [knob, value] :
             {std::pair<std::string_view, std::string_view>{"task-filter", "Y"},
              {"probability", "100"},
              {"times", "-1"},
              {"ignore-gfp-wait", "N"},
              {"verbose", "0"},
              {"stacktrace-depth", "32"}}) {
            if (std::string err = write_knob(attr, knob, value); !err.empty())
                return err;
        }
    }
    if (std::string err = write_knob("fail_page_alloc", "min-order", "0"); !err.empty())
        return err;
    return {};
}

std::string set_filter(const Range &require, const Range &reject)
{
    for (std::string_view attr : kAttrs) {
        for (auto [knob, value] :
             {std::pair<std::string, std::string>{"require-start", hex(require.start)},
              {"require-end", hex(require.end)},
              {"reject-start", hex(reject.start)},
              {"reject-end", hex(reject.end)}}) {
            if (std::string err = write_knob(attr, knob, value); !err.empty())
                return err;
        }
    }
    return {};
}

// /proc/thread-self/fail-nth, kept open: reading and writing it allocates nothing.
class FailNth {
public:
    FailNth() : fd_(::open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC)) {}
    ~FailNth()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    FailNth(const FailNth &) = delete;
    FailNth &operator=(const FailNth &) = delete;

    bool available() const { return fd_ >= 0; }
    bool arm(unsigned n) const
    {
        const std::string s = std::to_string(n);
        return ::pwrite(fd_, s.data(), s.size(), 0) == static_cast<ssize_t>(s.size());
    }
    // What is left of n: 0 once the fault was injected.
    unsigned left() const
    {
        char buf[32] = {};
        const ssize_t r = ::pread(fd_, buf, sizeof(buf) - 1, 0);
        return r > 0 ? static_cast<unsigned>(std::strtoul(buf, nullptr, 10)) : 0;
    }
    void disarm() const { arm(0); }

private:
    int fd_;
};

// -- namespaces ----------------------------------------------------------------------

// -- kmemleak ------------------------------------------------------------------------

class Kmemleak {
public:
    bool available() const { return ::access(path().c_str(), W_OK) == 0; }

    // Objects reported now that were not before (scan twice: objects younger than 5 s
    // are not reported). nullopt without kmemleak.
    std::optional<std::vector<std::string>> new_leaks()
    {
        if (!available())
            return std::nullopt;
        std::this_thread::sleep_for(std::chrono::seconds(6));
        std::vector<std::string> fresh;
        for (int i = 0; i < 2; i++) {
            if (!sysfs::write_file(path(), "scan").empty())
                return std::nullopt;
        }
        const auto text = sysfs::read_file(path());
        if (!text)
            return std::nullopt;
        std::istringstream in(*text);
        std::string line, current;
        std::vector<std::string> reports;
        while (std::getline(in, line)) {
            if (line.rfind("unreferenced object", 0) == 0) {
                reports.push_back(line);
            } else if (!reports.empty() && reports.back().size() < 4000) {
                reports.back() += "\n" + line;
            }
        }
        for (const std::string &r : reports) {
            const std::string head = r.substr(0, r.find('\n'));
            if (seen_.insert(head).second)
                fresh.push_back(r);
        }
        return fresh;
    }

private:
    static std::string path() { return concat(kDebugfs, "/kmemleak"); }
    std::set<std::string> seen_;
};

// -- state of the device under test ----------------------------------------------------

nl::Socket &rt()
{
    return rtnl::shared_socket();
}

std::string dev_name(std::string_view what)
{
    return ksft::testdev::unique_name(what);
}

// An up dummy with IPv6 off, deleted on destruction.
class Dev {
public:
    Dev(std::uint32_t tx, std::uint32_t rx) : name_(dev_name("fi"))
    {
        rtnl::LinkSpec spec{name_, "dummy", tx, rx};
        if (Status st = rtnl::create_link(rt(), spec); !st.ok()) {
            error_ = concat("create ", name_, ": ", st.str());
            return;
        }
        guard_.emplace(rt(), name_);
        if (std::string err = sysfs::disable_ipv6(name_); !err.empty()) {
            error_ = err;
            return;
        }
        if (Status st = rtnl::set_link_up(rt(), name_); !st.ok()) {
            error_ = concat("set ", name_, " up: ", st.str());
            return;
        }
        rtnl::LinkInfo info;
        if (Status st = rtnl::get_link(rt(), name_, info); !st.ok()) {
            error_ = concat("get ", name_, ": ", st.str());
            return;
        }
        ifindex_ = info.ifindex;
    }

    const std::string &error() const { return error_; }
    const std::string &name() const { return name_; }
    int ifindex() const { return ifindex_; }

private:
    std::string name_;
    std::optional<rtnl::LinkGuard> guard_;
    std::string error_;
    int ifindex_ = 0;
};

// The qdisc_enqueue events and the link's tx_packets while one thread sends kPackets.
struct Traffic {
    std::size_t enqueues = 0;
    std::uint64_t link_tx = 0;
    std::uint64_t dropped = 0;
};

class Tracer {
public:
    Tracer()
        : instance_(ksft::tracefs::instance_name("fault_inject")),
          enqueue_(instance_, "qdisc", "qdisc_enqueue")
    {
    }
    std::string unavailable() const
    {
        if (!instance_.available())
            return instance_.error();
        if (!enqueue_.available())
            return enqueue_.error();
        return {};
    }
    ksft::tracefs::Event &event() { return enqueue_; }

private:
    ksft::tracefs::Instance instance_;
    ksft::tracefs::Event enqueue_;
};

Tracer *g_tracer = nullptr;

std::optional<std::uint64_t> link_tx(const std::string &name, std::string &err)
{
    rtnl::LinkInfo info;
    if (Status st = rtnl::get_link(rt(), name, info); !st.ok()) {
        err = concat("get ", name, ": ", st.str());
        return std::nullopt;
    }
    if (!info.stats) {
        err = concat("no IFLA_STATS64 for ", name);
        return std::nullopt;
    }
    return info.stats->tx_packets;
}

// Sends kPackets from one thread; returns an error or "".
std::string send(const Dev &dev, Traffic &t)
{
    pkt::SenderConfig cfg;
    cfg.ifindex = dev.ifindex();
    cfg.qdisc_bypass = false;
    std::vector<int> cpus = pkt::online_cpus();
    cfg.cpus = {cpus.empty() ? 0 : cpus.front()};
    cfg.count = kPackets;
    cfg.count_drops = true;
    std::string err;
    const auto tx0 = link_tx(dev.name(), err);
    if (!tx0)
        return err;
    std::vector<pkt::ThreadResult> results;
    const auto n = g_tracer->event().count_field("ifindex", std::to_string(dev.ifindex()),
                                                 [&] { results = pkt::run_senders(cfg); });
    if (!n)
        return concat("tracing: ", g_tracer->event().error());
    t = Traffic{};
    t.enqueues = *n;
    for (const pkt::ThreadResult &r : results) {
        if (!r.error.empty())
            return concat("sender: ", r.error);
        if (r.sent + r.dropped != kPackets)
            return concat("sender sent ", r.sent, " and saw ", r.dropped, " drops of ", kPackets);
        t.dropped += r.dropped;
    }
    const auto tx1 = link_tx(dev.name(), err);
    if (!tx1)
        return err;
    t.link_tx = *tx1 - *tx0;
    return {};
}

// What an idle qdisc must do with one sender's packets.
enum class Path { bypass, enqueue, drop };

std::string_view path_name(Path p)
{
    switch (p) {
    case Path::bypass:
        return "bypassed";
    case Path::enqueue:
        return "enqueued";
    case Path::drop:
        return "dropped";
    }
    return "?";
}

std::string expect_path(const Dev &dev, Path want)
{
    Traffic t;
    if (std::string err = send(dev, t); !err.empty())
        return err;
    const bool ok = (want == Path::bypass && t.enqueues == 0 && t.link_tx == kPackets) ||
                    (want == Path::enqueue && t.enqueues == kPackets && t.link_tx == kPackets) ||
                    (want == Path::drop && t.enqueues == 0 && t.link_tx == 0);
    if (ok)
        return {};
    return concat("packets should be ", path_name(want), ": ", t.enqueues, " of ", kPackets,
                  " enqueued, ", t.link_tx, " transmitted, ", t.dropped, " dropped");
}

// Filters of parent 1: on the device: their number, or an error.
std::optional<std::size_t> filter_count(const Dev &dev, std::string &err)
{
    std::vector<rtnl::FilterInfo> filters;
    if (const Status st = rtnl::filter_dump(rt(), dev.ifindex(), kRootHandle, filters); !st.ok()) {
        err = concat("filter dump: ", st.str());
        return std::nullopt;
    }
    // A classifier's instance (its handle) carries TCA_OPTIONS; the bare tcf_proto line of
    // some classifiers does not.
    return std::count_if(filters.begin(), filters.end(),
                         [](const rtnl::FilterInfo &f) { return f.kind && f.handle != 0; });
}

// The root qdisc's kind and limit (TCA_OPTIONS: TCA_CODEL_LIMIT / TCA_FQ_CODEL_LIMIT).
struct RootQdisc {
    std::string kind;
    std::optional<std::uint32_t> limit;
};

std::optional<RootQdisc> root_qdisc(const Dev &dev, std::string &err)
{
    std::vector<rtnl::QdiscInfo> qdiscs;
    if (const Status st = rtnl::qdisc_dump(rt(), dev.ifindex(), qdiscs); !st.ok()) {
        err = concat("qdisc dump: ", st.str());
        return std::nullopt;
    }
    std::optional<RootQdisc> out;
    for (const rtnl::QdiscInfo &q : qdiscs) {
        if (q.parent == TC_H_ROOT)
            out = RootQdisc{q.kind, rtnl::codel_limit(q)};
    }
    if (!out)
        err = concat("no root qdisc on ", dev.name());
    return out;
}

std::string set_root(const Dev &dev, const std::string &kind, std::vector<std::uint8_t> options)
{
    rtnl::QdiscSpec spec;
    spec.ifindex = dev.ifindex();
    spec.handle = kRootHandle;
    spec.kind = kind;
    spec.options = std::move(options);
    if (Status st = rtnl::qdisc_replace(rt(), spec); !st.ok())
        return concat("replace root ", kind, ": ", st.str());
    return {};
}

rtnl::MatchallSpec matchall(const Dev &dev)
{
    return rtnl::root_matchall_to_flow1(dev.ifindex());
}

// -- the fault loop --------------------------------------------------------------------

// One request under test.
struct Request {
    std::string name;
    // Fault sites counted only under this stack range when the whole request has more
    // than --whole-max sites.
    std::function<Range(const Symbols &)> focus;
    // Builds what the request works on; an error message or "".
    std::function<std::string()> setup;
    std::function<Status()> run;
    // The state after a try with this answer: an inconsistency or "". Also puts the
    // state back for the next try (a failure to do so is returned too).
    std::function<std::string(const Status &)> check;
    std::function<void()> teardown;
};

struct Row {
    std::string request;
    unsigned whole_sites = 0;
    std::string focus;
    unsigned sites = 0;
    unsigned faults = 0;
    unsigned inconsistencies = 0;
    std::optional<std::size_t> leaks;
    std::string note;
};

std::vector<Row> g_rows;

// Sites of one faultless run of the request under the current filter.
std::optional<unsigned> count_sites(const FailNth &nth, const Request &req, std::string &err)
{
    constexpr unsigned kBig = 1000000;
    nth.arm(kBig);
    const Status st = req.run();
    const unsigned left = nth.left();
    nth.disarm();
    if (std::string bad = req.check(st); !bad.empty()) {
        err = concat("faultless run: ", bad);
        return std::nullopt;
    }
    if (!st.ok()) {
        err = concat("faultless run failed: ", st.str());
        return std::nullopt;
    }
    return kBig - left;
}

CaseResult run_request(const Symbols &syms, const FailNth &nth, Kmemleak &leaks, Request &req)
{
    Row row;
    row.request = req.name;
    auto finish = [&](CaseResult o) {
        if (req.teardown)
            req.teardown();
        if (const auto fresh = leaks.new_leaks()) {
            row.leaks = fresh->size();
            if (!fresh->empty() && o.result != ksft::Result::fail) {
                o = CaseResult::fail(concat(
                        fresh->size(), " leak(s) reported by kmemleak, first:\n", fresh->front()));
            }
        }
        row.note = o.message.substr(0, o.message.find('\n'));
        g_rows.push_back(row);
        return o;
    };
    if (std::string err = req.setup(); !err.empty())
        return finish(CaseResult::fail(concat("setup: ", err)));

    const Range ack = syms.function("netlink_ack");
    const Range whole = syms.span("netlink_sendmsg", "netlink_recvmsg");
    if (!ack.valid() || !whole.valid())
        return finish(CaseResult::fail(
                "netlink_ack, netlink_sendmsg or netlink_recvmsg not in /proc/kallsyms"));
    if (std::string err = set_filter(whole, ack); !err.empty())
        return finish(CaseResult::fail(err));
    std::string err;
    const auto whole_sites = count_sites(nth, req, err);
    if (!whole_sites)
        return finish(CaseResult::fail(err));
    row.whole_sites = *whole_sites;
    Range focus = whole;
    focus.what = "whole request";
    if (*whole_sites > g_opts.whole_max) {
        focus = req.focus(syms);
        if (!focus.valid())
            return finish(CaseResult::fail("the focus of the request is not in /proc/kallsyms"));
        if (std::string e = set_filter(focus, ack); !e.empty())
            return finish(CaseResult::fail(e));
        const auto sites = count_sites(nth, req, err);
        if (!sites)
            return finish(CaseResult::fail(err));
        row.sites = *sites;
    } else {
        row.sites = *whole_sites;
    }
    row.focus = focus.what;
    if (row.sites == 0)
        return finish(CaseResult::fail(concat("no fault site under ", focus.what)));

    std::vector<std::string> bad;
    unsigned n = 1;
    for (; n <= kMaxTries; n++) {
        nth.arm(n);
        const Status st = req.run();
        const bool injected = nth.left() == 0;
        nth.disarm();
        const std::string problem = req.check(st);
        if (!problem.empty()) {
            row.inconsistencies++;
            if (bad.size() < 5)
                bad.push_back(concat("fault ", n, " -> ", st.str(), ": ", problem));
        }
        if (!injected) {
            if (!st.ok())
                bad.push_back(concat("try ", n, " injected no fault but failed: ", st.str()));
            break;
        }
        row.faults++;
    }
    if (n > kMaxTries)
        bad.push_back(concat("still faulting after ", kMaxTries, " tries"));
    if (row.faults != row.sites)
        ksft::KtapWriter(std::cout).diag(concat(req.name, ": ", row.faults, " faults, ", row.sites,
                                                " sites counted before (the count varies)"));
    if (!bad.empty()) {
        std::string msg = concat(row.inconsistencies, " inconsistent answer(s) under ", focus.what);
        for (const std::string &b : bad)
            msg += "\n" + b;
        return finish(CaseResult::fail(msg));
    }
    return finish(
            CaseResult::pass(concat(row.faults, " faults injected at ", row.sites, " sites under ",
                                    focus.what, " (", row.whole_sites, " in the whole request)")));
}

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
        return rtnl::create_link(rt(), rtnl::LinkSpec{*name, "dummy", kTxQueues, 1});
    };
    r.check = [name](const Status &st) -> std::string {
        rtnl::LinkInfo info;
        const Status got = rtnl::get_link(rt(), *name, info);
        if (!st.ok()) {
            if (got.ok()) {
                rtnl::delete_link(rt(), *name);
                return concat("the error left ", *name, " behind");
            }
            return got.err == ENODEV ? "" : concat("get ", *name, ": ", got.str());
        }
        if (!got.ok())
            return concat("created, but get ", *name, ": ", got.str());
        rtnl::LinkGuard guard(rt(), *name);
        if (info.num_tx_queues != kTxQueues)
            return concat(*name, " has ", info.num_tx_queues, " TX queues, asked for ", kTxQueues);
        if (std::string e = queue_counts(*name, kTxQueues, 1); !e.empty())
            return e;
        if (std::string e = sysfs::disable_ipv6(*name); !e.empty())
            return e;
        if (Status up = rtnl::set_link_up(rt(), *name); !up.ok())
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
    r.focus = [](const Symbols &s) {
        return s.module("dummy");
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
        if (Status st = rtnl::filter_add(rt(), matchall(*g_dev)); !st.ok())
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
        return rtnl::filter_add(rt(), matchall(*g_dev));
    };
    r.check = [](const Status &st) -> std::string {
        if (std::string e = filter_state(st.ok()); !e.empty())
            return e;
        if (st.ok()) {
            if (Status d = rtnl::filter_delete(rt(), matchall(*g_dev)); !d.ok())
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
        return rtnl::filter_delete(rt(), matchall(*g_dev));
    };
    r.check = [](const Status &st) -> std::string {
        if (std::string e = filter_state(!st.ok()); !e.empty())
            return e;
        if (st.ok()) {
            if (Status a = rtnl::filter_add(rt(), matchall(*g_dev)); !a.ok())
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
        return rtnl::qdisc_change(rt(), limit_spec(kind, 0));
    };
    r.check = [kind](const Status &st) -> std::string {
        if (std::string e = limit_state(st.ok() ? 0 : kLimit); !e.empty())
            return e;
        if (st.ok()) {
            if (Status b = rtnl::qdisc_change(rt(), limit_spec(kind, kLimit)); !b.ok())
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

std::string table()
{
    std::vector<std::vector<std::string>> rows = {
            {"request", "sites (whole)", "focus", "sites", "faults", "inconsistent", "leaks"}};
    for (const Row &r : g_rows) {
        rows.push_back({r.request, std::to_string(r.whole_sites), r.focus, std::to_string(r.sites),
                        std::to_string(r.faults), std::to_string(r.inconsistencies),
                        r.leaks ? std::to_string(*r.leaks) : "no kmemleak"});
    }
    std::vector<std::size_t> w(rows[0].size(), 0);
    for (const auto &row : rows)
        for (std::size_t i = 0; i < row.size(); i++)
            w[i] = std::max(w[i], row[i].size());
    std::ostringstream out;
    for (std::size_t k = 0; k < rows.size(); k++) {
        out << "|";
        for (std::size_t i = 0; i < rows[k].size(); i++)
            out << " " << rows[k][i] << std::string(w[i] - rows[k][i].size(), ' ') << " |";
        out << "\n";
        if (k == 0) {
            out << "|";
            for (const std::size_t width : w)
                out << std::string(width + 2, '-') << "|";
            out << "\n";
        }
    }
    return out.str();
}

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

} // namespace

int main(int argc, char **argv)
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
                           const CaseResult r = env.skip.empty() ? run_request(env.syms, *env.nth,
                                                                               env.leaks, req)
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

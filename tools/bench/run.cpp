#include "run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <limits>
#include <mutex>
#include <numeric>
#include <thread>

#include <arpa/inet.h>
#include <net/if.h>
#include <pthread.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "link.hpp"
#include "packet_sender.hpp"
#include "pktgen.hpp"
#include "sysfs.hpp"
#include "udp_sender.hpp"

namespace mqbench {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int sig)
{
    g_signal = sig;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Starts fn with SIGINT/SIGTERM blocked (threads it creates inherit that), so the main thread
// takes the signals and pktgen's blocking "start" write is not interrupted by them.
std::thread spawn_blocked(std::function<void()> fn)
{
    sigset_t set;
    sigset_t old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    std::thread t(std::move(fn));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return t;
}

std::vector<int> measurement_cpus()
{
    std::vector<int> cpus = netutil::pkt::online_cpus();
    if (cpus.empty()) {
        const long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (int c = 0; c < n; ++c)
            cpus.push_back(c);
    }
    return cpus;
}

// /sys/class/net/<dev>/<file>
std::string net_file(const std::string &dev, const std::string &file)
{
    return std::string(netutil::sysfs::kSysClassNet) + "/" + dev + "/" + file;
}

void require_root(const std::string &why)
{
    if (geteuid() != 0)
        throw RuntimeFailure("must run as root: " + why);
}

// ifindex of an existing device that is up.
int check_device(const std::string &dev)
{
    const unsigned idx = if_nametoindex(dev.c_str());
    if (idx == 0)
        throw RuntimeFailure("network device '" + dev + "' not found (ip link show " + dev + ")");
    const auto flags = netutil::sysfs::read_file(net_file(dev, "flags"));
    if (flags) {
        try {
            if ((std::stoul(*flags, nullptr, 16) & IFF_UP) == 0)
                throw RuntimeFailure("network device '" + dev + "' is down (ip link set " + dev +
                                     " up)");
        } catch (const std::logic_error &) { // NOLINT(bugprone-empty-catch): unreadable flags
        }
    }
    return static_cast<int>(idx);
}

// Packets the device has sent since construction (rtnetlink link stats, else sysfs).
class LinkTxCounter {
public:
    explicit LinkTxCounter(std::string dev) : dev_(std::move(dev)) { base_ = read(); }

    std::optional<std::uint64_t> since_start()
    {
        const auto now = read();
        if (!now || !base_)
            return std::nullopt;
        return *now >= *base_ ? *now - *base_ : 0;
    }

private:
    std::optional<std::uint64_t> read()
    {
        try {
            if (!sock_)
                sock_.emplace(NETLINK_ROUTE);
            netutil::rtnl::LinkInfo info;
            if (netutil::rtnl::get_link(*sock_, dev_, info).ok() && info.stats)
                return info.stats->tx_packets;
        } catch (const std::exception &) { // NOLINT(bugprone-empty-catch): fall back to sysfs
        }
        return netutil::sysfs::read_u64(net_file(dev_, "statistics/tx_packets"));
    }

    std::string dev_;
    std::optional<netutil::nl::Socket> sock_;
    std::optional<std::uint64_t> base_;
};

class Progress {
public:
    Progress(const Options &o, Workload &w) : o_(o), w_(w) {}

    void tick(double elapsed)
    {
        if (o_.quiet || elapsed < next_)
            return;
        next_ = static_cast<double>(static_cast<long>(elapsed)) + 1.0;
        // Runs known to be longer than 2 s report from the first second, others once they
        // have passed 2 s.
        const bool long_run = o_.duration ? *o_.duration > 2.0 : elapsed >= 2.0;
        if (!long_run)
            return;
        const auto pkts = w_.progress ? w_.progress() : std::nullopt;
        if (!pkts) {
            std::fprintf(stderr, "%s: %6.1f s  (packet count not observable)\n",
                         std::string(kToolName).c_str(), elapsed);
            return;
        }
        const double dt = elapsed - last_t_;
        const double rate =
                dt > 0 && *pkts >= last_pkts_ ? static_cast<double>(*pkts - last_pkts_) / dt : 0;
        std::fprintf(stderr, "%s: %6.1f s  %14llu packets  %12.0f pps\n",
                     std::string(kToolName).c_str(), elapsed,
                     static_cast<unsigned long long>(*pkts), rate);
        last_t_ = elapsed;
        last_pkts_ = *pkts;
    }

private:
    const Options &o_;
    Workload &w_;
    double next_ = 1.0;
    double last_t_ = 0;
    std::uint64_t last_pkts_ = 0;
};

std::string kernel_release()
{
    utsname u{};
    if (uname(&u) != 0)
        return {};
    return u.release;
}

} // namespace

void install_signal_handlers()
{
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

Report make_report(const Options &o)
{
    Report r;
    r.subcommand = std::string(to_string(o.cmd));
    r.args = options_to_json(o);
    r.device = o.dev;
    r.threads = o.threads;
    r.kernel = kernel_release();
    return r;
}

void measure(const Options &o, int ifindex, Workload &w, Report &r)
{
    const std::vector<int> cpus = measurement_cpus();
    perf::Counters counters(cpus);
    const queues::Snapshot qbefore = queues::take(ifindex);
    const auto sbefore = procstat::read();
    Progress progress(o, w);

    std::mutex mu;
    std::condition_variable cv;
    bool done = false;

    counters.start();
    const auto t0 = Clock::now();
    std::string run_error;
    std::thread worker = spawn_blocked([&] {
        try {
            w.run();
        } catch (const std::exception &e) {
            run_error = e.what();
        } catch (...) {
            run_error = "unknown exception";
        }
        const std::lock_guard lock(mu);
        done = true;
        cv.notify_all();
    });

    bool stop_sent = false;
    double stop_at = 0;
    auto stop = [&](double now) {
        w.request_stop();
        stop_sent = true;
        stop_at = now;
    };
    while (true) {
        // Wake every 50 ms, or right when the duration is over.
        auto wait = std::chrono::duration<double>(0.05);
        if (o.duration && !stop_sent) {
            const double left = *o.duration - seconds_since(t0);
            wait = std::chrono::duration<double>(std::clamp(left, 0.0, 0.05));
        }
        {
            std::unique_lock lock(mu);
            if (cv.wait_for(lock, wait, [&] { return done; }))
                break;
        }
        const double elapsed = seconds_since(t0);
        if (g_signal != 0 && !r.interrupted) {
            r.interrupted = true;
            r.errors.push_back("interrupted by signal " + std::to_string(g_signal));
            stop(elapsed);
        }
        if (o.duration && elapsed >= *o.duration && !stop_sent)
            stop(elapsed);
        // Repeat the request each second: pktgen acts on a "stop" that overtakes its own
        // start-up before the "start" (and would then run on).
        if (stop_sent && elapsed - stop_at >= 1.0)
            stop(elapsed);
        progress.tick(elapsed);
    }
    worker.join();
    r.wall_seconds = seconds_since(t0);
    if (!run_error.empty())
        r.errors.push_back("workload failed: " + run_error);
    counters.stop();
    const auto safter = procstat::read();

    const long hz = sysconf(_SC_CLK_TCK);
    if (hz > 0)
        r.cpu_tick_ns = 1e9 / static_cast<double>(hz);
    if (sbefore && safter)
        r.cpu = procstat::delta(*sbefore, *safter, hz);
    else
        r.errors.emplace_back("/proc/stat unreadable: no CPU time per packet");

    r.per_queue_source = qbefore.source;
    r.per_queue_note = qbefore.note;
    if (qbefore.source != "unavailable") {
        const queues::Snapshot qafter = queues::take(ifindex, qbefore.source);
        if (qafter.source == qbefore.source) {
            r.per_queue = queues::delta(qbefore.tx_packets, qafter.tx_packets);
        } else {
            r.per_queue_source = "unavailable";
            r.per_queue_note = "second " + qbefore.source + " snapshot failed: " + qafter.note;
        }
    }

    r.counters = counters.read();
    r.counters_note = perf::note(r.counters, counters.cpus());
}

void finalize(Report &r)
{
    compute_totals(r);
    if (r.cpu)
        r.cpu_ns_per_pkt = procstat::ns_per_packet(*r.cpu, r.packets);
}

int run_pktgen(const Options &o, Report &r)
{
    require_root("pktgen is controlled through /proc/net/pktgen (CAP_NET_ADMIN)");
    const int ifindex = check_device(o.dev);
    pktgen::Proc proc(o.pktgen_root);
    if (!proc.available())
        throw RuntimeFailure(
                "the pktgen module is not loaded: " + (proc.root() / "pgctrl").string() +
                " is missing (modprobe pktgen; kernel option CONFIG_NET_PKTGEN)");
    const std::vector<unsigned> ids = proc.threads();
    for (unsigned i = 0; i < o.threads; ++i) {
        if (std::find(ids.begin(), ids.end(), i) == ids.end())
            throw RuntimeFailure("pktgen has no thread kpktgend_" + std::to_string(i) +
                                 " (one per online CPU at module load; " +
                                 std::to_string(ids.size()) + " present): lower --threads");
    }
    const auto txq = netutil::sysfs::active_queue_count(o.dev, "tx");
    if (!txq || *txq == 0)
        throw RuntimeFailure("cannot count TX queues in " + net_file(o.dev, "queues"));

    pktgen::Config cfg;
    cfg.dev = o.dev;
    cfg.threads = o.threads;
    cfg.count = o.count.value_or(0);
    cfg.pkt_size = o.size;
    cfg.xmit_mode = o.xmit_mode;
    cfg.burst = o.burst;
    cfg.clone_skb = o.clone_skb;
    cfg.flows = o.flows;
    cfg.dst_mac = o.dst_mac;
    cfg.dst = std::string(kDstIp);
    // One queue as far as the queue maps go: every thread's min = max = 0.
    cfg.tx_queues = o.one_queue ? 1 : *txq;
    if (std::string err = proc.apply(pktgen::setup_plan(cfg, ids)); !err.empty()) {
        // Leave no half-configured devices behind.
        for (unsigned i = 0; i < o.threads; ++i)
            proc.write({"kpktgend_" + std::to_string(i), "rem_device_all"});
        throw RuntimeFailure(err);
    }

    std::optional<netutil::sysfs::XpsOverride> xps;
    if (o.xps && *txq == 1) {
        r.notes.push_back("--xps not applied: " + o.dev +
                          " has a single TX queue (the kernel offers no xps_cpus for it)");
    } else if (o.xps) {
        // kpktgend_i runs on CPU i and sends on tx-i.
        std::vector<int> cpus(o.threads);
        std::iota(cpus.begin(), cpus.end(), 0);
        xps.emplace(o.dev);
        if (std::string err = xps->apply(cpus, *txq); !err.empty())
            throw RuntimeFailure("--xps: " + err);
    }

    std::string start_err;
    std::string stop_err;
    Workload w;
    w.run = [&] {
        start_err = proc.start();
    };
    w.request_stop = [&] {
        stop_err = proc.stop();
    };
    w.progress = [&]() -> std::optional<std::uint64_t> {
        std::uint64_t sum = 0;
        for (unsigned i = 0; i < o.threads; ++i) {
            const auto text = proc.read(pktgen::device_name(o.dev, i));
            const auto n = text ? pktgen::parse_pkts_sofar(*text) : std::nullopt;
            if (!n)
                return std::nullopt;
            sum += *n;
        }
        return sum;
    };
    measure(o, ifindex, w, r);
    if (!start_err.empty())
        r.errors.push_back(start_err);
    if (!stop_err.empty())
        r.errors.push_back(stop_err);
    if (xps) {
        if (std::string err = xps->restore(); !err.empty())
            r.errors.push_back(err);
    }

    for (unsigned i = 0; i < o.threads; ++i) {
        const std::string name = pktgen::device_name(o.dev, i);
        ThreadReport t;
        t.index = i;
        t.cpu = static_cast<int>(i); // kpktgend_i is bound to CPU i
        const auto text = proc.read(name);
        const auto res = text ? pktgen::parse_result(*text) : std::nullopt;
        if (res) {
            t.packets = res->packets;
            t.seconds = static_cast<double>(res->usec) / 1e6;
            t.errors = res->errors;
        } else {
            std::string line = "unreadable";
            if (text) {
                const auto pos = text->find("Result: ");
                line = pos == std::string::npos ? "no Result line"
                                                : text->substr(pos, text->find('\n', pos) - pos);
            }
            t.error = "no pktgen result in " + (proc.root() / name).string() + ": " + line;
            r.errors.push_back(t.error);
        }
        r.per_thread.push_back(t);
    }
    finalize(r);
    return r.errors.empty() ? 0 : 1;
}

int run_gen(const Options &o, Report &r)
{
    require_root(o.mode == GenMode::udp ? "SO_BINDTODEVICE needs CAP_NET_RAW"
                                        : "AF_PACKET sockets need CAP_NET_RAW");
    const int ifindex = check_device(o.dev);
    const std::vector<int> online = netutil::pkt::online_cpus();
    if (online.size() < o.threads)
        throw RuntimeFailure("--threads " + std::to_string(o.threads) + " but only " +
                             std::to_string(online.size()) +
                             " online CPUs (one pinned thread per CPU)");
    const std::vector<int> cpus(online.begin(), online.begin() + o.threads);
    const std::uint64_t count = o.count.value_or(std::numeric_limits<std::uint64_t>::max());

    std::atomic<bool> stop{false};
    std::vector<netutil::pkt::ThreadResult> results;
    LinkTxCounter link(o.dev);
    Workload w;
    w.request_stop = [&] {
        stop = true;
    };
    w.progress = [&] {
        return link.since_start();
    };

    netutil::pkt::SenderConfig pcfg;
    UdpConfig ucfg;
    in_addr dst{};
    in_addr src{};
    inet_pton(AF_INET, std::string(kDstIp).c_str(), &dst);
    inet_pton(AF_INET, std::string(kSrcIp).c_str(), &src);
    if (o.mode == GenMode::udp) {
        ucfg.dev = o.dev;
        ucfg.cpus = cpus;
        ucfg.count = count;
        ucfg.payload = o.size - kMinSize;
        ucfg.batch = o.batch;
        ucfg.dst_ip = ntohl(dst.s_addr);
        ucfg.dst_port = kDstPort;
        w.run = [&] {
            results = run_udp_senders(ucfg, stop);
        };
    } else {
        pcfg.ifindex = ifindex;
        pcfg.mode = o.mode == GenMode::tx_ring ? netutil::pkt::TxMode::tx_ring
                                               : netutil::pkt::TxMode::sendmmsg;
        pcfg.qdisc_bypass = o.qdisc_bypass;
        pcfg.cpus = cpus;
        pcfg.count = count;
        pcfg.batch = o.batch;
        pcfg.frame.frame_len = o.size;
        pcfg.frame.dst_ip = ntohl(dst.s_addr);
        pcfg.frame.src_ip = ntohl(src.s_addr);
        pcfg.frame.dst_port = kDstPort;
        for (std::size_t i = 0; i < pcfg.frame.dst_mac.size(); ++i)
            pcfg.frame.dst_mac[i] =
                    static_cast<std::uint8_t>(std::stoul(o.dst_mac.substr(i * 3, 2), nullptr, 16));
        w.run = [&] {
            results = netutil::pkt::run_senders(pcfg, stop);
        };
    }
    measure(o, ifindex, w, r);

    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto &res = results[i];
        ThreadReport t;
        t.index = static_cast<unsigned>(i);
        t.cpu = res.cpu;
        t.packets = res.sent;
        t.seconds = static_cast<double>(res.elapsed_ns) / 1e9;
        t.errors = res.retries;
        t.error = res.error;
        if (!res.error.empty())
            r.errors.push_back("thread " + std::to_string(i) + " (cpu " + std::to_string(res.cpu) +
                               "): " + res.error);
        r.per_thread.push_back(t);
    }
    finalize(r);
    return r.errors.empty() ? 0 : 1;
}

} // namespace mqbench

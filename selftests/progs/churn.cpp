// kselftest: churn stress of a multi-queue dummy device, its channels and its qdiscs.
//
// Needs root. In a network namespace of its own, one sender thread per online CPU, each
// pinned, sends 64-byte frames one sendto() at a time from an AF_PACKET socket (through
// dev_queue_xmit() and the qdiscs) into a dummy device with max(4, CPUs) TX queues, while
// the control thread (main) changes, in a seeded random order: the TX channel count
// (ETHTOOL_MSG_CHANNELS_SET), the root qdisc (replaced by fq_codel, codel, pfifo_fast or
// mq), the limit of a codel/fq_codel root (TCA_CODEL_LIMIT / TCA_FQ_CODEL_LIMIT 0 and back,
// sent over netlink: tc leaves a zero limit out), matchall and u32 filters on the fq_codel
// root or at clsact egress, the carrier (IFLA_CARRIER) and up/down (half of the switches
// off come back on within 10-100 ms). The changes come in kPhases phases; after each, the
// senders pause and the counters must add up (below). Last, the device is deleted while
// the senders send: they must see ENXIO or ENODEV and stop. The seed is printed;
// "--seconds N --seed S" replays the same changes (how many packets go out in between is
// up to the machine).
//
// What the counters must show after each phase. Every packet a sender offers (sendto()
// returned its length, or failed with ENOBUFS) ends in exactly one of:
//   - transmitted: the dummy counts it in the link's tx_packets (with the series, a
//     multi-queue dummy counts it in its queue's counters, which the link total sums);
//   - dropped by the noop qdisc, which stands in while the device has no carrier or its
//     qdiscs are swapped: noop_enqueue() adds it to the link's tx_dropped and returns
//     NET_XMIT_CN, so that sendto() succeeds;
//   - dropped by a root qdisc: its drops (sendto() fails with ENOBUFS, or succeeds when
//     the qdisc returned NET_XMIT_CN or the packet was deferred to another CPU's run);
//   - still queued in the root qdisc (its qlen), or freed with a root qdisc that was
//     deleted: the replace request asks for an echo (NLM_F_ECHO) and gets the old root's
//     RTM_DELQDISC with its final drops and qlen. For a root replaced while sending that
//     qlen is an upper bound (mq is read before the replace, and its children transmit
//     until then), so it counts only as far as it explains a shortfall (churn::balance()).
// ENETDOWN (packet_snd() found the device down) and ENXIO/ENODEV (the device is gone)
// leave before a packet is built: nothing counts them, nothing should. The root stays a
// qdisc with a queue all along (never noqueue, whose down path counts tx_dropped and
// returns ENETDOWN), so those errnos are never counted packets.
// With per-queue statistics (patched dummy), the device-scope qstats total must also equal
// the link's tx_packets, and the queues listed must be the active ones, none going back;
// the same total is read after every change while sending, and may never go back.
//
// What cannot be exact, from the kernel source: packets freed without any count when
//   1. a qdisc is deactivated while sending (dev_deactivate(): dev_close(), linkwatch
//      after the carrier went off, qdisc_graft() at the root): a sender that took the
//      qdisc before noop was swapped in and its lock after the qdisc was marked
//      deactivated drops, in __dev_xmit_skb(), its own packet (ENOBUFS) and every packet
//      other senders put on the qdisc's defer_list meanwhile, which were already reported
//      as sent: with a CPU waiting for the qdisc lock, one sender can defer dozens;
//   2. dev_deactivate(dev, true) resets the qdiscs (dev_close(); linkwatch after the
//      carrier went off): what is still queued then (a run left to the NET_TX softirq;
//      net_tx_action() skips a deactivated lockless pfifo_fast) is freed uncounted;
//   3. netif_set_real_num_tx_queues() disables queues: qdisc_reset_all_tx_gt() resets their
//      qdiscs, and a root that is not mq is the qdisc of every queue, so its whole backlog
//      goes, packets of the queues that stay active included;
//   4. qdisc_graft() replaces an mq root: its children are destroyed before mq's
//      RTM_DELQDISC is filled, which then sums the new root's queues (the program reads mq
//      just before the replace instead, which misses what happens in between);
//   5. fq_codel_change() frees the packets above a lowered limit with rtnl_kfree_skbs()
//      and does not count them as drops (codel_change() does, with rtnl_qdisc_drop()).
// Changes of these kinds are "lossy" (churn_plan.cpp, resolve()). Exact phases (the odd
// ones) make them with the senders paused and the root qdisc empty: those phases must
// balance exactly, take no credit for a queue snapshot, and transmit at least
// churn::kMinExactTransmitted packets (they end up and with carrier, sending until they
// have). The other phases make them while sending and report the packets no counter
// holds, which may be more than zero (at most churn::kMaxUncountedPerLossyChange per lossy
// change), never less; a phase whose lossy changes all
// waited for the senders must balance exactly too. Also counted nowhere, and then failing
// an exact phase: __dev_xmit_skb() drops past net.core.qdisc_max_burst (1000) packets
// deferred while one CPU waits for the qdisc lock, and a failed skb allocation in
// packet_snd() (ENOBUFS under memory pressure).
//
// On a kernel whose dummy has no ethtool channels or per-queue statistics (the base
// kernel), the channel changes and the qstats checks are skipped with a "#" line in each
// phase; the link and qdisc balance is checked all the same. The summary case then fails:
// it requires every kind of change to have been made and the qstats to have been checked.
// kernel_log fails on a warning, BUG, oops, sanitizer or lockdep report in the kernel log
// while the program ran, and lists KCSAN reports without failing on them.

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/gen_stats.h>
#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "churn_plan.hpp"
#include "ethtool.hpp"
#include "harness.hpp"
#include "ktap.hpp"
#include "netdev.hpp"
#include "nl.hpp"
#include "packet_sender.hpp"
#include "rtnl.hpp"
#include "sender_common.hpp"
#include "testdev.hpp"

namespace {

using ksft::CaseResult;
using ksft::testdev::TestDummy;
using netutil::concat;
using netutil::nl::Status;
namespace nl = netutil::nl;
namespace netdev = netutil::netdev;
namespace pkt = netutil::pkt;
namespace rtnl = netutil::rtnl;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kFrameLen = 64;
constexpr std::uint16_t kMatchallPrio = 1;
constexpr std::uint16_t kU32Prio = 2;
constexpr auto kHoldTimeout = std::chrono::seconds(5);
constexpr auto kDrainTimeout = std::chrono::seconds(2);
constexpr auto kSettleTimeout = std::chrono::seconds(3);
constexpr auto kGoneTimeout = std::chrono::seconds(10);
constexpr auto kDeleteLead = milliseconds(300);
constexpr auto kPoll = std::chrono::microseconds(500);
// Changes that take longer show how long in their line.
constexpr long long kSlowChangeMs = 200;

long long ms_since(Clock::time_point t0)
{
    return std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
}

// ---- senders ----

enum Mode : int { kRun, kHold, kStop, kDeleting };

// One sender per CPU; see the top of the file for what each errno means.
class Senders {
public:
    Senders(int ifindex, std::vector<int> cpus)
        : ifindex_(ifindex), cpus_(std::move(cpus)), threads_(new Thread[cpus_.size()])
    {
        runner_ = std::thread([this] {
            pkt::run_pinned_threads(cpus_, [this](std::size_t i, const std::function<void()> &start,
                                                  pkt::ThreadResult &res) {
                body(i, start, res);
                if (!res.error.empty())
                    set_error(i, res.error);
            });
        });
    }
    ~Senders() { stop(); }
    Senders(const Senders &) = delete;
    Senders &operator=(const Senders &) = delete;
    Senders(Senders &&) = delete;
    Senders &operator=(Senders &&) = delete;

    std::size_t size() const { return cpus_.size(); }
    const std::vector<int> &cpus() const { return cpus_; }

    // Waits until every thread has its socket and is paused. Returns an error or "".
    std::string wait_ready()
    {
        const auto t0 = Clock::now();
        while (ready_.load() + failed_.load() < static_cast<int>(cpus_.size())) {
            if (Clock::now() - t0 > kHoldTimeout)
                return "the sender threads did not start within 5 s";
            std::this_thread::sleep_for(kPoll);
        }
        if (failed_.load() != 0)
            return concat("sender setup failed: ", errors_text());
        return hold() ? std::string() : "the sender threads did not pause within 5 s";
    }

    void resume()
    {
        mode_.store(kRun);
        mode_.notify_all();
    }

    // Pauses every sender between two packets: true once all running threads wait.
    bool hold()
    {
        mode_.store(kHold);
        const auto t0 = Clock::now();
        while (parked_.load() < alive_.load()) {
            if (Clock::now() - t0 > kHoldTimeout)
                return false;
            std::this_thread::sleep_for(kPoll);
        }
        return true;
    }

    // The device is about to be deleted: ENXIO/ENODEV then end a thread without an error.
    void expect_gone()
    {
        mode_.store(kDeleting);
        mode_.notify_all();
    }

    bool wait_ended(milliseconds timeout)
    {
        const auto t0 = Clock::now();
        while (alive_.load() != 0) {
            if (Clock::now() - t0 > timeout)
                return false;
            std::this_thread::sleep_for(kPoll);
        }
        return true;
    }

    void stop()
    {
        mode_.store(kStop);
        mode_.notify_all();
        if (runner_.joinable())
            runner_.join();
    }

    int alive() const { return alive_.load(); }

    churn::SenderCounts totals() const
    {
        churn::SenderCounts c;
        for (std::size_t i = 0; i < cpus_.size(); ++i) {
            c.sent += threads_[i].sent.load();
            c.nobufs += threads_[i].nobufs.load();
            c.netdown += threads_[i].netdown.load();
            c.again += threads_[i].again.load();
        }
        return c;
    }

    // The errno that ended thread i (0: still running or stopped by request).
    int end_errno(std::size_t i) const { return threads_[i].end_errno.load(); }

    // Errors reported since the last call.
    std::vector<std::string> take_errors()
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        std::vector<std::string> out;
        out.swap(new_errors_);
        return out;
    }

private:
    struct Thread {
        std::atomic<std::uint64_t> sent{0};
        std::atomic<std::uint64_t> nobufs{0};
        std::atomic<std::uint64_t> netdown{0};
        std::atomic<std::uint64_t> again{0};
        std::atomic<int> end_errno{0};
    };

    void set_error(std::size_t i, const std::string &err)
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        const std::string e = concat("sender on CPU ", cpus_[i], ": ", err);
        new_errors_.push_back(e);
        all_errors_.push_back(e);
    }

    std::string errors_text()
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        std::string out;
        for (const std::string &e : all_errors_)
            out += concat(out.empty() ? "" : "; ", e);
        return out;
    }

    void body(std::size_t i, const std::function<void()> &start, pkt::ThreadResult &res)
    {
        std::string err = run(i, start);
        if (!err.empty())
            res.error = std::move(err);
    }

    // Sets up thread i's socket, then sends until told to stop or an error ends it.
    std::string run(std::size_t i, const std::function<void()> &start)
    {
        Thread &t = threads_[i];
        auto setup_failed = [&](std::string err) {
            failed_.fetch_add(1);
            return err;
        };
        pkt::FrameSpec spec;
        spec.frame_len = kFrameLen;
        spec.src_port = static_cast<std::uint16_t>(spec.src_port + i); // a flow per sender
        const std::vector<std::uint8_t> frame = pkt::build_frame(spec);
        const pkt::Fd fd(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
        if (fd.get() < 0)
            return setup_failed(pkt::errno_str("socket(AF_PACKET)", errno));
        // A send waiting for socket memory gives up after a second, so that a pause is
        // never held up for long.
        const timeval tv{1, 0};
        if (setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
            return setup_failed(pkt::errno_str("SO_SNDTIMEO", errno));
        // Protocol 0: bound for sending only.
        sockaddr_ll local{};
        local.sll_family = AF_PACKET;
        local.sll_ifindex = ifindex_;
        if (bind(fd.get(), reinterpret_cast<const sockaddr *>(&local), sizeof(local)) < 0)
            return setup_failed(pkt::errno_str("bind(AF_PACKET)", errno));
        sockaddr_ll dst{};
        dst.sll_family = AF_PACKET;
        dst.sll_protocol = htons(ETH_P_IP);
        dst.sll_ifindex = ifindex_;
        dst.sll_halen = ETH_ALEN;
        std::memcpy(dst.sll_addr, spec.dst_mac.data(), ETH_ALEN);

        alive_.fetch_add(1);
        ready_.fetch_add(1);
        start();
        std::string err;
        while (true) {
            const int m = mode_.load();
            if (m == kStop)
                break;
            if (m == kHold) {
                parked_.fetch_add(1);
                mode_.wait(kHold);
                parked_.fetch_sub(1);
                continue;
            }
            const ssize_t n = sendto(fd.get(), frame.data(), frame.size(), 0,
                                     reinterpret_cast<const sockaddr *>(&dst), sizeof(dst));
            if (n >= 0) {
                t.sent.fetch_add(1, std::memory_order_relaxed);
                continue;
            }
            const int e = errno;
            if (e == ENOBUFS) {
                t.nobufs.fetch_add(1, std::memory_order_relaxed);
            } else if (e == ENETDOWN) {
                t.netdown.fetch_add(1, std::memory_order_relaxed);
            } else if (e == EAGAIN || e == EINTR) {
                t.again.fetch_add(1, std::memory_order_relaxed);
            } else {
                t.end_errno.store(e);
                // The control thread announces the deletion before it sends RTM_DELLINK.
                if ((e != ENXIO && e != ENODEV) || mode_.load() != kDeleting)
                    err = pkt::errno_str("sendto", e);
                break;
            }
        }
        alive_.fetch_sub(1);
        return err;
    }

    int ifindex_;
    std::vector<int> cpus_;
    std::unique_ptr<Thread[]> threads_;
    std::atomic<int> mode_{kHold};
    std::atomic<int> ready_{0};
    std::atomic<int> failed_{0};
    std::atomic<int> alive_{0};
    std::atomic<int> parked_{0};
    std::mutex mutex_;
    std::vector<std::string> new_errors_;
    std::vector<std::string> all_errors_;
    std::thread runner_; // last: starts once the members it uses exist
};

// ---- netlink helpers not in the library ----

struct LinkState {
    unsigned flags = 0;
    std::uint8_t operstate = IF_OPER_UNKNOWN;
    bool carrier = true;
    std::optional<rtnl_link_stats64> stats;
};

Status get_link_state(nl::Socket &sock, int ifindex, LinkState &out)
{
    nl::Message msg(1024);
    msg.start(RTM_GETLINK, 0);
    auto *ifm = msg.put_extra<ifinfomsg>();
    ifm->ifi_family = AF_UNSPEC;
    ifm->ifi_index = ifindex;
    bool seen = false;
    Status st = sock.request(msg.hdr(), [&](const nlmsghdr *nlh) {
        if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(ifinfomsg))
            return;
        const auto *m = static_cast<const ifinfomsg *>(mnl_nlmsg_get_payload(nlh));
        const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(ifinfomsg), IFLA_MAX);
        out = LinkState{};
        out.flags = m->ifi_flags;
        out.operstate = nl::attr_u8(tb, IFLA_OPERSTATE).value_or(IF_OPER_UNKNOWN);
        out.carrier = nl::attr_u8(tb, IFLA_CARRIER).value_or(1) != 0;
        out.stats = nl::attr_struct<rtnl_link_stats64>(tb, IFLA_STATS64);
        seen = true;
    });
    if (st.ok() && !seen)
        return Status::failed(ENODATA, "no RTM_NEWLINK reply");
    if (st.ok() && !out.stats)
        return Status::failed(ENODATA, "no IFLA_STATS64");
    return st;
}

Status set_carrier(nl::Socket &sock, int ifindex, bool on)
{
    nl::Message msg(1024);
    msg.start(RTM_NEWLINK, 0);
    auto *ifm = msg.put_extra<ifinfomsg>();
    ifm->ifi_family = AF_UNSPEC;
    ifm->ifi_index = ifindex;
    msg.put_u8(IFLA_CARRIER, on ? 1 : 0);
    return sock.request(msg.hdr());
}

// The counters of a qdisc that matter here.
struct QdiscCounters {
    std::uint32_t handle = 0;
    std::string kind;
    std::uint32_t drops = 0;
    std::uint32_t qlen = 0;
};

// From an RTM_NEWQDISC or RTM_DELQDISC of the root of ifindex; nullopt for others.
std::optional<QdiscCounters> root_counters(const nlmsghdr *nlh, int ifindex)
{
    if (mnl_nlmsg_get_payload_len(nlh) < sizeof(tcmsg))
        return std::nullopt;
    const auto *tcm = static_cast<const tcmsg *>(mnl_nlmsg_get_payload(nlh));
    if (tcm->tcm_ifindex != ifindex || tcm->tcm_parent != TC_H_ROOT)
        return std::nullopt;
    const nl::AttrTable tb = nl::parse_attrs(nlh, sizeof(tcmsg), TCA_MAX);
    QdiscCounters c;
    c.handle = tcm->tcm_handle;
    c.kind = nl::attr_str(tb, TCA_KIND).value_or("");
    if (tb[TCA_STATS2] == nullptr)
        return std::nullopt;
    const nl::AttrTable st = nl::parse_nested(tb[TCA_STATS2], TCA_STATS_MAX);
    const auto q = nl::attr_struct<gnet_stats_queue>(st, TCA_STATS_QUEUE);
    if (!q)
        return std::nullopt;
    c.drops = q->drops;
    c.qlen = q->qlen;
    return c;
}

Status read_root(nl::Socket &sock, int ifindex, std::optional<QdiscCounters> &out)
{
    std::vector<rtnl::QdiscInfo> qdiscs;
    out.reset();
    Status st = rtnl::qdisc_dump(sock, ifindex, qdiscs);
    if (!st.ok())
        return st;
    for (const rtnl::QdiscInfo &q : qdiscs) {
        if (q.parent == TC_H_ROOT && q.has_stats)
            out = QdiscCounters{q.handle, q.kind, q.drops, q.qlen};
    }
    return {};
}

// TCA_U32_SEL with one key that matches every packet (mask 0), terminal: a match ends the
// classification with the filter's class.
std::vector<std::uint8_t> u32_match_all()
{
    std::vector<std::uint8_t> sel(sizeof(tc_u32_sel) + sizeof(tc_u32_key), 0);
    tc_u32_sel hdr{};
    hdr.flags = TC_U32_TERMINAL;
    hdr.nkeys = 1;
    std::memcpy(sel.data(), &hdr, sizeof(hdr));
    return sel;
}

tcmsg *start_filter(nl::Message &msg, std::uint16_t type, std::uint16_t flags, int ifindex,
                    std::uint32_t parent, std::uint16_t prio)
{
    tcmsg *tcm = rtnl::start_tc_msg(msg, type, flags, ifindex, parent, 0);
    tcm->tcm_info = TC_H_MAKE(static_cast<std::uint32_t>(prio) << 16, htons(ETH_P_ALL));
    return tcm;
}

Status add_u32(nl::Socket &sock, int ifindex, std::uint32_t parent,
               std::optional<std::uint32_t> classid)
{
    nl::Message msg;
    start_filter(msg, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex, parent, kU32Prio);
    msg.put_strz(TCA_KIND, "u32");
    nlattr *opts = msg.nest_start(TCA_OPTIONS);
    const std::vector<std::uint8_t> sel = u32_match_all();
    msg.put_raw(TCA_U32_SEL, sel.data(), sel.size());
    if (classid)
        msg.put_u32(TCA_U32_CLASSID, *classid);
    msg.nest_end(opts);
    return sock.request(msg.hdr());
}

// Deletes the whole filter of this kind and priority (handle 0), as "tc filter del ...
// prio N" does.
Status delete_filters(nl::Socket &sock, int ifindex, std::uint32_t parent, std::uint16_t prio,
                      std::string_view kind)
{
    nl::Message msg(1024);
    start_filter(msg, RTM_DELTFILTER, 0, ifindex, parent, prio);
    msg.put_strz(TCA_KIND, kind);
    return sock.request(msg.hdr());
}

// ---- the run ----

struct KindStats {
    unsigned live = 0;
    unsigned held = 0;
    unsigned skipped = 0;
    unsigned failed = 0;
    std::string first_error;
};

// A reading taken with the senders paused.
struct Reading {
    churn::SenderCounts senders;
    LinkState link;
    std::optional<QdiscCounters> root;
    std::optional<churn::QueueReading> queues;
    std::string error;
};

struct Fixture {
    std::optional<CaseResult> error; // setup failed: every case reports it
    churn::Options opt;
    std::uint64_t seed = 0;
    std::vector<churn::PhasePlan> plan;
    std::unique_ptr<TestDummy> dev;
    std::string name;
    int ifindex = 0;
    std::unique_ptr<netutil::ethtool::Ethtool> ethtool;
    std::unique_ptr<netdev::Netdev> nd;
    std::string no_channels; // why channels cannot change; empty if they can
    std::string no_qstats;   // why qstats cannot be read; empty if they can
    std::string no_clsact;   // why clsact is missing; empty if present
    churn::State state;
    std::unique_ptr<Senders> senders;
    Reading last;
    std::map<std::uint32_t, std::uint64_t> last_queues;
    std::optional<churn::LiveReading> last_live;
    std::array<KindStats, churn::kOpKinds.size()> kinds{};
    unsigned filter_deletes = 0;
    unsigned limit0_sent = 0;
    unsigned phases_run = 0;
    unsigned phases_failed = 0;
    std::int64_t unaccounted = 0; // over the live phases
    churn::Ledger totals;
    bool deleted = false;
    int kmsg = -1;
    std::string kmsg_error;

    nl::Socket &rt() { return rtnl::shared_socket(); }
    KindStats &stats(churn::OpKind k) { return kinds[static_cast<std::size_t>(k)]; }
    std::string replay() const
    {
        return concat("seed ", seed, "; replay: churn --seconds ", opt.seconds, " --seed ", seed,
                      opt.queues ? concat(" --queues ", *opt.queues) : std::string());
    }
};

churn::Options &options()
{
    static churn::Options o;
    return o;
}

std::unique_ptr<Fixture> &fixture_slot()
{
    static std::unique_ptr<Fixture> f;
    return f;
}

Reading read_all(Fixture &f)
{
    Reading r;
    r.senders = f.senders->totals();
    if (Status st = get_link_state(f.rt(), f.ifindex, r.link); !st.ok()) {
        r.error = concat("RTM_GETLINK ", f.name, ": ", st.str());
        return r;
    }
    if (Status st = read_root(f.rt(), f.ifindex, r.root); !st.ok()) {
        r.error = concat("qdisc dump: ", st.str());
        return r;
    }
    if (!r.root) {
        r.error = concat("no root qdisc with statistics on ", f.name);
        return r;
    }
    if (!f.no_qstats.empty())
        return r;
    churn::QueueReading q;
    netdev::QStats dev;
    if (Status st = f.nd->device_stats(f.ifindex, dev); !st.ok()) {
        r.error = concat("QSTATS_GET device scope: ", st.str());
        return r;
    }
    std::vector<netdev::QStats> entries;
    if (Status st = f.nd->queue_stats(f.ifindex, entries); !st.ok()) {
        r.error = concat("QSTATS_GET queue scope: ", st.str());
        return r;
    }
    // The link once more, after the qstats: nothing is sent while paused, so the two
    // readings agree unless a counter moves on its own.
    LinkState after;
    if (Status st = get_link_state(f.rt(), f.ifindex, after); !st.ok()) {
        r.error = concat("RTM_GETLINK ", f.name, ": ", st.str());
        return r;
    }
    q.device = dev.tx_packets.value_or(0);
    q.link = after.stats->tx_packets;
    for (const netdev::QStats &e : entries) {
        if (e.ifindex == f.ifindex && e.queue_type == netdev::QueueType::tx && e.queue_id)
            q.tx[*e.queue_id] = e.tx_packets.value_or(0);
    }
    q.up = (r.link.flags & IFF_UP) != 0;
    q.real_tx = f.state.real_tx;
    if (f.no_channels.empty()) {
        netutil::ethtool::Channels ch;
        if (Status st = f.ethtool->channels_get(f.name, ch); !st.ok()) {
            r.error = concat("CHANNELS_GET: ", st.str());
            return r;
        }
        q.real_tx = ch.tx_count;
    }
    r.queues = q;
    return r;
}

// Waits until linkwatch has acted on the last carrier change of an up device (it sets the
// operational state, then activates or deactivates the qdiscs, under the RTNL). Returns a
// note if it did not within kSettleTimeout, else "".
std::string settle_link(Fixture &f)
{
    const auto t0 = Clock::now();
    while (true) {
        LinkState ls;
        if (Status st = get_link_state(f.rt(), f.ifindex, ls); !st.ok())
            return concat("RTM_GETLINK: ", st.str());
        if ((ls.flags & IFF_UP) == 0)
            break;
        if (ls.carrier ? ls.operstate != IF_OPER_DOWN : ls.operstate == IF_OPER_DOWN)
            break;
        if (Clock::now() - t0 > kSettleTimeout)
            return concat("operational state ", static_cast<int>(ls.operstate), " with carrier ",
                          ls.carrier ? "on" : "off", " after ", ms_since(t0), " ms");
        std::this_thread::sleep_for(milliseconds(5));
    }
    // A request that takes the RTNL returns once linkwatch has let go of it.
    std::optional<QdiscCounters> root;
    if (Status st = read_root(f.rt(), f.ifindex, root); !st.ok())
        return concat("qdisc dump: ", st.str());
    return {};
}

// Waits until the root qdisc holds no packet. Returns a note if it still does after
// kDrainTimeout, else "".
std::string drain(Fixture &f)
{
    const auto t0 = Clock::now();
    while (true) {
        std::optional<QdiscCounters> root;
        if (Status st = read_root(f.rt(), f.ifindex, root); !st.ok())
            return concat("qdisc dump: ", st.str());
        if (!root || root->qlen == 0)
            return {};
        if (Clock::now() - t0 > kDrainTimeout)
            return concat("the root ", root->kind, " still holds ", root->qlen, " packets after ",
                          ms_since(t0), " ms");
        std::this_thread::sleep_for(milliseconds(1));
    }
}

// Root qdiscs of one phase and their drops, counted from the values they had when the
// phase began (0 for those it created).
class RootLedger {
public:
    explicit RootLedger(const std::optional<QdiscCounters> &start)
    {
        if (start) {
            start_handle_ = start->handle;
            start_drops_ = start->drops;
            queued_before_ = start->qlen;
        }
    }

    // A root that was deleted, with its last counters; upper_bound: an mq root read before
    // its replace while the senders ran, whose qlen is only an upper bound of what was
    // freed with it.
    void retire(const QdiscCounters &c, bool upper_bound)
    {
        drops_ += churn::delta32(base(c.handle), c.drops);
        (upper_bound ? freed_at_most_ : freed_) += c.qlen;
        if (c.handle == start_handle_)
            start_retired_ = true;
    }

    // The root at the end of the phase.
    void finish(const QdiscCounters &c, churn::Ledger &l) const
    {
        l.queued_before = queued_before_;
        l.qdisc_drops = drops_ + churn::delta32(base(c.handle), c.drops);
        l.freed = freed_;
        l.freed_at_most = freed_at_most_;
        l.queued_after = c.qlen;
    }

private:
    std::uint32_t base(std::uint32_t handle) const
    {
        return handle == start_handle_ && !start_retired_ ? start_drops_ : 0;
    }

    std::uint32_t start_handle_ = 0;
    std::uint32_t start_drops_ = 0;
    std::uint64_t queued_before_ = 0;
    std::uint64_t drops_ = 0;
    std::uint64_t freed_ = 0;
    std::uint64_t freed_at_most_ = 0;
    bool start_retired_ = false;
};

std::uint32_t root_handle(const churn::State &s)
{
    return rtnl::make_handle(s.root_major, 0);
}

// Replaces the root qdisc; the old root's last counters go to ledger. An mq root is read
// just before (its RTM_DELQDISC sums the queues of its successor, see the top of the file).
// When the replace succeeded but the old root's counters could not be had, note says so.
Status replace_root(Fixture &f, const churn::Action &a, RootLedger &ledger, bool live,
                    std::string &note)
{
    std::optional<QdiscCounters> old;
    if (f.state.root == churn::RootKind::mq) {
        if (Status st = read_root(f.rt(), f.ifindex, old); !st.ok())
            return st;
    }
    rtnl::QdiscSpec spec;
    spec.ifindex = f.ifindex;
    spec.parent = TC_H_ROOT;
    spec.handle = rtnl::make_handle(a.root_major, 0);
    spec.kind = std::string(churn::root_name(a.root));
    if (a.limit)
        spec.options = a.root == churn::RootKind::codel ? rtnl::codel_options(*a.limit)
                                                        : rtnl::fq_codel_options(*a.limit);
    nl::Message msg;
    nlmsghdr *nlh =
            rtnl::build_qdisc(msg, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ECHO, spec);
    std::optional<QdiscCounters> deleted;
    Status st = f.rt().request(nlh, [&](const nlmsghdr *m) {
        if (m->nlmsg_type != RTM_DELQDISC)
            return;
        if (auto c = root_counters(m, f.ifindex); c && c->handle == root_handle(f.state))
            deleted = c;
    });
    if (!st.ok())
        return st;
    if (old)
        ledger.retire(*old, live); // the mq pre-read: exact only with the senders paused
    else if (deleted)
        ledger.retire(*deleted, false); // the echo: the old root's final counters
    else
        note = "no RTM_DELQDISC echo with the old root's counters";
    return st;
}

// Makes the change. note: what to add to its line; problem: why the balance of the phase
// cannot be trusted although the change was made.
Status perform(Fixture &f, const churn::Action &a, RootLedger &ledger, bool live, std::string &note,
               std::string &problem)
{
    using churn::ActionType;
    using churn::FilterKind;
    using churn::FilterPlace;
    const std::uint32_t parent =
            a.place == FilterPlace::root ? root_handle(f.state) : rtnl::kEgressParent;
    switch (a.type) {
    case ActionType::set_channels: {
        netutil::ethtool::ChannelsRequest req;
        req.tx = a.channels;
        return f.ethtool->channels_set(f.name, req);
    }
    case ActionType::replace_root:
        return replace_root(f, a, ledger, live, problem);
    case ActionType::change_limit: {
        rtnl::QdiscSpec spec;
        spec.ifindex = f.ifindex;
        spec.parent = TC_H_ROOT;
        spec.handle = root_handle(f.state);
        spec.kind = std::string(churn::root_name(f.state.root));
        spec.options = f.state.root == churn::RootKind::codel
                               ? rtnl::codel_options(a.limit.value_or(0))
                               : rtnl::fq_codel_options(a.limit.value_or(0));
        return rtnl::qdisc_change(f.rt(), spec);
    }
    case ActionType::add_filter:
        if (a.filter == FilterKind::u32) {
            std::optional<std::uint32_t> classid;
            if (a.place == FilterPlace::root) // fq_codel flow 2
                classid = rtnl::make_handle(f.state.root_major, 2);
            return add_u32(f.rt(), f.ifindex, parent, classid);
        } else {
            rtnl::MatchallSpec spec;
            spec.ifindex = f.ifindex;
            spec.parent = parent;
            spec.prio = kMatchallPrio;
            if (a.place == FilterPlace::root) { // fq_codel flow 1
                spec.classid = rtnl::make_handle(f.state.root_major, 1);
            } else {
                spec.skbedit_queue_mapping = a.queue_mapping;
            }
            Status st = rtnl::filter_add(f.rt(), spec);
            if (st.err == ENOENT && spec.skbedit_queue_mapping) {
                note = concat(" (no skbedit: ", st.str(), "; without it)");
                spec.skbedit_queue_mapping.reset();
                st = rtnl::filter_add(f.rt(), spec);
            }
            return st;
        }
    case ActionType::delete_filter:
        return delete_filters(f.rt(), f.ifindex, parent,
                              a.filter == FilterKind::u32 ? kU32Prio : kMatchallPrio,
                              churn::filter_name(a.filter));
    case ActionType::set_carrier:
        return set_carrier(f.rt(), f.ifindex, a.on);
    case ActionType::set_up:
        return rtnl::set_link_up(f.rt(), f.name, a.on);
    }
    return Status::from_errno(EINVAL);
}

// An exact phase ends up and with its carrier on, sending until the link has transmitted
// churn::kMinExactTransmitted packets since the phase began (at most kHoldTimeout), so
// that its balance has packets to show. Returns what it did, or an empty string.
std::string transmit_enough(Fixture &f)
{
    std::string notes;
    if (!f.state.up) {
        if (Status st = rtnl::set_link_up(f.rt(), f.name, true); !st.ok())
            return concat("up for the tail: ", st.str());
        f.state.up = true;
        notes += "up for the tail; ";
    }
    if (!f.state.carrier) {
        if (Status st = set_carrier(f.rt(), f.ifindex, true); !st.ok())
            return concat("carrier on for the tail: ", st.str());
        f.state.carrier = true;
        notes += "carrier on for the tail; ";
    }
    if (std::string n = settle_link(f); !n.empty())
        notes += concat("settle: ", n, "; ");
    const std::uint64_t start = f.last.link.stats ? f.last.link.stats->tx_packets : 0;
    const auto t0 = Clock::now();
    while (Clock::now() - t0 < kHoldTimeout) {
        LinkState ls;
        if (Status st = get_link_state(f.rt(), f.ifindex, ls); !st.ok() || !ls.stats)
            return concat(notes, "RTM_GETLINK: ", st.str());
        if (ls.stats->tx_packets - start >= churn::kMinExactTransmitted)
            break;
        std::this_thread::sleep_for(milliseconds(10));
    }
    return notes;
}

// One phase: its changes, then the pause and the checks.
class Phase {
public:
    Phase(Fixture &f, unsigned index)
        : f_(f), index_(index), plan_(f.plan[index]), ledger_(f.last.root)
    {
    }

    CaseResult run()
    {
        const auto t0 = Clock::now();
        log_.push_back(concat("phase ", index_ + 1, " of ", f_.plan.size(), ", ",
                              plan_.exact ? "exact: lossy changes wait for the senders to pause"
                                          : "live: every change while sending",
                              "; ", plan_.draws.size(), " changes:"));
        f_.senders->resume();
        for (std::size_t i = 0; i < plan_.draws.size(); ++i) {
            std::this_thread::sleep_for(milliseconds(plan_.gaps_ms[i]));
            change(churn::resolve(f_.state, plan_.draws[i]));
            live_read();
        }
        std::this_thread::sleep_for(milliseconds(plan_.tail_ms));
        if (plan_.exact) {
            if (std::string n = transmit_enough(f_); !n.empty())
                log_.push_back(concat("tail: ", n));
        }
        if (!f_.senders->hold())
            problems_.emplace_back("the senders did not pause within 5 s");
        if (std::string n = settle_link(f_); !n.empty())
            log_.push_back(concat("settle: ", n));
        if (std::string n = drain(f_); !n.empty())
            log_.push_back(concat("drain: ", n));
        const Reading now = read_all(f_);
        for (const std::string &e : f_.senders->take_errors())
            problems_.push_back(e);
        if (!now.error.empty()) {
            problems_.push_back(now.error);
        } else {
            check(now);
            f_.last = now;
        }
        log_.push_back(concat("phase took ", ms_since(t0), " ms; ", f_.replay()));
        ++f_.phases_run;
        std::string msg;
        for (const std::string &l : log_)
            msg += concat(l, "\n");
        if (problems_.empty())
            return CaseResult::pass(msg);
        ++f_.phases_failed;
        for (const std::string &p : problems_)
            msg += concat("FAIL: ", p, "\n");
        return CaseResult::fail(msg);
    }

private:
    void change(const churn::Action &a)
    {
        KindStats &ks = f_.stats(a.from);
        const std::string what = churn::describe(a, f_.state);
        if (a.type == churn::ActionType::set_channels && !f_.no_channels.empty()) {
            ++ks.skipped;
            log_.push_back(concat("  [skipped] ", what, ": ", f_.no_channels));
            return;
        }
        const bool clsact_filter = (a.type == churn::ActionType::add_filter ||
                                    a.type == churn::ActionType::delete_filter) &&
                                   a.place == churn::FilterPlace::clsact;
        if (clsact_filter && !f_.no_clsact.empty()) {
            ++ks.skipped;
            log_.push_back(concat("  [skipped] ", what, ": ", f_.no_clsact));
            return;
        }
        const bool held = plan_.exact && a.lossy;
        std::string note;
        if (held) {
            if (!f_.senders->hold())
                problems_.push_back(concat(what, ": the senders did not pause within 5 s"));
            if (std::string n = drain(f_); !n.empty())
                note += concat(" (before: ", n, ")");
        }
        const auto t0 = Clock::now();
        const bool link_switch =
                a.type == churn::ActionType::set_carrier || a.type == churn::ActionType::set_up;
        // Paused, linkwatch must have acted on a carrier change before the senders resume.
        auto settle = [&] {
            if (held && link_switch) {
                if (std::string n = settle_link(f_); !n.empty())
                    note += concat(" (after: ", n, ")");
            }
        };
        std::string problem;
        Status st = perform(f_, a, ledger_, !held, note, problem);
        settle();
        if (st.ok() && a.blip_ms != 0) {
            std::this_thread::sleep_for(milliseconds(a.blip_ms));
            churn::Action back = a;
            back.on = true;
            back.blip_ms = 0;
            st = perform(f_, back, ledger_, !held, note, problem);
            settle();
        }
        if (!problem.empty())
            problems_.push_back(concat(what, ": ", problem));
        if (held)
            f_.senders->resume();
        if (const auto took = ms_since(t0); took >= kSlowChangeMs)
            note += concat(" (", took, " ms)");
        const std::string tag = held ? "[held] " : "[live] ";
        if (!st.ok()) {
            ++ks.failed;
            if (ks.first_error.empty())
                ks.first_error = concat(what, ": ", st.str());
            log_.push_back(concat("  ", tag, what, ": ", st.str()));
            problems_.push_back(concat(what, ": ", st.str()));
            return;
        }
        ++(held ? ks.held : ks.live);
        if (a.type == churn::ActionType::delete_filter)
            ++f_.filter_deletes;
        if (a.limit && *a.limit == 0)
            ++f_.limit0_sent;
        if (a.lossy && !held) {
            lossy_.push_back(what);
            note += " (lossy while sending)";
        }
        log_.push_back(concat("  ", tag, what, note));
        churn::apply(f_.state, a);
    }

    // The device-scope total and the link, read while the senders run.
    void live_read()
    {
        if (!f_.no_qstats.empty())
            return;
        netdev::QStats dev;
        LinkState ls;
        const Status st = f_.nd->device_stats(f_.ifindex, dev);
        const Status lst = st.ok() ? get_link_state(f_.rt(), f_.ifindex, ls) : st;
        if (!st.ok() || !lst.ok()) {
            problems_.push_back(
                    concat("reading statistics while sending: ", (st.ok() ? lst : st).str()));
            return;
        }
        const churn::LiveReading cur{dev.tx_packets.value_or(0), ls.stats->tx_packets};
        if (f_.last_live) {
            if (std::string p = churn::check_live(*f_.last_live, cur); !p.empty())
                problems_.push_back(concat("while sending: ", p));
        }
        f_.last_live = cur;
    }

    void check(const Reading &now)
    {
        const Reading &before = f_.last;
        const churn::SenderCounts s = now.senders - before.senders;
        churn::Ledger l;
        l.sent = s.sent;
        l.nobufs = s.nobufs;
        l.link_tx = now.link.stats->tx_packets - before.link.stats->tx_packets;
        l.link_dropped = now.link.stats->tx_dropped - before.link.stats->tx_dropped;
        ledger_.finish(*now.root, l);
        l.lossy = lossy_;
        l.exact = plan_.exact;
        const churn::Balance b = churn::balance(l);
        log_.push_back(concat("senders: ", s.sent, " sent, ", s.nobufs, " ENOBUFS, ", s.netdown,
                              " ENETDOWN (device down: never offered), ", s.again,
                              " EAGAIN; root now ", now.root->kind, ", ", f_.state.real_tx, " of ",
                              f_.state.num_tx, " TX queues, ", f_.state.up ? "up" : "down",
                              ", carrier ", f_.state.carrier ? "on" : "off"));
        if (s.sent + s.nobufs == 0 && f_.state.up)
            log_.emplace_back("no packet was offered in this phase");
        log_.push_back(b.message);
        if (!b.ok)
            problems_.push_back(b.message);
        f_.totals.sent += l.sent;
        f_.totals.nobufs += l.nobufs;
        f_.totals.link_tx += l.link_tx;
        f_.totals.link_dropped += l.link_dropped;
        f_.totals.qdisc_drops += l.qdisc_drops;
        f_.totals.freed += l.freed;
        f_.totals.freed_at_most += l.freed_at_most;
        if (!plan_.exact)
            f_.unaccounted += b.unaccounted;
        if (!f_.no_channels.empty())
            log_.push_back(concat("channel changes skipped: ", f_.no_channels));
        if (!f_.no_qstats.empty()) {
            log_.push_back(concat("per-queue statistics not checked: ", f_.no_qstats));
            return;
        }
        const churn::QueueReading &q = *now.queues;
        if (q.real_tx != f_.state.real_tx)
            problems_.push_back(concat("CHANNELS_GET reports ", q.real_tx, " TX channels, set ",
                                       f_.state.real_tx));
        std::string queues;
        for (const auto &[id, n] : q.tx)
            queues += concat(queues.empty() ? "" : ", ", "tx-", id, " ", n);
        log_.push_back(concat("qstats: device ", q.device, ", link ", q.link,
                              "; queues: ", queues.empty() ? std::string("none listed") : queues));
        if (std::string p = churn::check_queues(q, f_.last_queues); !p.empty())
            problems_.push_back(concat("qstats: ", p));
    }

    Fixture &f_;
    unsigned index_;
    const churn::PhasePlan &plan_;
    RootLedger ledger_;
    std::vector<std::string> lossy_;
    std::vector<std::string> log_;
    std::vector<std::string> problems_;
};

// Opens /dev/kmsg at its end, so that only what the kernel logs from now on is read.
void open_kmsg(Fixture &f)
{
    f.kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (f.kmsg < 0) {
        f.kmsg_error = pkt::errno_str("open /dev/kmsg", errno);
        return;
    }
    if (lseek(f.kmsg, 0, SEEK_END) < 0) {
        f.kmsg_error = pkt::errno_str("seek /dev/kmsg", errno);
        close(f.kmsg);
        f.kmsg = -1;
    }
}

std::unique_ptr<Fixture> build_fixture()
{
    auto f = std::make_unique<Fixture>();
    f->opt = options();
    f->seed = f->opt.seed ? *f->opt.seed
                          : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    f->plan = churn::make_plan(f->seed, f->opt.seconds);
    open_kmsg(*f);
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty()) {
        f->error = CaseResult::fail("cannot read /sys/devices/system/cpu/online");
        return f;
    }
    const unsigned queues = f->opt.queues.value_or(churn::default_queues(cpus.size()));
    f->dev = std::make_unique<TestDummy>(ksft::testdev::DummySpec{
            .prefix = "chn", .tx_queues = queues, .ipv6_off = true, .up = true});
    if (!f->dev->ok()) {
        f->error = f->dev->error();
        return f;
    }
    f->name = f->dev->name();
    f->ifindex = f->dev->ifindex();
    f->state.num_tx = queues;
    f->state.real_tx = queues;
    f->ethtool = std::make_unique<netutil::ethtool::Ethtool>();
    f->nd = std::make_unique<netdev::Netdev>();
    netutil::ethtool::Channels ch;
    if (Status st = f->ethtool->channels_get(f->name, ch); !st.ok())
        f->no_channels = concat("ETHTOOL_MSG_CHANNELS_GET: ", st.str());
    else if (ch.tx_max != queues || ch.tx_count != queues)
        f->error = CaseResult::fail(concat("CHANNELS_GET: tx ", ch.tx_count, " of ", ch.tx_max,
                                           ", expected ", queues, " of ", queues));
    netdev::QStats qs;
    if (Status st = f->nd->device_stats(f->ifindex, qs); !st.ok())
        f->no_qstats = concat("QSTATS_GET: ", st.str());
    if (f->error)
        return f;

    // A root with a queue from the start (see the top of the file), and clsact.
    rtnl::QdiscSpec root;
    root.ifindex = f->ifindex;
    root.parent = TC_H_ROOT;
    root.handle = root_handle(f->state);
    root.kind = std::string(churn::root_name(f->state.root));
    if (Status st = rtnl::qdisc_replace(f->rt(), root); !st.ok()) {
        f->error = CaseResult::fail(concat("replace root with ", root.kind, ": ", st.str()));
        return f;
    }
    if (Status st = rtnl::add_clsact(f->rt(), f->ifindex); !st.ok())
        f->no_clsact = concat("clsact: ", st.str());

    f->senders = std::make_unique<Senders>(f->ifindex, cpus);
    if (std::string err = f->senders->wait_ready(); !err.empty()) {
        f->error = CaseResult::fail(err);
        return f;
    }
    f->last = read_all(*f);
    if (!f->last.error.empty())
        f->error = CaseResult::fail(f->last.error);
    else if (f->last.queues)
        churn::check_queues(*f->last.queues, f->last_queues);
    return f;
}

Fixture &fixture()
{
    return ksft::lazy_fixture(fixture_slot(), build_fixture);
}

std::string setup_notes(const Fixture &f)
{
    std::string cpus;
    for (int c : f.senders->cpus())
        cpus += concat(cpus.empty() ? "" : ",", c);
    return concat(f.replay(), "\n", f.senders->size(), " senders pinned to CPUs ", cpus, "; ",
                  f.name, " with ", f.state.num_tx, " TX queues; ", f.opt.seconds, " s in ",
                  f.plan.size(), " phases",
                  f.no_clsact.empty() ? std::string()
                                      : concat("\nclsact filters skipped: ", f.no_clsact),
                  "\n");
}

CaseResult phase(unsigned index)
{
    Fixture &f = fixture();
    if (f.error)
        return *f.error;
    if (f.deleted)
        return CaseResult::fail("the device is gone");
    CaseResult o = Phase(f, index).run();
    if (index == 0)
        o.message = setup_notes(f) + o.message;
    return o;
}

// Deletes the device while every sender sends: each must stop on ENXIO or ENODEV.
CaseResult delete_while_sending()
{
    Fixture &f = fixture();
    if (f.error)
        return *f.error;
    std::string notes;
    // Up and with carrier, so that packets reach the driver until the deletion.
    if (!f.state.up) {
        if (Status st = rtnl::set_link_up(f.rt(), f.name, true); !st.ok())
            return CaseResult::fail(concat("up: ", st.str()));
        f.state.up = true;
    }
    if (!f.state.carrier) {
        if (Status st = set_carrier(f.rt(), f.ifindex, true); !st.ok())
            return CaseResult::fail(concat("carrier on: ", st.str()));
        f.state.carrier = true;
    }
    if (std::string n = settle_link(f); !n.empty())
        notes += concat("settle: ", n, "\n");
    const churn::SenderCounts before = f.senders->totals();
    const int running = f.senders->alive();
    f.senders->resume();
    std::this_thread::sleep_for(kDeleteLead);
    const churn::SenderCounts lead = f.senders->totals() - before;
    f.senders->expect_gone();
    const auto t0 = Clock::now();
    const Status st = rtnl::delete_link(f.rt(), f.name);
    if (!st.ok())
        return CaseResult::fail(concat("RTM_DELLINK ", f.name, " while sending: ", st.str()));
    f.deleted = true;
    const bool ended = f.senders->wait_ended(kGoneTimeout);
    const auto took = ms_since(t0);
    const churn::SenderCounts all = f.senders->totals() - before;
    std::vector<std::string> problems = f.senders->take_errors();
    unsigned enxio = 0;
    unsigned enodev = 0;
    for (std::size_t i = 0; i < f.senders->size(); ++i) {
        const int e = f.senders->end_errno(i);
        enxio += e == ENXIO ? 1 : 0;
        enodev += e == ENODEV ? 1 : 0;
    }
    if (!ended)
        problems.push_back(concat(f.senders->alive(), " of ", running, " senders still running ",
                                  took, " ms after the deletion"));
    if (static_cast<int>(enxio + enodev) != running)
        problems.push_back(concat("only ", enxio + enodev, " of ", running,
                                  " senders stopped on ENXIO or ENODEV"));
    if (lead.sent + lead.nobufs == 0)
        problems.push_back(concat("no packet was offered in the ", kDeleteLead.count(),
                                  " ms before the deletion"));
    LinkState ls;
    if (Status gst = get_link_state(f.rt(), f.ifindex, ls); gst.err != ENODEV)
        problems.push_back(
                concat("RTM_GETLINK after the deletion: ", gst.str(), ", expected ENODEV"));
    notes += concat(running, " senders offered ", lead.sent + lead.nobufs, " packets in the ",
                    kDeleteLead.count(), " ms before RTM_DELLINK, ", all.sent + all.nobufs,
                    " in all; after the deletion ", enxio, " stopped on ENXIO and ", enodev,
                    " on ENODEV within ", took, " ms\n", f.replay());
    if (problems.empty())
        return CaseResult::pass(notes);
    for (const std::string &p : problems)
        notes += concat("\nFAIL: ", p);
    return CaseResult::fail(notes);
}

// What the kernel logged while the program ran.
CaseResult kernel_log()
{
    Fixture &f = fixture();
    if (f.error)
        return *f.error;
    if (f.kmsg < 0)
        return CaseResult::skip(f.kmsg_error);
    std::vector<std::string> problems;
    std::vector<std::string> notes;
    std::array<char, 8192> buf{};
    while (true) {
        const ssize_t n = read(f.kmsg, buf.data(), buf.size() - 1);
        if (n < 0 && errno == EPIPE) // records overwritten before they were read
            continue;
        if (n <= 0)
            break;
        const std::string_view rec(buf.data(), static_cast<std::size_t>(n));
        const std::size_t semi = rec.find(';');
        std::string_view text = semi == std::string_view::npos ? rec : rec.substr(semi + 1);
        text = text.substr(0, text.find('\n'));
        switch (churn::weigh_kernel_line(text)) {
        case churn::LogWeight::problem:
            problems.emplace_back(text);
            break;
        case churn::LogWeight::note:
            notes.emplace_back(text);
            break;
        case churn::LogWeight::none:
            break;
        }
    }
    std::string msg;
    for (const std::string &n : notes)
        msg += concat("noted: ", n, "\n");
    if (problems.empty())
        return CaseResult::pass(msg + "no warning, BUG, oops, sanitizer or lockdep report");
    for (const std::string &p : problems)
        msg += concat("kernel: ", p, "\n");
    return CaseResult::fail(msg + f.replay());
}

// Over the whole run: every kind of change was made, and the qstats were checked.
CaseResult summary()
{
    Fixture &f = fixture();
    if (f.error)
        return *f.error;
    std::vector<std::string> problems;
    std::string msg = concat(f.replay(), "\n");
    for (churn::OpKind k : churn::kOpKinds) {
        const KindStats &s = f.stats(k);
        msg += concat(churn::op_name(k), ": ", s.live, " while sending, ", s.held,
                      " with the senders paused, ", s.skipped, " skipped, ", s.failed, " failed\n");
        if (s.live + s.held > 0)
            continue;
        std::string why = s.first_error;
        if (s.skipped > 0 && k == churn::OpKind::channels)
            why = f.no_channels;
        problems.push_back(concat(churn::op_name(k), " never changed",
                                  why.empty() ? std::string() : concat(": ", why)));
    }
    if (f.filter_deletes == 0)
        problems.emplace_back("no filter was deleted");
    if (f.limit0_sent == 0)
        problems.emplace_back("no limit of 0 was set");
    if (!f.no_qstats.empty())
        problems.push_back(concat("per-queue statistics never checked: ", f.no_qstats));
    const churn::Ledger &t = f.totals;
    msg += concat(f.phases_run, " phases, ", f.phases_failed, " failed; senders: ", t.sent,
                  " sent, ", t.nobufs, " ENOBUFS; link tx_packets +", t.link_tx, ", tx_dropped +",
                  t.link_dropped, "; qdisc drops +", t.qdisc_drops, "; freed with deleted qdiscs ",
                  t.freed, " (+ at most ", t.freed_at_most,
                  " queued in roots replaced while sending)", "; not counted (live phases) ",
                  f.unaccounted);
    if (f.phases_run != f.plan.size())
        problems.push_back(concat("only ", f.phases_run, " of ", f.plan.size(), " phases ran"));
    if (problems.empty())
        return CaseResult::pass(msg);
    for (const std::string &p : problems)
        msg += concat("\nFAIL: ", p);
    return CaseResult::fail(msg);
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::string_view> args(argv + 1, argv + argc);
    const std::string err = churn::parse_options(args, options());
    if (!err.empty() || options().help) {
        std::cerr << (err.empty() ? "" : err + "\n") << churn::usage(argv[0]);
        return err.empty() ? ksft::kExitPass : ksft::kExitFail;
    }
    // The phases and the cases after them judge one workload: steps of one sequence, in
    // one process and the netns the harness gives it (the device goes with the netns).
    const ksft::CaseOptions step{.timeout_s = 120 + 2 * options().seconds};
    for (unsigned i = 0; i < churn::kPhases; ++i)
        ksft::add_step(
                "churn", concat("phase_", i + 1), [i] { ksft::report(phase(i)); }, step);
    ksft::add_step(
            "churn", "delete_while_sending", [] { ksft::report(delete_while_sending()); }, step);
    ksft::add_step(
            "churn", "kernel_log", [] { ksft::report(kernel_log()); }, step);
    ksft::add_step(
            "churn", "summary", [] { ksft::report(summary()); }, step);
    ksft::RunConfig config;
    if (geteuid() != 0)
        config.skip_all = "must be run as root";
    return ksft::run_cases(config);
}

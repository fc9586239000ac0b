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
//     multi-queue dummy also counts it in its queue's per-CPU counters, which qstats read);
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
// the same total is read after every change while sending, and may never go back (nor
// pass the link read after it by more than one packet per CPU: churn::check_live()).
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
// churn::kMinExactTransmitted packets (they end up, with carrier and a root limit above 0,
// sending until they have). The other phases make them while sending and report the packets no
// counter holds, which may be more than zero (at most churn::kMaxUncountedPerLossyChange per lossy
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

#include <array>
#include <cerrno>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include "fixture.hpp"
#include "ktap.hpp"

namespace churn {
namespace {

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
    CaseResult o = run_phase(f, index);
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
        if (Status st = rtnl::set_link_up(f.rtnl_socket(), f.name, true); !st.ok())
            return CaseResult::fail(concat("up: ", st.str()));
        f.state.up = true;
    }
    if (!f.state.carrier) {
        if (Status st = rtnl::set_carrier(f.rtnl_socket(), f.ifindex, true); !st.ok())
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
    const Status st = rtnl::delete_link(f.rtnl_socket(), f.name);
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
    rtnl::LinkInfo ls;
    if (Status gst = rtnl::get_link_stats(f.rtnl_socket(), f.ifindex, ls); gst.err != ENODEV)
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
    std::vector<int> errnos; // of the problems, for the "# errno:" lines
    std::string msg = concat(f.replay(), "\n");
    for (churn::OpKind k : churn::kOpKinds) {
        const KindStats &s = f.stats(k);
        msg += concat(churn::op_name(k), ": ", s.live, " while sending, ", s.held,
                      " with the senders paused, ", s.skipped, " skipped, ", s.failed, " failed\n");
        if (s.live + s.held > 0)
            continue;
        std::string why = s.first_error;
        int err = s.first_errno;
        if (s.skipped > 0 && k == churn::OpKind::channels) {
            why = f.no_channels;
            err = f.no_channels_errno;
        }
        if (err != 0)
            errnos.push_back(err);
        problems.push_back(concat(churn::op_name(k), " never changed",
                                  why.empty() ? std::string() : concat(": ", why)));
    }
    if (f.filter_deletes == 0)
        problems.emplace_back("no filter was deleted");
    if (f.limit0_sent == 0)
        problems.emplace_back("no limit of 0 was set");
    if (!f.no_qstats.empty()) {
        problems.push_back(concat("per-queue statistics never checked: ", f.no_qstats));
        if (f.no_qstats_errno != 0)
            errnos.push_back(f.no_qstats_errno);
    }
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
    return CaseResult::fail(msg, errnos);
}

} // namespace

// The phases and the cases after them judge one workload: steps of one sequence, in one
// process and the netns the harness gives it (the device goes with the netns).
void add_steps()
{
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
}

} // namespace churn

int main(int argc, char **argv)
{
    std::vector<std::string_view> args(argv + 1, argv + argc);
    const std::string err = churn::parse_options(args, churn::options());
    if (!err.empty() || churn::options().help) {
        std::cerr << (err.empty() ? "" : err + "\n") << churn::usage(argv[0]);
        return err.empty() ? ksft::kExitPass : ksft::kExitFail;
    }
    churn::add_steps();
    ksft::RunConfig config;
    if (geteuid() != 0)
        config.skip_all = "must be run as root";
    return ksft::run_cases(config);
}

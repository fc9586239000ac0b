#include <thread>

#include <linux/if.h>

#include "fixture.hpp"

namespace churn {
namespace {

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
            if (ks.first_error.empty()) {
                ks.first_error = concat(what, ": ", st.str());
                ks.first_errno = st.err;
            }
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
        rtnl::LinkInfo ls;
        const Status st = f_.nd->device_stats(f_.ifindex, dev);
        const Status lst = st.ok() ? rtnl::get_link_stats(f_.rtnl_socket(), f_.ifindex, ls) : st;
        if (!st.ok() || !lst.ok()) {
            problems_.push_back(
                    concat("reading statistics while sending: ", (st.ok() ? lst : st).str()));
            return;
        }
        const churn::LiveReading cur{dev.tx_packets.value_or(0), ls.stats->tx_packets};
        if (f_.last_live) {
            if (std::string p = churn::check_live(*f_.last_live, cur, f_.senders->size());
                !p.empty())
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

} // namespace

CaseResult run_phase(Fixture &f, unsigned index)
{
    return Phase(f, index).run();
}

} // namespace churn

// churn: the run's fixture (the device, its senders, what was last read), the readings
// and the changes a phase makes.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "churn_plan.hpp"
#include "common.hpp"
#include "ethtool.hpp"
#include "senders.hpp"
#include "testdev.hpp"

namespace churn {

using ksft::testdev::TestDummy;

struct KindStats {
    unsigned live = 0;
    unsigned held = 0;
    unsigned skipped = 0;
    unsigned failed = 0;
    std::string first_error;
    int first_errno = 0; // of first_error
};

// A reading taken with the senders paused.
struct Reading {
    churn::SenderCounts senders;
    rtnl::LinkInfo link;
    std::optional<rtnl::QdiscInfo> root;
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
    std::string no_channels;   // why channels cannot change; empty if they can
    std::string no_qstats;     // why qstats cannot be read; empty if they can
    int no_channels_errno = 0; // the errno of no_channels
    int no_qstats_errno = 0;   // the errno of no_qstats
    std::string no_clsact;     // why clsact is missing; empty if present
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

    nl::Socket &rtnl_socket() { return rtnl::shared_socket(); }
    KindStats &stats(churn::OpKind k) { return kinds[static_cast<std::size_t>(k)]; }
    std::string replay() const
    {
        return concat("seed ", seed, "; replay: churn --seconds ", opt.seconds, " --seed ", seed,
                      opt.queues ? concat(" --queues ", *opt.queues) : std::string());
    }
};

// The options main parsed, and the fixture the cases share (built on first use).
Options &options();
Fixture &fixture();

// Opens the device, its root qdisc and clsact, starts the senders and takes the first
// reading; a failure goes to the fixture's error.
std::unique_ptr<Fixture> build_fixture();

// Reads everything a phase checks, with the senders paused (an error in Reading::error).
Reading read_all(Fixture &f);
// Waits until linkwatch has acted on the last carrier change of an up device (it sets the
// operational state, then activates or deactivates the qdiscs, under the RTNL). Returns a
// note if it did not within kSettleTimeout, else "".
std::string settle_link(Fixture &f);
// Waits until the root qdisc holds no packet. Returns a note if it still does after
// kDrainTimeout, else "".
std::string drain(Fixture &f);

// Root qdiscs of one phase and their drops, counted from the values they had when the
// phase began (0 for those it created).
class RootLedger {
public:
    explicit RootLedger(const std::optional<rtnl::QdiscInfo> &start)
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
    void retire(const rtnl::QdiscInfo &c, bool upper_bound)
    {
        drops_ += churn::delta32(base(c.handle), c.drops);
        (upper_bound ? freed_at_most_ : freed_) += c.qlen;
        if (c.handle == start_handle_)
            start_retired_ = true;
    }

    // The root at the end of the phase.
    void finish(const rtnl::QdiscInfo &c, churn::Ledger &l) const
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

std::uint32_t root_handle(const State &s);

// Makes the change. note: what to add to its line; problem: why the balance of the phase
// cannot be trusted although the change was made.
Status perform(Fixture &f, const Action &a, RootLedger &ledger, bool live, std::string &note,
               std::string &problem);

// An exact phase ends up and with its carrier on, sending until the link has transmitted
// kMinExactTransmitted packets since the phase began (at most kHoldTimeout), so that its
// balance has packets to show. Returns what it did, or an empty string.
std::string transmit_enough(Fixture &f);

// Phase index of the plan: its changes, then the pause and the checks.
CaseResult run_phase(Fixture &f, unsigned index);

} // namespace churn

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "churn_plan.hpp"

namespace {

using namespace churn;

TEST(ChurnRng, SplitMix64Sequence)
{
    // The published splitmix64 outputs for seed 0: the plan must not depend on the platform.
    Rng r(0);
    EXPECT_EQ(r.next(), 0xe220a8397b1dcdafULL);
    EXPECT_EQ(r.next(), 0x6e789e6aa1b965f4ULL);
    EXPECT_EQ(r.next(), 0x06c45d188009454fULL);
}

TEST(ChurnRng, BelowStaysInRange)
{
    Rng r(42);
    std::set<std::uint64_t> seen;
    for (int i = 0; i < 1000; ++i) {
        const std::uint64_t v = r.below(7);
        ASSERT_LT(v, 7U);
        seen.insert(v);
    }
    EXPECT_EQ(seen.size(), 7U);
}

TEST(ChurnOptions, Defaults)
{
    Options o;
    EXPECT_EQ(parse_options({}, o), "");
    EXPECT_EQ(o.seconds, kDefaultSeconds);
    EXPECT_FALSE(o.seed);
    EXPECT_FALSE(o.queues);
    EXPECT_FALSE(o.help);
}

TEST(ChurnOptions, Values)
{
    Options o;
    EXPECT_EQ(parse_options({"--seconds", "60", "--seed", "0x10", "--queues", "8"}, o), "");
    EXPECT_EQ(o.seconds, 60U);
    EXPECT_EQ(o.seed, 16U);
    EXPECT_EQ(o.queues, 8U);
    EXPECT_EQ(parse_options({"--queues", "4096"}, o), "");
    EXPECT_EQ(o.queues, 4096U);
    EXPECT_EQ(parse_options({"--seed", "18446744073709551615"}, o), "");
    EXPECT_EQ(o.seed, UINT64_MAX);
    EXPECT_EQ(parse_options({"-h"}, o), "");
    EXPECT_TRUE(o.help);
}

TEST(ChurnOptions, Errors)
{
    Options o;
    EXPECT_NE(parse_options({"--seconds"}, o), "");
    EXPECT_NE(parse_options({"--seconds", "0"}, o), "");
    EXPECT_NE(parse_options({"--seconds", "10s"}, o), "");
    EXPECT_NE(parse_options({"--seed", "-1"}, o), "");
    EXPECT_NE(parse_options({"--queues", "1"}, o), "");
    EXPECT_NE(parse_options({"--queues", "4097"}, o), "");
    EXPECT_NE(parse_options({"--verbose"}, o), "");
    EXPECT_NE(usage("churn").find("--seed"), std::string::npos);
}

TEST(ChurnOptions, DefaultQueues)
{
    EXPECT_EQ(default_queues(1), kMinQueues);
    EXPECT_EQ(default_queues(2), kMinQueues);
    EXPECT_EQ(default_queues(6), 6U);
    EXPECT_EQ(default_queues(512), 512U);
    EXPECT_EQ(default_queues(8192), kMaxQueues);
    EXPECT_EQ(kMaxQueues, 4096U);
}

bool same(const std::vector<PhasePlan> &a, const std::vector<PhasePlan> &b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].exact != b[i].exact || a[i].gaps_ms != b[i].gaps_ms ||
            a[i].tail_ms != b[i].tail_ms || a[i].draws.size() != b[i].draws.size())
            return false;
        for (std::size_t j = 0; j < a[i].draws.size(); ++j) {
            if (a[i].draws[j].kind != b[i].draws[j].kind || a[i].draws[j].arg != b[i].draws[j].arg)
                return false;
        }
    }
    return true;
}

TEST(ChurnPlan, SameSeedSamePlan)
{
    EXPECT_TRUE(same(make_plan(7, 20), make_plan(7, 20)));
    EXPECT_FALSE(same(make_plan(7, 20), make_plan(8, 20)));
}

TEST(ChurnPlan, EveryKindInEveryPhase)
{
    for (std::uint64_t seed : {0ULL, 1ULL, 12345ULL, 0xdeadbeefULL}) {
        const auto plan = make_plan(seed, 20);
        ASSERT_EQ(plan.size(), kPhases);
        for (std::size_t p = 0; p < plan.size(); ++p) {
            EXPECT_EQ(plan[p].exact, p % 2 == 0);
            EXPECT_EQ(plan[p].gaps_ms.size(), plan[p].draws.size());
            for (OpKind k : kOpKinds) {
                EXPECT_TRUE(std::any_of(plan[p].draws.begin(), plan[p].draws.end(),
                                        [k](const Draw &d) { return d.kind == k; }))
                        << "seed " << seed << " phase " << p << " lacks " << op_name(k);
            }
        }
    }
}

TEST(ChurnPlan, TimingFollowsDuration)
{
    for (unsigned seconds : {20U, 60U}) {
        const auto plan = make_plan(3, seconds);
        std::uint64_t total = 0;
        std::size_t draws = 0;
        for (const PhasePlan &p : plan) {
            total += p.tail_ms;
            for (unsigned g : p.gaps_ms)
                total += g;
            draws += p.draws.size();
            // one of each kind, plus up to phase seconds + 1 more
            EXPECT_GE(p.draws.size(), kOpKinds.size());
            EXPECT_LE(p.draws.size(), kOpKinds.size() + seconds * 1000 / kPhases / 1000 + 1);
        }
        // The gaps add up to the duration, give or take their jitter (50..150 %).
        EXPECT_GT(total, seconds * 1000 / 2);
        EXPECT_LT(total, seconds * 1000 * 3 / 2);
        EXPECT_GE(draws, kPhases * kOpKinds.size());
    }
}

State four_queues()
{
    State s;
    s.num_tx = 4;
    s.real_tx = 4;
    return s;
}

TEST(ChurnResolve, ChannelsAlwaysChangeAndShrinkIsLossy)
{
    State s = four_queues();
    for (std::uint64_t arg = 0; arg < 16; ++arg) {
        const Action a = resolve(s, {OpKind::channels, arg});
        EXPECT_EQ(a.type, ActionType::set_channels);
        EXPECT_GE(a.channels, 1U);
        EXPECT_LE(a.channels, 4U);
        EXPECT_NE(a.channels, s.real_tx);
        EXPECT_EQ(a.lossy, a.channels < s.real_tx);
    }
    s.real_tx = 1;
    const Action grow = resolve(s, {OpKind::channels, 0}); // 1 -> taken, next: 2
    EXPECT_EQ(grow.channels, 2U);
    EXPECT_FALSE(grow.lossy);
    s.real_tx = 4;
    s.up = false; // no queued packet on a device that is down
    EXPECT_FALSE(resolve(s, {OpKind::channels, 0}).lossy);
    apply(s, resolve(s, {OpKind::channels, 1}));
    EXPECT_EQ(s.real_tx, 2U);
}

TEST(ChurnResolve, RootTakesAnotherKindAndNextHandle)
{
    State s = four_queues();
    s.filters[static_cast<std::size_t>(FilterKind::u32)]
             [static_cast<std::size_t>(FilterPlace::root)] = true;
    s.limit0 = true;
    std::set<RootKind> kinds;
    for (std::uint64_t arg = 0; arg < 3; ++arg) {
        const Action a = resolve(s, {OpKind::root, arg});
        EXPECT_EQ(a.type, ActionType::replace_root);
        EXPECT_NE(a.root, s.root);
        EXPECT_EQ(a.root_major, 2);
        EXPECT_TRUE(a.lossy);
        kinds.insert(a.root);
    }
    EXPECT_EQ(kinds.size(), 3U);
    const Action a = resolve(s, {OpKind::root, 2});
    apply(s, a);
    EXPECT_EQ(s.root, a.root);
    EXPECT_EQ(s.root_major, 2);
    EXPECT_FALSE(s.limit0);
    EXPECT_FALSE(s.has_filter(FilterKind::u32, FilterPlace::root)); // went with the old root
    EXPECT_EQ(next_major(kMaxMajor), 1);
    s.up = false;
    EXPECT_FALSE(resolve(s, {OpKind::root, 0}).lossy);
}

TEST(ChurnResolve, LimitTogglesOrReplaces)
{
    State s = four_queues(); // fq_codel
    Action a = resolve(s, {OpKind::limit, 0});
    EXPECT_EQ(a.type, ActionType::change_limit);
    EXPECT_EQ(a.limit, 0U);
    EXPECT_TRUE(a.lossy); // fq_codel_change() frees above the limit uncounted
    apply(s, a);
    EXPECT_TRUE(s.limit0);
    a = resolve(s, {OpKind::limit, 0});
    EXPECT_EQ(a.limit, kRaisedLimit);
    EXPECT_FALSE(a.lossy);
    apply(s, a);
    EXPECT_FALSE(s.limit0);

    s.root = RootKind::codel; // codel_change() counts its drops
    EXPECT_FALSE(resolve(s, {OpKind::limit, 0}).lossy);

    s.root = RootKind::mq;
    a = resolve(s, {OpKind::limit, 1});
    EXPECT_EQ(a.type, ActionType::replace_root);
    EXPECT_EQ(a.root, RootKind::fq_codel);
    EXPECT_EQ(a.limit, 0U);
    apply(s, a);
    EXPECT_EQ(s.root, RootKind::fq_codel);
    EXPECT_TRUE(s.limit0);
    EXPECT_EQ(describe(resolve(s, {OpKind::limit, 0}), s), "change fq_codel 2: limit 1000");
}

TEST(ChurnResolve, FiltersAlternateAddAndDelete)
{
    State s = four_queues(); // fq_codel: the root classifies
    const Action add_root = resolve(s, {OpKind::filter_u32, 0});
    EXPECT_EQ(add_root.type, ActionType::add_filter);
    EXPECT_EQ(add_root.filter, FilterKind::u32);
    EXPECT_EQ(add_root.place, FilterPlace::root);
    EXPECT_FALSE(add_root.lossy);
    const Action add_clsact = resolve(s, {OpKind::filter_matchall, 1 | (6 << 8)});
    EXPECT_EQ(add_clsact.place, FilterPlace::clsact);
    EXPECT_EQ(add_clsact.queue_mapping, 2); // 6 % 4
    EXPECT_EQ(describe(add_clsact, s), "add matchall at clsact egress (skbedit queue_mapping 2)");
    apply(s, add_root);
    EXPECT_TRUE(s.has_filter(FilterKind::u32, FilterPlace::root));
    const Action del = resolve(s, {OpKind::filter_u32, 1});
    EXPECT_EQ(del.type, ActionType::delete_filter);
    EXPECT_EQ(del.place, FilterPlace::root);
    EXPECT_EQ(describe(del, s), "delete u32 on root fq_codel 1:");
    apply(s, del);
    EXPECT_FALSE(s.has_filter(FilterKind::u32, FilterPlace::root));

    s.root = RootKind::pfifo_fast; // no classifier: clsact only
    EXPECT_EQ(resolve(s, {OpKind::filter_matchall, 0}).place, FilterPlace::clsact);
}

TEST(ChurnResolve, CarrierAndUpDown)
{
    State s = four_queues();
    Action a = resolve(s, {OpKind::carrier, 0});
    EXPECT_EQ(a.type, ActionType::set_carrier);
    EXPECT_FALSE(a.on);
    EXPECT_TRUE(a.lossy);
    apply(s, a);
    EXPECT_FALSE(s.carrier);
    a = resolve(s, {OpKind::carrier, 0});
    EXPECT_TRUE(a.on);
    EXPECT_FALSE(a.lossy);

    a = resolve(s, {OpKind::updown, 0});
    EXPECT_EQ(a.type, ActionType::set_up);
    EXPECT_FALSE(a.on);
    EXPECT_TRUE(a.lossy);
    apply(s, a);
    EXPECT_FALSE(s.up);
    EXPECT_FALSE(resolve(s, {OpKind::carrier, 0}).lossy); // down: nothing queued
    a = resolve(s, {OpKind::updown, 0});
    EXPECT_TRUE(a.on);
    EXPECT_FALSE(a.lossy);
    EXPECT_EQ(describe(a, s), "up");
}

TEST(ChurnResolve, SwitchOffAndOnAgain)
{
    State s = four_queues();
    const Action a = resolve(s, {OpKind::updown, 2 | (5 << 2)});
    EXPECT_EQ(a.type, ActionType::set_up);
    EXPECT_FALSE(a.on);
    EXPECT_EQ(a.blip_ms, kMinBlipMs + 5);
    EXPECT_TRUE(a.lossy);
    EXPECT_EQ(describe(a, s), "down, up again after 15 ms");
    apply(s, a);
    EXPECT_TRUE(s.up);
    const Action c = resolve(s, {OpKind::carrier, 2});
    EXPECT_EQ(c.blip_ms, kMinBlipMs);
    EXPECT_EQ(describe(c, s), "carrier off, on again after 10 ms");
    apply(s, c);
    EXPECT_TRUE(s.carrier);
    s.up = false; // switching on never comes back off
    EXPECT_EQ(resolve(s, {OpKind::updown, 2}).blip_ms, 0U);
}

TEST(ChurnResolve, ReplayedSequenceGivesSameActions)
{
    auto run = [](std::uint64_t seed) {
        State s = four_queues();
        std::vector<std::string> out;
        for (const PhasePlan &p : make_plan(seed, 20)) {
            for (const Draw &d : p.draws) {
                const Action a = resolve(s, d);
                out.push_back(describe(a, s));
                apply(s, a);
            }
        }
        return out;
    };
    EXPECT_EQ(run(99), run(99));
    EXPECT_NE(run(99), run(100));
}

TEST(ChurnAccounting, Delta32Wraps)
{
    EXPECT_EQ(delta32(5, 9), 4U);
    EXPECT_EQ(delta32(0xfffffffe, 1), 3U);
}

Ledger ledger()
{
    Ledger l;
    l.sent = 1000;
    l.nobufs = 20;
    l.queued_before = 2;
    l.link_tx = 900;
    l.link_dropped = 50;
    l.qdisc_drops = 60;
    l.freed = 3;
    l.queued_after = 9;
    return l; // 1022 offered, 1022 counted
}

TEST(ChurnAccounting, ExactBalancePasses)
{
    const Balance b = balance(ledger());
    EXPECT_TRUE(b.ok);
    EXPECT_EQ(b.unaccounted, 0);
    EXPECT_NE(b.message.find("offered 1022"), std::string::npos);
}

TEST(ChurnAccounting, MoreCountedThanOfferedFails)
{
    Ledger l = ledger();
    l.link_tx += 5;
    l.lossy.emplace_back("down");
    const Balance b = balance(l);
    EXPECT_FALSE(b.ok);
    EXPECT_EQ(b.unaccounted, -5);
    EXPECT_NE(b.message.find("exceed"), std::string::npos);
}

TEST(ChurnAccounting, ReplacedRootSnapshotIsAnUpperBound)
{
    // An mq root read before its replace showed 10 queued; 6 of them were still transmitted
    // before the replace: the snapshot must not make the counters exceed the offer.
    Ledger l = ledger();
    l.freed_at_most = 10;
    l.link_tx += 6;
    l.queued_after = 0; // 9 fewer firm: 1022 offered, 1019 firm, 3 credited of at most 10
    l.lossy.emplace_back("replace root (lossy while sending)");
    Balance b = balance(l);
    EXPECT_TRUE(b.ok) << b.message;
    EXPECT_EQ(b.unaccounted, 0);
    EXPECT_NE(b.message.find("3 of at most 10"), std::string::npos) << b.message;
    // The firm counters alone above the offer still fail: nothing may be counted twice.
    l.link_tx += 4;
    b = balance(l);
    EXPECT_FALSE(b.ok);
    EXPECT_EQ(b.unaccounted, -1);
    // A shortfall the snapshot cannot explain needs a lossy change, as before.
    l = ledger();
    l.freed_at_most = 2;
    l.link_tx -= 7;
    b = balance(l);
    EXPECT_FALSE(b.ok);
    EXPECT_EQ(b.unaccounted, 5);
}

// The run that made the credit: a live phase, the mq root read just before its replace by
// pfifo_fast showed 222 queued, and its children transmitted some of them until the
// replace, which left the counters 6 above the offer when the whole 222 counted as freed.
TEST(ChurnAccounting, ReplaysTheMqPreReadRun)
{
    Ledger l = ledger();
    l.link_tx -= 216; // 1022 offered, 806 firm: 216 of the 222 were freed with the mq root
    l.freed_at_most = 222;
    l.lossy.emplace_back("replace root mq 1: with pfifo_fast 2: (lossy while sending)");
    Balance b = balance(l);
    EXPECT_TRUE(b.ok) << b.message;
    EXPECT_EQ(b.unaccounted, 0);
    EXPECT_NE(b.message.find("216 of at most 222"), std::string::npos) << b.message;
    // Before the credit was bounded by the shortfall, the same run counted 1028 of 1022.
    l.freed += 222;
    l.freed_at_most = 0;
    b = balance(l);
    EXPECT_FALSE(b.ok);
    EXPECT_EQ(b.unaccounted, -6);
}

TEST(ChurnAccounting, ExactPhaseTakesNoCredit)
{
    Ledger l = ledger();
    l.exact = true;
    l.link_tx += 1000; // 2022 offered, 2022 firm
    l.sent += 1000;
    EXPECT_TRUE(balance(l).ok) << balance(l).message;
    l.link_tx -= 5;
    l.freed_at_most = 10; // a snapshot would explain the 5, but not in an exact phase
    Balance b = balance(l);
    EXPECT_FALSE(b.ok);
    EXPECT_EQ(b.unaccounted, 5);
    EXPECT_NE(b.message.find("exact phase"), std::string::npos) << b.message;
    l.link_tx += 5; // balanced, but an mq root was replaced while sending
    b = balance(l);
    EXPECT_FALSE(b.ok);
    EXPECT_NE(b.message.find("replaced an mq root while sending"), std::string::npos) << b.message;
}

TEST(ChurnAccounting, ExactPhaseNeedsTransmittedPackets)
{
    Ledger l = ledger(); // balanced, 900 transmitted
    l.exact = true;
    Balance b = balance(l);
    EXPECT_FALSE(b.ok);
    EXPECT_NE(b.message.find("transmitted 900 packets, fewer than the 1000"), std::string::npos)
            << b.message;
    l.link_tx += 100;
    l.sent += 100;
    EXPECT_TRUE(balance(l).ok);
}

TEST(ChurnAccounting, LiveShortfallBoundedPerLossyChange)
{
    Ledger l = ledger();
    l.sent += 2000; // 2000 freed without a count by two lossy changes: the most allowed
    l.lossy = {"down", "replace root"};
    Balance b = balance(l);
    EXPECT_TRUE(b.ok) << b.message;
    EXPECT_EQ(b.unaccounted, 2000);
    l.sent += 1;
    b = balance(l);
    EXPECT_FALSE(b.ok);
    EXPECT_NE(b.message.find("more than 2000"), std::string::npos) << b.message;
}

TEST(ChurnAccounting, UncountedNeedsALossyChange)
{
    Ledger l = ledger();
    l.link_tx -= 7;
    Balance b = balance(l);
    EXPECT_FALSE(b.ok);
    EXPECT_EQ(b.unaccounted, 7);
    l.lossy = {"down", "carrier off"};
    b = balance(l);
    EXPECT_TRUE(b.ok);
    EXPECT_EQ(b.unaccounted, 7);
    EXPECT_NE(b.message.find("down; carrier off"), std::string::npos);
}

TEST(ChurnQstats, ConsistentReading)
{
    std::map<std::uint32_t, std::uint64_t> last;
    QueueReading r;
    r.tx = {{0, 10}, {1, 20}, {2, 30}, {3, 40}};
    r.device = r.link = 100;
    r.real_tx = 4;
    EXPECT_EQ(check_queues(r, last), "");
    EXPECT_EQ(last.size(), 4U);
    // Two queues disabled: they keep their 70 packets in the base.
    r.tx = {{0, 15}, {1, 25}};
    r.device = r.link = 111;
    r.real_tx = 2;
    EXPECT_EQ(check_queues(r, last), "");
    // Down: the queue scope lists nothing.
    r.tx.clear();
    r.up = false;
    EXPECT_EQ(check_queues(r, last), "");
}

TEST(ChurnQstats, Problems)
{
    std::map<std::uint32_t, std::uint64_t> last = {{0, 10}, {1, 20}, {2, 30}, {3, 40}};
    QueueReading r;
    r.tx = {{0, 10}, {1, 20}};
    r.real_tx = 2;
    r.device = 95; // the disabled queues held 70: base 65 is short
    r.link = 95;
    EXPECT_NE(check_queues(r, last).find("base 65"), std::string::npos);
    r.device = 100;
    EXPECT_NE(check_queues(r, last).find("!= link"), std::string::npos);
    r.link = 100;
    r.tx = {{0, 5}, {1, 20}};
    EXPECT_NE(check_queues(r, last).find("tx-0 went back"), std::string::npos);
    r.tx = {{0, 10}, {2, 20}};
    EXPECT_NE(check_queues(r, last).find("expected 0..1"), std::string::npos);
    r.tx = {{0, 10}, {1, 20}};
    r.up = false;
    EXPECT_NE(check_queues(r, last).find("down"), std::string::npos);
}

TEST(ChurnQstats, LiveReadings)
{
    EXPECT_EQ(check_live({10, 12}, {11, 13}, 0), "");
    EXPECT_EQ(check_live({10, 12}, {10, 12}, 0), "");
    EXPECT_NE(check_live({10, 12}, {9, 13}, 2), "");
    EXPECT_NE(check_live({10, 12}, {11, 11}, 2), "");
    EXPECT_NE(check_live({10, 12}, {14, 13}, 0), "");
    // A driver that counts the queue before the link: the device total read first may be
    // ahead of the link read after it by one packet per CPU, no more.
    EXPECT_EQ(check_live({10, 12}, {15, 13}, 2), "");
    EXPECT_NE(check_live({10, 12}, {16, 13}, 2), "");
}

TEST(ChurnKernelLog, Weights)
{
    EXPECT_EQ(weigh_kernel_line("WARNING: CPU: 1 PID: 42 at net/sched/cls_api.c:2345"),
              LogWeight::problem);
    EXPECT_EQ(weigh_kernel_line("BUG: KASAN: slab-use-after-free in dummy_xmit"),
              LogWeight::problem);
    EXPECT_EQ(weigh_kernel_line("BUG: KCSAN: data-race in __dev_queue_xmit / qdisc_reset"),
              LogWeight::note);
    EXPECT_EQ(weigh_kernel_line("chn123_1 selects TX queue 3, but real number of TX queues is 2"),
              LogWeight::none);
}

} // namespace

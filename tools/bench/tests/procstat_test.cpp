#include <gtest/gtest.h>

#include "procstat.hpp"

namespace {

using namespace mqbench::procstat;

constexpr const char *kStat = "cpu  1000 20 3000 400000 50 60 700 8 0 0\n"
                              "cpu0 500 10 1500 200000 25 30 350 4 0 0\n"
                              "cpu1 500 10 1500 200000 25 30 350 4 0 0\n"
                              "intr 12345 0 0\n"
                              "ctxt 987654\n";

TEST(ProcStat, ParsesAggregateLine)
{
    const auto t = parse(kStat);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->user, 1000U);
    EXPECT_EQ(t->nice, 20U);
    EXPECT_EQ(t->system, 3000U);
    EXPECT_EQ(t->idle, 400000U);
    EXPECT_EQ(t->iowait, 50U);
    EXPECT_EQ(t->irq, 60U);
    EXPECT_EQ(t->softirq, 700U);
    EXPECT_EQ(t->steal, 8U);
}

TEST(ProcStat, ShortAndBadLines)
{
    const auto t = parse("cpu  1 2 3 4\n");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->idle, 4U);
    EXPECT_EQ(t->softirq, 0U);
    EXPECT_FALSE(parse("cpu  1 2 3\n"));
    EXPECT_FALSE(parse("cpu0 1 2 3 4 5 6 7\n"));
    EXPECT_FALSE(parse("cpu  1 2 x 4\n"));
    EXPECT_FALSE(parse(""));
}

TEST(ProcStat, DeltaMath)
{
    const CpuTimes before{1000, 20, 3000, 400000, 50, 60, 700, 8};
    CpuTimes after = before;
    after.user += 10;    // 100 ms at 100 Hz
    after.system += 250; // 2.5 s
    after.softirq += 40; // 400 ms
    after.nice += 1000;  // not counted
    after.idle += 5000;  // not counted
    after.irq += 7;      // not counted
    const Delta d = delta(before, after, 100);
    EXPECT_DOUBLE_EQ(d.user_ns, 100e6);
    EXPECT_DOUBLE_EQ(d.system_ns, 2500e6);
    EXPECT_DOUBLE_EQ(d.softirq_ns, 400e6);
    EXPECT_DOUBLE_EQ(d.busy_ns(), 3000e6);
    // 3 s of CPU over 10 million packets: 300 ns each.
    EXPECT_DOUBLE_EQ(ns_per_packet(d, 10000000).value_or(-1), 300.0);
    EXPECT_FALSE(ns_per_packet(d, 0));

    // Other tick rates.
    EXPECT_DOUBLE_EQ(delta(before, after, 250).system_ns, 1000e6);
}

TEST(ProcStat, BackwardsCountersCountAsZero)
{
    const CpuTimes before{100, 0, 100, 100, 0, 0, 100, 0};
    const CpuTimes after{50, 0, 150, 100, 0, 0, 100, 0};
    const Delta d = delta(before, after, 100);
    EXPECT_EQ(d.user_ns, 0);
    EXPECT_DOUBLE_EQ(d.system_ns, 500e6);
    EXPECT_EQ(d.softirq_ns, 0);
    EXPECT_EQ(delta(before, after, 0).busy_ns(), 0);
}

TEST(ProcStat, ReadsRealFile)
{
    // The host's own /proc/stat must parse (Linux build hosts always have one).
    EXPECT_TRUE(read());
    EXPECT_FALSE(read("/nonexistent/stat"));
}

} // namespace

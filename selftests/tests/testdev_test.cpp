#include <cerrno>
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <net/if.h>
#include <unistd.h>

#include "ktap.hpp"
#include "link.hpp"
#include "nl.hpp"
#include "testdev.hpp"

namespace {

using ksft::Result;
using netutil::nl::Status;
using namespace ksft::testdev;

TEST(TestDev, MaxNameLenIsIfnamsizMinusOne)
{
    EXPECT_EQ(kMaxNameLen, static_cast<std::size_t>(IFNAMSIZ - 1));
}

TEST(TestDev, MakeNameFormat)
{
    EXPECT_EQ(make_name("dq", 1234, 0), "dq1234_0");
    EXPECT_EQ(make_name("dqs", 42, 17), "dqs42_17");
    // Only the last five digits of the pid are used.
    EXPECT_EQ(make_name("qb", 4194304, 3), "qb94304_3");
    EXPECT_EQ(make_name("", 7, 1), "7_1");
}

TEST(TestDev, MakeNameFitsIfnamsiz)
{
    // Longest prefix the programs use, longest pid part, six-digit counter: 15 characters.
    const std::string longest = make_name("dqs", 99999, 999999);
    EXPECT_EQ(longest, "dqs99999_999999");
    EXPECT_EQ(longest.size(), kMaxNameLen);
    for (const char *prefix : {"dq", "dc", "dqs", "qb"}) {
        for (const pid_t pid : {1, 99999, 4194303}) {
            for (const unsigned n : {0U, 9U, 10U, 999999U})
                EXPECT_LE(make_name(prefix, pid, n).size(), kMaxNameLen) << prefix << pid << n;
        }
    }
}

TEST(TestDev, MakeNameRejectsTooLong)
{
    EXPECT_THROW(make_name("dqs", 99999, 1000000), std::invalid_argument);
    EXPECT_THROW(make_name("toolongprefix", 1, 0), std::invalid_argument);
    EXPECT_NO_THROW(make_name("dqs", 99999, 999999));
}

TEST(TestDev, UniqueNamesDifferAndCarryPid)
{
    const std::string pid = std::to_string(getpid() % 100000);
    std::set<std::string> seen;
    for (int i = 0; i < 50; ++i) {
        const std::string name = unique_name("qb");
        EXPECT_EQ(name.rfind("qb" + pid + "_", 0), 0U) << name;
        EXPECT_LE(name.size(), kMaxNameLen);
        EXPECT_TRUE(seen.insert(name).second) << name << " repeated";
    }
}

TEST(TestDev, CreateFailedUnknownKindIsSkip)
{
    const Status st{EOPNOTSUPP, "Unknown device type", false, 0};
    const ksft::CaseResult o = create_failed(st, kDummyKind, "create dq1_0");
    EXPECT_EQ(o.result, Result::skip);
    EXPECT_EQ(o.message, "kernel does not support link kind dummy (EOPNOTSUPP (Operation not "
                         "supported): Unknown device type)");
    // The description of the request is not part of the reason, even when empty.
    EXPECT_EQ(create_failed(st, kDummyKind, "").message, o.message);
}

TEST(TestDev, CreateFailedOtherErrorsFail)
{
    for (const int err : {EPERM, EINVAL, EEXIST, ENOENT, ERANGE, ENOMEM}) {
        const Status st = Status::from_errno(err);
        const ksft::CaseResult o = create_failed(st, kDummyKind, "create dq1_0 numtxqueues 0");
        EXPECT_EQ(o.result, Result::fail) << err;
        EXPECT_EQ(o.message, "create dq1_0 numtxqueues 0: " + st.str());
    }
    const Status ext{EINVAL, "Invalid number of transmit queues", false, 0};
    EXPECT_EQ(create_failed(ext, "veth", "create x").message,
              "create x: EINVAL (Invalid argument): Invalid number of transmit queues");
}

TEST(TestDev, DescribeCreate)
{
    EXPECT_EQ(describe_create("dq1_0", {.prefix = "dq"}), "create dq1_0");
    EXPECT_EQ(describe_create("dq1_1", {.prefix = "dq", .tx_queues = 3U, .rx_queues = 2U}),
              "create dq1_1 numtxqueues 3 numrxqueues 2");
    EXPECT_EQ(describe_create("qb1_0", {.prefix = "qb", .tx_queues = 1U, .up = true}),
              "create qb1_0 numtxqueues 1");
    EXPECT_EQ(describe_create("x", {.rx_queues = 0U}), "create x numrxqueues 0");
}

netutil::rtnl::LinkInfo link_with(std::uint32_t tx, std::uint32_t rx)
{
    netutil::rtnl::LinkInfo info;
    info.num_tx_queues = tx;
    info.num_rx_queues = rx;
    return info;
}

TEST(TestDev, CheckQueuesOnlyWhenAsked)
{
    const DummySpec spec{.prefix = "qb", .tx_queues = 1U};
    EXPECT_EQ(check_queues("qb1_0", spec, link_with(8, 1)), "");
}

TEST(TestDev, CheckQueuesTxAndRx)
{
    const DummySpec spec{.prefix = "dc", .tx_queues = 4U, .rx_queues = 2U, .verify_queues = true};
    EXPECT_EQ(check_queues("dc1_0", spec, link_with(4, 2)), "");
    EXPECT_EQ(check_queues("dc1_0", spec, link_with(4, 1)),
              "dc1_0 has num_tx_queues/num_rx_queues 4/1, expected 4/2");
    EXPECT_EQ(check_queues("dc1_0", spec, link_with(3, 2)),
              "dc1_0 has num_tx_queues/num_rx_queues 3/2, expected 4/2");
}

TEST(TestDev, CheckQueuesOneDirection)
{
    const DummySpec tx{.prefix = "dqs", .tx_queues = 2U, .verify_queues = true};
    EXPECT_EQ(check_queues("dqs1_0", tx, link_with(2, 1)), "");
    EXPECT_EQ(check_queues("dqs1_0", tx, link_with(1, 1)), "dqs1_0 has 1 TX queues, asked for 2");
    const DummySpec rx{.prefix = "d", .rx_queues = 3U, .verify_queues = true};
    EXPECT_EQ(check_queues("d1_0", rx, link_with(1, 3)), "");
    EXPECT_EQ(check_queues("d1_0", rx, link_with(1, 1)), "d1_0 has 1 RX queues, asked for 3");
    // Nothing asked for: nothing to check.
    EXPECT_EQ(check_queues("d1_0", {.verify_queues = true}, link_with(5, 5)), "");
}

} // namespace

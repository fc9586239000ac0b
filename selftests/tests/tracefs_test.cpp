#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "tracefs.hpp"

namespace {

namespace fs = std::filesystem;
using ksft::tracefs::count_dev_lines;

constexpr const char *kSample =
        "# tracer: nop\n"
        "#\n"
        "# entries-in-buffer/entries-written: 7/7   #P:2\n"
        "#\n"
        "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
        "#              | |         |   |||||     |         |\n"
        "   sender-1234    [000] b..1.   100.000001: net_dev_xmit: dev=dq1_0 skbaddr=0000 len=64 "
        "rc=0\n"
        "   sender-1234    [000] b..1.   100.000002: net_dev_xmit: dev=dq1_0 skbaddr=0000 len=64 "
        "rc=0\n"
        "   sender-1235    [001] b..1.   100.000003: net_dev_xmit: dev=dq1_01 skbaddr=0000 len=64 "
        "rc=0\n"
        "   sender-1235    [001] b..1.   100.000004: net_dev_queue: dev=dq1_0 skbaddr=0000 len=64\n"
        "   sender-1235    [001] b..1.   100.000005: net_dev_xmit: ndev=dq1_0 len=64\n"
        "   sender-1235    [001] b..1.   100.000006: net_dev_xmit: dev=dq1_0\n"
        "   sender-1235    [001] b..1.   100.000007: qdisc_dequeue: dev=dq1_0, skbaddr=0000\n";

TEST(Tracefs, CountsExactDeviceName)
{
    // 2 xmit + queue + trailing xmit + qdisc with a comma; dq1_01 and ndev= do not count.
    EXPECT_EQ(count_dev_lines(kSample, "dq1_0"), 5U);
    EXPECT_EQ(count_dev_lines(kSample, "dq1_01"), 1U);
    EXPECT_EQ(count_dev_lines(kSample, "dq1"), 0U);
    EXPECT_EQ(count_dev_lines(kSample, ""), 0U);
}

TEST(Tracefs, FiltersByEvent)
{
    EXPECT_EQ(count_dev_lines(kSample, "dq1_0", "net_dev_xmit"), 3U);
    EXPECT_EQ(count_dev_lines(kSample, "dq1_0", "net_dev_queue"), 1U);
    EXPECT_EQ(count_dev_lines(kSample, "dq1_0", "qdisc_dequeue"), 1U);
    EXPECT_EQ(count_dev_lines(kSample, "dq1_0", "net_dev"), 0U);
}

TEST(Tracefs, IgnoresCommentsAndEmptyText)
{
    EXPECT_EQ(count_dev_lines("", "eth0"), 0U);
    EXPECT_EQ(count_dev_lines("# dev=eth0\n   # dev=eth0\n\n", "eth0"), 0U);
    EXPECT_EQ(count_dev_lines("x-1 [000] 1.0: e: dev=eth0", "eth0"), 1U); // no final newline
}

constexpr const char *kQdiscSample =
        "# tracer: nop\n"
        "  s-1 [000] b..1. 1.0: qdisc_enqueue: enqueue ifindex=7 qdisc handle=0x10000 "
        "parent=0xFFFFFFFF skbaddr=0000\n"
        "  s-1 [000] b..1. 1.1: qdisc_enqueue: enqueue ifindex=17 qdisc handle=0x10000 "
        "parent=0xFFFFFFFF skbaddr=0000\n"
        "  s-1 [000] b..1. 1.2: qdisc_bypass: bypass dev=qb1_0 ifindex=7 qdisc handle=0x0 "
        "parent=0xFFFFFFFF txq=0 skbaddr=0000 len=64\n"
        "  s-1 [000] b..1. 1.3: qdisc_dequeue: dequeue ifindex=7 qdisc handle=0x10000 "
        "parent=0xFFFFFFFF txq_state=0x0 packets=1 skbaddr=0000\n"
        "  s-1 [000] b..1. 1.4: qdisc_enqueue: enqueue xifindex=7 qdisc\n"
        "  s-1 [000] b..1. 1.5: qdisc_enqueue: enqueue ifindex=7\n";

TEST(Tracefs, CountsAnyField)
{
    using ksft::tracefs::count_field_lines;
    EXPECT_EQ(count_field_lines(kQdiscSample, "ifindex", "7"), 4U);
    EXPECT_EQ(count_field_lines(kQdiscSample, "ifindex", "7", "qdisc_enqueue"), 2U);
    EXPECT_EQ(count_field_lines(kQdiscSample, "ifindex", "17", "qdisc_enqueue"), 1U);
    EXPECT_EQ(count_field_lines(kQdiscSample, "ifindex", "1"), 0U);
    EXPECT_EQ(count_field_lines(kQdiscSample, "ifindex", "7", "qdisc_bypass"), 1U);
    EXPECT_EQ(count_field_lines(kQdiscSample, "dev", "qb1_0", "qdisc_bypass"), 1U);
    EXPECT_EQ(count_field_lines(kQdiscSample, "txq", "0"), 1U);
    EXPECT_EQ(count_field_lines(kQdiscSample, "", "7"), 0U);
    EXPECT_EQ(count_field_lines(kQdiscSample, "ifindex", ""), 0U);
    // A key at the very end of a line, without "=value", does not match.
    EXPECT_EQ(count_field_lines("a-1 [000] 1.0: e: ifindex", "ifindex", "7"), 0U);
    EXPECT_EQ(count_field_lines("a-1 [000] 1.0: e: ifindex=", "ifindex", "7"), 0U);
}

class FakeTracefs : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/ksft-tracefs-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        fs::create_directories(root_ / "events/net/net_dev_xmit");
        write(root_ / "trace", "# tracer: nop\nold line dev=eth0\n");
        write(root_ / "tracing_on", "0\n");
        write(root_ / "events/net/net_dev_xmit/enable", "0\n");
    }
    void TearDown() override { fs::remove_all(root_); }

    static void write(const fs::path &p, const std::string &s) { std::ofstream(p) << s; }
    static std::string read(const fs::path &p)
    {
        std::ifstream in(p);
        std::ostringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

    fs::path root_;
};

TEST_F(FakeTracefs, CountsOverWindowAndRestores)
{
    {
        ksft::tracefs::Event ev("net", "net_dev_xmit", root_.string());
        ASSERT_TRUE(ev.available()) << ev.error();
        const auto n = ev.count("eth0", [&] {
            EXPECT_EQ(read(root_ / "events/net/net_dev_xmit/enable"), "1");
            EXPECT_EQ(read(root_ / "tracing_on"), "1");
            std::ofstream(root_ / "trace", std::ios::app)
                    << "a-1 [000] 1.0: net_dev_xmit: dev=eth0 len=64\n"
                    << "a-1 [000] 1.1: net_dev_xmit: dev=eth1 len=64\n"
                    << "a-1 [000] 1.2: net_dev_xmit: dev=eth0 len=64\n";
        });
        ASSERT_TRUE(n.has_value()) << ev.error();
        EXPECT_EQ(*n, 2U); // the old line was cleared first
        EXPECT_EQ(read(root_ / "events/net/net_dev_xmit/enable"), "0");
    }
    EXPECT_EQ(read(root_ / "tracing_on"), "0");
}

TEST_F(FakeTracefs, MissingEventIsReported)
{
    ksft::tracefs::Event ev("net", "no_such_event", root_.string());
    EXPECT_FALSE(ev.available());
    EXPECT_NE(ev.error().find("net:no_such_event"), std::string::npos);
    EXPECT_FALSE(ev.enable());
    EXPECT_FALSE(ev.count("eth0", [] {}).has_value());
}

TEST_F(FakeTracefs, InstanceIsCreatedAndRemoved)
{
    fs::create_directories(root_ / "instances");
    const fs::path dir = root_ / "instances/ksft_1";
    {
        ksft::tracefs::Instance inst("ksft_1", root_.string());
        ASSERT_TRUE(inst.available()) << inst.error();
        EXPECT_EQ(inst.path(), dir.string());
        EXPECT_TRUE(fs::is_directory(dir));
    }
    EXPECT_FALSE(fs::exists(dir));
}

TEST_F(FakeTracefs, ExistingInstanceIsNotReused)
{
    const fs::path dir = root_ / "instances/ksft_2";
    fs::create_directories(dir);
    {
        ksft::tracefs::Instance inst("ksft_2", root_.string());
        EXPECT_FALSE(inst.available());
        EXPECT_NE(inst.error().find("File exists"), std::string::npos) << inst.error();
    }
    EXPECT_TRUE(fs::is_directory(dir)); // someone else's: left alone
}

TEST_F(FakeTracefs, NoInstancesDirectory)
{
    ksft::tracefs::Instance inst("ksft_3", root_.string());
    EXPECT_FALSE(inst.available());
    EXPECT_NE(inst.error().find("instances"), std::string::npos);
    ksft::tracefs::Instance bad("a/b", root_.string());
    EXPECT_FALSE(bad.available());
}

TEST(Tracefs, InstanceNameHasThePid)
{
    const std::string name = ksft::tracefs::instance_name("qdisc_bypass");
    EXPECT_EQ(name, "qdisc_bypass_" + std::to_string(getpid()));
}

// An event of an instance counts in the instance's buffer only: the global trace
// buffer and event switch stay as they were.
TEST_F(FakeTracefs, EventInInstanceCountsField)
{
    fs::create_directories(root_ / "instances");
    fs::create_directories(root_ / "events/qdisc/qdisc_enqueue");
    write(root_ / "events/qdisc/qdisc_enqueue/enable", "0\n");
    ksft::tracefs::Instance inst("ksft_4", root_.string());
    ASSERT_TRUE(inst.available()) << inst.error();
    const fs::path dir = inst.path();
    // What tracefs puts into a new instance.
    fs::create_directories(dir / "events/qdisc/qdisc_enqueue");
    write(dir / "trace", "# tracer: nop\nold ifindex=7\n");
    write(dir / "tracing_on", "1\n");
    write(dir / "events/qdisc/qdisc_enqueue/enable", "0\n");
    {
        ksft::tracefs::Event ev("qdisc", "qdisc_enqueue", inst.path());
        ASSERT_TRUE(ev.available()) << ev.error();
        const auto n = ev.count_field("ifindex", "7", [&] {
            EXPECT_EQ(read(dir / "events/qdisc/qdisc_enqueue/enable"), "1");
            std::ofstream(dir / "trace", std::ios::app)
                    << "a-1 [000] 1.0: qdisc_enqueue: enqueue ifindex=7 qdisc handle=0x10000\n"
                    << "a-1 [000] 1.1: qdisc_enqueue: enqueue ifindex=17 qdisc handle=0x10000\n"
                    << "a-1 [000] 1.2: qdisc_dequeue: dequeue ifindex=7 qdisc handle=0x10000\n";
        });
        ASSERT_TRUE(n.has_value()) << ev.error();
        EXPECT_EQ(*n, 1U);
        EXPECT_EQ(read(dir / "events/qdisc/qdisc_enqueue/enable"), "0");
    }
    EXPECT_EQ(read(root_ / "trace"), "# tracer: nop\nold line dev=eth0\n");
    EXPECT_EQ(read(root_ / "events/qdisc/qdisc_enqueue/enable"), "0\n");
    EXPECT_EQ(read(root_ / "tracing_on"), "0\n");
    // Real tracefs removes a populated instance; a plain directory does not.
    EXPECT_FALSE(inst.remove());
    EXPECT_NE(inst.error().find("rmdir"), std::string::npos);
    fs::remove_all(dir / "events");
    fs::remove(dir / "trace");
    fs::remove(dir / "tracing_on");
    EXPECT_TRUE(inst.remove());
    EXPECT_FALSE(fs::exists(dir));
}

TEST(Tracefs, MissingRootIsReported)
{
    ksft::tracefs::Event ev("net", "net_dev_xmit", "/nonexistent/tracing");
    EXPECT_FALSE(ev.available());
    EXPECT_NE(ev.error().find("/nonexistent/tracing"), std::string::npos);
}

} // namespace

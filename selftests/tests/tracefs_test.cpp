#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strutil.hpp"
#include "sysfs.hpp"
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

TEST(Tracefs, InstanceNameHasThePid)
{
    const std::string name = ksft::tracefs::instance_name("qdisc_bypass");
    EXPECT_EQ(name, "qdisc_bypass_" + std::to_string(getpid()));
}

// The tests below use the real tracefs. Where it is not mounted, the test process mounts it
// at /sys/kernel/tracing in a mount namespace of its own (root only), so that the host's
// mounts stay as they are; trace instances are the kernel's all the same, and each test
// removes the ones it makes.
std::string tracefs_unavailable()
{
    static const std::string why = []() -> std::string {
        if (ksft::tracefs::find_root())
            return {};
        if (geteuid() != 0)
            return "tracefs is not mounted, and mounting it needs root";
        if (unshare(CLONE_NEWNS) != 0)
            return netutil::concat("tracefs is not mounted; unshare(CLONE_NEWNS): ",
                                   std::strerror(errno));
        if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
            return netutil::concat("tracefs is not mounted; making / private: ",
                                   std::strerror(errno));
        if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0)
            return netutil::concat("tracefs is not mounted, and mounting it at /sys/kernel/tracing "
                                   "failed: ",
                                   std::strerror(errno));
        if (!ksft::tracefs::find_root())
            return "tracefs mounted at /sys/kernel/tracing, but libtracefs does not find it";
        return {};
    }();
    return why;
}

class RealTracefs : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (const std::string why = tracefs_unavailable(); !why.empty())
            GTEST_SKIP() << why;
        root_ = ksft::tracefs::find_root().value_or("");
    }

    std::string file(const std::string &rel) const
    {
        return netutil::sysfs::read_file(root_ + "/" + rel).value_or("?");
    }

    std::string root_;
};

// UDP datagrams to the discard port of 127.0.0.1: each one goes out through lo.
void send_on_lo(int packets)
{
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    sockaddr_in dst{};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(9);
    dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < packets; ++i) {
        EXPECT_EQ(sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr *>(&dst), sizeof(dst)), 1)
                << std::strerror(errno);
    }
    close(fd);
}

TEST_F(RealTracefs, InstanceIsCreatedAndDestroyed)
{
    const std::string name = ksft::tracefs::instance_name("ksft_test_a");
    const fs::path dir = fs::path(root_) / "instances" / name;
    {
        ksft::tracefs::Instance inst(name);
        ASSERT_TRUE(inst.available()) << inst.error();
        EXPECT_EQ(inst.name(), name);
        EXPECT_EQ(fs::path(inst.path()), dir);
        EXPECT_TRUE(fs::exists(dir / "trace"));
        EXPECT_NE(inst.get(), nullptr);
    }
    EXPECT_FALSE(fs::exists(dir));

    ksft::tracefs::Instance again(name);
    ASSERT_TRUE(again.available()) << again.error();
    EXPECT_TRUE(again.remove());
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_TRUE(again.remove()); // once is enough
}

TEST_F(RealTracefs, ExistingInstanceIsNotReused)
{
    const std::string name = ksft::tracefs::instance_name("ksft_test_b");
    const fs::path dir = fs::path(root_) / "instances" / name;
    ASSERT_EQ(mkdir(dir.c_str(), 0750), 0) << std::strerror(errno); // someone else's
    {
        ksft::tracefs::Instance inst(name);
        EXPECT_FALSE(inst.available());
        EXPECT_NE(inst.error().find("exists already"), std::string::npos) << inst.error();
    }
    EXPECT_TRUE(fs::is_directory(dir)); // left alone
    EXPECT_EQ(rmdir(dir.c_str()), 0) << std::strerror(errno);

    ksft::tracefs::Instance bad("a/b");
    EXPECT_FALSE(bad.available());
    EXPECT_NE(bad.error().find("a/b"), std::string::npos) << bad.error();
    ksft::tracefs::Event ev(bad, "net", "net_dev_xmit");
    EXPECT_FALSE(ev.available());
    EXPECT_EQ(ev.error(), bad.error());
}

// net:net_dev_xmit counted over a window in a private instance: the global buffer's event
// switch stays as it was, and the instance's is off again afterwards.
TEST_F(RealTracefs, CountsInItsOwnInstanceOnly)
{
    ksft::tracefs::Instance inst(ksft::tracefs::instance_name("ksft_test_c"));
    ASSERT_TRUE(inst.available()) << inst.error();
    ksft::tracefs::Event ev(inst, "net", "net_dev_xmit");
    if (!ev.available())
        GTEST_SKIP() << ev.error();
    const std::string rel = "instances/" + inst.name() + "/events/net/net_dev_xmit/enable";
    const std::string global_before = file("events/net/net_dev_xmit/enable");

    constexpr int kPackets = 20;
    const auto n = ev.count("lo", [&] {
        EXPECT_EQ(file(rel), "1\n");
        EXPECT_EQ(file("events/net/net_dev_xmit/enable"), global_before);
        send_on_lo(kPackets);
    });
    ASSERT_TRUE(n.has_value()) << ev.error();
    EXPECT_GE(*n, static_cast<std::size_t>(kPackets)); // and ICMP port unreachable replies
    EXPECT_EQ(file(rel), "0\n");
    EXPECT_EQ(file("events/net/net_dev_xmit/enable"), global_before);

    // The buffer is emptied at the start of each count: nothing sent, nothing counted.
    const auto none = ev.count("lo", [] {});
    ASSERT_TRUE(none.has_value()) << ev.error();
    EXPECT_EQ(*none, 0U);
}

TEST_F(RealTracefs, TracingOnIsRestored)
{
    ksft::tracefs::Instance inst(ksft::tracefs::instance_name("ksft_test_d"));
    ASSERT_TRUE(inst.available()) << inst.error();
    const std::string on = "instances/" + inst.name() + "/tracing_on";
    ASSERT_EQ(netutil::sysfs::write_file(root_ + "/" + on, "0"), "");
    {
        ksft::tracefs::Event ev(inst, "net", "net_dev_xmit");
        if (!ev.available())
            GTEST_SKIP() << ev.error();
        ASSERT_TRUE(ev.enable()) << ev.error();
        EXPECT_EQ(file(on), "1\n");
    }
    EXPECT_EQ(file(on), "0\n");
}

TEST_F(RealTracefs, MissingEventIsReported)
{
    ksft::tracefs::Instance inst(ksft::tracefs::instance_name("ksft_test_e"));
    ASSERT_TRUE(inst.available()) << inst.error();
    ksft::tracefs::Event ev(inst, "net", "no_such_event");
    EXPECT_FALSE(ev.available());
    EXPECT_NE(ev.error().find("net:no_such_event"), std::string::npos) << ev.error();
    EXPECT_FALSE(ev.enable());
    EXPECT_FALSE(ev.count("lo", [] {}).has_value());
}

} // namespace

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "sysfs.hpp"

namespace {

namespace fs = std::filesystem;
using netutil::sysfs::cpu_mask;

TEST(Sysfs, CpuMaskFormat)
{
    EXPECT_EQ(cpu_mask({}), "0");
    EXPECT_EQ(cpu_mask({-1}), "0");
    EXPECT_EQ(cpu_mask({0}), "1");
    EXPECT_EQ(cpu_mask({1}), "2");
    EXPECT_EQ(cpu_mask({0, 1, 2, 3}), "f");
    EXPECT_EQ(cpu_mask({4, 7}), "90");
    EXPECT_EQ(cpu_mask({31}), "80000000");
    EXPECT_EQ(cpu_mask({32}), "1,00000000");
    EXPECT_EQ(cpu_mask({0, 33}), "2,00000001");
    EXPECT_EQ(cpu_mask({64, 1}), "1,00000000,00000002");
    EXPECT_EQ(cpu_mask({3, 3}), "8");
}

TEST(Sysfs, WriteAndReadExistingFileOnly)
{
    char tmpl[] = "/tmp/ksft-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    const std::string file = (dir / "knob").string();
    std::ofstream(file) << "0\n";

    EXPECT_EQ(netutil::sysfs::write_file(file, "1\n"), "");
    EXPECT_EQ(netutil::sysfs::read_file(file), "1\n");

    const std::string missing = (dir / "missing").string();
    const std::string err = netutil::sysfs::write_file(missing, "1");
    EXPECT_NE(err.find(missing), std::string::npos);
    EXPECT_FALSE(fs::exists(missing)); // never created
    EXPECT_FALSE(netutil::sysfs::read_file(missing).has_value());

    const std::string xps = netutil::sysfs::set_xps_cpus("ksft-no-such-dev", 3, {1});
    EXPECT_NE(xps.find("/sys/class/net/ksft-no-such-dev/queues/tx-3/xps_cpus"), std::string::npos);
    const std::string map = netutil::sysfs::map_cpus_to_queues("ksft-no-such-dev", {0, 1});
    EXPECT_NE(map.find("/sys/class/net/ksft-no-such-dev/queues/tx-0/xps_cpus"), std::string::npos);
    fs::remove_all(dir);
}

TEST(Sysfs, ReadsProcAndNumbers)
{
    // A real procfs file: read(2) until EOF, whatever its size.
    const auto stat = netutil::sysfs::read_file("/proc/self/stat");
    ASSERT_TRUE(stat.has_value());
    EXPECT_EQ(stat->rfind(std::to_string(getpid()) + " (", 0), 0U);

    char tmpl[] = "/tmp/ksft-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    std::ofstream(dir / "n") << "42\n";
    std::ofstream(dir / "bad") << "4 2\n";
    std::ofstream(dir / "empty") << "";
    EXPECT_EQ(netutil::sysfs::read_u64(dir / "n"), 42U);
    EXPECT_FALSE(netutil::sysfs::read_u64(dir / "bad"));
    EXPECT_FALSE(netutil::sysfs::read_u64(dir / "empty"));
    EXPECT_FALSE(netutil::sysfs::read_u64(dir / "missing"));
    fs::remove_all(dir);
}

TEST(Sysfs, WriteModes)
{
    char tmpl[] = "/tmp/ksft-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const fs::path dir = tmpl;
    const std::string file = dir / "cmd";
    std::ofstream(file) << "old\n";
    using netutil::sysfs::WriteMode;
    EXPECT_EQ(netutil::sysfs::write_errno(file, "a\n", WriteMode::append), 0);
    EXPECT_EQ(netutil::sysfs::write_errno(file, "b\n", WriteMode::append), 0);
    EXPECT_EQ(netutil::sysfs::read_file(file), "old\na\nb\n");
    EXPECT_EQ(netutil::sysfs::write_errno(file, "c"), 0);
    EXPECT_EQ(netutil::sysfs::read_file(file), "c");
    EXPECT_EQ(netutil::sysfs::write_errno(dir / "missing", "x"), ENOENT);
    fs::remove_all(dir);
}

// XPS maps below a fake /sys/class/net, whose files are plain files: each write replaces
// the content.
class FakeXps : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/ksft-xps-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        for (unsigned q = 0; q < 3; ++q) {
            fs::create_directories(fs::path(xps_path(q)).parent_path());
            std::ofstream(xps_path(q)) << "00000003\n";
        }
    }
    void TearDown() override { fs::remove_all(root_); }

    std::string xps_path(unsigned q) const
    {
        return netutil::sysfs::xps_path("dummy0", q, root_.string());
    }
    std::string xps(unsigned q) const
    {
        std::string s = netutil::sysfs::read_file(xps_path(q)).value_or("?");
        if (!s.empty() && s.back() == '\n')
            s.pop_back();
        return s;
    }

    fs::path root_;
};

TEST_F(FakeXps, QueueCount)
{
    fs::create_directories(root_ / "dummy0/queues/rx-0");
    EXPECT_EQ(netutil::sysfs::active_queue_count("dummy0", "tx", root_.string()), 3U);
    EXPECT_EQ(netutil::sysfs::active_queue_count("dummy0", "rx", root_.string()), 1U);
    EXPECT_FALSE(netutil::sysfs::active_queue_count("nodev", "tx", root_.string()));
    EXPECT_EQ(netutil::sysfs::active_queue_count("lo", "tx"), 1U); // the real /sys/class/net
}

TEST_F(FakeXps, OverrideAndRestore)
{
    EXPECT_EQ(xps_path(2), (root_ / "dummy0/queues/tx-2/xps_cpus").string());
    {
        netutil::sysfs::XpsOverride x("dummy0", root_);
        ASSERT_EQ(x.apply({0, 5}, 3), "");
        EXPECT_EQ(xps(0), "1");
        EXPECT_EQ(xps(1), "20");
        EXPECT_EQ(xps(2), "0");
    }
    for (unsigned q = 0; q < 3; ++q)
        EXPECT_EQ(xps(q), "00000003") << q;

    netutil::sysfs::XpsOverride bad("dummy0", root_);
    EXPECT_NE(bad.apply({0, 1}, 4).find("tx-3"), std::string::npos);
    EXPECT_EQ(xps(0), "00000003"); // nothing changed
}

TEST_F(FakeXps, KeepLeavesTheMaps)
{
    {
        netutil::sysfs::XpsOverride x("dummy0", root_);
        ASSERT_EQ(x.apply({1, 0}), ""); // as many queues as CPUs
        x.keep();
    }
    EXPECT_EQ(xps(0), "2");
    EXPECT_EQ(xps(1), "1");
    EXPECT_EQ(xps(2), "00000003");
}

} // namespace

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sysfs.hpp"

namespace {

namespace fs = std::filesystem;
using ksft::sysfs::cpu_mask;

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

    EXPECT_EQ(ksft::sysfs::write_file(file, "1\n"), "");
    EXPECT_EQ(ksft::sysfs::read_file(file), "1\n");

    const std::string missing = (dir / "missing").string();
    const std::string err = ksft::sysfs::write_file(missing, "1");
    EXPECT_NE(err.find(missing), std::string::npos);
    EXPECT_FALSE(fs::exists(missing)); // never created
    EXPECT_FALSE(ksft::sysfs::read_file(missing).has_value());

    const std::string xps = ksft::sysfs::set_xps_cpus("ksft-no-such-dev", 3, {1});
    EXPECT_NE(xps.find("/sys/class/net/ksft-no-such-dev/queues/tx-3/xps_cpus"), std::string::npos);
    fs::remove_all(dir);
}

} // namespace

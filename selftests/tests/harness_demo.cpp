// Built only for ctest (harness_test.cpp runs it): cases that crash, hang, fail an
// assertion, skip and pass, to show that each one is judged alone and every case runs in
// a network namespace of its own.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include <net/if.h>
#include <unistd.h>

#include "harness.hpp"

namespace {

int g_counter = 0;

TEST(passes_before)
{
    ++g_counter; // in the case's process only: the next case sees 0
    ASSERT_EQ(g_counter, 1);
}

TEST(crashes)
{
    std::raise(SIGSEGV);
}

TEST_OPTS(hangs, {.timeout_s = 2})
{
    while (true)
        pause();
}

TEST(assert_prints_both_values)
{
    const int queues = 3;
    ASSERT_EQ(queues, 4) << "queues of dev0";
    FAIL("not reached");
}

TEST(expect_goes_on)
{
    const std::string kind = "sfq";
    EXPECT_EQ(kind, std::string("fq_codel"));
    std::cout << "# after the EXPECT\n";
}

TEST(skips)
{
    SKIP("nothing to do here");
}

TEST(throws)
{
    throw std::runtime_error("boom");
}

// The case's netns: /sys/class/net shows its lo only (up), and not the other's devices.
TEST(own_netns)
{
    ASSERT_EQ(g_counter, 0);
    ASSERT_NE(if_nametoindex("lo"), 0U);
    std::ifstream flags("/sys/class/net/lo/flags");
    std::string v;
    flags >> v;
    ASSERT_EQ(std::stoul(v, nullptr, 16) & IFF_UP, static_cast<unsigned long>(IFF_UP));
    unsigned entries = 0;
    std::ifstream dev("/proc/net/dev");
    for (std::string line; std::getline(dev, line);)
        entries += line.find(':') != std::string::npos;
    ASSERT_EQ(entries, 1U);
    unsigned sys_entries = 0;
    for (const auto &e : std::filesystem::directory_iterator("/sys/class/net"))
        sys_entries += e.path().filename() != "lo" ? 100 : 1;
    ASSERT_EQ(sys_entries, 1U);
}

FIXTURE(qdisc)
{
    std::string kind;
};
FIXTURE_VARIANT(qdisc)
{
    const char *kind;
};
FIXTURE_VARIANT_ADD(qdisc, fq_codel){.kind = "fq_codel"};
FIXTURE_VARIANT_ADD(qdisc, sfq){.kind = "sfq"};
FIXTURE_SETUP(qdisc)
{
    self->kind = variant->kind;
}
TEST_F(qdisc, variant_seen)
{
    ASSERT_EQ(self->kind, std::string(variant->kind));
    std::cout << "# variant " << self->kind << "\n";
}

// Steps of one sequence share a process: the second sees what the first did; a step that
// crashes fails, the steps after it are not run.
int g_steps = 0;
const bool g_sequence_registered = [] {
    ksft::add_step("seq", "step_one", [] { ++g_steps; });
    ksft::add_step("seq", "step_two", [] { ASSERT_EQ(g_steps, 1); });
    ksft::add_step("seq", "step_crashes", [] { std::raise(SIGABRT); });
    ksft::add_step("seq", "step_after_crash", [] {});
    return true;
}();

TEST(passes_after)
{
    ASSERT_TRUE(true);
}

} // namespace

int main(int argc, char **argv)
{
    return ksft::main(argc, argv);
}

// Runs harness_demo (HARNESS_DEMO, a path) and checks that a crashing, a hanging and a
// failing case each fail alone while the others run. Needs root (a netns per case).
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct DemoRun {
    std::string out;
    int status = 0;
};

DemoRun run_demo(const std::string &args = {}, const std::string &demo = HARNESS_DEMO)
{
    DemoRun r;
    FILE *p = popen((demo + " " + args).c_str(), "r");
    if (p == nullptr)
        return r;
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
        r.out.append(buf, n);
    r.status = pclose(p);
    return r;
}

bool has(const std::string &out, const std::string &line)
{
    return out.find(line + "\n") != std::string::npos;
}

TEST(Harness, EachCaseFailsAlone)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "a network namespace per case needs root";
    const DemoRun r = run_demo();
    SCOPED_TRACE(r.out);
    ASSERT_TRUE(WIFEXITED(r.status));
    EXPECT_EQ(WEXITSTATUS(r.status), 1);
    EXPECT_TRUE(has(r.out, "1..15"));
    EXPECT_TRUE(has(r.out, "ok 1 passes_before"));
    EXPECT_TRUE(has(r.out, "# killed by signal 11 (Segmentation fault)"));
    EXPECT_TRUE(has(r.out, "not ok 2 crashes"));
    EXPECT_TRUE(has(r.out, "# timed out after 2 s"));
    EXPECT_TRUE(has(r.out, "not ok 3 hangs"));
    EXPECT_TRUE(has(r.out, "# harness_demo.cpp:40: Expected queues (3) == 4 (4): queues of dev0"));
    EXPECT_TRUE(has(r.out, "not ok 4 assert_prints_both_values"));
    EXPECT_TRUE(has(r.out,
                    "# harness_demo.cpp:47: Expected kind (sfq) == std::string(\"fq_codel\") "
                    "(fq_codel)"));
    EXPECT_TRUE(has(r.out, "# after the EXPECT"));
    EXPECT_TRUE(has(r.out, "# a check above failed"));
    EXPECT_TRUE(has(r.out, "not ok 5 expect_goes_on"));
    EXPECT_TRUE(has(r.out, "ok 6 skips # SKIP nothing to do here"));
    EXPECT_TRUE(has(r.out, "# exception: boom"));
    EXPECT_TRUE(has(r.out, "not ok 7 throws"));
    EXPECT_TRUE(has(r.out, "ok 8 own_netns"));
    EXPECT_TRUE(has(r.out, "# variant fq_codel"));
    EXPECT_TRUE(has(r.out, "ok 9 fq_codel_variant_seen"));
    EXPECT_TRUE(has(r.out, "ok 10 sfq_variant_seen"));
    EXPECT_TRUE(has(r.out, "ok 11 step_one"));
    EXPECT_TRUE(has(r.out, "ok 12 step_two"));
    EXPECT_TRUE(has(r.out, "# killed by signal 6 (Aborted)"));
    EXPECT_TRUE(has(r.out, "not ok 13 step_crashes"));
    EXPECT_TRUE(has(r.out, "# not run: step_crashes killed by signal 6 (Aborted)"));
    EXPECT_TRUE(has(r.out, "not ok 14 step_after_crash"));
    EXPECT_TRUE(has(r.out, "ok 15 passes_after"));
    EXPECT_TRUE(has(r.out, "# Totals: pass:7 fail:7 xfail:0 xpass:0 skip:1 error:0"));
}

TEST(Harness, RunsOneCase)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "a network namespace per case needs root";
    const DemoRun r = run_demo("--case passes_after");
    EXPECT_EQ(r.out, "TAP version 13\n1..1\nok 1 passes_after\n"
                     "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0\n");
}

// A failure's errnos cross from the case's process to the "# errno: NAME" key lines after its
// message, once each; a failure without one has none. The host's judge reads the key alone
// for these programs (ci/matrix/case.py): without it an expected errno is not shown.
TEST(Harness, FailureNamesItsErrnoAsAKey)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "a network namespace per case needs root";
    const DemoRun r = run_demo({}, ERRNO_DEMO);
    EXPECT_EQ(r.out, "TAP version 13\n1..2\n"
                     "# QSTATS_GET: EOPNOTSUPP (Operation not supported)\n"
                     "# errno: EOPNOTSUPP\n"
                     "# errno: EINVAL\n"
                     "not ok 1 fails_with_errno\n"
                     "# no errno\n"
                     "not ok 2 fails_without_errno\n"
                     "# Totals: pass:0 fail:2 xfail:0 xpass:0 skip:0 error:0\n");
}

TEST(Harness, NotRootSkipsAll)
{
    if (geteuid() != 0) {
        const DemoRun r = run_demo();
        EXPECT_TRUE(has(r.out, "ok 1 passes_before # SKIP must be run as root"));
        EXPECT_EQ(WEXITSTATUS(r.status), 4);
    }
}

} // namespace

#include <sstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "ktap.hpp"

namespace {

using ksft::KtapWriter;
using ksft::Outcome;
using ksft::TestSuite;

TEST(KtapWriter, WritesHeaderPlanResultsAndTotals)
{
    std::ostringstream out;
    KtapWriter w(out);
    w.header();
    w.plan(3);
    w.ok("first");
    w.diag("something broke");
    w.not_ok("second");
    w.skip("third", "no hardware");
    w.totals();
    EXPECT_EQ(out.str(), "TAP version 13\n"
                         "1..3\n"
                         "ok 1 first\n"
                         "# something broke\n"
                         "not ok 2 second\n"
                         "ok 3 third # SKIP no hardware\n"
                         "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0\n");
    EXPECT_EQ(w.passed(), 1U);
    EXPECT_EQ(w.failed(), 1U);
    EXPECT_EQ(w.skipped(), 1U);
    EXPECT_EQ(w.exit_code(), ksft::kExitFail);
}

TEST(KtapWriter, DiagSplitsLines)
{
    std::ostringstream out;
    KtapWriter w(out);
    w.diag("a\nb\n\nc\n");
    EXPECT_EQ(out.str(), "# a\n# b\n#\n# c\n");
}

TEST(KtapWriter, SanitizesNamesAndReasons)
{
    std::ostringstream out;
    KtapWriter w(out);
    w.ok("bad#name\nx");
    w.skip("s", "multi\nline");
    EXPECT_EQ(out.str(), "ok 1 bad_name x\nok 2 s # SKIP multi line\n");
}

TEST(KtapWriter, ExitCodes)
{
    std::ostringstream out;
    {
        KtapWriter w(out);
        EXPECT_EQ(w.exit_code(), ksft::kExitSkip); // nothing ran
    }
    {
        KtapWriter w(out);
        w.skip("a", "r");
        w.skip("b", "r");
        EXPECT_EQ(w.exit_code(), 4);
    }
    {
        KtapWriter w(out);
        w.skip("a", "r");
        w.ok("b");
        EXPECT_EQ(w.exit_code(), 0);
    }
    {
        KtapWriter w(out);
        w.ok("a");
        w.not_ok("b");
        w.skip("c", "r");
        EXPECT_EQ(w.exit_code(), 1);
    }
}

TEST(TestSuite, RunsCasesInOrderAndCatchesExceptions)
{
    TestSuite s;
    std::string order;
    s.add("passes", [&] {
        order += "1";
        return Outcome::pass();
    });
    s.add("passes_with_note", [&] {
        order += "2";
        return Outcome::pass("note");
    });
    s.add("fails", [&] {
        order += "3";
        return Outcome::fail("value 3, expected 4");
    });
    s.add("skips", [&] {
        order += "4";
        return Outcome::skip("not supported");
    });
    s.add("throws", [&]() -> Outcome {
        order += "5";
        throw std::runtime_error("boom");
    });
    s.add("throws_int", [&]() -> Outcome {
        order += "6";
        throw 42;
    });
    std::ostringstream out;
    const int rc = s.run(out);
    EXPECT_EQ(order, "123456");
    EXPECT_EQ(rc, ksft::kExitFail);
    EXPECT_EQ(out.str(), "TAP version 13\n"
                         "1..6\n"
                         "ok 1 passes\n"
                         "# note\n"
                         "ok 2 passes_with_note\n"
                         "# value 3, expected 4\n"
                         "not ok 3 fails\n"
                         "ok 4 skips # SKIP not supported\n"
                         "# exception: boom\n"
                         "not ok 5 throws\n"
                         "# unknown exception\n"
                         "not ok 6 throws_int\n"
                         "# Totals: pass:2 fail:3 xfail:0 xpass:0 skip:1 error:0\n");
}

TEST(TestSuite, AllSkippedExitsFour)
{
    TestSuite s;
    s.add("a", [] { return Outcome::skip("r1"); });
    s.add("b", [] { return Outcome::skip("r2"); });
    std::ostringstream out;
    EXPECT_EQ(s.run(out), ksft::kExitSkip);
    EXPECT_NE(out.str().find("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:2 error:0\n"),
              std::string::npos);
}

TEST(TestSuite, SkipAllDoesNotRunCases)
{
    TestSuite s;
    bool ran = false;
    s.add("a", [&] {
        ran = true;
        return Outcome::fail("should not run");
    });
    s.add("b", [&] {
        ran = true;
        return Outcome::pass();
    });
    s.skip_all("must be run as root");
    std::ostringstream out;
    EXPECT_EQ(s.run(out), 4);
    EXPECT_FALSE(ran);
    EXPECT_EQ(out.str(), "TAP version 13\n"
                         "1..2\n"
                         "ok 1 a # SKIP must be run as root\n"
                         "ok 2 b # SKIP must be run as root\n"
                         "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:2 error:0\n");
}

TEST(TestSuite, RequireRoot)
{
    int runs = 0;
    auto make = [&] {
        TestSuite s;
        s.add("a", [&] {
            ++runs;
            return Outcome::pass();
        });
        return s;
    };
    TestSuite not_root = make();
    not_root.require_root(false);
    std::ostringstream out;
    EXPECT_EQ(not_root.run(out), ksft::kExitSkip);
    EXPECT_EQ(runs, 0);
    EXPECT_EQ(out.str(), "TAP version 13\n"
                         "1..1\n"
                         "ok 1 a # SKIP must be run as root\n"
                         "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");

    TestSuite root = make();
    root.require_root(true);
    std::ostringstream out2;
    EXPECT_EQ(root.run(out2), ksft::kExitPass);
    EXPECT_EQ(runs, 1);
}

TEST(TestSuite, RequireRootFollowsEffectiveUid)
{
    TestSuite s;
    s.add("a", [] { return Outcome::pass(); });
    s.require_root();
    std::ostringstream out;
    EXPECT_EQ(s.run(out), geteuid() == 0 ? ksft::kExitPass : ksft::kExitSkip);
}

TEST(TestSuite, PassAndSkipExitsZero)
{
    TestSuite s;
    s.add("a", [] { return Outcome::pass(); });
    s.add("b", [] { return Outcome::skip("r"); });
    std::ostringstream out;
    EXPECT_EQ(s.run(out), 0);
}

TEST(TestSuite, EmptySuite)
{
    TestSuite s;
    std::ostringstream out;
    EXPECT_EQ(s.run(out), 4);
    EXPECT_EQ(out.str(), "TAP version 13\n1..0\n"
                         "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0\n");
}

TEST(Cat, ConcatenatesValues)
{
    EXPECT_EQ(netutil::cat("a", 1, '-', 2U, std::string("b")), "a1-2b");
}

} // namespace

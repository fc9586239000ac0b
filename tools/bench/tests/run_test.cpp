// End-to-end runs of the subcommands on the host: pktgen against a fake /proc/net/pktgen
// (the files already hold results, as the kernel leaves them), gen on loopback. Both need
// root and skip without it.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include "run.hpp"

namespace {

namespace fs = std::filesystem;
using namespace mqbench;

bool can_use_lo()
{
    if (geteuid() != 0 || if_nametoindex("lo") == 0)
        return false;
    const int fd = socket(AF_PACKET, SOCK_RAW, 0);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

Options parsed(const std::vector<std::string> &args)
{
    ParseResult pr = parse_args(args);
    EXPECT_TRUE(pr.options) << pr.error;
    return pr.options.value_or(Options{});
}

class RunPktgen : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (!can_use_lo())
            GTEST_SKIP() << "needs root and the loopback device";
        std::string tmpl = ::testing::TempDir() + "mqbench-run-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
        root_ = tmpl;
        for (const char *f : {"pgctrl", "kpktgend_0", "kpktgend_1", "kpktgend_2"})
            std::ofstream(root_ / f) << "";
        std::ofstream(root_ / "lo@0") << "Params: count 0\n"
                                      << "Current:\n     pkts-sofar: 3000  errors: 0\n"
                                      << "Result: OK: 1500000(c1400000+d100000) usec, 3000 "
                                         "(60byte,0frags)\n  2000pps 0Mb/sec (960000bps) "
                                         "errors: 4\n";
        std::ofstream(root_ / "lo@1") << "Result: OK: 1000000(c1000000+d0) usec, 1000 "
                                         "(60byte,-1frags)\n  1000pps 0Mb/sec (480000bps) "
                                         "errors: 0\n";
    }
    void TearDown() override
    {
        if (!root_.empty())
            fs::remove_all(root_);
    }
    std::string slurp(const std::string &f) const
    {
        std::ifstream in(root_ / f);
        std::ostringstream os;
        os << in.rdbuf();
        return os.str();
    }

    fs::path root_;
};

TEST_F(RunPktgen, FakeRoot)
{
    Options o = parsed({"pktgen", "--dev", "lo", "--threads", "2", "--count", "5000", "--quiet"});
    o.pktgen_root = root_.string();
    Report r = make_report(o);
    EXPECT_EQ(run_pktgen(o, r), 0) << (r.errors.empty() ? "" : r.errors.front());

    EXPECT_EQ(slurp("pgctrl"), "start\n");
    EXPECT_EQ(slurp("kpktgend_2"), "rem_device_all\n");
    EXPECT_NE(slurp("lo@1").find("count 5000\npkt_size 60\nxmit_mode queue_xmit\n"
                                 "queue_map_min 0\nqueue_map_max 0\n"), // lo has one TX queue
              std::string::npos);

    ASSERT_EQ(r.per_thread.size(), 2U);
    EXPECT_EQ(r.per_thread[0].packets, 3000U);
    EXPECT_EQ(r.per_thread[0].errors, 4U);
    EXPECT_DOUBLE_EQ(r.per_thread[0].seconds, 1.5);
    EXPECT_EQ(r.packets, 4000U);
    EXPECT_DOUBLE_EQ(r.pps, 4000 / 1.5);
    EXPECT_FALSE(r.counters.empty());
    EXPECT_FALSE(r.counters_note.empty());
    const auto j = nlohmann::json::parse(to_json(r).dump());
    EXPECT_EQ(j["subcommand"], "pktgen");
    EXPECT_EQ(j["per_thread"].size(), 2U);
}

TEST_F(RunPktgen, XpsOnSingleQueueDeviceIsANote)
{
    Options o = parsed({"pktgen", "--dev", "lo", "--threads", "1", "--xps", "--quiet"});
    o.pktgen_root = root_.string();
    Report r = make_report(o);
    EXPECT_EQ(run_pktgen(o, r), 0) << (r.errors.empty() ? "" : r.errors.front());
    ASSERT_EQ(r.notes.size(), 1U);
    EXPECT_NE(r.notes[0].find("single TX queue"), std::string::npos);
}

TEST_F(RunPktgen, MissingModuleAndThreads)
{
    Options o = parsed({"pktgen", "--dev", "lo", "--threads", "4", "--quiet"});
    o.pktgen_root = root_.string();
    Report r = make_report(o);
    try {
        run_pktgen(o, r);
        ADD_FAILURE() << "no failure for a missing kpktgend_3";
    } catch (const RuntimeFailure &e) {
        EXPECT_NE(std::string(e.what()).find("kpktgend_3"), std::string::npos) << e.what();
    }
    o.pktgen_root = (root_ / "absent").string();
    try {
        run_pktgen(o, r);
        ADD_FAILURE() << "no failure for a missing pgctrl";
    } catch (const RuntimeFailure &e) {
        EXPECT_NE(std::string(e.what()).find("pktgen module is not loaded"), std::string::npos);
    }
    o.dev = "nosuchdev0";
    EXPECT_THROW(run_pktgen(o, r), RuntimeFailure);
}

TEST(RunGen, LoopbackSendmmsg)
{
    if (!can_use_lo())
        GTEST_SKIP() << "needs root and the loopback device";
    const Options o = parsed({"gen", "--dev", "lo", "--mode", "sendmmsg", "--threads", "1",
                              "--count", "2000", "--quiet"});
    Report r = make_report(o);
    EXPECT_EQ(run_gen(o, r), 0) << (r.errors.empty() ? "" : r.errors.front());
    EXPECT_EQ(r.packets, 2000U);
    EXPECT_GT(r.pps, 0);
    ASSERT_EQ(r.per_thread.size(), 1U);
    EXPECT_TRUE(r.per_thread[0].error.empty());
}

TEST(RunGen, LoopbackTxRingDuration)
{
    if (!can_use_lo())
        GTEST_SKIP() << "needs root and the loopback device";
    const Options o = parsed({"gen", "--dev", "lo", "--mode", "tx_ring", "--threads", "1",
                              "--duration", "0.3", "--quiet"});
    Report r = make_report(o);
    EXPECT_EQ(run_gen(o, r), 0) << (r.errors.empty() ? "" : r.errors.front());
    EXPECT_GT(r.packets, 0U);
    EXPECT_LT(r.wall_seconds, 5.0);
}

} // namespace

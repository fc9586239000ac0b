#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pktgen.hpp"

namespace {

namespace fs = std::filesystem;
using namespace mqbench::pktgen;

// /proc/net/pktgen/dummy0@1 after a finished run, laid out as pktgen_if_show() and
// show_results() in net/core/pktgen.c print it (IPv4, xmit_mode queue_xmit, SHARED flag).
constexpr const char *kFinished =
        "Params: count 1000000  min_pkt_size: 60  max_pkt_size: 60\n"
        "     frags: 0  delay: 0  clone_skb: 0  ifname: dummy0@1\n"
        "     flows: 0 flowlen: 0\n"
        "     queue_map_min: 1  queue_map_max: 1\n"
        "     dst_min: 198.18.0.1  dst_max: \n"
        "     src_min:   src_max: \n"
        "     src_mac: 7a:3c:51:0e:9b:12 dst_mac: 02:00:00:00:00:02\n"
        "     udp_src_min: 9  udp_src_max: 9  udp_dst_min: 9  udp_dst_max: 9\n"
        "     src_mac_count: 0  dst_mac_count: 0\n"
        "     xmit_mode: xmit_queue\n"
        "     Flags: SHARED  \n"
        "Current:\n"
        "     pkts-sofar: 1000000  errors: 0\n"
        "     started: 1234567890us  stopped: 1235012345us idle: 1203us\n"
        "     seq_num: 1000001  cur_dst_mac_offset: 0  cur_src_mac_offset: 0\n"
        "     cur_saddr: 0.0.0.0  cur_daddr: 198.18.0.1\n"
        "     cur_udp_dst: 9  cur_udp_src: 9\n"
        "     cur_queue_map: 1\n"
        "     flows: 0\n"
        "Result: OK: 444455(c443252+d1203) usec, 1000000 (60byte,0frags)\n"
        "  2249946pps 1079Mb/sec (1079974080bps) errors: 0\n";

// Stopped with "stop" while running: no skb left, so nr_frags is -1.
constexpr const char *kStopped =
        "Result: OK: 5000123(c4999000+d1123) usec, 123456789 (60byte,-1frags)\n"
        "  24690750pps 11851Mb/sec (11851560000bps) errors: 17\n";

TEST(PktgenParse, FinishedDeviceFile)
{
    const auto r = parse_result(kFinished);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->usec, 444455U);
    EXPECT_EQ(r->busy_usec, 443252U);
    EXPECT_EQ(r->idle_usec, 1203U);
    EXPECT_EQ(r->packets, 1000000U);
    EXPECT_EQ(r->pkt_size, 60);
    EXPECT_EQ(r->frags, 0);
    EXPECT_EQ(r->pps, 2249946U);
    EXPECT_EQ(r->mbps, 1079U);
    EXPECT_EQ(r->bps, 1079974080U);
    EXPECT_EQ(r->errors, 0U);
    EXPECT_EQ(parse_pkts_sofar(kFinished), 1000000U);
}

TEST(PktgenParse, StoppedResultOnly)
{
    const auto r = parse_result(kStopped);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->usec, 5000123U);
    EXPECT_EQ(r->packets, 123456789U);
    EXPECT_EQ(r->frags, -1);
    EXPECT_EQ(r->pps, 24690750U);
    EXPECT_EQ(r->errors, 17U);
}

TEST(PktgenParse, NotAResult)
{
    EXPECT_FALSE(parse_result("Params: count 1000\nResult: Idle\n"));
    // After a configuration write the result holds that write's echo.
    EXPECT_FALSE(parse_result("Result: OK: clone_skb=0\n"));
    EXPECT_FALSE(parse_result("Result: OK: 100(c90+d10) usec, 5 (60byte,0frags)\n"));
    EXPECT_FALSE(parse_result("Result: OK: x(c90+d10) usec"));
    EXPECT_FALSE(parse_result(""));
    EXPECT_FALSE(parse_pkts_sofar("Current:\n     errors: 0\n"));
}

TEST(PktgenPlan, Commands)
{
    Config cfg;
    cfg.dev = "dummy0";
    cfg.threads = 3;
    cfg.count = 1000;
    cfg.pkt_size = 128;
    cfg.burst = 1;
    cfg.clone_skb = 5;
    cfg.dst_mac = "02:00:00:00:00:02";
    cfg.tx_queues = 2; // thread 2 is clamped onto queue 1
    const std::vector<Command> plan = setup_plan(cfg, {0, 1, 2, 3, 4});

    std::vector<Command> want = {
            {"kpktgend_0", "rem_device_all"}, {"kpktgend_0", "add_device dummy0@0"},
            {"kpktgend_1", "rem_device_all"}, {"kpktgend_1", "add_device dummy0@1"},
            {"kpktgend_2", "rem_device_all"}, {"kpktgend_2", "add_device dummy0@2"},
            {"kpktgend_3", "rem_device_all"}, {"kpktgend_4", "rem_device_all"},
    };
    for (unsigned i = 0; i < 3; ++i) {
        const std::string f = "dummy0@" + std::to_string(i);
        const std::string q = std::to_string(i < 2 ? i : 1);
        for (const std::string &t :
             {std::string("count 1000"), std::string("pkt_size 128"),
              std::string("xmit_mode queue_xmit"), "queue_map_min " + q, "queue_map_max " + q,
              std::string("dst_mac 02:00:00:00:00:02"), std::string("dst 198.18.0.1"),
              std::string("burst 1"), std::string("clone_skb 5")})
            want.push_back({f, t});
    }
    ASSERT_EQ(plan.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(plan[i], want[i]) << i << ": " << plan[i].file << " <- " << plan[i].text;
}

TEST(PktgenPlan, DurationUsesCountZero)
{
    Config cfg;
    cfg.dev = "eth1";
    cfg.threads = 1;
    cfg.count = 0;
    cfg.xmit_mode = "start_xmit";
    cfg.burst = 16;
    const auto plan = setup_plan(cfg, {0});
    EXPECT_EQ(plan.at(2), (Command{"eth1@0", "count 0"}));
    EXPECT_EQ(plan.at(4), (Command{"eth1@0", "xmit_mode start_xmit"}));
    EXPECT_EQ(plan.at(9), (Command{"eth1@0", "burst 16"}));
}

TEST(PktgenPlan, FlowsRandomiseTheUdpSourcePort)
{
    Config cfg;
    cfg.dev = "d0";
    cfg.flows = 64;
    const auto plan = setup_plan(cfg, {0});
    ASSERT_EQ(plan.size(), 14U);
    EXPECT_EQ(plan.at(11), (Command{"d0@0", "udp_src_min 9"}));
    EXPECT_EQ(plan.at(12), (Command{"d0@0", "udp_src_max 72"}));
    EXPECT_EQ(plan.at(13), (Command{"d0@0", "flag UDPSRC_RND"}));
    cfg.flows = 1;
    EXPECT_EQ(setup_plan(cfg, {0}).size(), 11U);
}

class FakeProc : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::string tmpl = ::testing::TempDir() + "mqbench-pktgen-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
        root_ = tmpl;
        for (const char *f : {"pgctrl", "kpktgend_0", "kpktgend_1", "kpktgend_2", "kpktgend_10",
                              "kpktgend_x", "dummy0@0", "dummy0@1"})
            touch(f);
    }
    void TearDown() override { fs::remove_all(root_); }

    void touch(const std::string &f, const std::string &text = {}) const
    {
        std::ofstream(root_ / f) << text;
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

TEST_F(FakeProc, ThreadsAndAvailability)
{
    Proc proc(root_);
    EXPECT_TRUE(proc.available());
    EXPECT_EQ(proc.threads(), (std::vector<unsigned>{0, 1, 2, 10}));
    fs::remove(root_ / "pgctrl");
    EXPECT_FALSE(proc.available());
    EXPECT_FALSE(Proc(root_ / "missing").available());
    EXPECT_TRUE(list_threads(root_ / "missing").empty());
}

TEST_F(FakeProc, ApplyWritesEachCommandToItsFile)
{
    Config cfg;
    cfg.dev = "dummy0";
    cfg.threads = 2;
    cfg.count = 250;
    cfg.tx_queues = 8;
    Proc proc(root_);
    const auto plan = setup_plan(cfg, proc.threads());
    ASSERT_EQ(proc.apply(plan), "");
    EXPECT_EQ(proc.journal(), plan);

    EXPECT_EQ(slurp("kpktgend_0"), "rem_device_all\nadd_device dummy0@0\n");
    EXPECT_EQ(slurp("kpktgend_1"), "rem_device_all\nadd_device dummy0@1\n");
    EXPECT_EQ(slurp("kpktgend_2"), "rem_device_all\n");
    EXPECT_EQ(slurp("kpktgend_10"), "rem_device_all\n");
    EXPECT_EQ(slurp("dummy0@1"), "count 250\npkt_size 60\nxmit_mode queue_xmit\n"
                                 "queue_map_min 1\nqueue_map_max 1\n"
                                 "dst_mac 02:00:00:00:00:02\ndst 198.18.0.1\n"
                                 "burst 1\nclone_skb 0\n");
    EXPECT_EQ(slurp("pgctrl"), "");
    ASSERT_EQ(proc.start(), "");
    ASSERT_EQ(proc.stop(), "");
    EXPECT_EQ(slurp("pgctrl"), "start\nstop\n");
}

TEST_F(FakeProc, FailureNamesFileAndCommand)
{
    Config cfg;
    cfg.dev = "dummy0";
    cfg.threads = 3; // dummy0@2 does not exist in the fake root
    Proc proc(root_);
    const std::string err = proc.apply(setup_plan(cfg, proc.threads()));
    EXPECT_NE(err.find("dummy0@2"), std::string::npos) << err;
    EXPECT_NE(err.find("count 0"), std::string::npos) << err;
    EXPECT_NE(err.find("No such file"), std::string::npos) << err;
    // Stopped at the first failure.
    for (const Command &c : proc.journal())
        EXPECT_NE(c.file, "dummy0@2");
}

TEST_F(FakeProc, ReadResults)
{
    touch("dummy0@0", kStopped);
    touch("dummy0@1", kFinished);
    Proc proc(root_);
    const auto r0 = parse_result(proc.read(device_name("dummy0", 0)).value_or(""));
    const auto r1 = parse_result(proc.read(device_name("dummy0", 1)).value_or(""));
    ASSERT_TRUE(r0 && r1);
    EXPECT_EQ(r0->packets + r1->packets, 124456789U);
    EXPECT_FALSE(proc.read("dummy0@9"));
}

} // namespace

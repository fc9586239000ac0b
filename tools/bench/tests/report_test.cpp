#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "args.hpp"
#include "report.hpp"
#include "sysfiles.hpp"

namespace {

using namespace mqbench;
namespace fs = std::filesystem;

Report sample()
{
    Report r;
    r.subcommand = "pktgen";
    Options o;
    o.cmd = Subcommand::pktgen;
    o.dev = "dummy0";
    o.threads = 2;
    o.count = 1000;
    r.args = options_to_json(o);
    r.device = "dummy0";
    r.kernel = "7.3.0";
    r.threads = 2;
    r.per_thread = {{0, 0, 1000, 0.5, 0, 0, ""}, {1, 1, 3000, 1.0, 0, 2, ""}};
    r.wall_seconds = 1.2;
    r.cpu = procstat::Delta{100000, 200000, 100000};
    r.per_queue_source = "qstats";
    r.per_queue = queues::Counts{{0, 1000}, {1, 3000}};
    r.counters = {{"cycles", true, std::nullopt, "perf_event_open: No such file or directory"},
                  {"task-clock", false, 8000.0, ""}};
    r.counters_note = perf::note(r.counters, 2);
    return r;
}

TEST(Report, Totals)
{
    Report r = sample();
    compute_totals(r);
    EXPECT_EQ(r.packets, 4000U);
    EXPECT_DOUBLE_EQ(r.seconds, 1.0); // the longest thread
    EXPECT_DOUBLE_EQ(r.pps, 4000.0);  // sum of packets / max elapsed
    EXPECT_DOUBLE_EQ(r.per_thread[0].pps, 2000.0);
    EXPECT_DOUBLE_EQ(r.per_thread[1].pps, 3000.0);

    Report empty;
    compute_totals(empty);
    EXPECT_EQ(empty.pps, 0);
}

TEST(Report, JsonShape)
{
    Report r = sample();
    compute_totals(r);
    r.cpu_ns_per_pkt = procstat::ns_per_packet(*r.cpu, r.packets);
    r.errors = {"something \"quoted\""};
    const auto j = json::Value::parse(to_json(r).dump(2));
    ASSERT_TRUE(j && j->is_object());

    for (const char *key : {"tool", "version", "subcommand", "device", "kernel", "per_queue_source",
                            "per_queue_note", "counters_note"})
        ASSERT_TRUE(j->find(key) && j->find(key)->is_string()) << key;
    for (const char *key :
         {"threads", "packets", "seconds", "wall_seconds", "pps", "cpu_ns_per_pkt"})
        ASSERT_TRUE(j->find(key) && j->find(key)->is_number()) << key;
    for (const char *key : {"args", "cpu", "per_queue", "counters", "counters_total"})
        ASSERT_TRUE(j->find(key) && j->find(key)->is_object()) << key;
    for (const char *key : {"per_thread", "notes", "errors", "counters_unavailable"})
        ASSERT_TRUE(j->find(key) && j->find(key)->is_array()) << key;

    EXPECT_EQ(j->find("tool")->as_string(), "mqbench");
    EXPECT_EQ(j->find("version")->as_string(), std::string(kToolVersion));
    EXPECT_EQ(j->find("subcommand")->as_string(), "pktgen");
    EXPECT_EQ(j->find("packets")->as_number(), 4000);
    EXPECT_EQ(j->find("pps")->as_number(), 4000);
    EXPECT_EQ(j->find("cpu_ns_per_pkt")->as_number(), 100.0); // 400 us / 4000 packets
    EXPECT_EQ(j->find("args")->find("dev")->as_string(), "dummy0");

    const auto &pq = *j->find("per_queue");
    EXPECT_EQ(pq.as_object().size(), 2U);
    EXPECT_EQ(pq.find("1")->as_number(), 3000);

    const auto &c = *j->find("counters");
    EXPECT_TRUE(c.find("cycles")->is_null());
    EXPECT_EQ(c.find("task-clock")->as_number(), 2.0); // per packet
    EXPECT_EQ(j->find("counters_total")->find("task-clock")->as_number(), 8000);
    EXPECT_EQ(j->find("counters_unavailable")->as_array().size(), 1U);
    EXPECT_NE(j->find("counters_note")->as_string().find("UML"), std::string::npos);

    const auto &t1 = j->find("per_thread")->as_array().at(1);
    EXPECT_EQ(t1.find("cpu")->as_number(), 1);
    EXPECT_EQ(t1.find("errors")->as_number(), 2);
    EXPECT_TRUE(t1.find("error")->is_null());
    EXPECT_EQ(j->find("errors")->as_array().at(0).as_string(), "something \"quoted\"");
}

TEST(Report, JsonUnavailableParts)
{
    Report r = sample();
    r.per_thread.clear();
    r.per_queue.reset();
    r.per_queue_source = "unavailable";
    r.cpu.reset();
    compute_totals(r);
    const auto j = json::Value::parse(to_json(r).dump());
    ASSERT_TRUE(j);
    EXPECT_TRUE(j->find("per_queue")->is_null());
    EXPECT_EQ(j->find("per_queue_source")->as_string(), "unavailable");
    EXPECT_TRUE(j->find("cpu_ns_per_pkt")->is_null());
    EXPECT_TRUE(j->find("cpu")->is_null());
    EXPECT_TRUE(j->find("counters")->find("task-clock")->is_null()); // no packets
}

TEST(Report, Table)
{
    Report r = sample();
    compute_totals(r);
    r.cpu_ns_per_pkt = 100.0;
    const std::string t = to_table(r);
    EXPECT_NE(t.find("mqbench pktgen on dummy0, 2 threads"), std::string::npos) << t;
    EXPECT_NE(t.find("total"), std::string::npos);
    EXPECT_NE(t.find("cpu 100.0 ns/pkt"), std::string::npos) << t;
    EXPECT_NE(t.find("per-queue tx packets (qstats): 0:1000 1:3000"), std::string::npos) << t;
    EXPECT_NE(t.find("cycles=n/a"), std::string::npos) << t;
    EXPECT_NE(t.find("task-clock=2.00"), std::string::npos) << t;
}

TEST(Perf, ScaleAndNote)
{
    EXPECT_EQ(perf::scale(100, 10, 10), 100.0);
    EXPECT_EQ(perf::scale(100, 20, 10), 200.0);
    EXPECT_FALSE(perf::scale(100, 20, 0));

    using perf::Reading;
    const std::vector<Reading> all = {{"cycles", true, 1.0, ""}, {"task-clock", false, 2.0, ""}};
    EXPECT_EQ(perf::note(all, 4).rfind("hardware and software counters, system-wide on 4 CPUs", 0),
              0U);

    const std::vector<Reading> sw_only = {{"cycles", true, std::nullopt, "e1"},
                                          {"instructions", true, std::nullopt, "e1"},
                                          {"task-clock", false, 2.0, ""}};
    const std::string n = perf::note(sw_only, 1);
    EXPECT_NE(n.find("only software counters"), std::string::npos) << n;
    EXPECT_NE(n.find("UML or QEMU TCG"), std::string::npos) << n;

    const std::vector<Reading> none = {{"cycles", true, std::nullopt, "ENOSYS"},
                                       {"task-clock", false, std::nullopt, "ENOSYS"}};
    EXPECT_EQ(perf::note(none, 1).rfind("no counters", 0), 0U);

    const std::vector<Reading> partial = {{"cycles", true, 1.0, ""},
                                          {"cache-references", true, std::nullopt, "ENOENT"}};
    EXPECT_NE(perf::note(partial, 2).find("cache-references (ENOENT)"), std::string::npos);
}

TEST(Queues, FromMqQdiscs)
{
    using ksft::rtnl::make_handle;
    using ksft::rtnl::QdiscInfo;
    std::vector<QdiscInfo> qd(4);
    qd[0].kind = "mq";
    qd[0].handle = make_handle(0x8001, 0);
    qd[0].parent = ksft::rtnl::kRootParent;
    qd[0].packets = 60;
    for (std::uint32_t i = 1; i <= 3; ++i) {
        qd[i].kind = "pfifo_fast";
        qd[i].parent = make_handle(0x8001, i);
        qd[i].packets = std::uint64_t{10} * i;
    }
    const auto c = queues::from_qdiscs(qd);
    ASSERT_TRUE(c);
    EXPECT_EQ(*c, (queues::Counts{{0, 10}, {1, 20}, {2, 30}}));

    qd[0].kind = "noqueue";
    EXPECT_FALSE(queues::from_qdiscs(qd));
    EXPECT_FALSE(queues::from_qdiscs({}));
}

TEST(Queues, Delta)
{
    const queues::Counts before{{0, 100}, {1, 50}};
    const queues::Counts after{{0, 150}, {1, 40}, {2, 7}};
    EXPECT_EQ(queues::delta(before, after), (queues::Counts{{0, 50}, {1, 0}, {2, 7}}));
}

TEST(Sysfs, CpuMask)
{
    EXPECT_EQ(sysfiles::cpu_mask(0), "00000001");
    EXPECT_EQ(sysfiles::cpu_mask(5), "00000020");
    EXPECT_EQ(sysfiles::cpu_mask(31), "80000000");
    EXPECT_EQ(sysfiles::cpu_mask(32), "00000001,00000000");
    EXPECT_EQ(sysfiles::cpu_mask(67), "00000008,00000000,00000000");
}

class FakeSys : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::string tmpl = ::testing::TempDir() + "mqbench-sys-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
        root_ = tmpl;
        for (int q = 0; q < 3; ++q) {
            fs::create_directories(queue(q));
            std::ofstream(queue(q) / "xps_cpus") << "00000003\n";
        }
        fs::create_directories(root_ / "dummy0" / "queues" / "rx-0");
    }
    void TearDown() override { fs::remove_all(root_); }

    fs::path queue(int q) const
    {
        return root_ / "dummy0" / "queues" / ("tx-" + std::to_string(q));
    }
    std::string xps(int q) const
    {
        std::string s = sysfiles::read_file(queue(q) / "xps_cpus").value_or("?");
        if (!s.empty() && s.back() == '\n')
            s.pop_back();
        return s;
    }

    fs::path root_;
};

TEST_F(FakeSys, QueueCount)
{
    EXPECT_EQ(queues::tx_queue_count(root_, "dummy0"), 3U);
    EXPECT_FALSE(queues::tx_queue_count(root_, "nodev"));
}

TEST_F(FakeSys, XpsOverrideAndRestore)
{
    {
        // The fake files are plain files: each write replaces the content.
        sysfiles::XpsOverride x(root_, "dummy0");
        ASSERT_EQ(x.apply(3, 2), "");
        EXPECT_EQ(xps(0), "00000001");
        EXPECT_EQ(xps(1), "00000002");
        EXPECT_EQ(xps(2), "0");
    }
    for (int q = 0; q < 3; ++q)
        EXPECT_EQ(xps(q), "00000003") << q;

    sysfiles::XpsOverride bad(root_, "dummy0");
    EXPECT_NE(bad.apply(4, 2).find("tx-3"), std::string::npos);
    EXPECT_EQ(xps(0), "00000003"); // nothing changed
}

} // namespace

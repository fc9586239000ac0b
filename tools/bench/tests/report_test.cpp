#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "args.hpp"
#include "report.hpp"

namespace {

using namespace mqbench;

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
    // Through the text, as tools/bench/bench.py reads it.
    const auto j = nlohmann::json::parse(to_json(r).dump(2));
    ASSERT_TRUE(j.is_object());

    for (const char *key : {"tool", "version", "subcommand", "device", "kernel", "per_queue_source",
                            "per_queue_note", "counters_note"})
        ASSERT_TRUE(j.contains(key) && j[key].is_string()) << key;
    for (const char *key :
         {"threads", "packets", "seconds", "wall_seconds", "pps", "cpu_ns_per_pkt"})
        ASSERT_TRUE(j.contains(key) && j[key].is_number()) << key;
    for (const char *key : {"args", "cpu", "per_queue", "counters", "counters_total"})
        ASSERT_TRUE(j.contains(key) && j[key].is_object()) << key;
    for (const char *key : {"per_thread", "notes", "errors", "counters_unavailable"})
        ASSERT_TRUE(j.contains(key) && j[key].is_array()) << key;
    ASSERT_TRUE(j["interrupted"].is_boolean());

    EXPECT_EQ(j["tool"], "mqbench");
    EXPECT_EQ(j["version"], std::string(kToolVersion));
    EXPECT_EQ(j["subcommand"], "pktgen");
    EXPECT_EQ(j["packets"], 4000);
    EXPECT_EQ(j["pps"], 4000.0);
    EXPECT_EQ(j["cpu_ns_per_pkt"], 100.0); // 400 us / 4000 packets
    EXPECT_EQ(j["args"]["dev"], "dummy0");

    const auto &pq = j["per_queue"];
    EXPECT_EQ(pq.size(), 2U);
    EXPECT_EQ(pq["1"], 3000);

    const auto &c = j["counters"];
    EXPECT_TRUE(c["cycles"].is_null());
    EXPECT_EQ(c["task-clock"], 2.0); // per packet
    EXPECT_EQ(j["counters_total"]["task-clock"], 8000.0);
    EXPECT_EQ(j["counters_unavailable"].size(), 1U);
    EXPECT_NE(j["counters_note"].get<std::string>().find("UML"), std::string::npos);

    const auto &t1 = j["per_thread"].at(1);
    EXPECT_EQ(t1["cpu"], 1);
    EXPECT_EQ(t1["errors"], 2);
    EXPECT_TRUE(t1["error"].is_null());
    EXPECT_EQ(j["errors"].at(0), "something \"quoted\"");
}

// The keys in the order they are written, and each object's keys: what bench.py and a
// reader of the JSON see.
TEST(Report, JsonKeyOrder)
{
    Report r = sample();
    compute_totals(r);
    const auto j = to_json(r);
    std::vector<std::string> keys;
    for (const auto &[k, v] : j.items())
        keys.push_back(k);
    EXPECT_EQ(keys, (std::vector<std::string>{"tool",
                                              "version",
                                              "subcommand",
                                              "args",
                                              "device",
                                              "kernel",
                                              "threads",
                                              "packets",
                                              "seconds",
                                              "wall_seconds",
                                              "pps",
                                              "cpu_ns_per_pkt",
                                              "cpu",
                                              "cpu_tick_ns",
                                              "per_thread",
                                              "per_queue",
                                              "per_queue_source",
                                              "per_queue_note",
                                              "counters",
                                              "counters_total",
                                              "counters_unavailable",
                                              "counters_note",
                                              "interrupted",
                                              "notes",
                                              "errors"}));
    keys.clear();
    for (const auto &[k, v] : j["per_thread"].at(0).items())
        keys.push_back(k);
    EXPECT_EQ(keys, (std::vector<std::string>{"thread", "cpu", "packets", "seconds", "pps",
                                              "errors", "error"}));
    keys.clear();
    for (const auto &[k, v] : j["cpu"].items())
        keys.push_back(k);
    EXPECT_EQ(keys, (std::vector<std::string>{"user_ns", "system_ns", "softirq_ns"}));
}

TEST(Report, JsonUnavailableParts)
{
    Report r = sample();
    r.per_thread.clear();
    r.per_queue.reset();
    r.per_queue_source = "unavailable";
    r.cpu.reset();
    compute_totals(r);
    const auto j = nlohmann::json::parse(to_json(r).dump());
    EXPECT_TRUE(j["per_queue"].is_null());
    EXPECT_EQ(j["per_queue_source"], "unavailable");
    EXPECT_TRUE(j["cpu_ns_per_pkt"].is_null());
    EXPECT_TRUE(j["cpu"].is_null());
    EXPECT_TRUE(j["counters"]["task-clock"].is_null()); // no packets
    EXPECT_TRUE(j["per_thread"].is_array());
    EXPECT_TRUE(j["per_thread"].empty());
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
    using netutil::rtnl::make_handle;
    using netutil::rtnl::QdiscInfo;
    std::vector<QdiscInfo> qd(4);
    qd[0].kind = "mq";
    qd[0].handle = make_handle(0x8001, 0);
    qd[0].parent = netutil::rtnl::kRootParent;
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

} // namespace

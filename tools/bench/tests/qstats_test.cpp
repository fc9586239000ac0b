// mqbench qstats: its command line, the JSON and table it prints for crafted answers
// (per-queue counters, EOPNOTSUPP), and the kernel asked about the loopback device and a
// device that does not exist.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <net/if.h>

#include "args.hpp"
#include "qstats.hpp"

namespace {

using namespace mqbench;
using netutil::netdev::QStats;
using netutil::netdev::QueueType;

bool has(const std::string &text, const std::string &part)
{
    return text.find(part) != std::string::npos;
}

Options parsed(const std::vector<std::string> &args)
{
    const ParseResult r = parse_args(args);
    EXPECT_TRUE(r.options.has_value()) << r.error;
    return r.options.value_or(Options{});
}

QStats entry(QueueType type, std::uint32_t id, std::optional<std::uint64_t> packets)
{
    QStats q;
    q.ifindex = 7;
    q.queue_type = type;
    q.queue_id = id;
    if (type == QueueType::tx) {
        q.tx_packets = packets;
        if (packets)
            q.tx_bytes = *packets * 60;
    } else {
        q.rx_packets = packets;
    }
    return q;
}

// What the patched multi-queue dummy answers after 300 packets on two TX queues.
qstats::Dump per_queue_dump()
{
    qstats::Dump d;
    d.args = options_to_json(parsed({"qstats", "--dev", "d0", "--json"}));
    d.device = "d0";
    d.ifindex = 7;
    d.kernel = "7.3.4";
    d.queue.supported = true;
    d.queue.entries = {entry(QueueType::tx, 0, 200), entry(QueueType::tx, 1, 100)};
    d.device_scope.supported = true;
    QStats total;
    total.ifindex = 7;
    total.tx_packets = 300;
    total.tx_bytes = 18000;
    d.device_scope.entries = {total};
    d.link = qstats::Link{"dummy", 2, 1, 2, 300, 18000, 0};
    return d;
}

// What veth answers: no stat_ops, so QSTATS_GET for its ifindex fails.
qstats::Dump unsupported_dump()
{
    qstats::Dump d;
    d.device = "v0";
    d.ifindex = 9;
    d.queue.error = "EOPNOTSUPP (Operation not supported)";
    d.device_scope.error = d.queue.error;
    d.link = qstats::Link{"veth", 2, 2, 2, 1000, 60000, 5};
    return d;
}

TEST(QstatsArgs, Parse)
{
    const Options o = parsed({"qstats", "--dev", "n0", "--json"});
    EXPECT_EQ(o.cmd, Subcommand::qstats);
    EXPECT_EQ(o.dev, "n0");
    EXPECT_TRUE(o.json);
    EXPECT_FALSE(o.count);
    EXPECT_FALSE(o.duration);
    EXPECT_FALSE(parsed({"qstats", "--dev=n0"}).json);
    EXPECT_EQ(to_string(Subcommand::qstats), "qstats");

    const nlohmann::ordered_json j = options_to_json(o);
    EXPECT_EQ(j["dev"], "n0");
    EXPECT_TRUE(j["json"].get<bool>());
    EXPECT_EQ(j["argv"].size(), 4U);
    EXPECT_FALSE(j.contains("threads"));
    EXPECT_FALSE(j.contains("count"));
}

TEST(QstatsArgs, Errors)
{
    ParseResult r = parse_args({"qstats"});
    EXPECT_FALSE(r.options);
    EXPECT_PRED2(has, r.error, "--dev is required");
    r = parse_args({"qstats", "--dev", "n0", "--threads", "1"});
    EXPECT_EQ(r.error, "--threads is only valid for 'pktgen' and 'gen'");
    r = parse_args({"qstats", "--dev", "n0", "--xps"});
    EXPECT_EQ(r.error, "--xps is only valid for 'pktgen'");
    r = parse_args({"qstats", "--dev", "a/b"});
    EXPECT_PRED2(has, r.error, "is not a valid interface name");
    EXPECT_PRED2(has, usage(), "mqbench qstats --dev NAME [--json]");
}

TEST(Qstats, TxSum)
{
    EXPECT_FALSE(qstats::tx_packets_sum({}));
    EXPECT_FALSE(qstats::tx_packets_sum({entry(QueueType::rx, 0, 5)}));
    EXPECT_FALSE(qstats::tx_packets_sum({entry(QueueType::tx, 0, std::nullopt)}));
    EXPECT_EQ(qstats::tx_packets_sum({entry(QueueType::rx, 0, 5), entry(QueueType::tx, 0, 0),
                                      entry(QueueType::tx, 1, 7)}),
              7U);
    EXPECT_EQ(qstats::tx_entries({entry(QueueType::rx, 0, 5), entry(QueueType::tx, 3, 1)}).size(),
              1U);
}

TEST(Qstats, JsonPerQueue)
{
    const nlohmann::ordered_json j = qstats::to_json(per_queue_dump());
    std::vector<std::string> keys;
    for (const auto &[k, v] : j.items())
        keys.push_back(k);
    EXPECT_EQ(keys,
              (std::vector<std::string>{"tool", "version", "subcommand", "args", "device",
                                        "ifindex", "kernel", "queue_scope", "tx_queues_reported",
                                        "tx_packets_sum", "device_scope", "link", "errors"}));
    EXPECT_EQ(j["subcommand"], "qstats");
    EXPECT_EQ(j["args"]["dev"], "d0");
    EXPECT_TRUE(j["queue_scope"]["supported"].get<bool>());
    EXPECT_TRUE(j["queue_scope"]["error"].is_null());
    const auto &q = j["queue_scope"]["queues"];
    ASSERT_EQ(q.size(), 2U);
    EXPECT_EQ(q[0]["type"], "tx");
    EXPECT_EQ(q[0]["id"], 0);
    EXPECT_EQ(q[0]["tx_packets"], 200);
    EXPECT_EQ(q[1]["tx_bytes"], 6000);
    EXPECT_FALSE(q[0].contains("rx_packets")); // counters the driver does not report: absent
    EXPECT_EQ(j["tx_queues_reported"], 2);
    EXPECT_EQ(j["tx_packets_sum"], 300);
    EXPECT_EQ(j["device_scope"]["stats"]["tx_packets"], 300);
    EXPECT_EQ(j["link"]["kind"], "dummy");
    EXPECT_EQ(j["link"]["tx_dropped"], 0);
    EXPECT_TRUE(j["errors"].empty());
}

TEST(Qstats, JsonUnsupported)
{
    const nlohmann::ordered_json j = qstats::to_json(unsupported_dump());
    EXPECT_FALSE(j["queue_scope"]["supported"].get<bool>());
    EXPECT_EQ(j["queue_scope"]["error"], "EOPNOTSUPP (Operation not supported)");
    EXPECT_TRUE(j["queue_scope"]["queues"].empty());
    EXPECT_EQ(j["tx_queues_reported"], 0);
    EXPECT_TRUE(j["tx_packets_sum"].is_null());
    EXPECT_FALSE(j["device_scope"]["supported"].get<bool>());
    EXPECT_TRUE(j["device_scope"]["stats"].is_null());
    EXPECT_EQ(j["link"]["tx_packets"], 1000);
    EXPECT_EQ(j["link"]["tx_dropped"], 5);
}

TEST(Qstats, Table)
{
    const std::string t = qstats::to_table(per_queue_dump());
    EXPECT_PRED2(has, t, "mqbench qstats on d0 (ifindex 7)\nqueue scope: 2 entries\n");
    EXPECT_PRED2(has, t, "  tx-0  tx_packets 200 tx_bytes 12000\n");
    EXPECT_PRED2(has, t, "tx_packets over TX queues: 300\n");
    EXPECT_PRED2(has, t, "device scope: tx_packets 300 tx_bytes 18000\n");
    EXPECT_PRED2(has, t, "link: 2 TX queues, tx_packets 300 tx_bytes 18000 tx_dropped 0\n");
    const std::string u = qstats::to_table(unsupported_dump());
    EXPECT_PRED2(has, u, "queue scope: EOPNOTSUPP (Operation not supported)\n");
    EXPECT_PRED2(has, u, "device scope: EOPNOTSUPP (Operation not supported)\n");
}

TEST(Qstats, MissingDevice)
{
    const Options o = parsed({"qstats", "--dev", "mqbnosuchdev0"});
    const qstats::Dump d = qstats::take(o);
    ASSERT_EQ(d.errors.size(), 1U);
    EXPECT_PRED2(has, d.errors[0], "network device 'mqbnosuchdev0' not found");
    EXPECT_FALSE(d.queue.supported);
    EXPECT_FALSE(d.link);
}

// The loopback device has no stat_ops: the kernel answers QSTATS_GET for it with
// EOPNOTSUPP (or lacks the netdev family / the command): never per-queue entries.
TEST(Qstats, LoopbackHasNoQueueStats)
{
    if (if_nametoindex("lo") == 0)
        GTEST_SKIP() << "no loopback device";
    const qstats::Dump d = qstats::take(parsed({"qstats", "--dev", "lo"}));
    EXPECT_TRUE(d.errors.empty()) << d.errors.front();
    EXPECT_FALSE(d.queue.supported);
    EXPECT_FALSE(d.queue.error.empty());
    ASSERT_TRUE(d.link);
    EXPECT_GE(d.link->num_tx_queues, 1U);
}

} // namespace

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "args.hpp"

namespace {

using namespace mqbench;

ParseResult parse(const std::vector<std::string> &args)
{
    return parse_args(args);
}

Options ok(const std::vector<std::string> &args)
{
    const ParseResult r = parse(args);
    EXPECT_TRUE(r.options.has_value()) << r.error;
    EXPECT_TRUE(r.error.empty());
    return r.options.value_or(Options{});
}

std::string err(const std::vector<std::string> &args)
{
    const ParseResult r = parse(args);
    EXPECT_FALSE(r.options.has_value());
    EXPECT_FALSE(r.help);
    EXPECT_FALSE(r.error.empty());
    return r.error;
}

TEST(Args, PktgenFull)
{
    const Options o = ok({"pktgen", "--dev", "dummy0", "--threads", "4", "--count", "500000",
                          "--size", "128", "--xps", "--burst", "8", "--xmit-mode", "start_xmit",
                          "--clone-skb", "100", "--json"});
    EXPECT_EQ(o.cmd, Subcommand::pktgen);
    EXPECT_EQ(o.dev, "dummy0");
    EXPECT_EQ(o.threads, 4U);
    EXPECT_EQ(o.count, 500000U);
    EXPECT_FALSE(o.duration);
    EXPECT_EQ(o.size, 128U);
    EXPECT_TRUE(o.xps);
    EXPECT_EQ(o.burst, 8U);
    EXPECT_EQ(o.clone_skb, 100U);
    EXPECT_EQ(o.xmit_mode, "start_xmit");
    EXPECT_TRUE(o.json);
    EXPECT_EQ(o.argv.size(), 17U);
}

TEST(Args, PktgenDefaults)
{
    const Options o = ok({"pktgen", "--dev=eth0", "--threads=2"});
    EXPECT_EQ(o.dev, "eth0");
    EXPECT_EQ(o.threads, 2U);
    EXPECT_EQ(o.count, kDefaultCount);
    EXPECT_EQ(o.size, kDefaultSize);
    EXPECT_EQ(o.burst, 1U);
    EXPECT_EQ(o.clone_skb, 0U);
    EXPECT_EQ(o.xmit_mode, "queue_xmit");
    EXPECT_EQ(o.dst_mac, kDefaultDstMac);
    EXPECT_FALSE(o.xps);
    EXPECT_FALSE(o.json);
}

TEST(Args, DurationReplacesCount)
{
    const Options o = ok({"pktgen", "--dev", "d0", "--threads", "1", "--duration", "2.5"});
    ASSERT_TRUE(o.duration);
    EXPECT_DOUBLE_EQ(*o.duration, 2.5);
    EXPECT_FALSE(o.count);
}

TEST(Args, GenModes)
{
    Options o =
            ok({"gen", "--dev", "lo", "--mode", "sendmmsg", "--threads", "2", "--count", "10000"});
    EXPECT_EQ(o.cmd, Subcommand::gen);
    EXPECT_EQ(o.mode, GenMode::sendmmsg);
    EXPECT_EQ(o.count, 10000U);
    o = ok({"gen", "--dev", "d0", "--mode", "tx_ring", "--threads", "1", "--qdisc-bypass",
            "--duration", "10", "--size", "1500", "--batch", "32"});
    EXPECT_EQ(o.mode, GenMode::tx_ring);
    EXPECT_TRUE(o.qdisc_bypass);
    EXPECT_EQ(o.size, 1500U);
    EXPECT_EQ(o.batch, 32U);
    o = ok({"gen", "--mode=udp", "--dev", "d0", "--threads", "1", "--quiet"});
    EXPECT_EQ(o.mode, GenMode::udp);
    EXPECT_TRUE(o.quiet);
}

TEST(Args, Help)
{
    EXPECT_TRUE(parse({"--help"}).help);
    EXPECT_TRUE(parse({"help"}).help);
    EXPECT_TRUE(parse({"pktgen", "-h"}).help);
    EXPECT_TRUE(parse({"gen", "--dev", "x", "--help"}).help);
    EXPECT_NE(usage().find("mqbench pktgen"), std::string::npos);
    EXPECT_NE(usage().find("mqbench gen"), std::string::npos);
}

bool has(const std::string &text, const std::string &part)
{
    return text.find(part) != std::string::npos;
}

// The syntax errors CLI11 reports.
TEST(Args, Invalid)
{
    EXPECT_PRED2(has, err({}), "A subcommand is required");
    EXPECT_PRED2(has, err({"blast", "--dev", "x"}), "subcommand");
    EXPECT_PRED2(has, err({"pktgen", "--threads", "1"}), "--dev is required");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0"}), "--threads is required");
    EXPECT_PRED2(has, err({"gen", "--dev", "d0", "--threads", "1"}), "--mode is required");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0", "--threads", "1", "--bogus"}),
                 "not expected: --bogus");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0", "--threads", "1", "positional"}),
                 "not expected: positional");
    EXPECT_PRED2(
            has,
            err({"pktgen", "--dev", "d0", "--threads", "1", "--count", "5", "--duration", "1"}),
            "--count excludes --duration");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0", "--threads", "1", "--threads", "2"}),
                 "--threads: At Most 1");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0", "--threads", "1", "--json", "--json"}),
                 "--json: At Most 1");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0", "--threads"}), "--threads");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0", "--threads", "1", "--json=yes"}),
                 "disallowed flag override");
}

TEST(Args, InvalidNumbers)
{
    const std::vector<std::string> base = {"pktgen", "--dev", "d0"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> v = base;
        v.insert(v.end(), extra.begin(), extra.end());
        return v;
    };
    EXPECT_PRED2(has, err(with({"--threads", "0"})), "--threads: Value 0 not in range 1 to 1024");
    EXPECT_PRED2(has, err(with({"--threads", "100000"})), "not in range");
    for (const char *bad : {"-1", "+2", "two", "2x", "0x10", ""})
        EXPECT_PRED2(has, err(with({"--threads", bad})), "is not a decimal integer") << bad;
    EXPECT_PRED2(has, err(with({"--threads", "1", "--count", "0"})), "--count: Value 0");
    EXPECT_PRED2(has, err(with({"--threads", "1", "--count", "99999999999"})), "not in range");
    for (const char *bad : {"0", "-3", "+1", "nan", "inf", "1e9", "86400.5", "1s"}) {
        EXPECT_PRED2(has, err(with({"--threads", "1", "--duration", bad})),
                     "is not a number of seconds in (0, 86400]")
                << bad;
    }
    EXPECT_EQ(ok(with({"--threads", "1", "--duration", "86400"})).duration, 86400.0);
    EXPECT_PRED2(has, err(with({"--threads", "1", "--size", "41"})), "--size: Value 41");
    EXPECT_PRED2(has, err(with({"--threads", "1", "--size", "9001"})), "not in range 42 to 9000");
    EXPECT_PRED2(has, err(with({"--threads", "1", "--burst", "0"})), "--burst: Value 0");
}

// Options of the other subcommand, values out of a set, and the checks across options.
TEST(Args, InvalidCombinations)
{
    EXPECT_PRED2(has, err({"gen", "--dev", "d0", "--mode", "udp", "--threads", "1", "--xps"}),
                 "--xps is only valid for 'pktgen'");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0", "--threads", "1", "--mode", "udp"}),
                 "--mode is only valid for 'gen'");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0", "--threads", "1", "--qdisc-bypass"}),
                 "--qdisc-bypass is only valid for 'gen'");
    EXPECT_PRED2(has, err({"pktgen", "--dev", "d0", "--threads", "1", "--batch=8"}),
                 "--batch is only valid for 'gen'");
    EXPECT_PRED2(has, err({"gen", "--dev", "d0", "--mode", "raw", "--threads", "1"}),
                 "--mode: raw not in {sendmmsg,tx_ring,udp}");
    EXPECT_PRED2(has,
                 err({"pktgen", "--dev", "d0", "--threads", "1", "--xmit-mode", "netif_receive"}),
                 "--xmit-mode: netif_receive not in {queue_xmit,start_xmit}");

    // Checked in code after parsing.
    EXPECT_EQ(err({"gen", "--dev", "d0", "--mode", "udp", "--threads", "1", "--qdisc-bypass"}),
              "--qdisc-bypass applies to AF_PACKET modes (sendmmsg, tx_ring), not udp");
    ok({"gen", "--dev", "d0", "--mode", "tx_ring", "--threads", "1", "--qdisc-bypass"});
    EXPECT_EQ(err({"pktgen", "--dev", "d0", "--threads", "1", "--burst", "4"}),
              "--burst > 1 needs --xmit-mode start_xmit (pktgen rejects burst with queue_xmit: "
              "EOPNOTSUPP)");
    ok({"pktgen", "--dev", "d0", "--threads", "1", "--burst", "4", "--xmit-mode", "start_xmit"});
    EXPECT_EQ(err({"pktgen", "--dev", "d0", "--threads", "2", "--one-queue", "--xps"}),
              "--one-queue and --xps contradict: XPS maps each thread to its own queue");
    EXPECT_PRED2(has, err({"gen", "--dev", "d0", "--mode", "udp", "--threads", "1", "--one-queue"}),
                 "--one-queue is only valid for 'pktgen'");
}

TEST(Args, OneQueue)
{
    const Options o = ok({"pktgen", "--dev", "d0", "--threads", "2", "--one-queue", "--xmit-mode",
                          "start_xmit"});
    EXPECT_TRUE(o.one_queue);
    EXPECT_FALSE(o.xps);
    EXPECT_FALSE(ok({"pktgen", "--dev", "d0", "--threads", "2"}).one_queue);
}

TEST(Args, InvalidNames)
{
    for (const char *bad : {"", "a/b", "a b", "a:b", "dummy0@1", ".", "..", "abcdefghijklmnop"})
        EXPECT_PRED2(has, err({"pktgen", "--dev", bad, "--threads", "1"}),
                     "is not a valid interface name")
                << bad;
    ok({"pktgen", "--dev", "abcdefghijklmno", "--threads", "1"}); // 15 characters
    EXPECT_PRED2(has,
                 err({"pktgen", "--dev", "d0", "--threads", "1", "--dst-mac", "02:00:00:00:00"}),
                 "--dst-mac: '02:00:00:00:00' is not a MAC address");
    err({"pktgen", "--dev", "d0", "--threads", "1", "--dst-mac", "02:00:00:00:00:0g"});
    EXPECT_TRUE(valid_mac("AA:bb:0c:D0:ee:ff"));
    EXPECT_FALSE(valid_mac("aa-bb-cc-dd-ee-ff"));
}

TEST(Args, OptionsJson)
{
    const Options o = ok({"gen", "--dev", "lo", "--mode", "tx_ring", "--threads", "2"});
    const nlohmann::ordered_json j = options_to_json(o);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["dev"], "lo");
    EXPECT_EQ(j["mode"], "tx_ring");
    EXPECT_TRUE(j["duration"].is_null());
    EXPECT_EQ(j["count"], kDefaultCount);
    EXPECT_FALSE(j.contains("xps"));
    EXPECT_EQ(j["argv"].size(), 7U);
    EXPECT_EQ(j.begin().key(), "dev");

    const Options p = ok({"pktgen", "--dev", "d0", "--threads", "1", "--duration", "2.5"});
    const nlohmann::ordered_json k = options_to_json(p);
    EXPECT_TRUE(k["count"].is_null());
    EXPECT_EQ(k["duration"], 2.5);
    EXPECT_EQ(k["xmit_mode"], "queue_xmit");
    EXPECT_FALSE(k.contains("mode"));
}

} // namespace

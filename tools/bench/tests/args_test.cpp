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
    EXPECT_TRUE(parse({"pktgen", "-h"}).help);
    EXPECT_TRUE(parse({"gen", "--dev", "x", "--help"}).help);
    EXPECT_NE(usage().find("mqbench pktgen"), std::string::npos);
    EXPECT_NE(usage().find("mqbench gen"), std::string::npos);
}

TEST(Args, Invalid)
{
    EXPECT_NE(err({}).find("subcommand"), std::string::npos);
    EXPECT_NE(err({"blast", "--dev", "x"}).find("unknown subcommand"), std::string::npos);
    EXPECT_NE(err({"pktgen", "--threads", "1"}).find("--dev"), std::string::npos);
    EXPECT_NE(err({"pktgen", "--dev", "d0"}).find("--threads"), std::string::npos);
    EXPECT_NE(err({"gen", "--dev", "d0", "--threads", "1"}).find("--mode"), std::string::npos);
    EXPECT_NE(err({"pktgen", "--dev", "d0", "--threads", "1", "--bogus"}).find("unknown option"),
              std::string::npos);
    EXPECT_NE(err({"pktgen", "--dev", "d0", "--threads", "1", "positional"}).find("unexpected"),
              std::string::npos);
    EXPECT_NE(err({"pktgen", "--dev", "d0", "--threads", "1", "--count", "5", "--duration", "1"})
                      .find("mutually exclusive"),
              std::string::npos);
}

TEST(Args, InvalidNumbers)
{
    const std::vector<std::string> base = {"pktgen", "--dev", "d0"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> v = base;
        v.insert(v.end(), extra.begin(), extra.end());
        return v;
    };
    err(with({"--threads", "0"}));
    err(with({"--threads", "-1"}));
    err(with({"--threads", "+2"}));
    err(with({"--threads", "two"}));
    err(with({"--threads", "2x"}));
    err(with({"--threads", "100000"}));
    err(with({"--threads", "1", "--count", "0"}));
    err(with({"--threads", "1", "--count", "99999999999"}));
    err(with({"--threads", "1", "--duration", "0"}));
    err(with({"--threads", "1", "--duration", "-3"}));
    err(with({"--threads", "1", "--duration", "nan"}));
    err(with({"--threads", "1", "--duration", "1e9"}));
    err(with({"--threads", "1", "--size", "41"}));
    err(with({"--threads", "1", "--size", "9001"}));
    err(with({"--threads", "1", "--burst", "0"}));
    err(with({"--threads", "1", "--threads", "2"}));
    EXPECT_NE(err(with({"--threads"})).find("needs a value"), std::string::npos);
    EXPECT_NE(err(with({"--threads", "1", "--json=yes"})).find("takes no value"),
              std::string::npos);
}

TEST(Args, InvalidCombinations)
{
    EXPECT_NE(err({"gen", "--dev", "d0", "--mode", "udp", "--threads", "1", "--xps"})
                      .find("only valid for 'pktgen'"),
              std::string::npos);
    EXPECT_NE(err({"pktgen", "--dev", "d0", "--threads", "1", "--mode", "udp"})
                      .find("only valid for 'gen'"),
              std::string::npos);
    err({"pktgen", "--dev", "d0", "--threads", "1", "--qdisc-bypass"});
    err({"gen", "--dev", "d0", "--mode", "udp", "--threads", "1", "--qdisc-bypass"});
    err({"gen", "--dev", "d0", "--mode", "raw", "--threads", "1"});
    EXPECT_NE(err({"pktgen", "--dev", "d0", "--threads", "1", "--burst", "4"}).find("start_xmit"),
              std::string::npos);
    err({"pktgen", "--dev", "d0", "--threads", "1", "--xmit-mode", "netif_receive"});
}

TEST(Args, InvalidNames)
{
    err({"pktgen", "--dev", "", "--threads", "1"});
    err({"pktgen", "--dev", "a/b", "--threads", "1"});
    err({"pktgen", "--dev", "a b", "--threads", "1"});
    err({"pktgen", "--dev", "dummy0@1", "--threads", "1"});
    err({"pktgen", "--dev", "abcdefghijklmnop", "--threads", "1"}); // 16 chars
    ok({"pktgen", "--dev", "abcdefghijklmno", "--threads", "1"});   // 15 chars
    err({"pktgen", "--dev", "d0", "--threads", "1", "--dst-mac", "02:00:00:00:00"});
    err({"pktgen", "--dev", "d0", "--threads", "1", "--dst-mac", "02:00:00:00:00:0g"});
    EXPECT_TRUE(valid_mac("AA:bb:0c:D0:ee:ff"));
    EXPECT_FALSE(valid_mac("aa-bb-cc-dd-ee-ff"));
}

TEST(Args, OptionsJson)
{
    const Options o = ok({"gen", "--dev", "lo", "--mode", "tx_ring", "--threads", "2"});
    const json::Value j = options_to_json(o);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j.find("dev")->as_string(), "lo");
    EXPECT_EQ(j.find("mode")->as_string(), "tx_ring");
    EXPECT_TRUE(j.find("duration")->is_null());
    EXPECT_EQ(j.find("count")->as_number(), static_cast<double>(kDefaultCount));
    EXPECT_EQ(j.find("xps"), nullptr);
    EXPECT_EQ(j.find("argv")->as_array().size(), 7U);
}

} // namespace

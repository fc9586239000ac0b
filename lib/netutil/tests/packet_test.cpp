#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "packet_sender.hpp"

namespace {

using namespace netutil::pkt;

std::uint16_t get16(const std::vector<std::uint8_t> &f, std::size_t off)
{
    return static_cast<std::uint16_t>(f[off] << 8 | f[off + 1]);
}

TEST(Packet, ChecksumKnownVectors)
{
    // RFC 1071 section 3 example: one's complement sum 0xddf2.
    const std::uint8_t rfc[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    EXPECT_EQ(inet_checksum(rfc, sizeof(rfc)), static_cast<std::uint16_t>(~0xddf2));
    // IPv4 header 192.168.0.1 -> 192.168.0.199 with checksum field zeroed: 0xb861.
    const std::uint8_t ip[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                               0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    EXPECT_EQ(inet_checksum(ip, sizeof(ip)), 0xb861);
    const std::uint8_t odd[] = {0x01};
    EXPECT_EQ(inet_checksum(odd, 1), static_cast<std::uint16_t>(~0x0100));
}

TEST(Packet, FrameLayout)
{
    FrameSpec spec;
    spec.frame_len = 128;
    spec.dst_mac = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    spec.src_port = 1234;
    spec.dst_port = 4321;
    const auto f = build_frame(spec);
    ASSERT_EQ(f.size(), 128U);
    EXPECT_EQ(std::vector<std::uint8_t>(f.begin(), f.begin() + 6),
              std::vector<std::uint8_t>(spec.dst_mac.begin(), spec.dst_mac.end()));
    EXPECT_EQ(std::vector<std::uint8_t>(f.begin() + 6, f.begin() + 12),
              std::vector<std::uint8_t>(spec.src_mac.begin(), spec.src_mac.end()));
    EXPECT_EQ(get16(f, 12), 0x0800); // ETH_P_IP

    EXPECT_EQ(f[14], 0x45);
    EXPECT_EQ(get16(f, 16), 128 - 14); // IP total length
    EXPECT_EQ(f[14 + 8], 64);          // TTL
    EXPECT_EQ(f[14 + 9], 17);          // UDP
    EXPECT_EQ(get16(f, 14 + 12), 0xc000);
    EXPECT_EQ(inet_checksum(f.data() + 14, 20), 0); // header checksum verifies

    EXPECT_EQ(get16(f, 34), 1234);
    EXPECT_EQ(get16(f, 36), 4321);
    EXPECT_EQ(get16(f, 38), 128 - 34); // UDP length
    EXPECT_EQ(get16(f, 40), 0);        // no UDP checksum
    EXPECT_EQ(f[42], 0);
    EXPECT_EQ(f[127], 127 - 42);
}

TEST(Packet, FrameLengthLimits)
{
    FrameSpec spec;
    spec.frame_len = kMinFrameLen;
    const auto min = build_frame(spec);
    EXPECT_EQ(min.size(), 42U);
    EXPECT_EQ(get16(min, 38), 8);
    EXPECT_EQ(inet_checksum(min.data() + 14, 20), 0);

    spec.frame_len = 1514;
    const auto full = build_frame(spec);
    EXPECT_EQ(get16(full, 16), 1500);
    EXPECT_EQ(inet_checksum(full.data() + 14, 20), 0);

    spec.frame_len = kMinFrameLen - 1;
    EXPECT_THROW(build_frame(spec), std::invalid_argument);
    spec.frame_len = kMaxFrameLen + 1;
    EXPECT_THROW(build_frame(spec), std::invalid_argument);
}

TEST(Packet, CpuList)
{
    EXPECT_EQ(parse_cpu_list("0"), std::vector<int>({0}));
    EXPECT_EQ(parse_cpu_list("0-3\n"), std::vector<int>({0, 1, 2, 3}));
    EXPECT_EQ(parse_cpu_list("0,2-3,8"), std::vector<int>({0, 2, 3, 8}));
    EXPECT_EQ(parse_cpu_list(""), std::vector<int>());
    EXPECT_FALSE(parse_cpu_list("3-1"));
    EXPECT_FALSE(parse_cpu_list("a"));
    EXPECT_FALSE(parse_cpu_list("1,"));
    EXPECT_FALSE(parse_cpu_list("-1"));
    EXPECT_FALSE(possible_cpus().empty());
}

TEST(Packet, NoThreadsNoResults)
{
    SenderConfig cfg;
    EXPECT_TRUE(run_senders(cfg).empty());
}

} // namespace

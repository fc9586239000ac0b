// uapi constants missing from older system headers.
//
// Debian 12's linux-libc-dev (6.1) has no <linux/netdev.h> at all, and netdev.h from
// 6.3..6.8 lacks the QSTATS attributes. Values are copied from Linux 7.3
// include/uapi/linux/netdev.h. Macros are guarded by #ifndef; enum constants cannot be
// tested by the preprocessor, so they live in ksft::uapi where they never clash with
// the global enums of newer headers.
//
// Everything used from <linux/ethtool_netlink.h> (CHANNELS_*, HEADER_*) is already in the
// 6.1 headers; the static_asserts below check it against the 7.3 values.
#pragma once

#include <cstdint>

#include <linux/ethtool_netlink.h>

#ifndef NETDEV_FAMILY_NAME
#define NETDEV_FAMILY_NAME "netdev"
#endif
#ifndef NETDEV_FAMILY_VERSION
#define NETDEV_FAMILY_VERSION 1
#endif

namespace ksft::uapi {

// enum netdev_queue_type
inline constexpr std::uint32_t NETDEV_QUEUE_TYPE_RX = 0;
inline constexpr std::uint32_t NETDEV_QUEUE_TYPE_TX = 1;

// enum netdev_qstats_scope
inline constexpr std::uint32_t NETDEV_QSTATS_SCOPE_QUEUE = 1;

// NETDEV_CMD_*
inline constexpr std::uint8_t NETDEV_CMD_QSTATS_GET = 12;

// NETDEV_A_QSTATS_*
inline constexpr std::uint16_t NETDEV_A_QSTATS_IFINDEX = 1;
inline constexpr std::uint16_t NETDEV_A_QSTATS_QUEUE_TYPE = 2;
inline constexpr std::uint16_t NETDEV_A_QSTATS_QUEUE_ID = 3;
inline constexpr std::uint16_t NETDEV_A_QSTATS_SCOPE = 4;
inline constexpr std::uint16_t NETDEV_A_QSTATS_RX_PACKETS = 8;
inline constexpr std::uint16_t NETDEV_A_QSTATS_RX_BYTES = 9;
inline constexpr std::uint16_t NETDEV_A_QSTATS_TX_PACKETS = 10;
inline constexpr std::uint16_t NETDEV_A_QSTATS_TX_BYTES = 11;
inline constexpr std::uint16_t NETDEV_A_QSTATS_TX_STOP = 33;
inline constexpr std::uint16_t NETDEV_A_QSTATS_TX_WAKE = 34;
inline constexpr std::uint16_t NETDEV_A_QSTATS_MAX = 34;

} // namespace ksft::uapi

static_assert(ETHTOOL_MSG_CHANNELS_GET == 17 && ETHTOOL_MSG_CHANNELS_SET == 18);
static_assert(ETHTOOL_MSG_CHANNELS_GET_REPLY == 18);
static_assert(ETHTOOL_A_HEADER_DEV_NAME == 2 && ETHTOOL_A_CHANNELS_HEADER == 1);
static_assert(ETHTOOL_A_CHANNELS_COMBINED_COUNT == 9 && ETHTOOL_A_CHANNELS_MAX == 9);

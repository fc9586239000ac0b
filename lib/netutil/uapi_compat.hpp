// The uapi of the netdev and ethtool generic netlink families.
//
// The build normally uses the exported uapi headers of the kernel tree under test, as
// kselftests do with KHDR_INCLUDES (CMake cache variable KHDR_INCLUDES, see
// CMakeLists.txt): this header is then only <linux/netdev.h> and <linux/ethtool_netlink.h>.
//
// Without KHDR_INCLUDES and with system headers that lack the qstats uapi (Debian 12's
// linux-libc-dev 6.1 has no <linux/netdev.h> at all), CMake defines MQB_UAPI_COMPAT and the
// constants used here are given below, copied from Linux 7.3 include/uapi/linux/netdev.h
// under the kernel's names. <linux/netdev.h> must then not be included anywhere else.
// Everything used from <linux/ethtool_netlink.h> (CHANNELS_*, HEADER_*) is already in 6.1.
#pragma once

#include <linux/ethtool_netlink.h>

#ifndef MQB_UAPI_COMPAT

#include <linux/netdev.h>

#else

#include <cstdint>

#define NETDEV_FAMILY_NAME "netdev"
#define NETDEV_FAMILY_VERSION 1

// enum netdev_queue_type
inline constexpr std::uint32_t NETDEV_QUEUE_TYPE_RX = 0;
inline constexpr std::uint32_t NETDEV_QUEUE_TYPE_TX = 1;

// enum netdev_qstats_scope
inline constexpr std::uint32_t NETDEV_QSTATS_SCOPE_QUEUE = 1;

// NETDEV_CMD_*
inline constexpr std::uint8_t NETDEV_CMD_QUEUE_GET = 10;
inline constexpr std::uint8_t NETDEV_CMD_QSTATS_GET = 12;

// NETDEV_A_QUEUE_*
inline constexpr std::uint16_t NETDEV_A_QUEUE_ID = 1;
inline constexpr std::uint16_t NETDEV_A_QUEUE_IFINDEX = 2;
inline constexpr std::uint16_t NETDEV_A_QUEUE_TYPE = 3;

// NETDEV_A_QSTATS_*
inline constexpr std::uint16_t NETDEV_A_QSTATS_IFINDEX = 1;
inline constexpr std::uint16_t NETDEV_A_QSTATS_QUEUE_TYPE = 2;
inline constexpr std::uint16_t NETDEV_A_QSTATS_QUEUE_ID = 3;
inline constexpr std::uint16_t NETDEV_A_QSTATS_SCOPE = 4;
inline constexpr std::uint16_t NETDEV_A_QSTATS_RX_PACKETS = 8;
inline constexpr std::uint16_t NETDEV_A_QSTATS_RX_BYTES = 9;
inline constexpr std::uint16_t NETDEV_A_QSTATS_TX_PACKETS = 10;
inline constexpr std::uint16_t NETDEV_A_QSTATS_TX_BYTES = 11;
inline constexpr std::uint16_t NETDEV_A_QSTATS_TX_HW_DROPS = 24;
inline constexpr std::uint16_t NETDEV_A_QSTATS_TX_STOP = 33;
inline constexpr std::uint16_t NETDEV_A_QSTATS_TX_WAKE = 34;
inline constexpr std::uint16_t NETDEV_A_QSTATS_MAX = 34;

#endif

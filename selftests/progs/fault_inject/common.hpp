// fault_inject: what its files share: the names, the limits, the options.
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include "prog.hpp"
#include "tracefs.hpp"

namespace fault_inject {

using namespace ksft::prog;

constexpr std::string_view kDebugfs = "/sys/kernel/debug";
constexpr std::uint32_t kTxQueues = 4;
constexpr std::uint32_t kChannelsTx = 2;
constexpr std::uint32_t kRootHandle = rtnl::make_handle(1, 0);
constexpr std::uint32_t kLimit = 1000;
constexpr std::uint64_t kPackets = 8;
// A request that still faults after this many tries is reported, not run further.
constexpr unsigned kMaxTries = 3000;

struct Options {
    unsigned whole_max = 40;
    std::string table_path;
    std::set<std::string> only;
};
extern Options g_opts;

} // namespace fault_inject

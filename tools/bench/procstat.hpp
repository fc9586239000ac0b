// CPU time accounting from /proc/stat.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mqbench::procstat {

// The aggregate "cpu" line of /proc/stat, in USER_HZ ticks.
struct CpuTimes {
    std::uint64_t user = 0;
    std::uint64_t nice = 0;
    std::uint64_t system = 0;
    std::uint64_t idle = 0;
    std::uint64_t iowait = 0;
    std::uint64_t irq = 0;
    std::uint64_t softirq = 0;
    std::uint64_t steal = 0;
};

// Parses the first "cpu " line (older kernels may omit the trailing fields; at least user,
// nice, system and idle must be present).
std::optional<CpuTimes> parse(std::string_view proc_stat_text);
std::optional<CpuTimes> read(const std::string &path = "/proc/stat");

// CPU time spent between two samples, in nanoseconds (counters that went backwards count
// as 0).
struct Delta {
    double user_ns = 0;
    double system_ns = 0;
    double softirq_ns = 0;
    double busy_ns() const { return user_ns + system_ns + softirq_ns; }
};

// ticks_per_second: sysconf(_SC_CLK_TCK).
Delta delta(const CpuTimes &before, const CpuTimes &after, long ticks_per_second);
// (user + system + softirq) / packets; nullopt without packets.
std::optional<double> ns_per_packet(const Delta &d, std::uint64_t packets);

} // namespace mqbench::procstat

// Small file helpers for /sys and /proc, and the XPS override of mqbench pktgen --xps.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mqbench::sysfiles {

inline constexpr std::string_view kSysClassNet = "/sys/class/net";

std::optional<std::string> read_file(const std::filesystem::path &path);
std::optional<std::uint64_t> read_u64(const std::filesystem::path &path);
// One write(2) of value to an existing file; 0 or an errno value.
int write_file(const std::filesystem::path &path, std::string_view value);

// The kernel's cpumask text for a single CPU: 32-bit hex words separated by commas,
// most significant first ("00000001"; CPU 35 -> "00000008,00000000").
std::string cpu_mask(unsigned cpu);

// Sets tx-q/xps_cpus to the mask of CPU q for q < cpus, and empties the map of every other
// TX queue, so that a thread on CPU q transmits on queue q only. restore() (also run by the
// destructor) writes back what was there before.
class XpsOverride {
public:
    XpsOverride(std::filesystem::path sys_class_net, std::string dev)
        : root_(std::move(sys_class_net)), dev_(std::move(dev))
    {
    }
    ~XpsOverride() { restore(); }
    XpsOverride(const XpsOverride &) = delete;
    XpsOverride &operator=(const XpsOverride &) = delete;
    XpsOverride(XpsOverride &&) = delete;
    XpsOverride &operator=(XpsOverride &&) = delete;

    // Empty string on success, else what failed (already changed queues are restored).
    std::string apply(std::uint32_t tx_queues, unsigned cpus);
    // Empty string on success, else the queues that could not be restored.
    std::string restore();

private:
    std::filesystem::path path(std::uint32_t queue) const;

    std::filesystem::path root_;
    std::string dev_;
    std::vector<std::pair<std::uint32_t, std::string>> saved_;
};

} // namespace mqbench::sysfiles

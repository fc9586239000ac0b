// Files of sysfs and procfs: reading and writing knobs, CPU masks, XPS maps, per-device
// IPv6. The one implementation used by the selftests and by mqbench.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace netutil::sysfs {

inline constexpr std::string_view kSysClassNet = "/sys/class/net";

// Whole file contents through read(2), so that an error from a sysfs show() method
// (xps_cpus: ENOENT on a single-queue device) is an error here too. nullopt, with errno
// set, if the file cannot be read.
std::optional<std::string> read_file(const std::string &path);
// The file's text as a decimal number (trailing blanks and newlines allowed).
std::optional<std::uint64_t> read_u64(const std::string &path);

enum class WriteMode {
    replace, // O_TRUNC, as a shell redirection does (it matters only for plain files)
    append,  // O_APPEND (command files such as pktgen's, faked by plain files in tests)
};
// One write(2) of value to an existing file (never created). 0 or an errno value; EIO for
// a short write.
int write_errno(const std::string &path, std::string_view value,
                WriteMode mode = WriteMode::replace);
// Same, as a message: an empty string on success, else "<path>: <strerror>".
std::string write_file(const std::string &path, std::string_view value);

// Counts <sys_class_net>/<dev>/queues/<prefix>-* entries (prefix "tx" or "rx"); nullopt if
// the directory cannot be read.
std::optional<std::uint32_t> active_queue_count(std::string_view dev, std::string_view prefix,
                                                std::string_view sys_class_net = kSysClassNet);

// A CPU set in the kernel's bitmap format ("%x" words of 32 bits, most significant
// first, separated by commas), as xps_cpus and rps_cpus take it. Negative CPUs are
// ignored; an empty set is "0".
std::string cpu_mask(const std::vector<int> &cpus);

// <sys_class_net>/<dev>/queues/tx-<queue>/xps_cpus.
std::string xps_path(std::string_view dev, unsigned queue,
                     std::string_view sys_class_net = kSysClassNet);

// Writes the XPS map of one TX queue. Needs CONFIG_XPS and a device with more than one TX
// queue. Returns an error message or an empty string.
std::string set_xps_cpus(std::string_view dev, unsigned queue, const std::vector<int> &cpus);

// XPS maps set for a while: apply() saves the maps it changes, restore() (also run by the
// destructor) writes them back.
class XpsOverride {
public:
    explicit XpsOverride(std::string dev, std::string sys_class_net = std::string(kSysClassNet))
        : dev_(std::move(dev)), root_(std::move(sys_class_net))
    {
    }
    ~XpsOverride() { restore(); }
    XpsOverride(const XpsOverride &) = delete;
    XpsOverride &operator=(const XpsOverride &) = delete;
    XpsOverride(XpsOverride &&) = delete;
    XpsOverride &operator=(XpsOverride &&) = delete;

    // Sets the maps of TX queues 0..tx_queues-1 (0: as many as cpus): queue i to cpus[i],
    // the queues without a CPU to an empty map, so that a thread on cpus[i] transmits on
    // queue i only. An empty string on success, else what failed; the queues already
    // changed are restored then.
    std::string apply(const std::vector<int> &cpus, std::uint32_t tx_queues = 0);
    // An empty string on success, else the queues that could not be restored.
    std::string restore();
    // Keeps the maps as they are now: nothing is restored.
    void keep() { saved_.clear(); }

private:
    std::string dev_;
    std::string root_;
    std::vector<std::pair<unsigned, std::string>> saved_;
};

// XpsOverride::apply(cpus) and keep(): the i-th CPU transmits on TX queue i from now on
// (until the device goes). Returns an error message or an empty string.
std::string map_cpus_to_queues(std::string_view dev, const std::vector<int> &cpus);

// Writes 1 to /proc/sys/net/ipv6/conf/<dev>/disable_ipv6, so that bringing the device
// up sends no router solicitation or MLD report. Succeeds (empty string) when the
// kernel has no IPv6 at all.
std::string disable_ipv6(std::string_view dev);

} // namespace netutil::sysfs

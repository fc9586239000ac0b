// sysfs/procfs knobs of network devices: XPS maps and per-device IPv6.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ksft::sysfs {

// Writes value to an existing file (no O_CREAT). Returns an empty string on success,
// else "<path>: <strerror>".
std::string write_file(const std::string &path, std::string_view value);
// Whole file contents; nullopt if it cannot be read.
std::optional<std::string> read_file(const std::string &path);

// A CPU set in the kernel's bitmap format ("%x" words of 32 bits, most significant
// first, separated by commas), as xps_cpus and rps_cpus take it. Negative CPUs are
// ignored; an empty set is "0".
std::string cpu_mask(const std::vector<int> &cpus);

// /sys/class/net/<dev>/queues/tx-<queue>/xps_cpus. Needs CONFIG_XPS and a device
// with more than one TX queue. Returns an error message or an empty string.
std::string set_xps_cpus(std::string_view dev, unsigned queue, const std::vector<int> &cpus);

// Writes 1 to /proc/sys/net/ipv6/conf/<dev>/disable_ipv6, so that bringing the device
// up sends no router solicitation or MLD report. Succeeds (empty string) when the
// kernel has no IPv6 at all.
std::string disable_ipv6(std::string_view dev);

} // namespace ksft::sysfs

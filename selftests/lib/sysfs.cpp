#include "sysfs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace ksft::sysfs {

std::string write_file(const std::string &path, std::string_view value)
{
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return path + ": " + std::strerror(errno);
    const ssize_t n = write(fd, value.data(), value.size());
    const int err = errno;
    close(fd);
    if (n < 0)
        return path + ": " + std::strerror(err);
    if (static_cast<std::size_t>(n) != value.size())
        return path + ": short write";
    return {};
}

std::optional<std::string> read_file(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string cpu_mask(const std::vector<int> &cpus)
{
    int max_cpu = -1;
    for (const int c : cpus)
        max_cpu = std::max(max_cpu, c);
    if (max_cpu < 0)
        return "0";
    std::vector<std::uint32_t> words(static_cast<std::size_t>(max_cpu) / 32 + 1, 0);
    for (const int c : cpus) {
        if (c >= 0)
            words[static_cast<std::size_t>(c) / 32] |= std::uint32_t{1} << (c % 32);
    }
    std::string out;
    char buf[16];
    for (std::size_t i = words.size(); i-- > 0;) {
        std::snprintf(buf, sizeof(buf), i + 1 == words.size() ? "%x" : ",%08x", words[i]);
        out += buf;
    }
    return out;
}

std::string set_xps_cpus(std::string_view dev, unsigned queue, const std::vector<int> &cpus)
{
    const std::string path = "/sys/class/net/" + std::string(dev) + "/queues/tx-" +
                             std::to_string(queue) + "/xps_cpus";
    return write_file(path, cpu_mask(cpus) + "\n");
}

std::string disable_ipv6(std::string_view dev)
{
    if (access("/proc/sys/net/ipv6", F_OK) != 0)
        return {};
    return write_file("/proc/sys/net/ipv6/conf/" + std::string(dev) + "/disable_ipv6", "1\n");
}

} // namespace ksft::sysfs

#include "sysfs.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace netutil::sysfs {

std::optional<std::string> read_file(const std::string &path)
{
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    std::string out;
    char buf[4096];
    while (true) {
        const ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int err = errno;
            close(fd);
            errno = err;
            return std::nullopt;
        }
        if (n == 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    return out;
}

std::optional<std::uint64_t> read_u64(const std::string &path)
{
    const auto text = read_file(path);
    if (!text)
        return std::nullopt;
    std::string_view s = *text;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.remove_suffix(1);
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
        return std::nullopt;
    return v;
}

int write_errno(const std::string &path, std::string_view value, WriteMode mode)
{
    const int flags = O_WRONLY | O_CLOEXEC | (mode == WriteMode::append ? O_APPEND : O_TRUNC);
    const int fd = open(path.c_str(), flags);
    if (fd < 0)
        return errno;
    const ssize_t n = write(fd, value.data(), value.size());
    const int err = n < 0 ? errno : (static_cast<std::size_t>(n) != value.size() ? EIO : 0);
    close(fd);
    return err;
}

std::string write_file(const std::string &path, std::string_view value)
{
    const int err = write_errno(path, value);
    if (err != 0)
        return path + ": " + std::strerror(err);
    return {};
}

std::optional<std::uint32_t> active_queue_count(std::string_view dev, std::string_view prefix,
                                                std::string_view sys_class_net)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::directory_iterator it(fs::path(sys_class_net) / dev / "queues", ec);
    if (ec)
        return std::nullopt;
    const std::string want = std::string(prefix) + "-";
    std::uint32_t count = 0;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec)
            return std::nullopt;
        if (it->path().filename().string().rfind(want, 0) == 0)
            ++count;
    }
    return count;
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

std::string xps_path(std::string_view dev, unsigned queue, std::string_view sys_class_net)
{
    return std::string(sys_class_net) + "/" + std::string(dev) + "/queues/tx-" +
           std::to_string(queue) + "/xps_cpus";
}

std::string set_xps_cpus(std::string_view dev, unsigned queue, const std::vector<int> &cpus)
{
    return write_file(xps_path(dev, queue), cpu_mask(cpus) + "\n");
}

std::string XpsOverride::apply(const std::vector<int> &cpus, std::uint32_t tx_queues)
{
    const std::size_t queues = tx_queues != 0 ? tx_queues : cpus.size();
    std::vector<std::pair<unsigned, std::string>> old;
    for (unsigned q = 0; q < queues; ++q) {
        auto text = read_file(xps_path(dev_, q, root_));
        if (!text)
            return "cannot read " + xps_path(dev_, q, root_) + ": " + std::strerror(errno) +
                   " (XPS needs CONFIG_XPS, an SMP kernel and more than one TX queue)";
        while (!text->empty() && text->back() == '\n')
            text->pop_back();
        old.emplace_back(q, *text);
    }
    for (const auto &[q, value] : old) {
        const std::vector<int> cpu =
                q < cpus.size() ? std::vector<int>{cpus[q]} : std::vector<int>{};
        if (std::string err = write_file(xps_path(dev_, q, root_), cpu_mask(cpu)); !err.empty()) {
            restore();
            return "writing " + cpu_mask(cpu) + " to " + err;
        }
        saved_.emplace_back(q, value);
    }
    return {};
}

std::string XpsOverride::restore()
{
    std::string failed;
    for (const auto &[q, value] : saved_) {
        // An empty map reads back as all-zero words, which writes back fine.
        if (std::string err = write_file(xps_path(dev_, q, root_), value.empty() ? "0" : value);
            !err.empty())
            failed += (failed.empty() ? "" : ", ") + err;
    }
    saved_.clear();
    return failed.empty() ? std::string{} : "could not restore xps_cpus: " + failed;
}

std::string map_cpus_to_queues(std::string_view dev, const std::vector<int> &cpus)
{
    XpsOverride xps{std::string(dev)};
    std::string err = xps.apply(cpus);
    xps.keep();
    return err;
}

std::string disable_ipv6(std::string_view dev)
{
    if (access("/proc/sys/net/ipv6", F_OK) != 0)
        return {};
    return write_file("/proc/sys/net/ipv6/conf/" + std::string(dev) + "/disable_ipv6", "1\n");
}

} // namespace netutil::sysfs

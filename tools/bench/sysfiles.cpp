#include "sysfiles.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace mqbench::sysfiles {

std::optional<std::string> read_file(const std::filesystem::path &path)
{
    // Plain read(2) so that an error from a sysfs show() method (xps_cpus: ENOENT on a
    // single-queue device) is an error here too, with errno set.
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

std::optional<std::uint64_t> read_u64(const std::filesystem::path &path)
{
    auto text = read_file(path);
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

int write_file(const std::filesystem::path &path, std::string_view value)
{
    // O_TRUNC as a shell redirection does; it matters only for plain files (tests).
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return errno;
    const ssize_t n = write(fd, value.data(), value.size());
    const int err = n < 0 ? errno : (static_cast<std::size_t>(n) != value.size() ? EIO : 0);
    close(fd);
    return err;
}

std::string cpu_mask(unsigned cpu)
{
    const unsigned words = cpu / 32 + 1;
    std::string out;
    for (unsigned w = words; w-- > 0;) {
        const std::uint32_t bits = w == cpu / 32 ? (std::uint32_t{1} << (cpu % 32)) : 0;
        char buf[16];
        std::snprintf(buf, sizeof(buf), "%08x", bits);
        if (!out.empty())
            out += ',';
        out += buf;
    }
    return out;
}

std::filesystem::path XpsOverride::path(std::uint32_t queue) const
{
    return root_ / dev_ / "queues" / ("tx-" + std::to_string(queue)) / "xps_cpus";
}

std::string XpsOverride::apply(std::uint32_t tx_queues, unsigned cpus)
{
    std::vector<std::pair<std::uint32_t, std::string>> old;
    for (std::uint32_t q = 0; q < tx_queues; ++q) {
        auto text = read_file(path(q));
        if (!text)
            return "cannot read " + path(q).string() + ": " + std::strerror(errno) +
                   " (XPS needs CONFIG_XPS and an SMP kernel)";
        while (!text->empty() && text->back() == '\n')
            text->pop_back();
        old.emplace_back(q, *text);
    }
    for (const auto &[q, value] : old) {
        const std::string mask = q < cpus ? cpu_mask(q) : "0";
        if (const int err = write_file(path(q), mask); err != 0) {
            restore();
            return "writing " + mask + " to " + path(q).string() + " failed: " + std::strerror(err);
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
        if (const int err = write_file(path(q), value.empty() ? "0" : value); err != 0)
            failed += (failed.empty() ? "" : ", ") + path(q).string() + ": " + std::strerror(err);
    }
    saved_.clear();
    return failed.empty() ? std::string{} : "could not restore xps_cpus: " + failed;
}

} // namespace mqbench::sysfiles

#include "procstat.hpp"

#include <array>
#include <charconv>

#include "sysfs.hpp"

namespace mqbench::procstat {

std::optional<CpuTimes> parse(std::string_view text)
{
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.substr(0, 4) != "cpu ")
            continue;
        line.remove_prefix(4);
        std::array<std::uint64_t, 8> v{};
        std::size_t n = 0;
        while (n < v.size()) {
            while (!line.empty() && line.front() == ' ')
                line.remove_prefix(1);
            if (line.empty())
                break;
            const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), v[n]);
            if (ec != std::errc())
                return std::nullopt;
            line.remove_prefix(static_cast<std::size_t>(ptr - line.data()));
            if (!line.empty() && line.front() != ' ')
                return std::nullopt;
            ++n;
        }
        if (n < 4)
            return std::nullopt;
        return CpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    }
    return std::nullopt;
}

std::optional<CpuTimes> read(const std::string &path)
{
    const auto text = netutil::sysfs::read_file(path);
    if (!text)
        return std::nullopt;
    return parse(*text);
}

namespace {

double ticks_to_ns(std::uint64_t before, std::uint64_t after, long ticks_per_second)
{
    if (after <= before || ticks_per_second <= 0)
        return 0;
    return static_cast<double>(after - before) * 1e9 / static_cast<double>(ticks_per_second);
}

} // namespace

Delta delta(const CpuTimes &before, const CpuTimes &after, long ticks_per_second)
{
    Delta d;
    d.user_ns = ticks_to_ns(before.user, after.user, ticks_per_second);
    d.system_ns = ticks_to_ns(before.system, after.system, ticks_per_second);
    d.softirq_ns = ticks_to_ns(before.softirq, after.softirq, ticks_per_second);
    return d;
}

std::optional<double> ns_per_packet(const Delta &d, std::uint64_t packets)
{
    if (packets == 0)
        return std::nullopt;
    return d.busy_ns() / static_cast<double>(packets);
}

} // namespace mqbench::procstat

#include "pktgen.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

#include "sysfs.hpp"

namespace mqbench::pktgen {

std::string device_name(std::string_view dev, unsigned thread)
{
    return std::string(dev) + "@" + std::to_string(thread);
}

std::vector<Command> setup_plan(const Config &cfg, const std::vector<unsigned> &thread_ids)
{
    std::vector<Command> cmds;
    auto thread_file = [](unsigned id) {
        return "kpktgend_" + std::to_string(id);
    };
    std::vector<unsigned> others;
    for (const unsigned id : thread_ids) {
        if (id >= cfg.threads)
            others.push_back(id);
    }
    for (unsigned i = 0; i < cfg.threads; ++i) {
        cmds.push_back({thread_file(i), "rem_device_all"});
        cmds.push_back({thread_file(i), "add_device " + device_name(cfg.dev, i)});
    }
    for (const unsigned id : others)
        cmds.push_back({thread_file(id), "rem_device_all"});

    const std::uint32_t last_queue = cfg.tx_queues == 0 ? 0 : cfg.tx_queues - 1;
    for (unsigned i = 0; i < cfg.threads; ++i) {
        const std::string f = device_name(cfg.dev, i);
        const std::string q = std::to_string(std::min<std::uint32_t>(i, last_queue));
        cmds.push_back({f, "count " + std::to_string(cfg.count)});
        cmds.push_back({f, "pkt_size " + std::to_string(cfg.pkt_size)});
        cmds.push_back({f, "xmit_mode " + cfg.xmit_mode});
        cmds.push_back({f, "queue_map_min " + q});
        cmds.push_back({f, "queue_map_max " + q});
        cmds.push_back({f, "dst_mac " + cfg.dst_mac});
        cmds.push_back({f, "dst " + cfg.dst});
        cmds.push_back({f, "burst " + std::to_string(cfg.burst)});
        cmds.push_back({f, "clone_skb " + std::to_string(cfg.clone_skb)});
        if (cfg.flows > 1) {
            constexpr unsigned kFirstPort = 9;
            cmds.push_back({f, "udp_src_min " + std::to_string(kFirstPort)});
            cmds.push_back({f, "udp_src_max " + std::to_string(kFirstPort + cfg.flows - 1)});
            cmds.push_back({f, "flag UDPSRC_RND"});
        }
    }
    return cmds;
}

namespace {

// Sequential matcher over the result text.
class Scanner {
public:
    explicit Scanner(std::string_view s) : s_(s) {}

    bool lit(std::string_view l)
    {
        if (s_.substr(0, l.size()) != l)
            return false;
        s_.remove_prefix(l.size());
        return true;
    }
    bool spaces()
    {
        while (!s_.empty() && (s_.front() == ' ' || s_.front() == '\n' || s_.front() == '\t'))
            s_.remove_prefix(1);
        return true;
    }
    template <typename T>
    bool num(T &out)
    {
        const auto [ptr, ec] = std::from_chars(s_.data(), s_.data() + s_.size(), out);
        if (ec != std::errc() || ptr == s_.data())
            return false;
        s_.remove_prefix(static_cast<std::size_t>(ptr - s_.data()));
        return true;
    }

private:
    std::string_view s_;
};

} // namespace

std::optional<Result> parse_result(std::string_view text)
{
    // Whole device file: take what follows the "Result: " line start.
    if (const auto pos = text.find("Result: "); pos != std::string_view::npos)
        text.remove_prefix(pos + 8);
    Result r;
    Scanner s(text);
    // clang-format off
    const bool ok =
            s.lit("OK: ") && s.num(r.usec) &&
            s.lit("(c") && s.num(r.busy_usec) && s.lit("+d") && s.num(r.idle_usec) &&
            s.lit(") usec, ") && s.num(r.packets) &&
            s.lit(" (") && s.num(r.pkt_size) && s.lit("byte,") && s.num(r.frags) &&
            s.lit("frags)") && s.spaces() &&
            s.num(r.pps) && s.lit("pps ") && s.num(r.mbps) && s.lit("Mb/sec (") &&
            s.num(r.bps) && s.lit("bps) errors: ") && s.num(r.errors);
    // clang-format on
    if (!ok)
        return std::nullopt;
    return r;
}

std::optional<std::uint64_t> parse_pkts_sofar(std::string_view text)
{
    const auto pos = text.find("pkts-sofar: ");
    if (pos == std::string_view::npos)
        return std::nullopt;
    text.remove_prefix(pos + 12);
    std::uint64_t v = 0;
    Scanner s(text);
    if (!s.num(v))
        return std::nullopt;
    return v;
}

std::vector<unsigned> list_threads(const std::filesystem::path &root)
{
    std::vector<unsigned> ids;
    std::error_code ec;
    std::filesystem::directory_iterator it(root, ec);
    if (ec)
        return ids;
    constexpr std::string_view prefix = "kpktgend_";
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (ec)
            break;
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0)
            continue;
        unsigned id = 0;
        const char *first = name.data() + prefix.size();
        const char *last = name.data() + name.size();
        const auto [ptr, err] = std::from_chars(first, last, id);
        if (err == std::errc() && ptr == last && first != last)
            ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

bool Proc::available() const
{
    std::error_code ec;
    return std::filesystem::exists(root_ / "pgctrl", ec);
}

namespace {

// Returns 0 or an errno value. O_APPEND: pktgen ignores the offset; a fake root of plain
// files keeps a log.
int write_once(const std::filesystem::path &path, const std::string &line)
{
    return netutil::sysfs::write_errno(path, line, netutil::sysfs::WriteMode::append);
}

std::string hint(const Command &cmd, int err)
{
    if (err == EOPNOTSUPP && cmd.text.rfind("burst", 0) == 0)
        return " (burst > 1 needs xmit_mode start_xmit and a device with IFF_TX_SKB_SHARING)";
    if (err == EOPNOTSUPP && cmd.text.rfind("clone_skb", 0) == 0)
        return " (clone_skb needs a device with IFF_TX_SKB_SHARING, e.g. Ethernet-like ones)";
    if (err == ENODEV && cmd.text.rfind("add_device", 0) == 0)
        return " (no such network device)";
    if (err == ENOENT)
        return " (no such file below the pktgen root)";
    return {};
}

} // namespace

std::string Proc::write(const Command &cmd)
{
    const std::filesystem::path path = root_ / cmd.file;
    const std::string line = cmd.text + "\n";
    int err = write_once(path, line);
    // rem_device_all only flags the thread; the device goes away on its next loop.
    for (int tries = 0; err == EBUSY && cmd.text.rfind("add_device", 0) == 0 && tries < 40;
         ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        err = write_once(path, line);
    }
    if (err != 0)
        return "pktgen: writing '" + cmd.text + "' to " + path.string() +
               " failed: " + std::strerror(err) + hint(cmd, err);
    const std::lock_guard lock(mu_);
    journal_.push_back(cmd);
    return {};
}

std::string Proc::apply(const std::vector<Command> &cmds)
{
    for (const Command &c : cmds) {
        if (std::string err = write(c); !err.empty())
            return err;
    }
    return {};
}

std::optional<std::string> Proc::read(const std::string &file) const
{
    return netutil::sysfs::read_file(root_ / file);
}

std::vector<Command> Proc::journal() const
{
    const std::lock_guard lock(mu_);
    return journal_;
}

} // namespace mqbench::pktgen

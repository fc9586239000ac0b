#include "args.hpp"

#include <charconv>
#include <cmath>
#include <set>

#include "ktap.hpp"

namespace mqbench {
namespace {

template <typename T>
std::optional<T> parse_uint(std::string_view s)
{
    T v = 0;
    if (s.empty() || s.front() == '+' || s.front() == '-')
        return std::nullopt;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size())
        return std::nullopt;
    return v;
}

std::optional<double> parse_seconds(std::string_view s)
{
    double v = 0;
    if (s.empty() || s.front() == '+' || s.front() == '-')
        return std::nullopt;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

bool valid_ifname(std::string_view name, bool allow_at)
{
    // IFNAMSIZ is 16 including the terminating NUL.
    if (name.empty() || name.size() > 15 || name == "." || name == "..")
        return false;
    for (const char c : name) {
        if (c == '/' || c == ':' || static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
            return false;
        if (c == '@' && !allow_at)
            return false;
    }
    return true;
}

struct Failure {
    std::string message;
};

class Parser {
public:
    explicit Parser(const std::vector<std::string> &args) : args_(args) {}

    ParseResult run()
    {
        ParseResult r;
        try {
            r.options = parse();
            if (help_) {
                r.options.reset();
                r.help = true;
            }
        } catch (const Failure &f) {
            r.error = f.message;
        }
        return r;
    }

private:
    [[noreturn]] static void fail(std::string msg) { throw Failure{std::move(msg)}; }

    Options parse()
    {
        Options o;
        o.argv = args_;
        if (args_.empty())
            fail("missing subcommand");
        const std::string &sub = args_[0];
        if (sub == "-h" || sub == "--help" || sub == "help") {
            help_ = true;
            return o;
        }
        if (sub == "pktgen")
            o.cmd = Subcommand::pktgen;
        else if (sub == "gen")
            o.cmd = Subcommand::gen;
        else
            fail("unknown subcommand '" + sub + "'");

        const bool pg = o.cmd == Subcommand::pktgen;
        bool have_mode = false;
        for (std::size_t i = 1; i < args_.size(); ++i) {
            std::string name = args_[i];
            std::optional<std::string> inline_value;
            if (name == "-h" || name == "--help") {
                help_ = true;
                return o;
            }
            if (name.rfind("--", 0) != 0 || name.size() == 2)
                fail("unexpected argument '" + name + "'");
            if (const auto eq = name.find('='); eq != std::string::npos) {
                inline_value = name.substr(eq + 1);
                name.resize(eq);
            }
            if (!seen_.insert(name).second)
                fail(name + " given more than once");

            auto flag = [&] {
                if (inline_value)
                    fail(name + " takes no value");
            };
            auto value = [&]() -> std::string {
                if (inline_value)
                    return *inline_value;
                if (i + 1 >= args_.size())
                    fail(name + " needs a value");
                return args_[++i];
            };
            auto only = [&](bool ok, const char *sub_name) {
                if (!ok)
                    fail(name + " is only valid for '" + sub_name + "'");
            };
            auto number = [&](std::uint64_t lo, std::uint64_t hi) -> std::uint64_t {
                const std::string v = value();
                const auto n = parse_uint<std::uint64_t>(v);
                if (!n || *n < lo || *n > hi)
                    fail(ksft::cat(name, ": '", v, "' is not an integer in [", lo, ", ", hi, "]"));
                return *n;
            };

            if (name == "--dev") {
                o.dev = value();
                if (!valid_ifname(o.dev, false))
                    fail("--dev: '" + o.dev + "' is not a valid interface name");
            } else if (name == "--threads") {
                o.threads = static_cast<unsigned>(number(1, kMaxThreads));
            } else if (name == "--count") {
                o.count = number(1, kMaxCount);
            } else if (name == "--duration") {
                const std::string v = value();
                const auto d = parse_seconds(v);
                if (!d || *d <= 0 || *d > kMaxDuration)
                    fail("--duration: '" + v + "' is not a number of seconds in (0, 86400]");
                o.duration = d;
            } else if (name == "--size") {
                o.size = static_cast<std::size_t>(number(kMinSize, kMaxSize));
            } else if (name == "--json") {
                flag();
                o.json = true;
            } else if (name == "--quiet") {
                flag();
                o.quiet = true;
            } else if (name == "--dst-mac") {
                o.dst_mac = value();
                if (!valid_mac(o.dst_mac))
                    fail("--dst-mac: '" + o.dst_mac + "' is not a MAC address (aa:bb:cc:dd:ee:ff)");
            } else if (name == "--xps") {
                only(pg, "pktgen");
                flag();
                o.xps = true;
            } else if (name == "--burst") {
                only(pg, "pktgen");
                o.burst = static_cast<unsigned>(number(1, 65536));
            } else if (name == "--clone-skb") {
                only(pg, "pktgen");
                o.clone_skb = static_cast<unsigned>(number(0, 1000000000));
            } else if (name == "--xmit-mode") {
                only(pg, "pktgen");
                o.xmit_mode = value();
                if (o.xmit_mode != "queue_xmit" && o.xmit_mode != "start_xmit")
                    fail("--xmit-mode: '" + o.xmit_mode + "' is not one of queue_xmit, start_xmit");
            } else if (name == "--mode") {
                only(!pg, "gen");
                const std::string v = value();
                if (v == "sendmmsg")
                    o.mode = GenMode::sendmmsg;
                else if (v == "tx_ring")
                    o.mode = GenMode::tx_ring;
                else if (v == "udp")
                    o.mode = GenMode::udp;
                else
                    fail("--mode: '" + v + "' is not one of sendmmsg, tx_ring, udp");
                have_mode = true;
            } else if (name == "--qdisc-bypass") {
                only(!pg, "gen");
                flag();
                o.qdisc_bypass = true;
            } else if (name == "--batch") {
                only(!pg, "gen");
                o.batch = static_cast<unsigned>(number(1, 1024));
            } else {
                fail("unknown option " + name);
            }
        }

        if (o.dev.empty())
            fail("--dev is required");
        if (o.threads == 0)
            fail("--threads is required");
        if (o.count && o.duration)
            fail("--count and --duration are mutually exclusive");
        if (!o.count && !o.duration)
            o.count = kDefaultCount;
        if (!pg && !have_mode)
            fail("--mode is required for 'gen'");
        if (o.mode == GenMode::udp && o.qdisc_bypass)
            fail("--qdisc-bypass applies to AF_PACKET modes (sendmmsg, tx_ring), not udp");
        if (pg && o.burst > 1 && o.xmit_mode == "queue_xmit")
            fail("--burst > 1 needs --xmit-mode start_xmit (pktgen rejects burst with "
                 "queue_xmit: EOPNOTSUPP)");
        if (pg && o.dev.size() + 1 + std::to_string(o.threads - 1).size() > 31)
            fail("--dev: name too long for pktgen's NAME@THREAD device names");
        return o;
    }

    const std::vector<std::string> &args_;
    std::set<std::string> seen_;
    bool help_ = false;
};

} // namespace

bool valid_mac(std::string_view mac)
{
    if (mac.size() != 17)
        return false;
    for (std::size_t i = 0; i < mac.size(); ++i) {
        const char c = mac[i];
        if (i % 3 == 2) {
            if (c != ':')
                return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
            return false;
        }
    }
    return true;
}

ParseResult parse_args(const std::vector<std::string> &args)
{
    return Parser(args).run();
}

std::string usage()
{
    return R"(usage:
  mqbench pktgen --dev NAME --threads N [--count C | --duration SECONDS] [--size BYTES]
                 [--xps] [--burst B] [--clone-skb K] [--xmit-mode queue_xmit|start_xmit]
                 [--dst-mac MAC] [--json] [--quiet]
  mqbench gen --dev NAME --mode sendmmsg|tx_ring|udp --threads N
              [--count C | --duration SECONDS] [--size BYTES] [--qdisc-bypass]
              [--batch B] [--dst-mac MAC] [--json] [--quiet]
  mqbench --help

pktgen  drives the kernel's pktgen (/proc/net/pktgen; modprobe pktgen): one device
        NAME@i per kpktgend_i thread, queue_map_min/max i, dst 198.18.0.1.
gen     user-space generator, one thread pinned per online CPU: AF_PACKET sendmmsg or
        PACKET_TX_RING, or udp (UDP sockets bound to NAME sending to 198.18.0.1:9; the
        device needs an address, a route and, unless it is NOARP, a neighbour entry).

  --count C        packets per thread (default 100000)
  --duration S     run for S seconds instead (fractions allowed)
  --size BYTES     frame size without FCS, 42..9000 (default 60)
  --xps            map tx-i to CPU i through xps_cpus during the run (restored after)
  --burst B        pktgen burst (B > 1 needs --xmit-mode start_xmit)
  --clone-skb K    pktgen clone_skb
  --xmit-mode M    pktgen xmit_mode (default queue_xmit)
  --dst-mac MAC    destination MAC (default 02:00:00:00:00:02)
  --qdisc-bypass   PACKET_QDISC_BYPASS on the AF_PACKET sockets
  --batch B        sendmmsg batch / TX ring frames per kick (default 64)
  --json           print one JSON object instead of a table
  --quiet          no live progress on stderr

exit status: 0 ok, 1 runtime failure, 2 bad arguments
)";
}

std::string_view to_string(Subcommand c)
{
    return c == Subcommand::pktgen ? "pktgen" : "gen";
}

std::string_view to_string(GenMode m)
{
    switch (m) {
    case GenMode::sendmmsg:
        return "sendmmsg";
    case GenMode::tx_ring:
        return "tx_ring";
    case GenMode::udp:
        return "udp";
    }
    return "?";
}

json::Value options_to_json(const Options &o)
{
    json::Value a = json::Value::object();
    a.set("dev", o.dev);
    a.set("threads", o.threads);
    a.set("count", o.count);
    a.set("duration", o.duration);
    a.set("size", o.size);
    a.set("dst_mac", o.dst_mac);
    if (o.cmd == Subcommand::pktgen) {
        a.set("xps", o.xps);
        a.set("burst", o.burst);
        a.set("clone_skb", o.clone_skb);
        a.set("xmit_mode", o.xmit_mode);
    } else {
        a.set("mode", to_string(o.mode));
        a.set("qdisc_bypass", o.qdisc_bypass);
        a.set("batch", o.batch);
    }
    a.set("json", o.json);
    a.set("quiet", o.quiet);
    json::Value argv = json::Value::array();
    for (const std::string &s : o.argv)
        argv.push(s);
    a.set("argv", std::move(argv));
    return a;
}

} // namespace mqbench

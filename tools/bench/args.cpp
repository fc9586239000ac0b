#include "args.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <utility>

#include <CLI/CLI.hpp>

namespace mqbench {
namespace {

bool valid_ifname(std::string_view name)
{
    // IFNAMSIZ is 16 including the terminating NUL; '@' would clash with pktgen's
    // NAME@THREAD device names.
    if (name.empty() || name.size() > 15 || name == "." || name == "..")
        return false;
    for (const char c : name) {
        if (c == '/' || c == ':' || c == '@' || static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
            return false;
    }
    return true;
}

// A CLI11 check: an empty string if s is fine, else the message.
CLI::Validator validator(std::string name, std::function<std::string(const std::string &)> fn)
{
    return {[fn = std::move(fn)](std::string &s) { return fn(s); }, "", std::move(name)};
}

// Plain decimal digits: CLI11 alone would also take "+2", "0x10" or "0b11". Checked before
// the CLI::Range of each number, which stops at the first failing check.
CLI::Validator decimal()
{
    return validator("DECIMAL", [](const std::string &s) -> std::string {
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
            return "'" + s + "' is not a decimal integer";
        return {};
    });
}

CLI::Validator seconds()
{
    return validator("SECONDS", [](const std::string &s) -> std::string {
        double v = 0;
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || s.front() == '+' || s.front() == '-' || ec != std::errc() ||
            ptr != s.data() + s.size() || !std::isfinite(v) || v <= 0 || v > kMaxDuration)
            return "'" + s + "' is not a number of seconds in (0, 86400]";
        return {};
    });
}

CLI::Validator ifname()
{
    return validator("NAME", [](const std::string &s) -> std::string {
        return valid_ifname(s) ? "" : "'" + s + "' is not a valid interface name";
    });
}

CLI::Validator mac()
{
    return validator("MAC", [](const std::string &s) -> std::string {
        return valid_mac(s) ? "" : "'" + s + "' is not a MAC address (aa:bb:cc:dd:ee:ff)";
    });
}

// The command line, bound to the fields of o.
struct Cli {
    CLI::App app{"multi-queue transmit benchmark", std::string(kToolName)};
    CLI::App *pktgen = nullptr;
    CLI::App *gen = nullptr;
    CLI::App *qstats = nullptr;
    std::uint64_t count = 0;
    double duration = 0;
    std::string mode;

    explicit Cli(Options &o)
    {
        app.require_subcommand(1);
        // Every option at most once (--threads 1 --threads 2 is an error, not the last one).
        app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
        pktgen = app.add_subcommand("pktgen");
        gen = app.add_subcommand("gen");
        for (CLI::App *sub : {pktgen, gen}) {
            sub->add_option("--dev", o.dev)->required()->check(ifname());
            number(*sub, "--threads", o.threads, 1U, kMaxThreads)->required();
            CLI::Option *c = number(*sub, "--count", count, std::uint64_t{1}, kMaxCount);
            c->excludes(sub->add_option("--duration", duration)->check(seconds()));
            number(*sub, "--size", o.size, kMinSize, kMaxSize);
            sub->add_option("--dst-mac", o.dst_mac)->check(mac());
            flag(*sub, "--json", o.json);
            flag(*sub, "--quiet", o.quiet);
        }
        qstats = app.add_subcommand("qstats");
        qstats->add_option("--dev", o.dev)->required()->check(ifname());
        flag(*qstats, "--json", o.json);
        flag(*pktgen, "--xps", o.xps);
        flag(*pktgen, "--one-queue", o.one_queue);
        number(*pktgen, "--burst", o.burst, 1U, 65536U);
        number(*pktgen, "--clone-skb", o.clone_skb, 0U, 1000000000U);
        number(*pktgen, "--flows", o.flows, 1U, 65000U);
        pktgen->add_option("--xmit-mode", o.xmit_mode)
                ->check(CLI::IsMember({"queue_xmit", "start_xmit"}));
        gen->add_option("--mode", mode)
                ->required()
                ->check(CLI::IsMember({"sendmmsg", "tx_ring", "udp"}));
        flag(*gen, "--qdisc-bypass", o.qdisc_bypass);
        number(*gen, "--batch", o.batch, 1U, 1024U);
    }

    // A decimal number in [lo, hi].
    template <typename T>
    static CLI::Option *number(CLI::App &sub, const std::string &name, T &value, T lo, T hi)
    {
        return sub.add_option(name, value)->check(decimal())->check(CLI::Range(lo, hi));
    }

    static void flag(CLI::App &sub, const std::string &name, bool &value)
    {
        sub.add_flag(name, value)
                ->disable_flag_override()
                ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
    }

    CLI::App *parsed() const
    {
        return pktgen->parsed()   ? pktgen
               : gen->parsed()    ? gen
               : qstats->parsed() ? qstats
                                  : nullptr;
    }

    // For an option given to the wrong subcommand: "--mode is only valid for 'gen'",
    // "--threads is only valid for 'pktgen' and 'gen'".
    std::string misplaced() const
    {
        const CLI::App &sub = *parsed();
        for (std::string arg : app.remaining(true)) {
            arg = arg.substr(0, arg.find('='));
            if (sub.get_option_no_throw(arg) != nullptr)
                continue;
            std::string where;
            for (const CLI::App *other : {pktgen, gen, qstats}) {
                if (other != &sub && other->get_option_no_throw(arg) != nullptr)
                    where.append(where.empty() ? "'" : "' and '").append(other->get_name());
            }
            if (!where.empty())
                return arg.append(" is only valid for ").append(where).append("'");
        }
        return {};
    }
};

// The checks across options, after CLI11 has parsed them; an error message or "".
std::string check_combinations(const Options &o)
{
    const bool pg = o.cmd == Subcommand::pktgen;
    if (o.mode == GenMode::udp && o.qdisc_bypass)
        return "--qdisc-bypass applies to AF_PACKET modes (sendmmsg, tx_ring), not udp";
    if (pg && o.burst > 1 && o.xmit_mode == "queue_xmit")
        return "--burst > 1 needs --xmit-mode start_xmit (pktgen rejects burst with "
               "queue_xmit: EOPNOTSUPP)";
    if (pg && o.one_queue && o.xps)
        return "--one-queue and --xps contradict: XPS maps each thread to its own queue";
    return {};
}

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
    ParseResult r;
    if (!args.empty() && args.front() == "help") {
        r.help = true;
        return r;
    }
    Options o;
    o.argv = args;
    Cli cli(o);
    std::vector<std::string> reversed(args.rbegin(), args.rend()); // as CLI11 takes them
    try {
        cli.app.parse(reversed);
    } catch (const CLI::CallForHelp &) {
        r.help = true;
        return r;
    } catch (const CLI::ExtrasError &e) {
        const std::string where = cli.parsed() != nullptr ? cli.misplaced() : std::string();
        r.error = where.empty() ? e.what() : where;
        return r;
    } catch (const CLI::ParseError &e) {
        r.error = e.what();
        return r;
    }
    const CLI::App &sub = *cli.parsed();
    o.cmd = &sub == cli.pktgen ? Subcommand::pktgen
            : &sub == cli.gen  ? Subcommand::gen
                               : Subcommand::qstats;
    if (o.cmd == Subcommand::qstats) {
        r.options = std::move(o);
        return r;
    }
    if (sub.count("--count") > 0)
        o.count = cli.count;
    else if (sub.count("--duration") > 0)
        o.duration = cli.duration;
    else
        o.count = kDefaultCount;
    if (o.cmd == Subcommand::gen)
        o.mode = cli.mode == "tx_ring" ? GenMode::tx_ring
                 : cli.mode == "udp"   ? GenMode::udp
                                       : GenMode::sendmmsg;
    r.error = check_combinations(o);
    if (r.error.empty())
        r.options = std::move(o);
    return r;
}

std::string usage()
{
    return R"(usage:
  mqbench pktgen --dev NAME --threads N [--count C | --duration SECONDS] [--size BYTES]
                 [--xps | --one-queue] [--burst B] [--clone-skb K] [--flows F]
                 [--xmit-mode queue_xmit|start_xmit]
                 [--dst-mac MAC] [--json] [--quiet]
  mqbench gen --dev NAME --mode sendmmsg|tx_ring|udp --threads N
              [--count C | --duration SECONDS] [--size BYTES] [--qdisc-bypass]
              [--batch B] [--dst-mac MAC] [--json] [--quiet]
  mqbench qstats --dev NAME [--json]
  mqbench --help

pktgen  drives the kernel's pktgen (/proc/net/pktgen; modprobe pktgen): one device
        NAME@i per kpktgend_i thread, queue_map_min/max i, dst 198.18.0.1.
gen     user-space generator, one thread pinned per online CPU: AF_PACKET sendmmsg or
        PACKET_TX_RING, or udp (UDP sockets bound to NAME sending to 198.18.0.1:9; the
        device needs an address, a route and, unless it is NOARP, a neighbour entry).
qstats  what NAME reports per queue: netdev QSTATS_GET with scope queue and device
        (or the kernel's error, e.g. EOPNOTSUPP), and its rtnetlink TX counters.

  --count C        packets per thread (default 100000)
  --duration S     run for S seconds instead (fractions allowed)
  --size BYTES     frame size without FCS, 42..9000 (default 60)
  --xps            map tx-i to CPU i through xps_cpus during the run (restored after)
  --one-queue      queue_map_min/max 0 for every thread, pktgen's default: with
                   --xmit-mode start_xmit all threads send on queue 0
  --burst B        pktgen burst (B > 1 needs --xmit-mode start_xmit)
  --clone-skb K    pktgen clone_skb
  --flows F        random UDP source port over F values per packet (pktgen UDPSRC_RND)
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
    switch (c) {
    case Subcommand::pktgen:
        return "pktgen";
    case Subcommand::gen:
        return "gen";
    case Subcommand::qstats:
        return "qstats";
    }
    return "?";
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

nlohmann::ordered_json options_to_json(const Options &o)
{
    nlohmann::ordered_json a;
    a["dev"] = o.dev;
    if (o.cmd == Subcommand::qstats) {
        a["json"] = o.json;
        a["argv"] = o.argv;
        return a;
    }
    a["threads"] = o.threads;
    a["count"] = json_or_null(o.count);
    a["duration"] = json_or_null(o.duration);
    a["size"] = o.size;
    a["dst_mac"] = o.dst_mac;
    if (o.cmd == Subcommand::pktgen) {
        a["xps"] = o.xps;
        a["one_queue"] = o.one_queue;
        a["burst"] = o.burst;
        a["clone_skb"] = o.clone_skb;
        a["flows"] = o.flows;
        a["xmit_mode"] = o.xmit_mode;
    } else {
        a["mode"] = to_string(o.mode);
        a["qdisc_bypass"] = o.qdisc_bypass;
        a["batch"] = o.batch;
    }
    a["json"] = o.json;
    a["quiet"] = o.quiet;
    a["argv"] = o.argv;
    return a;
}

} // namespace mqbench

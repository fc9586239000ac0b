#include "churn_plan.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <utility>

namespace churn {
namespace {

template <typename... Args>
std::string concat(Args &&...args)
{
    std::ostringstream os;
    (os << ... << std::forward<Args>(args));
    return os.str();
}

template <typename T>
bool parse_number(std::string_view s, T &out)
{
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s.remove_prefix(2);
        base = 16;
    }
    T v{};
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
        return false;
    out = v;
    return true;
}

std::string handle_str(std::uint16_t major)
{
    std::ostringstream os;
    os << std::hex << major << ':';
    return os.str();
}

std::string filter_where(FilterKind k, FilterPlace p, const State &s)
{
    if (p == FilterPlace::root)
        return concat(filter_name(k), " on root ", root_name(s.root), ' ',
                      handle_str(s.root_major));
    return concat(filter_name(k), " at clsact egress");
}

} // namespace

std::uint64_t Rng::next()
{
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::string parse_options(const std::vector<std::string_view> &args, Options &out)
{
    out = Options{};
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "-h" || a == "--help") {
            out.help = true;
            continue;
        }
        if (a != "--seconds" && a != "--seed" && a != "--queues")
            return concat("unknown argument '", a, "'");
        if (i + 1 == args.size())
            return concat(a, " needs a value");
        const std::string_view v = args[++i];
        if (a == "--seconds") {
            unsigned n = 0;
            if (!parse_number(v, n) || n == 0 || n > kMaxSeconds)
                return concat("--seconds: '", v, "' is not a number of seconds in 1..",
                              kMaxSeconds);
            out.seconds = n;
        } else if (a == "--seed") {
            std::uint64_t s = 0;
            if (!parse_number(v, s))
                return concat("--seed: '", v, "' is not an unsigned 64-bit number");
            out.seed = s;
        } else {
            unsigned n = 0;
            if (!parse_number(v, n) || n < 2 || n > kMaxQueues)
                return concat("--queues: '", v, "' is not a queue count in 2..", kMaxQueues);
            out.queues = n;
        }
    }
    return {};
}

std::string usage(std::string_view prog)
{
    return concat("usage: ", prog, " [--seconds N] [--seed S] [--queues N]\n",
                  "  --seconds N  how long the ", kPhases, " phases take together (default ",
                  kDefaultSeconds, ")\n",
                  "  --seed S     replay the changes of an earlier run (its \"seed\" line)\n",
                  "  --queues N   TX queues of the dummy device (default: max(", kMinQueues,
                  ", CPUs), at most ", kMaxQueues, ")\n");
}

unsigned default_queues(std::size_t cpus)
{
    const std::size_t n = std::max<std::size_t>(kMinQueues, cpus);
    return static_cast<unsigned>(std::min<std::size_t>(n, kMaxQueues));
}

std::string_view op_name(OpKind k)
{
    switch (k) {
    case OpKind::channels:
        return "channels";
    case OpKind::root:
        return "root qdisc";
    case OpKind::limit:
        return "limit";
    case OpKind::filter_matchall:
        return "matchall filter";
    case OpKind::filter_u32:
        return "u32 filter";
    case OpKind::carrier:
        return "carrier";
    case OpKind::updown:
        return "down/up";
    }
    return "?";
}

std::vector<PhasePlan> make_plan(std::uint64_t seed, unsigned seconds, unsigned phases)
{
    Rng rng(seed);
    std::vector<PhasePlan> plan(phases);
    const std::uint64_t phase_ms = phases == 0 ? 0 : std::uint64_t{seconds} * 1000 / phases;
    for (unsigned p = 0; p < phases; ++p) {
        PhasePlan &ph = plan[p];
        ph.exact = p % 2 == 0;
        std::vector<OpKind> deck(kOpKinds.begin(), kOpKinds.end());
        // About one more change per second of phase, on top of one of each kind.
        const std::uint64_t extra = rng.below(phase_ms / 1000 + 2);
        for (std::uint64_t i = 0; i < extra; ++i)
            deck.push_back(kOpKinds[rng.below(kOpKinds.size())]);
        for (std::size_t i = deck.size(); i > 1; --i)
            std::swap(deck[i - 1], deck[rng.below(i)]);
        const std::uint64_t gap = phase_ms / (deck.size() + 1);
        for (OpKind k : deck) {
            ph.draws.push_back({k, rng.next()});
            // 50 .. 150 % of the mean gap
            ph.gaps_ms.push_back(static_cast<unsigned>(gap * (50 + rng.below(101)) / 100));
        }
        ph.tail_ms = static_cast<unsigned>(gap);
    }
    return plan;
}

std::string_view root_name(RootKind k)
{
    switch (k) {
    case RootKind::fq_codel:
        return "fq_codel";
    case RootKind::codel:
        return "codel";
    case RootKind::pfifo_fast:
        return "pfifo_fast";
    case RootKind::mq:
        return "mq";
    }
    return "?";
}

bool has_limit(RootKind k)
{
    return k == RootKind::codel || k == RootKind::fq_codel;
}

std::string_view filter_name(FilterKind k)
{
    return k == FilterKind::matchall ? "matchall" : "u32";
}

std::uint16_t next_major(std::uint16_t m)
{
    return static_cast<std::uint16_t>(m >= kMaxMajor ? 1 : m + 1);
}

Action resolve(const State &s, const Draw &d)
{
    Action a;
    a.from = d.kind;
    switch (d.kind) {
    case OpKind::channels: {
        const unsigned n = std::max(s.num_tx, 1U);
        unsigned t = 1 + static_cast<unsigned>(d.arg % n);
        if (t == s.real_tx && n > 1)
            t = t % n + 1;
        a.type = ActionType::set_channels;
        a.channels = t;
        // netif_set_real_num_tx_queues() resets the qdiscs of the queues it disables.
        a.lossy = t < s.real_tx && s.up;
        break;
    }
    case OpKind::root: {
        std::vector<RootKind> others;
        for (RootKind k : kRootKinds) {
            if (k != s.root)
                others.push_back(k);
        }
        a.type = ActionType::replace_root;
        a.root = others[d.arg % others.size()];
        a.root_major = next_major(s.root_major);
        a.lossy = s.up;
        break;
    }
    case OpKind::limit:
        if (has_limit(s.root)) {
            a.type = ActionType::change_limit;
            a.limit = s.limit0 ? kRaisedLimit : 0;
            // fq_codel_change() frees the packets above the new limit without counting
            // them as drops (codel_change() counts them).
            a.lossy = *a.limit == 0 && s.root == RootKind::fq_codel && s.up;
        } else {
            a.type = ActionType::replace_root;
            a.root = d.arg % 2 == 0 ? RootKind::codel : RootKind::fq_codel;
            a.root_major = next_major(s.root_major);
            a.limit = 0;
            a.lossy = s.up;
        }
        break;
    case OpKind::filter_matchall:
    case OpKind::filter_u32: {
        a.filter = d.kind == OpKind::filter_u32 ? FilterKind::u32 : FilterKind::matchall;
        const bool on_root = s.has_filter(a.filter, FilterPlace::root);
        const bool on_clsact = s.has_filter(a.filter, FilterPlace::clsact);
        if (on_root || on_clsact) {
            a.type = ActionType::delete_filter;
            if (on_root && on_clsact)
                a.place = d.arg % 2 == 0 ? FilterPlace::root : FilterPlace::clsact;
            else
                a.place = on_root ? FilterPlace::root : FilterPlace::clsact;
        } else {
            a.type = ActionType::add_filter;
            a.place = s.root == RootKind::fq_codel && d.arg % 2 == 0 ? FilterPlace::root
                                                                     : FilterPlace::clsact;
            a.queue_mapping = static_cast<std::uint16_t>((d.arg >> 8) % std::max(s.num_tx, 1U));
        }
        break;
    }
    case OpKind::carrier:
        a.type = ActionType::set_carrier;
        a.on = !s.carrier;
        // linkwatch deactivates the qdiscs with a reset (dev_deactivate(dev, true)).
        a.lossy = !a.on && s.up;
        break;
    case OpKind::updown:
        a.type = ActionType::set_up;
        a.on = !s.up;
        // dev_close() resets the qdiscs.
        a.lossy = !a.on;
        break;
    }
    // Half of the switches off come back on within the change, so that the device is not
    // off for half of the run.
    if ((a.type == ActionType::set_carrier || a.type == ActionType::set_up) && !a.on &&
        (d.arg >> 1) % 2 == 1)
        a.blip_ms =
                kMinBlipMs + static_cast<unsigned>((d.arg >> 2) % (kMaxBlipMs - kMinBlipMs + 1));
    return a;
}

void apply(State &s, const Action &a)
{
    switch (a.type) {
    case ActionType::set_channels:
        s.real_tx = a.channels;
        break;
    case ActionType::replace_root:
        s.root = a.root;
        s.root_major = a.root_major;
        s.limit0 = a.limit && *a.limit == 0;
        // The filters of the old root go with it.
        for (auto &kind : s.filters)
            kind[static_cast<std::size_t>(FilterPlace::root)] = false;
        break;
    case ActionType::change_limit:
        s.limit0 = a.limit && *a.limit == 0;
        break;
    case ActionType::add_filter:
    case ActionType::delete_filter:
        s.filters[static_cast<std::size_t>(a.filter)][static_cast<std::size_t>(a.place)] =
                a.type == ActionType::add_filter;
        break;
    case ActionType::set_carrier:
        s.carrier = a.on || a.blip_ms != 0;
        break;
    case ActionType::set_up:
        s.up = a.on || a.blip_ms != 0;
        break;
    }
}

std::string describe(const Action &a, const State &s)
{
    switch (a.type) {
    case ActionType::set_channels:
        return concat("channels tx ", s.real_tx, " -> ", a.channels);
    case ActionType::replace_root:
        return concat("replace root ", root_name(s.root), ' ', handle_str(s.root_major), " with ",
                      root_name(a.root), ' ', handle_str(a.root_major),
                      a.limit ? concat(" limit ", *a.limit) : std::string());
    case ActionType::change_limit:
        return concat("change ", root_name(s.root), ' ', handle_str(s.root_major), " limit ",
                      a.limit.value_or(0));
    case ActionType::add_filter:
        return concat("add ", filter_where(a.filter, a.place, s),
                      a.place == FilterPlace::clsact && a.filter == FilterKind::matchall
                              ? concat(" (skbedit queue_mapping ", a.queue_mapping, ")")
                              : std::string());
    case ActionType::delete_filter:
        return concat("delete ", filter_where(a.filter, a.place, s));
    case ActionType::set_carrier:
        if (a.blip_ms != 0)
            return concat("carrier off, on again after ", a.blip_ms, " ms");
        return a.on ? "carrier on" : "carrier off";
    case ActionType::set_up:
        if (a.blip_ms != 0)
            return concat("down, up again after ", a.blip_ms, " ms");
        return a.on ? "up" : "down";
    }
    return "?";
}

std::uint64_t delta32(std::uint32_t before, std::uint32_t after)
{
    return static_cast<std::uint32_t>(after - before);
}

namespace {

std::string join_lossy(const std::vector<std::string> &changes)
{
    std::string out;
    for (const std::string &c : changes)
        out += concat(out.empty() ? "" : "; ", c);
    return out;
}

// Why a balance that is not exact is wrong, or empty when it may stand: only a live phase
// with lossy changes may fall short, by at most kMaxUncountedPerLossyChange each.
std::string shortfall_problem(const Ledger &l, std::int64_t unaccounted)
{
    if (unaccounted < 0)
        return concat("counters exceed what was offered by ", -unaccounted);
    if (l.exact)
        return concat(unaccounted, " packets offered but not counted in an exact phase");
    if (l.lossy.empty())
        return concat(unaccounted, " packets offered but not counted, with no change made while "
                                   "sending that frees packets uncounted");
    const std::uint64_t bound = kMaxUncountedPerLossyChange * l.lossy.size();
    if (static_cast<std::uint64_t>(unaccounted) > bound)
        return concat(unaccounted, " packets freed without a count by ", l.lossy.size(),
                      " lossy changes made while sending, more than ", bound, " (",
                      kMaxUncountedPerLossyChange, " each; ", join_lossy(l.lossy), ")");
    return {};
}

} // namespace

Balance balance(const Ledger &l)
{
    const std::uint64_t offered = l.queued_before + l.sent + l.nobufs;
    const std::uint64_t firm =
            l.link_tx + l.link_dropped + l.qdisc_drops + l.freed + l.queued_after;
    // The snapshot of an mq root replaced while sending is credited only as far as it
    // explains a shortfall, and never in an exact phase.
    const std::uint64_t credit =
            l.exact || firm >= offered ? 0 : std::min(l.freed_at_most, offered - firm);
    const std::uint64_t counted = firm + credit;
    Balance b;
    b.unaccounted = static_cast<std::int64_t>(offered - counted);
    const std::string equation =
            concat("offered ", offered, " (queued before ", l.queued_before, " + sent ", l.sent,
                   " + ENOBUFS ", l.nobufs, "); counted ", counted, " (link tx_packets +",
                   l.link_tx, ", tx_dropped +", l.link_dropped, ", qdisc drops +", l.qdisc_drops,
                   ", freed with a deleted qdisc ", l.freed, ", queued after ", l.queued_after,
                   l.freed_at_most == 0 ? std::string()
                                        : concat(", queued in mq roots replaced while sending ",
                                                 credit, " of at most ", l.freed_at_most),
                   ")");
    std::string problem = b.unaccounted == 0 ? std::string() : shortfall_problem(l, b.unaccounted);
    if (problem.empty() && l.exact && l.freed_at_most > 0)
        problem = "an exact phase replaced an mq root while sending";
    if (problem.empty() && l.exact && l.link_tx < kMinExactTransmitted)
        problem = concat("an exact phase transmitted ", l.link_tx, " packets, fewer than the ",
                         kMinExactTransmitted, " its balance needs to show anything");
    b.ok = problem.empty();
    if (!b.ok)
        b.message = concat(problem, ": ", equation);
    else if (b.unaccounted == 0)
        b.message = concat("counters add up: ", equation);
    else
        b.message = concat(b.unaccounted,
                           " packets freed without a count by changes made while sending (",
                           join_lossy(l.lossy), "): ", equation);
    return b;
}

std::string check_queues(const QueueReading &r, std::map<std::uint32_t, std::uint64_t> &last)
{
    std::string problems;
    auto add = [&](const std::string &p) {
        problems += concat(problems.empty() ? "" : "; ", p);
    };
    if (r.device != r.link)
        add(concat("device-scope tx-packets ", r.device, " != link tx_packets ", r.link));
    if (r.up) {
        bool exact_ids = r.tx.size() == r.real_tx;
        for (std::uint32_t q = 0; exact_ids && q < r.real_tx; ++q)
            exact_ids = r.tx.count(q) != 0;
        if (!exact_ids) {
            std::string ids;
            for (const auto &[q, n] : r.tx)
                ids += concat(ids.empty() ? "" : ",", q);
            add(concat("queue scope lists TX queues [", ids, "], expected 0..", r.real_tx - 1));
        }
    } else if (!r.tx.empty()) {
        add(concat("queue scope lists ", r.tx.size(), " TX queues of a device that is down"));
    }
    std::uint64_t sum = 0;
    for (const auto &[q, n] : r.tx) {
        sum += n;
        const auto it = last.find(q);
        if (it != last.end() && n < it->second)
            add(concat("tx-", q, " went back from ", it->second, " to ", n));
    }
    if (sum > r.device) {
        add(concat("the queues add up to ", sum, ", above the device total ", r.device));
    } else if (r.up) {
        std::uint64_t held = 0;
        for (const auto &[q, n] : last) {
            if (r.tx.count(q) == 0)
                held += n;
        }
        if (r.device - sum < held)
            add(concat("base ", r.device - sum, " (device ", r.device, " - queues ", sum,
                       ") below the ", held, " packets the disabled queues had counted"));
    }
    for (const auto &[q, n] : r.tx)
        last[q] = n;
    return problems;
}

std::string check_live(const LiveReading &prev, const LiveReading &cur, std::uint64_t in_flight)
{
    if (cur.device < prev.device)
        return concat("device-scope tx-packets went back from ", prev.device, " to ", cur.device);
    if (cur.link < prev.link)
        return concat("link tx_packets went back from ", prev.link, " to ", cur.link);
    if (cur.device > cur.link + in_flight)
        return concat("device-scope tx-packets ", cur.device, " above the link tx_packets ",
                      cur.link, " read after it by more than the ", in_flight,
                      " packet(s) in flight (one per CPU)");
    return {};
}

LogWeight weigh_kernel_line(std::string_view line)
{
    if (line.find("KCSAN:") != std::string_view::npos)
        return LogWeight::note;
    static constexpr std::string_view kProblems[] = {
            "WARNING:",
            "BUG:",
            "Oops",
            "kernel BUG at",
            "UBSAN:",
            "KASAN:",
            "KMSAN:",
            "general protection fault",
            "possible circular locking",
            "inconsistent lock state",
            "INFO: task",
            "detected stall",
            "soft lockup",
            "hard LOCKUP",
            "refcount_t:",
            "list_add corruption",
            "list_del corruption",
    };
    for (std::string_view p : kProblems) {
        if (line.find(p) != std::string_view::npos)
            return LogWeight::problem;
    }
    return LogWeight::none;
}

} // namespace churn

// The pure logic of the churn stress program (progs/churn/), kept apart so that host
// unit tests can check it: options, the seeded plan of changes, the model of the device
// state the plan is resolved against, and the accounting checks of each phase.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace churn {

// Every run has this many phases, whatever its duration, so that the KTAP case names
// (phase_1 .. phase_8) stay the same for a short and a long run.
inline constexpr unsigned kPhases = 8;
inline constexpr unsigned kDefaultSeconds = 20;
inline constexpr unsigned kMaxSeconds = 24 * 3600;
// TX queues of the device: at least this many (one per CPU if there are more CPUs) ...
inline constexpr unsigned kMinQueues = 4;
// ... and at most the 4096 rtnetlink allows (the patched dummy keeps per-queue counters
// at any count).
inline constexpr unsigned kMaxQueues = 4096;
// The limit codel and fq_codel get back after a limit of 0.
inline constexpr std::uint32_t kRaisedLimit = 1000;
// Root qdisc handles take majors 1 .. kMaxMajor in turn; the kernel allocates the
// handles of mq's children from 0x8000 up, so they never collide.
inline constexpr std::uint16_t kMaxMajor = 0x7fff;
// A switch off that comes back on within its change stays off this long.
inline constexpr unsigned kMinBlipMs = 10;
inline constexpr unsigned kMaxBlipMs = 100;

// splitmix64: small, and the same sequence on every platform and standard library (unlike
// the std:: distributions), so that a seed replays the same changes anywhere.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    // Uniform enough in [0, n) for n > 0 (modulo bias below 2^-40 for the n used here).
    std::uint64_t below(std::uint64_t n) { return next() % n; }

private:
    std::uint64_t state_;
};

struct Options {
    unsigned seconds = kDefaultSeconds;
    std::optional<std::uint64_t> seed;
    std::optional<unsigned> queues; // default: max(kMinQueues, CPUs), at most kMaxQueues
    bool help = false;
};

// Parses the arguments after the program name into out. Returns an error message, or an
// empty string.
std::string parse_options(const std::vector<std::string_view> &args, Options &out);
std::string usage(std::string_view prog);

// The TX queue count for a machine with this many CPUs, unless --queues says otherwise.
unsigned default_queues(std::size_t cpus);

// What a change in the plan is about; how it is carried out depends on the device state
// when its turn comes (resolve()).
enum class OpKind : std::uint8_t {
    channels,        // ETHTOOL_MSG_CHANNELS_SET tx N
    root,            // replace the root qdisc with another kind
    limit,           // codel/fq_codel limit 0 and back
    filter_matchall, // add or delete a matchall filter
    filter_u32,      // add or delete a u32 filter
    carrier,         // IFLA_CARRIER off and on
    updown,          // set the device down and up
};
inline constexpr std::array kOpKinds = {
        OpKind::channels,   OpKind::root,    OpKind::limit, OpKind::filter_matchall,
        OpKind::filter_u32, OpKind::carrier, OpKind::updown};
std::string_view op_name(OpKind k);

struct Draw {
    OpKind kind = OpKind::channels;
    std::uint64_t arg = 0; // picks among the choices the state leaves
};

struct PhasePlan {
    // Exact phases carry out the changes that may free queued packets without a count
    // (Action::lossy) with the senders paused and the qdiscs empty, so that the counters
    // must add up exactly; the other phases make every change while sending.
    bool exact = false;
    std::vector<Draw> draws;       // every OpKind at least once, in random order
    std::vector<unsigned> gaps_ms; // sleep before each draw
    unsigned tail_ms = 0;          // after the last draw, before the senders pause
};

// The changes of a run: a function of seed and duration alone (not of the kernel), so that
// "--seconds N --seed S" replays the same sequence. Odd phases (1, 3, ...) are exact.
std::vector<PhasePlan> make_plan(std::uint64_t seed, unsigned seconds, unsigned phases = kPhases);

enum class RootKind : std::uint8_t { fq_codel, codel, pfifo_fast, mq };
inline constexpr std::array kRootKinds = {RootKind::fq_codel, RootKind::codel, RootKind::pfifo_fast,
                                          RootKind::mq};
std::string_view root_name(RootKind k);
// codel and fq_codel take a limit (TCA_CODEL_LIMIT, TCA_FQ_CODEL_LIMIT).
bool has_limit(RootKind k);

enum class FilterKind : std::uint8_t { matchall, u32 };
// On the root qdisc (only fq_codel, of the roots used here, classifies) or at clsact egress.
enum class FilterPlace : std::uint8_t { root, clsact };
std::string_view filter_name(FilterKind k);

// The device as the changes so far have left it (only changes the kernel accepted count).
struct State {
    unsigned num_tx = kMinQueues;
    unsigned real_tx = kMinQueues;
    RootKind root = RootKind::fq_codel;
    std::uint16_t root_major = 1;
    bool limit0 = false;
    // [FilterKind][FilterPlace]: whether that filter is on the device
    std::array<std::array<bool, 2>, 2> filters{};
    bool carrier = true;
    bool up = true;

    bool has_filter(FilterKind k, FilterPlace p) const
    {
        return filters[static_cast<std::size_t>(k)][static_cast<std::size_t>(p)];
    }
};

enum class ActionType : std::uint8_t {
    set_channels,
    replace_root,
    change_limit,
    add_filter,
    delete_filter,
    set_carrier,
    set_up,
};

struct Action {
    ActionType type = ActionType::set_channels;
    OpKind from = OpKind::channels;
    unsigned channels = 0;              // set_channels: the TX count
    RootKind root = RootKind::fq_codel; // replace_root: the new kind
    std::uint16_t root_major = 0;       // replace_root: the new handle's major
    std::optional<std::uint32_t> limit; // replace_root (created with it), change_limit
    FilterKind filter = FilterKind::matchall;
    FilterPlace place = FilterPlace::clsact;
    std::uint16_t queue_mapping = 0; // add_filter matchall at clsact: skbedit queue_mapping
    bool on = false;                 // set_carrier, set_up
    // set_carrier/set_up off only: back on after this many ms, within the same change
    // (0: stays off until a later change).
    unsigned blip_ms = 0;
    // While packets are being sent, this change may free packets that sit in a qdisc
    // without counting them anywhere (see churn.cpp: "What cannot be exact").
    bool lossy = false;
};

// The next major after m, in 1 .. kMaxMajor.
std::uint16_t next_major(std::uint16_t m);
// The change a draw makes on a device in state s. Deterministic.
Action resolve(const State &s, const Draw &d);
// s after the kernel accepted a.
void apply(State &s, const Action &a);
// "channels tx 4 -> 2", "root fq_codel 1: -> mq 2:", ...; s is the state before a.
std::string describe(const Action &a, const State &s);

// ---- accounting ----

// What the senders counted, as totals since they started.
struct SenderCounts {
    std::uint64_t sent = 0;    // sendto() returned the frame length
    std::uint64_t nobufs = 0;  // ENOBUFS: the stack dropped the packet
    std::uint64_t netdown = 0; // ENETDOWN: the device was down, the packet never left the socket
    std::uint64_t again = 0;   // EAGAIN/EINTR: no packet was built

    SenderCounts operator-(const SenderCounts &o) const
    {
        return {sent - o.sent, nobufs - o.nobufs, netdown - o.netdown, again - o.again};
    }
    SenderCounts operator+(const SenderCounts &o) const
    {
        return {sent + o.sent, nobufs + o.nobufs, netdown + o.netdown, again + o.again};
    }
};

// Growth of a 32-bit counter (qdisc drops are a __u32 in struct gnet_stats_queue).
std::uint64_t delta32(std::uint32_t before, std::uint32_t after);

// One phase, in packets.
struct Ledger {
    std::uint64_t sent = 0;          // growth of SenderCounts::sent
    std::uint64_t nobufs = 0;        // growth of SenderCounts::nobufs
    std::uint64_t queued_before = 0; // qlen of the root qdisc when the phase began
    std::uint64_t link_tx = 0;       // growth of the link's tx_packets
    std::uint64_t link_dropped = 0;  // growth of the link's tx_dropped (noop qdisc drops)
    std::uint64_t qdisc_drops = 0;   // drops of the phase's root qdiscs
    std::uint64_t freed = 0;         // qlen of root qdiscs deleted with the senders paused
    // qlen of mq roots replaced while sending, as the dump just before the replace showed
    // it: at most what was freed, since the queues go on transmitting between that reading
    // and the replace. (Any other root's RTM_DELQDISC echo is exact: freed.)
    std::uint64_t freed_at_most = 0;
    std::uint64_t queued_after = 0; // qlen of the root qdisc at the end
    // Lossy changes made while sending (empty: the balance must be exact).
    std::vector<std::string> lossy;
    // An exact phase (the odd ones): its lossy changes wait for the senders to pause, so it
    // takes no credit for a snapshot and must transmit at least kMinExactTransmitted.
    bool exact = false;
};

// Packets an exact phase must transmit (link tx_packets) for its balance to show anything.
inline constexpr std::uint64_t kMinExactTransmitted = 1000;
// Packets a lossy change made while sending may free without a count: one defer list
// (__dev_xmit_skb() caps it at net.core.qdisc_max_burst, 1000 by default) or one qdisc
// backlog, which dummy (never stopping a queue) keeps far below that. The live shortfall
// of a phase may not exceed this times its lossy changes.
inline constexpr std::uint64_t kMaxUncountedPerLossyChange = 1000;

struct Balance {
    // Packets offered (sent + ENOBUFS, plus those queued at the start) that no counter
    // accounts for: positive when packets were freed without a count, negative when
    // counters hold more packets than were offered. freed_at_most counts only up to the
    // packets the firm counters leave unaccounted; the firm ones alone may never exceed
    // what was offered.
    std::int64_t unaccounted = 0;
    bool ok = false;
    std::string message; // the equation with its numbers; why it failed
};
Balance balance(const Ledger &l);

// Per-queue statistics (netdev QSTATS_GET) read with the senders paused.
struct QueueReading {
    std::map<std::uint32_t, std::uint64_t> tx; // queue scope: TX queue id -> tx-packets
    std::uint64_t device = 0;                  // device scope tx-packets (base + queues)
    std::uint64_t link = 0;                    // the link's tx_packets
    unsigned real_tx = 0;
    bool up = true; // the queue scope lists no queue of a device that is down
};
// Why r is not consistent, given the counters seen before for each queue (last, updated
// here); empty if it is. Queues disabled by a channel change keep their counters in the
// base: device == link, the listed queues are tx-0 .. tx-<real_tx - 1>, no queue went
// backwards, and the base holds at least what the queues not listed last held.
std::string check_queues(const QueueReading &r, std::map<std::uint32_t, std::uint64_t> &last);

// Device-scope qstats and then the link's tx_packets, read while the senders run.
struct LiveReading {
    std::uint64_t device = 0;
    std::uint64_t link = 0;
};
// Why cur, read after prev, is not consistent; empty if it is. Neither may go back, and
// the device total read first may be above the link read after it by at most in_flight
// packets: the order in which dummy adds a packet to its queue's counters and to the link
// totals is the driver's (the series' v3 counted the queue first), and each CPU has at
// most one packet between the two.
std::string check_live(const LiveReading &prev, const LiveReading &cur, std::uint64_t in_flight);

// How a kernel log line weighs: a problem fails the run (a warning, a BUG, an oops, a
// sanitizer or lockdep report), a note is listed only (a KCSAN data-race report, which may
// concern any code the churn runs through).
enum class LogWeight : std::uint8_t { none, note, problem };
LogWeight weigh_kernel_line(std::string_view line);

} // namespace churn

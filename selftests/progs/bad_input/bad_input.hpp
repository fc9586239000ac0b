// bad_input: a catalogue of invalid requests to the interfaces the series touches
// (bad_input.cpp says how a row is run and judged). This header holds what the row
// tables (rows_*.cpp) and the runner share: the expectations, the requests, the state
// snapshots and the environment the requests are sent in.
#pragma once

#include <cerrno>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "prog.hpp"
#include "uapi_compat.hpp"

namespace bad_input {

using namespace ksft::prog;

// The test device: numtxqueues 4, one RX queue (the default), so tx above 4 and rx above
// 1 are above the maxima the series reports.
constexpr std::uint32_t kTxQueues = 4;
constexpr std::uint32_t kRxQueues = 1;
constexpr std::uint32_t kRootHandle = rtnl::make_handle(1, 0);
constexpr std::uint32_t kNobody = 65534;

// ---- expectations ----

enum class Kernel { base, patched };

enum class Point {
    none,    // the ack is not checked for an attribute
    bad,     // NLMSGERR_ATTR_OFFS must point at the attribute the request marks
    missing, // NLMSGERR_ATTR_MISS_TYPE must name the attribute type
};

struct Expect {
    int err = 0;               // positive errno; 0: the request is accepted
    std::string_view msg{};    // the exact extack message; empty: none may be sent
    Point point = Point::none; // for errors
    std::string_view attr{};   // name of the attribute for Point::bad/missing
    std::uint32_t miss = 0;    // attribute type for Point::missing
    std::string_view why{};    // for accepted requests: why that is right
};

constexpr Expect accepted(std::string_view why)
{
    return {0, {}, Point::none, {}, 0, why};
}
constexpr Expect error(int err, std::string_view msg = {})
{
    return {err, msg, Point::none, {}, 0, {}};
}
constexpr Expect error_at(int err, std::string_view msg, std::string_view attr)
{
    return {err, msg, Point::bad, attr, 0, {}};
}
constexpr Expect error_missing(int err, std::string_view attr, std::uint32_t type)
{
    return {err, {}, Point::missing, attr, type, {}};
}

// The answer to a request: the library's status with the whole extended ACK.
using Ack = nl::Status;
// "accepted" or the errno name, the extack message, the attribute it points at or names.
std::string describe(const Ack &a);

// ---- requests ----

enum class Bus { rtnl, rtnl_strict, genl };

struct Request {
    nl::Message msg{8192};
    Bus bus = Bus::rtnl;
    bool dump = false;
    std::uint32_t mark = 0;  // offset from the netlink header of the attribute to blame
    std::string created;     // a link the request may create (removed afterwards)
    std::uint32_t value = 0; // a number the accept check needs
    std::string error;       // building the request failed (a setup error)
};

// Offset the next attribute gets.
std::uint32_t tail(const Request &r);
// One attribute as bytes (header, payload, padding), to be nested by hand.
std::vector<std::uint8_t> attr_bytes(std::uint16_t type, const void *data, std::size_t len);
std::vector<std::uint8_t> u32_bytes(std::uint16_t type, std::uint32_t v);

struct Fix {
    std::string name;
    int ifindex = 0;
};

// ---- state snapshots ----

struct QdiscRow {
    std::uint32_t handle = 0;
    std::uint32_t parent = 0;
    std::string kind;
    std::vector<std::uint8_t> options;                      // TCA_OPTIONS payload
    std::map<std::uint16_t, std::vector<std::uint8_t>> opt; // its attributes, if nested
};

struct Snapshot {
    std::string error;              // taking it failed
    std::vector<std::string> links; // every link of the netns
    std::string queues;             // active queue counts of the test device
    std::vector<QdiscRow> qdiscs;   // of the test device
    std::vector<std::string> filters;
};

std::string fmt(const QdiscRow &q);
std::string summary(const Snapshot &s);
std::string join(const std::vector<std::string> &v);
// What differs between two snapshots (the first of links, queues, qdiscs, filters), or
// an empty string. Qdiscs are left out with skip_qdiscs.
std::string diff(const Snapshot &a, const Snapshot &b, bool skip_qdiscs = false);

// The sockets requests are sent on and the family ids (state.cpp).
struct Env {
    // Lib operations (test devices, clsact, filters) use this one.
    nl::Socket *lib = nullptr;
    std::unique_ptr<nl::Socket> rtnl;
    std::unique_ptr<nl::Socket> strict;
    std::unique_ptr<nl::Socket> genl;
    std::uint16_t ethtool_id = 0;
    std::uint16_t netdev_id = 0;
    // Whether sysfs shows this netns (not after entering a new one).
    bool sysfs = true;

    // Opens the sockets and resolves the families; an error message or "".
    std::string open(nl::Socket *lib_socket);
    nl::Socket &sock(Bus b);
    Ack send(Request &r);
    // Active queues of a device as the netdev family lists them (QUEUE_GET dump:
    // queues below real_num_{rx,tx}_queues of a device that is up).
    std::string netdev_queues(int ifindex);
    Snapshot snapshot(const Fix &fx);
};

// ---- test devices ----

// A dummy made for one case: up, IPv6 off, clsact with one matchall filter on ingress
// (so that a filter is there to stay unchanged).
struct Device {
    std::unique_ptr<testdev::TestDummy> dev;
    std::optional<CaseResult> error;
    Fix fix;
};

Device make_device(std::uint32_t tx_queues);

// ---- request builders (requests.cpp) ----

Request ethtool_msg(Env &e, std::uint8_t cmd);
void put_header(Request &r, std::string_view dev);
struct Count {
    std::uint16_t type;
    std::uint32_t value;
};
// CHANNELS_SET on dev with the given counts; the attribute of type blame is marked.
Request channels_set(Env &e, std::string_view dev, std::initializer_list<Count> counts,
                     std::uint16_t blame = 0);
Request netdev_msg(Env &e, std::uint8_t cmd, bool dump);
// RTM_NEWLINK creating a dummy named name (NLM_F_CREATE | NLM_F_EXCL), with the
// attributes add puts after IFLA_IFNAME and before IFLA_LINKINFO.
Request newlink(std::string name, const std::function<void(Request &)> &add = {});
Request newlink_queues(std::optional<std::uint32_t> tx, std::optional<std::uint32_t> rx);
// RTM_NEWQDISC at the root of fx with flags; options are nested attributes.
Request qdisc_msg(const Fix &fx, std::uint16_t flags, std::string_view kind,
                  const std::vector<std::vector<std::uint8_t>> &options, bool with_kind = true);
constexpr std::uint16_t kCreateReplace = NLM_F_CREATE | NLM_F_REPLACE;
// Replace the root qdisc of fx (a setup step).
std::string set_root(Env &e, const Fix &fx, std::string_view kind);
// RTM_NEWTFILTER on fx, parent and tcm_info as given; with a kind, TCA_OPTIONS holds
// TCA_MATCHALL_FLAGS if mall_flags is set.
Request filter_msg(const Fix &fx, std::uint16_t flags, std::uint32_t parent, std::uint16_t prio,
                   std::uint32_t handle, std::optional<std::string_view> kind,
                   std::optional<std::uint32_t> mall_flags = std::nullopt);

// ---- accept checks: the state a valid request leads to ----

// The root qdisc is kind with nested option type == value; links, queues and filters
// are unchanged.
std::string root_qdisc_is(const Snapshot &before, const Snapshot &after, std::string_view kind,
                          std::uint16_t type, std::uint32_t value);
// The request created r.created with value TX queues; everything else is unchanged.
std::string link_created(Env &e, const Fix &fx, const Request &r, const Snapshot &before,
                         const Snapshot &after);

// ---- the catalogue ----

struct RunResult {
    Ack ack{};
    std::string state{}; // why the state is wrong, or empty
    std::string note{};  // what was seen
    std::string skip{};  // the case cannot run here
};

struct ChildCtx; // the unprivileged child (below)

using Build = Request (*)(Env &, const Fix &);
using Prep = std::string (*)(Env &, const Fix &);
using Check = std::string (*)(Env &, const Fix &, const Request &, const Snapshot &,
                              const Snapshot &);
using ChildBody = RunResult (*)(ChildCtx &);

enum class Where {
    init,   // as root, in the case's netns, on a fresh test device
    unpriv, // in the child, as uid 65534 in the init user and network namespace
    userns, // in the child, as uid 65534 in its own user and network namespace
};

struct Row {
    std::string_view name;
    std::string_view request; // what is asked
    std::string_view how;     // how it is sent
    Expect patched;
    Expect base;
    std::string_view state; // what state is checked afterwards
    Where where = Where::init;
    Build build = nullptr;
    Prep prep = nullptr;   // before the "before" snapshot
    Check check = nullptr; // when accepted; default: state unchanged
    std::uint32_t tx_queues = kTxQueues;
    ChildBody child = nullptr;
};

// Attribute names used in the table.
constexpr std::string_view kTxAttr = "ETHTOOL_A_CHANNELS_TX_COUNT";
constexpr std::string_view kRxAttr = "ETHTOOL_A_CHANNELS_RX_COUNT";
constexpr std::string_view kCombinedAttr = "ETHTOOL_A_CHANNELS_COMBINED_COUNT";
constexpr std::string_view kOtherAttr = "ETHTOOL_A_CHANNELS_OTHER_COUNT";
constexpr std::string_view kHeaderAttr = "ETHTOOL_A_CHANNELS_HEADER";
constexpr std::string_view kDevNameAttr = "ETHTOOL_A_HEADER_DEV_NAME";

// Extack messages, as the kernel words them.
constexpr std::string_view kExceedsMax = "requested channel count exceeds maximum";
constexpr std::string_view kNoChannel =
        "requested channel counts would result in no RX or TX channel being configured";
constexpr std::string_view kTxQueuesMsg = "Invalid number of transmit queues";
constexpr std::string_view kRxQueuesMsg = "Invalid number of receive queues";
constexpr std::string_view kPolicyFailed = "Attribute failed policy validation";
constexpr std::string_view kUnknownAttr = "Unknown attribute type";
constexpr std::string_view kBadLength = "invalid attribute length";
constexpr std::string_view kOutOfRange = "integer out of range";
constexpr std::string_view kReservedBit = "reserved bit set";

constexpr std::string_view kHowChannels = "ethtool genl CHANNELS_SET (as `ethtool -L`)";
constexpr std::string_view kHowEthtool = "ethtool genl, hand-built";
constexpr std::string_view kHowNewlink = "rtnetlink RTM_NEWLINK";
constexpr std::string_view kHowQdisc = "rtnetlink RTM_NEWQDISC, TCA_OPTIONS built by hand";
constexpr std::string_view kHowFilter = "rtnetlink RTM_NEWTFILTER";
constexpr std::string_view kHowQstats = "netdev genl QSTATS_GET dump";
constexpr std::string_view kHowQueue = "netdev genl QUEUE_GET";

constexpr std::string_view kAllState = "links, active queues, qdiscs, filters unchanged";
constexpr std::string_view kOwnState = "links of its netns, active queues of its dummy unchanged";
constexpr std::string_view kInitState =
        "netns of the case: links, active queues, qdiscs, filters unchanged";

constexpr Expect kNoChannelsOps = error(EOPNOTSUPP);
constexpr Expect kEperm = error(EPERM);

// The rows of each area, in catalogue order (rows_*.cpp).
extern const std::vector<Row> kChannelRows; // channels.*, ethtool.*
extern const std::vector<Row> kLinkRows;    // newlink.*, dellink.*, getlink.*
extern const std::vector<Row> kTcRows;      // qdisc.*, filter.*
extern const std::vector<Row> kNetdevRows;  // qstats.*, queue.*
extern const std::vector<Row> kUnprivRows;  // unpriv.*
extern const std::vector<Row> kUsernsRows;  // userns.*

// ---- the unprivileged side (unpriv.cpp) ----

struct ChildCtx {
    Fix init_dev{};             // the root-owned test device of the case's netns
    Env init{};                 // sockets opened as uid 65534 before any unshare
    std::optional<Env> own{};   // sockets of its own netns, once entered
    std::string userns_error{}; // why it has no own netns
    std::optional<nl::Socket> own_lib{};
    std::string own_dev{}; // its own dummy (numtxqueues 4)
    int own_ifindex = 0;
    std::string big_dev{}; // its own dummy with 4096 TX queues
    int big_ifindex = 0;
};

// Drops to uid/gid 65534 with no supplementary groups (and so no capabilities).
std::string drop_privileges();
// unshare(CLONE_NEWUSER | CLONE_NEWNET), map root of the new user namespace to 65534,
// open the sockets of the new netns.
void enter_userns(ChildCtx &c);
RunResult send_init(ChildCtx &c, Request r);
// Sends r in the child's own netns and checks that its links and its dummy's active
// queues stay as they were (unless check says what they must be after an accepted
// request).
RunResult
send_own(ChildCtx &c, Request r,
         const std::function<std::string(const Snapshot &, const Snapshot &)> &check = {});
std::string own_device_ready(ChildCtx &c);
// Active TX/RX queues of the child's dummy must be tx/rx.
std::string own_queues_are(ChildCtx &c, unsigned tx, unsigned rx);
RunResult own_channels(ChildCtx &c, std::initializer_list<Count> counts);

} // namespace bad_input

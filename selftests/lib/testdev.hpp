// Dummy devices for the kselftest programs: unique names, creation mapped to SKIP/FAIL
// outcomes, optional setup (IPv6 off, up) and removal on every path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "ktap.hpp"
#include "link.hpp"
#include "nl.hpp"

namespace ksft::testdev {

namespace nl = netutil::nl;
namespace rtnl = netutil::rtnl;

inline constexpr std::string_view kDummyKind = "dummy";
// Longest interface name the kernel accepts: IFNAMSIZ - 1.
inline constexpr std::size_t kMaxNameLen = 15;

// "<prefix><pid % 100000>_<n>". Throws std::invalid_argument if that is longer than
// kMaxNameLen (a prefix of up to 3 characters leaves room for n up to 999999).
std::string make_name(std::string_view prefix, pid_t pid, unsigned n);
// make_name() with this process's pid and the next value of a per-process counter.
std::string unique_name(std::string_view prefix);

// The outcome of a failed RTM_NEWLINK for a device of this kind: EOPNOTSUPP means the
// kernel does not know the kind (SKIP), anything else is a FAIL "<what>: <status>".
CaseResult create_failed(const nl::Status &st, std::string_view kind, std::string_view what);

struct DummySpec {
    std::string prefix{};                     // of unique_name()
    std::optional<std::uint32_t> tx_queues{}; // IFLA_NUM_TX_QUEUES, kernel default if unset
    std::optional<std::uint32_t> rx_queues{}; // IFLA_NUM_RX_QUEUES, kernel default if unset
    bool ipv6_off = false;                    // sysfs::disable_ipv6() before it goes up
    bool up = false;                          // set the device up
    bool verify_queues = false;               // FAIL unless it got the counts asked for
};

// "create <name>[ numtxqueues N][ numrxqueues N]", the counts as the spec sets them.
std::string describe_create(std::string_view name, const DummySpec &spec);
// With spec.verify_queues: why info does not have the queue counts the spec asks for,
// or an empty string.
std::string check_queues(std::string_view name, const DummySpec &spec, const rtnl::LinkInfo &info);

// A dummy device made after spec, deleted on destruction. Steps, each ending the setup
// with an error outcome when it fails: create (SKIP if the kernel has no dummy kind),
// switch IPv6 off, set up, read the link (ifindex, counts), check the queue counts.
class TestDummy {
public:
    explicit TestDummy(const DummySpec &spec, nl::Socket &sock = rtnl::shared_socket());

    bool ok() const { return !error_; }
    // Only when !ok().
    const CaseResult &error() const { return *error_; }
    const std::string &name() const { return name_; }
    int ifindex() const { return info_.ifindex; }
    // The link as read after the setup steps.
    const rtnl::LinkInfo &info() const { return info_; }

private:
    std::string name_;
    std::optional<rtnl::LinkGuard> guard_;
    rtnl::LinkInfo info_;
    std::optional<CaseResult> error_;
};

} // namespace ksft::testdev

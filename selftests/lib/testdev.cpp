#include "testdev.hpp"

#include <atomic>
#include <cerrno>
#include <stdexcept>

#include <unistd.h>

#include "sysfs.hpp"

namespace ksft::testdev {

namespace sysfs = netutil::sysfs;

std::string make_name(std::string_view prefix, pid_t pid, unsigned n)
{
    std::string name = concat(prefix, pid % 100000, "_", n);
    if (name.size() > kMaxNameLen)
        throw std::invalid_argument(
                concat("device name ", name, " is longer than ", kMaxNameLen, " characters"));
    return name;
}

std::string unique_name(std::string_view prefix)
{
    static std::atomic<unsigned> counter{0};
    return make_name(prefix, getpid(), counter++);
}

CaseResult create_failed(const nl::Status &st, std::string_view kind, std::string_view what)
{
    if (st.err == EOPNOTSUPP)
        return CaseResult::skip(
                concat("kernel does not support link kind ", kind, " (", st.str(), ")"));
    return CaseResult::fail(concat(what, ": ", st.str()));
}

std::string describe_create(std::string_view name, const DummySpec &spec)
{
    std::string s = concat("create ", name);
    if (spec.tx_queues)
        s += concat(" numtxqueues ", *spec.tx_queues);
    if (spec.rx_queues)
        s += concat(" numrxqueues ", *spec.rx_queues);
    return s;
}

std::string check_queues(std::string_view name, const DummySpec &spec, const rtnl::LinkInfo &info)
{
    if (!spec.verify_queues)
        return {};
    const auto &tx = spec.tx_queues;
    const auto &rx = spec.rx_queues;
    if (tx && rx) {
        if (info.num_tx_queues == *tx && info.num_rx_queues == *rx)
            return {};
        return concat(name, " has num_tx_queues/num_rx_queues ", info.num_tx_queues, "/",
                      info.num_rx_queues, ", expected ", *tx, "/", *rx);
    }
    if (tx && info.num_tx_queues != *tx)
        return concat(name, " has ", info.num_tx_queues, " TX queues, asked for ", *tx);
    if (rx && info.num_rx_queues != *rx)
        return concat(name, " has ", info.num_rx_queues, " RX queues, asked for ", *rx);
    return {};
}

TestDummy::TestDummy(const DummySpec &spec, nl::Socket &sock) : name_(unique_name(spec.prefix))
{
    const nl::Status st = rtnl::create_link(
            sock, {name_, std::string(kDummyKind), spec.tx_queues, spec.rx_queues});
    if (!st.ok()) {
        error_ = create_failed(st, kDummyKind, describe_create(name_, spec));
        return;
    }
    guard_.emplace(sock, name_);
    if (spec.ipv6_off) {
        if (std::string err = sysfs::disable_ipv6(name_); !err.empty()) {
            error_ = CaseResult::fail(concat("disable IPv6 on ", name_, ": ", err));
            return;
        }
    }
    if (spec.up) {
        if (nl::Status u = rtnl::set_link_up(sock, name_); !u.ok()) {
            error_ = CaseResult::fail(concat("set ", name_, " up: ", u.str()));
            return;
        }
    }
    if (nl::Status g = rtnl::get_link(sock, name_, info_); !g.ok()) {
        error_ = CaseResult::fail(concat("get ", name_, ": ", g.str()));
        return;
    }
    if (std::string err = check_queues(name_, spec, info_); !err.empty())
        error_ = CaseResult::fail(err);
}

} // namespace ksft::testdev

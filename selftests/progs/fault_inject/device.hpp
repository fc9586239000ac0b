// fault_inject: the device under test and what it is checked with: its traffic and the
// path packets take, its root qdisc and filters.
#pragma once

#include "common.hpp"

namespace fault_inject {

// -- state of the device under test ----------------------------------------------------

// The process's NETLINK_ROUTE socket.
nl::Socket &rtnl_socket();

std::string dev_name(std::string_view what);

// An up dummy with IPv6 off, deleted on destruction.
class Dev {
public:
    Dev(std::uint32_t tx, std::uint32_t rx) : name_(dev_name("fi"))
    {
        rtnl::LinkSpec spec{name_, "dummy", tx, rx};
        if (Status st = rtnl::create_link(rtnl_socket(), spec); !st.ok()) {
            error_ = concat("create ", name_, ": ", st.str());
            return;
        }
        guard_.emplace(rtnl_socket(), name_);
        if (std::string err = sysfs::disable_ipv6(name_); !err.empty()) {
            error_ = err;
            return;
        }
        if (Status st = rtnl::set_link_up(rtnl_socket(), name_); !st.ok()) {
            error_ = concat("set ", name_, " up: ", st.str());
            return;
        }
        rtnl::LinkInfo info;
        if (Status st = rtnl::get_link(rtnl_socket(), name_, info); !st.ok()) {
            error_ = concat("get ", name_, ": ", st.str());
            return;
        }
        ifindex_ = info.ifindex;
    }

    const std::string &error() const { return error_; }
    const std::string &name() const { return name_; }
    int ifindex() const { return ifindex_; }

private:
    std::string name_;
    std::optional<rtnl::LinkGuard> guard_;
    std::string error_;
    int ifindex_ = 0;
};

// The qdisc_enqueue events and the link's tx_packets while one thread sends kPackets.
struct Traffic {
    std::size_t enqueues = 0;
    std::uint64_t link_tx = 0;
    std::uint64_t dropped = 0;
};

class Tracer {
public:
    Tracer()
        : instance_(ksft::tracefs::instance_name("fault_inject")),
          enqueue_(instance_, "qdisc", "qdisc_enqueue")
    {
    }
    std::string unavailable() const
    {
        if (!instance_.available())
            return instance_.error();
        if (!enqueue_.available())
            return enqueue_.error();
        return {};
    }
    ksft::tracefs::Event &event() { return enqueue_; }

private:
    ksft::tracefs::Instance instance_;
    ksft::tracefs::Event enqueue_;
};

extern Tracer *g_tracer;

std::optional<std::uint64_t> link_tx(const std::string &name, std::string &err);

// Sends kPackets from one thread; returns an error or "".
std::string send(const Dev &dev, Traffic &t);

// What an idle qdisc must do with one sender's packets.
enum class Path { bypass, enqueue, drop };

std::string_view path_name(Path p);

std::string expect_path(const Dev &dev, Path want);

// Filters of parent 1: on the device: their number, or an error.
std::optional<std::size_t> filter_count(const Dev &dev, std::string &err);

// The root qdisc's kind and limit (TCA_OPTIONS: TCA_CODEL_LIMIT / TCA_FQ_CODEL_LIMIT).
struct RootQdisc {
    std::string kind;
    std::optional<std::uint32_t> limit;
};

std::optional<RootQdisc> root_qdisc(const Dev &dev, std::string &err);

std::string set_root(const Dev &dev, const std::string &kind, std::vector<std::uint8_t> options);

rtnl::MatchallSpec matchall(const Dev &dev);

} // namespace fault_inject

#include "device.hpp"

namespace fault_inject {

// -- state of the device under test ----------------------------------------------------

nl::Socket &rtnl_socket()
{
    return rtnl::shared_socket();
}

std::string dev_name(std::string_view what)
{
    return ksft::testdev::unique_name(what);
}

Tracer *g_tracer = nullptr;

std::optional<std::uint64_t> link_tx(const std::string &name, std::string &err)
{
    rtnl::LinkInfo info;
    if (Status st = rtnl::get_link(rtnl_socket(), name, info); !st.ok()) {
        err = concat("get ", name, ": ", st.str());
        return std::nullopt;
    }
    if (!info.stats) {
        err = concat("no IFLA_STATS64 for ", name);
        return std::nullopt;
    }
    return info.stats->tx_packets;
}

// Sends kPackets from one thread; returns an error or "".
std::string send(const Dev &dev, Traffic &t)
{
    pkt::SenderConfig cfg;
    cfg.ifindex = dev.ifindex();
    cfg.qdisc_bypass = false;
    std::vector<int> cpus = pkt::online_cpus();
    cfg.cpus = {cpus.empty() ? 0 : cpus.front()};
    cfg.count = kPackets;
    cfg.count_drops = true;
    std::string err;
    const auto tx0 = link_tx(dev.name(), err);
    if (!tx0)
        return err;
    std::vector<pkt::ThreadResult> results;
    const auto n = g_tracer->event().count_field("ifindex", std::to_string(dev.ifindex()),
                                                 [&] { results = pkt::run_senders(cfg); });
    if (!n)
        return concat("tracing: ", g_tracer->event().error());
    t = Traffic{};
    t.enqueues = *n;
    for (const pkt::ThreadResult &r : results) {
        if (!r.error.empty())
            return concat("sender: ", r.error);
        if (r.sent + r.dropped != kPackets)
            return concat("sender sent ", r.sent, " and saw ", r.dropped, " drops of ", kPackets);
        t.dropped += r.dropped;
    }
    const auto tx1 = link_tx(dev.name(), err);
    if (!tx1)
        return err;
    t.link_tx = *tx1 - *tx0;
    return {};
}

// What an idle qdisc must do with one sender's packets.

std::string_view path_name(Path p)
{
    switch (p) {
    case Path::bypass:
        return "bypassed";
    case Path::enqueue:
        return "enqueued";
    case Path::drop:
        return "dropped";
    }
    return "?";
}

std::string expect_path(const Dev &dev, Path want)
{
    Traffic t;
    if (std::string err = send(dev, t); !err.empty())
        return err;
    const bool ok = (want == Path::bypass && t.enqueues == 0 && t.link_tx == kPackets) ||
                    (want == Path::enqueue && t.enqueues == kPackets && t.link_tx == kPackets) ||
                    (want == Path::drop && t.enqueues == 0 && t.link_tx == 0);
    if (ok)
        return {};
    return concat("packets should be ", path_name(want), ": ", t.enqueues, " of ", kPackets,
                  " enqueued, ", t.link_tx, " transmitted, ", t.dropped, " dropped");
}

// Filters of parent 1: on the device: their number, or an error.
std::optional<std::size_t> filter_count(const Dev &dev, std::string &err)
{
    std::vector<rtnl::FilterInfo> filters;
    if (const Status st = rtnl::filter_dump(rtnl_socket(), dev.ifindex(), kRootHandle, filters);
        !st.ok()) {
        err = concat("filter dump: ", st.str());
        return std::nullopt;
    }
    // A classifier's instance (its handle) carries TCA_OPTIONS; the bare tcf_proto line of
    // some classifiers does not.
    return std::count_if(filters.begin(), filters.end(),
                         [](const rtnl::FilterInfo &f) { return f.kind && f.handle != 0; });
}

std::optional<RootQdisc> root_qdisc(const Dev &dev, std::string &err)
{
    std::vector<rtnl::QdiscInfo> qdiscs;
    if (const Status st = rtnl::qdisc_dump(rtnl_socket(), dev.ifindex(), qdiscs); !st.ok()) {
        err = concat("qdisc dump: ", st.str());
        return std::nullopt;
    }
    std::optional<RootQdisc> out;
    for (const rtnl::QdiscInfo &q : qdiscs) {
        if (q.parent == TC_H_ROOT)
            out = RootQdisc{q.kind, rtnl::codel_limit(q)};
    }
    if (!out)
        err = concat("no root qdisc on ", dev.name());
    return out;
}

std::string set_root(const Dev &dev, const std::string &kind, std::vector<std::uint8_t> options)
{
    rtnl::QdiscSpec spec;
    spec.ifindex = dev.ifindex();
    spec.handle = kRootHandle;
    spec.kind = kind;
    spec.options = std::move(options);
    if (Status st = rtnl::qdisc_replace(rtnl_socket(), spec); !st.ok())
        return concat("replace root ", kind, ": ", st.str());
    return {};
}

rtnl::MatchallSpec matchall(const Dev &dev)
{
    return rtnl::root_matchall_to_flow1(dev.ifindex());
}

} // namespace fault_inject

#include "fixture.hpp"

#include <cerrno>
#include <random>
#include <thread>

#include <fcntl.h>
#include <linux/if.h>
#include <unistd.h>

namespace churn {
namespace {

// Opens /dev/kmsg at its end, so that only what the kernel logs from now on is read.
void open_kmsg(Fixture &f)
{
    f.kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (f.kmsg < 0) {
        f.kmsg_error = pkt::errno_str("open /dev/kmsg", errno);
        return;
    }
    if (lseek(f.kmsg, 0, SEEK_END) < 0) {
        f.kmsg_error = pkt::errno_str("seek /dev/kmsg", errno);
        close(f.kmsg);
        f.kmsg = -1;
    }
}

} // namespace

std::unique_ptr<Fixture> build_fixture()
{
    auto f = std::make_unique<Fixture>();
    f->opt = options();
    f->seed = f->opt.seed ? *f->opt.seed
                          : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    f->plan = churn::make_plan(f->seed, f->opt.seconds);
    open_kmsg(*f);
    const std::vector<int> cpus = pkt::online_cpus();
    if (cpus.empty()) {
        f->error = CaseResult::fail("cannot read /sys/devices/system/cpu/online");
        return f;
    }
    const unsigned queues = f->opt.queues.value_or(churn::default_queues(cpus.size()));
    f->dev = std::make_unique<TestDummy>(ksft::testdev::DummySpec{
            .prefix = "chn", .tx_queues = queues, .ipv6_off = true, .up = true});
    if (!f->dev->ok()) {
        f->error = f->dev->error();
        return f;
    }
    f->name = f->dev->name();
    f->ifindex = f->dev->ifindex();
    f->state.num_tx = queues;
    f->state.real_tx = queues;
    f->ethtool = std::make_unique<netutil::ethtool::Ethtool>();
    f->nd = std::make_unique<netdev::Netdev>();
    netutil::ethtool::Channels ch;
    if (Status st = f->ethtool->channels_get(f->name, ch); !st.ok()) {
        f->no_channels = concat("ETHTOOL_MSG_CHANNELS_GET: ", st.str());
        f->no_channels_errno = st.err;
    } else if (ch.tx_max != queues || ch.tx_count != queues)
        f->error = CaseResult::fail(concat("CHANNELS_GET: tx ", ch.tx_count, " of ", ch.tx_max,
                                           ", expected ", queues, " of ", queues));
    netdev::QStats qs;
    if (Status st = f->nd->device_stats(f->ifindex, qs); !st.ok()) {
        f->no_qstats = concat("QSTATS_GET: ", st.str());
        f->no_qstats_errno = st.err;
    }
    if (f->error)
        return f;

    // A root with a queue from the start (see the top of the file), and clsact.
    rtnl::QdiscSpec root;
    root.ifindex = f->ifindex;
    root.parent = TC_H_ROOT;
    root.handle = root_handle(f->state);
    root.kind = std::string(churn::root_name(f->state.root));
    if (Status st = rtnl::qdisc_replace(f->rtnl_socket(), root); !st.ok()) {
        f->error = CaseResult::fail(concat("replace root with ", root.kind, ": ", st.str()));
        return f;
    }
    if (Status st = rtnl::add_clsact(f->rtnl_socket(), f->ifindex); !st.ok())
        f->no_clsact = concat("clsact: ", st.str());

    f->senders = std::make_unique<Senders>(f->ifindex, cpus);
    if (std::string err = f->senders->wait_ready(); !err.empty()) {
        f->error = CaseResult::fail(err);
        return f;
    }
    f->last = read_all(*f);
    if (!f->last.error.empty())
        f->error = CaseResult::fail(f->last.error);
    else if (f->last.queues)
        churn::check_queues(*f->last.queues, f->last_queues);
    return f;
}

churn::Options &options()
{
    static churn::Options o;
    return o;
}

namespace {

std::unique_ptr<Fixture> &fixture_slot()
{
    static std::unique_ptr<Fixture> f;
    return f;
}

} // namespace

Fixture &fixture()
{
    return ksft::lazy_fixture(fixture_slot(), build_fixture);
}

Reading read_all(Fixture &f)
{
    Reading r;
    r.senders = f.senders->totals();
    if (Status st = rtnl::get_link_stats(f.rtnl_socket(), f.ifindex, r.link); !st.ok()) {
        r.error = concat("RTM_GETLINK ", f.name, ": ", st.str());
        return r;
    }
    if (Status st = rtnl::root_qdisc(f.rtnl_socket(), f.ifindex, r.root); !st.ok()) {
        r.error = concat("qdisc dump: ", st.str());
        return r;
    }
    if (!r.root) {
        r.error = concat("no root qdisc with statistics on ", f.name);
        return r;
    }
    if (!f.no_qstats.empty())
        return r;
    churn::QueueReading q;
    netdev::QStats dev;
    if (Status st = f.nd->device_stats(f.ifindex, dev); !st.ok()) {
        r.error = concat("QSTATS_GET device scope: ", st.str());
        return r;
    }
    std::vector<netdev::QStats> entries;
    if (Status st = f.nd->queue_stats(f.ifindex, entries); !st.ok()) {
        r.error = concat("QSTATS_GET queue scope: ", st.str());
        return r;
    }
    // The link once more, after the qstats: nothing is sent while paused, so the two
    // readings agree unless a counter moves on its own.
    rtnl::LinkInfo after;
    if (Status st = rtnl::get_link_stats(f.rtnl_socket(), f.ifindex, after); !st.ok()) {
        r.error = concat("RTM_GETLINK ", f.name, ": ", st.str());
        return r;
    }
    q.device = dev.tx_packets.value_or(0);
    q.link = after.stats->tx_packets;
    for (const netdev::QStats &e : entries) {
        if (e.ifindex == f.ifindex && e.queue_type == netdev::QueueType::tx && e.queue_id)
            q.tx[*e.queue_id] = e.tx_packets.value_or(0);
    }
    q.up = (r.link.flags & IFF_UP) != 0;
    q.real_tx = f.state.real_tx;
    if (f.no_channels.empty()) {
        netutil::ethtool::Channels ch;
        if (Status st = f.ethtool->channels_get(f.name, ch); !st.ok()) {
            r.error = concat("CHANNELS_GET: ", st.str());
            return r;
        }
        q.real_tx = ch.tx_count;
    }
    r.queues = q;
    return r;
}

std::string settle_link(Fixture &f)
{
    const auto t0 = Clock::now();
    while (true) {
        rtnl::LinkInfo ls;
        if (Status st = rtnl::get_link_stats(f.rtnl_socket(), f.ifindex, ls); !st.ok())
            return concat("RTM_GETLINK: ", st.str());
        if ((ls.flags & IFF_UP) == 0)
            break;
        if (ls.carrier ? ls.operstate != IF_OPER_DOWN : ls.operstate == IF_OPER_DOWN)
            break;
        if (Clock::now() - t0 > kSettleTimeout)
            return concat("operational state ", static_cast<int>(ls.operstate), " with carrier ",
                          ls.carrier ? "on" : "off", " after ", ms_since(t0), " ms");
        std::this_thread::sleep_for(milliseconds(5));
    }
    // A request that takes the RTNL returns once linkwatch has let go of it.
    std::optional<rtnl::QdiscInfo> root;
    if (Status st = rtnl::root_qdisc(f.rtnl_socket(), f.ifindex, root); !st.ok())
        return concat("qdisc dump: ", st.str());
    return {};
}

std::string drain(Fixture &f)
{
    const auto t0 = Clock::now();
    while (true) {
        std::optional<rtnl::QdiscInfo> root;
        if (Status st = rtnl::root_qdisc(f.rtnl_socket(), f.ifindex, root); !st.ok())
            return concat("qdisc dump: ", st.str());
        if (!root || root->qlen == 0)
            return {};
        if (Clock::now() - t0 > kDrainTimeout)
            return concat("the root ", root->kind, " still holds ", root->qlen, " packets after ",
                          ms_since(t0), " ms");
        std::this_thread::sleep_for(milliseconds(1));
    }
}

} // namespace churn

// kselftest: default and explicit queue counts of dummy devices.
//
// Every case here is a control: the series leaves the queue counts alone, so a dummy
// device gets one TX and one RX queue unless it is created with numtxqueues/numrxqueues,
// on the base and the patched kernel alike. A dummy with one TX queue, the module's
// dummy<N> included, has no netdev_stat_ops with the series either: QSTATS_GET of its
// ifindex fails with EOPNOTSUPP on both kernels (module_devices checks the module's
// devices; dummy_qstats one_queue_no_qstats those of `ip link add`).
//
// Needs root. Devices are created with unique names and removed on every path.
// module_devices unloads and reloads the dummy module, which removes every dummy
// device in the system. It only does so when the module's own dummy<N> devices (down,
// as the module creates them) are all there is, and loads the module again with the
// same numdummies afterwards (or leaves it unloaded if it was): the system is left as
// found. Otherwise it is skipped.

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <net/if.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd.hpp"
#include "prog.hpp"

namespace {

using namespace ksft::prog;

constexpr std::string_view kKind = testdev::kDummyKind;
constexpr char kPrefix[] = "dq";
// What "ip link add type dummy" and the module's dummy<N> get.
constexpr std::uint32_t kDefaultTx = 1;
constexpr std::uint32_t kDefaultRx = 1;

using ksft::CmdResult;
using ksft::run_cmd;

bool path_exists(const std::string &p)
{
    return access(p.c_str(), F_OK) == 0;
}

bool dummy_builtin()
{
    // Built-in modules with parameters have /sys/module/<name> but no initstate.
    if (path_exists("/sys/module/dummy") && !path_exists("/sys/module/dummy/initstate"))
        return true;
    utsname u{};
    if (uname(&u) != 0)
        return false;
    std::ifstream in(concat("/lib/modules/", u.release, "/modules.builtin"));
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() >= 9 && line.compare(line.size() - 9, 9, "/dummy.ko") == 0)
            return true;
    }
    return false;
}

bool dummy_loaded()
{
    return path_exists("/sys/module/dummy/initstate");
}

// ---- cases ----

// Allocated and active (sysfs queues/tx-*, rx-*; none: unreadable) queue counts of a
// link must be tx and rx; what names the case's setting in a failure.
void assert_counts(const rtnl::LinkInfo &info, std::uint32_t tx, std::uint32_t rx,
                   const std::string &what)
{
    ASSERT_EQ(info.num_tx_queues, tx) << what << ", " << info.name;
    ASSERT_EQ(info.num_rx_queues, rx) << what << ", " << info.name;
    ASSERT_EQ(info.real_num_tx_queues, tx) << what << ", " << info.name << ": sysfs queues/tx-*";
    ASSERT_EQ(info.real_num_rx_queues, rx) << what << ", " << info.name << ": sysfs queues/rx-*";
}

TEST_RESULT(default_tx_queues)
{
    const TestDummy dev({.prefix = kPrefix});
    if (!dev.ok())
        return dev.error();
    const rtnl::LinkInfo &info = dev.info();
    const std::size_t possible = netutil::pkt::possible_cpus().size();
    ASSERT_EQ(info.num_tx_queues, kDefaultTx)
            << "with " << possible << " possible CPUs: the default changed";
    ASSERT_EQ(info.real_num_tx_queues, kDefaultTx) << "sysfs queues/tx-* (none: unreadable)";
    return CaseResult::pass(
            concat("num_tx_queues ", info.num_tx_queues, " with ", possible, " possible CPUs"));
}

TEST_RESULT(default_rx_queues)
{
    const TestDummy dev({.prefix = kPrefix});
    if (!dev.ok())
        return dev.error();
    ASSERT_EQ(dev.info().num_rx_queues, kDefaultRx);
    return CaseResult::pass();
}

// numtxqueues N alone: N TX queues, all active, and the default single RX queue, from the
// single-queue device (which keeps the lockless transmit path of the patched dummy) to
// 128.
TEST_RESULT(numtxqueues_counts)
{
    std::string notes;
    for (const std::uint32_t n : {1U, 2U, 4U, 64U, 65U, 128U}) {
        const TestDummy dev({.prefix = kPrefix, .tx_queues = n});
        if (!dev.ok())
            return dev.error();
        assert_counts(dev.info(), n, kDefaultRx, concat("numtxqueues ", n));
        notes += concat(notes.empty() ? "" : ", ", n);
    }
    return CaseResult::pass(concat("numtxqueues ", notes, ": as many TX queues, one RX queue"));
}

TEST_RESULT(explicit_counts_honoured)
{
    const TestDummy dev({.prefix = kPrefix, .tx_queues = 3U, .rx_queues = 2U});
    if (!dev.ok())
        return dev.error();
    assert_counts(dev.info(), 3, 2, "numtxqueues 3 numrxqueues 2");
    return CaseResult::pass();
}

netdev::Netdev &qstats()
{
    static netdev::Netdev n;
    return n;
}

// Names of the dummy devices of this network namespace, sorted.
Status dummy_names(std::vector<std::string> &names, std::vector<std::string> *busy = nullptr)
{
    std::vector<rtnl::LinkInfo> links;
    if (Status st = rtnl::link_dump(rtnl::shared_socket(), links); !st.ok())
        return st;
    names.clear();
    for (const rtnl::LinkInfo &l : links) {
        if (l.kind != kKind)
            continue;
        names.push_back(l.name);
        if (busy != nullptr && (l.flags & IFF_UP) != 0)
            busy->push_back(l.name);
    }
    std::sort(names.begin(), names.end());
    return {};
}

// The names the module gives numdummies devices: dummy0 .. dummy<n - 1>, sorted.
std::vector<std::string> module_names(std::size_t n)
{
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i)
        names.push_back(concat("dummy", i));
    std::sort(names.begin(), names.end());
    return names;
}

std::string join(const std::vector<std::string> &v)
{
    std::string s;
    for (const std::string &x : v)
        s += concat(s.empty() ? "" : " ", x);
    return s.empty() ? std::string("none") : s;
}

// Puts the module back as it was found: unloaded, or loaded with numdummies devices.
// restore() does it and says what is left over; the destructor does it if restore() was
// not called.
class ModuleRestore {
public:
    ModuleRestore(bool was_loaded, std::size_t numdummies)
        : was_loaded_(was_loaded), numdummies_(numdummies)
    {
    }
    ~ModuleRestore()
    {
        if (done_)
            return;
        try {
            restore();
        } catch (...) { // NOLINT(bugprone-empty-catch): best effort in a destructor
        }
    }
    ModuleRestore(const ModuleRestore &) = delete;
    ModuleRestore &operator=(const ModuleRestore &) = delete;
    ModuleRestore(ModuleRestore &&) = delete;
    ModuleRestore &operator=(ModuleRestore &&) = delete;

    // An empty string when the module and its devices are as found, else what differs.
    std::string restore()
    {
        done_ = true;
        if (const CmdResult rm = run_cmd({"modprobe", "-r", "dummy"}); rm.status != 0)
            return concat("modprobe -r dummy: exit ", rm.status, " ", rm.output);
        if (!was_loaded_)
            return dummy_loaded() ? "dummy still loaded" : "";
        const std::string arg = concat("numdummies=", numdummies_);
        if (const CmdResult load = run_cmd({"modprobe", "dummy", arg}); load.status != 0)
            return concat("modprobe dummy ", arg, ": exit ", load.status, " ", load.output);
        std::vector<std::string> names;
        if (Status st = dummy_names(names); !st.ok())
            return concat("link dump: ", st.str());
        if (names != module_names(numdummies_))
            return concat("dummy devices after reloading: ", join(names), ", expected ",
                          join(module_names(numdummies_)));
        return {};
    }

private:
    bool was_loaded_;
    std::size_t numdummies_;
    bool done_ = false;
};

TEST_RESULT_OPTS(module_devices, {.netns = ksft::Netns::init})
{
    if (dummy_builtin())
        return CaseResult::skip("dummy is built into the kernel, cannot reload it with numdummies");
    const CmdResult probe = run_cmd({"modprobe", "-n", "dummy"});
    if (probe.status == 127)
        return CaseResult::skip(concat("modprobe not available: ", probe.output));
    if (probe.status != 0)
        return CaseResult::skip(concat("module dummy not available",
                                       probe.output.empty() ? "" : ": " + probe.output));

    // Unloading deletes every dummy device: only do it when the module's own idle
    // dummy<N> devices are all there is, which reloading recreates.
    const bool was_loaded = dummy_loaded();
    std::vector<std::string> before;
    std::vector<std::string> up;
    if (Status st = dummy_names(before, &up); !st.ok())
        return CaseResult::fail(concat("link dump: ", st.str()));
    if (!up.empty() || before != module_names(before.size()))
        return CaseResult::skip(concat("unloading dummy would delete ", join(before),
                                       up.empty() ? "" : concat(" (up: ", join(up), ")"),
                                       ": not only the module's own idle devices"));
    if (was_loaded) {
        const CmdResult rm = run_cmd({"modprobe", "-r", "dummy"});
        if (rm.status != 0)
            return CaseResult::skip(concat("cannot unload dummy: ", rm.output));
    }
    ModuleRestore restore(was_loaded, before.size());

    constexpr std::size_t kDevices = 2;
    const std::string arg = concat("numdummies=", kDevices);
    const CmdResult load = run_cmd({"modprobe", "dummy", arg});
    ASSERT_EQ(load.status, 0) << "modprobe dummy " << arg << ": " << load.output;
    std::string notes;
    for (const std::string &name : module_names(kDevices)) {
        rtnl::LinkInfo info;
        if (Status st = rtnl::get_link(rtnl::shared_socket(), name, info); !st.ok())
            return CaseResult::fail(concat(name, " after modprobe dummy ", arg, ": ", st.str()));
        ASSERT_EQ(info.kind, kKind) << name;
        assert_counts(info, kDefaultTx, kDefaultRx, concat("modprobe dummy ", arg));
        // One TX queue: no netdev_stat_ops, so netdev_nl_qstats_get_dumpit() answers a
        // request for its ifindex with EOPNOTSUPP, on both kernels.
        std::vector<netdev::QStats> entries;
        const Status qs = qstats().queue_stats(info.ifindex, entries);
        ASSERT_EQ(errno_name(qs.err), errno_name(EOPNOTSUPP))
                << "QSTATS_GET (scope queue) of " << name << " (one TX queue): " << qs.str() << ", "
                << entries.size() << " entries";
        notes += concat(notes.empty() ? "" : ", ", name, " ", info.num_tx_queues, "/",
                        info.num_rx_queues, " (qstats ", errno_name(qs.err), ")");
    }
    if (std::string err = restore.restore(); !err.empty())
        return CaseResult::fail(concat("system not restored: ", err));
    return CaseResult::pass(concat("TX/RX queues: ", notes, "\nrestored: dummy ",
                                   was_loaded ? concat("loaded, devices ", join(before))
                                              : std::string("not loaded")));
}

TEST_RESULT(bounds)
{
    std::string diag;
    for (const std::uint32_t n : {0U, 4097U}) {
        const std::string name = testdev::unique_name(kPrefix);
        const Status st =
                rtnl::create_link(rtnl::shared_socket(), {name, std::string(kKind), n, {}});
        if (st.ok()) {
            rtnl::LinkGuard guard(rtnl::shared_socket(), name);
            return CaseResult::fail(concat("numtxqueues ", n, " was accepted"));
        }
        if (st.err == EOPNOTSUPP)
            return testdev::create_failed(st, kKind, "");
        ASSERT_EQ(st.err, EINVAL) << "numtxqueues " << n << ": " << st.str();
        ASSERT_FALSE(st.extack.empty()) << "numtxqueues " << n << ": EINVAL without extack";
        diag += concat(diag.empty() ? "" : "\n", "numtxqueues ", n, ": ", st.str());
    }
    return CaseResult::pass(diag);
}

} // namespace

int main(int argc, char **argv)
{
    return ksft::main(argc, argv);
}

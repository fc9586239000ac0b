// kselftest: default and explicit queue counts of dummy devices.
//
// Needs root. Devices are created with unique names and removed on every path.
// module_devices unloads and reloads the dummy module, which removes every dummy
// device in the system: run it on a test VM only.

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktap.hpp"
#include "nl.hpp"
#include "packet_sender.hpp"
#include "rtnl.hpp"
#include "testdev.hpp"

namespace {

using ksft::cat;
using ksft::Outcome;
using ksft::nl::Status;
using ksft::testdev::TestDummy;
namespace rtnl = ksft::rtnl;
namespace testdev = ksft::testdev;

constexpr std::size_t kTxQueueCap = 32;
constexpr std::string_view kKind = testdev::kDummyKind;
constexpr char kPrefix[] = "dq";

std::size_t expected_default_tx()
{
    const std::vector<int> cpus = ksft::pkt::possible_cpus();
    if (cpus.empty())
        throw std::runtime_error("cannot parse /sys/devices/system/cpu/possible");
    return std::min(cpus.size(), kTxQueueCap);
}

struct CmdResult {
    int status = -1; // exit code, 127 if the program could not be started
    std::string output;
};

CmdResult run_cmd(const std::vector<std::string> &argv)
{
    CmdResult res;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        throw std::runtime_error(cat("pipe2: ", std::strerror(errno)));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
    std::vector<char *> args;
    args.reserve(argv.size() + 1);
    for (const std::string &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int err = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (err != 0) {
        close(fds[0]);
        res.status = 127;
        res.output = cat(argv[0], ": ", std::strerror(err));
        return res;
    }
    char buf[512];
    ssize_t n = 0;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
        if (n > 0)
            res.output.append(buf, static_cast<std::size_t>(n));
    }
    close(fds[0]);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    res.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    while (!res.output.empty() && res.output.back() == '\n')
        res.output.pop_back();
    return res;
}

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
    std::ifstream in(cat("/lib/modules/", u.release, "/modules.builtin"));
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

Outcome default_tx_queues()
{
    const TestDummy dev({.prefix = kPrefix});
    if (!dev.ok())
        return dev.error();
    const rtnl::LinkInfo &info = dev.info();
    const std::size_t possible = ksft::pkt::possible_cpus().size();
    const std::size_t expected = expected_default_tx();
    if (info.num_tx_queues != expected)
        return Outcome::fail(cat("num_tx_queues ", info.num_tx_queues, ", expected min(", possible,
                                 " possible CPUs, ", kTxQueueCap, ") = ", expected));
    if (info.real_num_tx_queues && *info.real_num_tx_queues != info.num_tx_queues)
        return Outcome::fail(cat("real_num_tx_queues (sysfs tx-*) ", *info.real_num_tx_queues,
                                 " != num_tx_queues ", info.num_tx_queues));
    return Outcome::pass(
            cat("num_tx_queues ", info.num_tx_queues, " with ", possible, " possible CPUs"));
}

Outcome default_rx_queues()
{
    const TestDummy dev({.prefix = kPrefix});
    if (!dev.ok())
        return dev.error();
    if (dev.info().num_rx_queues != 1)
        return Outcome::fail(cat("num_rx_queues ", dev.info().num_rx_queues, ", expected 1"));
    return Outcome::pass();
}

Outcome explicit_counts_honoured()
{
    const TestDummy dev({.prefix = kPrefix, .tx_queues = 3U, .rx_queues = 2U});
    if (!dev.ok())
        return dev.error();
    const rtnl::LinkInfo &info = dev.info();
    if (info.num_tx_queues != 3 || info.num_rx_queues != 2)
        return Outcome::fail(cat("num_tx_queues/num_rx_queues ", info.num_tx_queues, "/",
                                 info.num_rx_queues, ", expected 3/2"));
    return Outcome::pass();
}

// Unloads dummy (if it was loaded) again on destruction and restores "loaded" state.
class ModuleRestore {
public:
    explicit ModuleRestore(bool was_loaded) : was_loaded_(was_loaded) {}
    ~ModuleRestore()
    {
        try {
            run_cmd({"modprobe", "-r", "dummy"});
            if (was_loaded_)
                run_cmd({"modprobe", "dummy", "numdummies=0"});
        } catch (...) { // NOLINT(bugprone-empty-catch): best effort in a destructor
        }
    }
    ModuleRestore(const ModuleRestore &) = delete;
    ModuleRestore &operator=(const ModuleRestore &) = delete;
    ModuleRestore(ModuleRestore &&) = delete;
    ModuleRestore &operator=(ModuleRestore &&) = delete;

private:
    bool was_loaded_;
};

Outcome module_devices()
{
    if (dummy_builtin())
        return Outcome::skip("dummy is built into the kernel, cannot reload it with numdummies");
    const CmdResult probe = run_cmd({"modprobe", "-n", "dummy"});
    if (probe.status == 127)
        return Outcome::skip(cat("modprobe not available: ", probe.output));
    if (probe.status != 0)
        return Outcome::skip(
                cat("module dummy not available", probe.output.empty() ? "" : ": " + probe.output));

    const bool was_loaded = dummy_loaded();
    if (was_loaded) {
        const CmdResult rm = run_cmd({"modprobe", "-r", "dummy"});
        if (rm.status != 0)
            return Outcome::skip(cat("cannot unload dummy: ", rm.output));
    }
    ModuleRestore restore(was_loaded);
    const CmdResult load = run_cmd({"modprobe", "dummy", "numdummies=1"});
    if (load.status != 0)
        return Outcome::fail(
                cat("modprobe dummy numdummies=1: exit ", load.status, " ", load.output));

    rtnl::LinkInfo info;
    if (Status st = rtnl::get_link(rtnl::shared_socket(), "dummy0", info); !st.ok())
        return Outcome::fail(cat("dummy0 after modprobe dummy numdummies=1: ", st.str()));
    if (info.kind != kKind)
        return Outcome::fail(cat("dummy0 has kind '", info.kind, "'"));
    const std::size_t expected = expected_default_tx();
    if (info.num_tx_queues != expected)
        return Outcome::fail(
                cat("dummy0 num_tx_queues ", info.num_tx_queues, ", expected ", expected));
    if (info.num_rx_queues != 1)
        return Outcome::fail(cat("dummy0 num_rx_queues ", info.num_rx_queues, ", expected 1"));
    return Outcome::pass(cat("dummy0 num_tx_queues ", info.num_tx_queues));
}

Outcome bounds()
{
    std::string diag;
    for (const std::uint32_t n : {0U, 4097U}) {
        const std::string name = testdev::unique_name(kPrefix);
        const Status st =
                rtnl::create_link(rtnl::shared_socket(), {name, std::string(kKind), n, {}});
        if (st.ok()) {
            rtnl::LinkGuard guard(rtnl::shared_socket(), name);
            return Outcome::fail(cat("numtxqueues ", n, " was accepted"));
        }
        if (st.err == EOPNOTSUPP)
            return testdev::create_failed(st, kKind, "");
        if (st.err != EINVAL)
            return Outcome::fail(cat("numtxqueues ", n, ": expected EINVAL, got ", st.str()));
        if (st.extack.empty())
            return Outcome::fail(cat("numtxqueues ", n, ": EINVAL without extack message"));
        diag += cat(diag.empty() ? "" : "\n", "numtxqueues ", n, ": ", st.str());
    }
    return Outcome::pass(diag);
}

} // namespace

int main()
{
    ksft::TestSuite suite;
    suite.add("default_tx_queues", default_tx_queues);
    suite.add("default_rx_queues", default_rx_queues);
    suite.add("explicit_counts_honoured", explicit_counts_honoured);
    suite.add("module_devices", module_devices);
    suite.add("bounds", bounds);
    suite.require_root();
    return suite.run();
}

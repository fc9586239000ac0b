#include "harness.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <exception>
#include <iostream>

#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

namespace ksft {
namespace {

// Exit codes of a case's process; anything else (or a signal) is a crash.
constexpr int kCaseResultWritten = 0;
constexpr int kCaseSetupFailed = 3;

std::string errno_text(const char *what)
{
    return concat(what, ": ", std::strerror(errno));
}

bool is_fs(const char *path, long magic)
{
    struct statfs st {};
    return statfs(path, &st) == 0 && st.f_type == magic;
}

// A new network and mount namespace with a sysfs of that netns: mount propagation to the
// parent off, /sys mounted again, tracefs and debugfs mounted again where they were.
// Returns why not, or an empty string.
// In the VM this is the second netns: selftests/run-in-vm.sh runs the program in one of its
// own (unshare --net --mount, tracefs and debugfs mounted there), as it does for the
// kselftests; this one gives each case a fresh one. Both stay: "where they were" is where
// run-in-vm.sh mounted them, which the guest's initial mount namespace need not match
// (Documentation/pipeline.md).
std::string enter_own_netns()
{
    const bool tracing = is_fs("/sys/kernel/tracing", TRACEFS_MAGIC);
    const bool debug = is_fs("/sys/kernel/debug", DEBUGFS_MAGIC);
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0)
        return errno_text("unshare(CLONE_NEWNET | CLONE_NEWNS)");
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return errno_text("mount --make-rprivate /");
    if (umount2("/sys", MNT_DETACH) != 0 && errno != EINVAL)
        return errno_text("umount /sys");
    if (mount("sysfs", "/sys", "sysfs", 0, nullptr) != 0)
        return errno_text("mount sysfs /sys");
    if (tracing && mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0)
        return errno_text("mount tracefs /sys/kernel/tracing");
    if (debug && mount("debugfs", "/sys/kernel/debug", "debugfs", 0, nullptr) != 0)
        return errno_text("mount debugfs /sys/kernel/debug");
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno_text("socket");
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
    if (rc == 0) {
        ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    }
    std::string err = rc == 0 ? std::string() : errno_text("set lo up");
    close(fd);
    return err;
}

void write_all(int fd, std::string_view s)
{
    while (!s.empty()) {
        const ssize_t n = write(fd, s.data(), s.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        s.remove_prefix(static_cast<std::size_t>(n));
    }
}

std::string read_all(int fd)
{
    std::string in;
    char buf[4096];
    while (true) {
        const ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return in;
        in.append(buf, static_cast<std::size_t>(n));
    }
}

CaseResult run_body(const Case &c)
{
    detail::case_failed() = false;
    CaseResult r = CaseResult::pass();
    try {
        c.body();
    } catch (const CaseEnd &end) {
        r = end.result;
    } catch (const std::exception &e) {
        r = CaseResult::fail(concat("exception: ", e.what()));
    } catch (...) {
        r = CaseResult::fail("unknown exception");
    }
    if (r.result == Result::pass && detail::case_failed())
        r = CaseResult::fail(
                concat("a check above failed", r.message.empty() ? "" : ": ", r.message));
    return r;
}

// A result on the pipe: "<p|f|s><length>[e<errno>...]:<message>".
std::string encode(const CaseResult &r)
{
    const char tag = r.result == Result::pass ? 'p' : r.result == Result::fail ? 'f' : 's';
    std::string errnos;
    for (const int e : r.errnos)
        errnos += concat("e", e);
    return concat(tag, r.message.size(), errnos, ":", r.message);
}

// Takes one whole record off the front of buf, if there is one.
std::optional<CaseResult> decode(std::string &buf)
{
    const std::size_t colon = buf.find(':');
    if (buf.empty() || colon == std::string::npos)
        return std::nullopt;
    const std::string head = buf.substr(1, colon - 1);
    std::size_t pos = 0;
    const std::size_t len = std::stoul(head, &pos);
    if (buf.size() < colon + 1 + len)
        return std::nullopt;
    std::vector<int> errnos;
    while (pos < head.size() && head[pos] == 'e') {
        std::size_t used = 0;
        errnos.push_back(std::stoi(head.substr(pos + 1), &used));
        pos += 1 + used;
    }
    std::string msg = buf.substr(colon + 1, len);
    const char tag = buf[0];
    buf.erase(0, colon + 1 + len);
    if (tag == 'p')
        return CaseResult::pass(std::move(msg));
    if (tag == 's')
        return CaseResult::skip(std::move(msg));
    return CaseResult::fail(std::move(msg), std::move(errnos));
}

// The initial namespaces (pid 1's network and mount namespaces, whose sysfs shows that
// network namespace): where a module's parameters create their devices, whatever
// namespace the program was started in.
std::string enter_initial_netns()
{
    for (const auto &[path, type] :
         {std::pair{"/proc/1/ns/net", CLONE_NEWNET}, std::pair{"/proc/1/ns/mnt", CLONE_NEWNS}}) {
        const int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return errno_text(concat("open ", path).c_str());
        const int rc = setns(fd, type);
        std::string err = rc == 0 ? std::string() : errno_text(concat("setns ", path).c_str());
        close(fd);
        if (!err.empty())
            return err;
    }
    return {};
}

// The process of a group of cases (one case, or the steps of a sequence): enters its own
// netns, runs the cases in order, writes each result to res_fd and waits for the parent's
// byte on ack_fd before the next (so that the parent's "ok" line comes before the next
// case's diagnostics).
[[noreturn]] void group_child(const std::vector<const Case *> &group, int res_fd, int ack_fd)
{
    setpgid(0, 0);
    {
        const Netns ns = group.front()->options.netns;
        if (std::string err = ns == Netns::own ? enter_own_netns() : enter_initial_netns();
            !err.empty()) {
            write_all(res_fd, encode(CaseResult::fail(concat("case netns: ", err))));
            _exit(kCaseSetupFailed);
        }
    }
    for (const Case *c : group) {
        const CaseResult r = run_body(*c);
        std::cout.flush();
        write_all(res_fd, encode(r));
        char ack;
        if (read(ack_fd, &ack, 1) != 1)
            _exit(kCaseSetupFailed);
    }
    _exit(kCaseResultWritten);
}

// Runs a group in a child and hands each case's result to emit, in order. Each case has
// its own timeout from the end of the one before; at a deadline the child's process group
// is killed. A case the child did not finish fails with why (signal, timeout, exit); the
// rest of the group fail as not run.
void run_group(const std::vector<const Case *> &group,
               const std::function<void(const Case &, const CaseResult &)> &emit)
{
    int res[2];
    int ack[2];
    std::size_t done = 0;
    auto fail_rest = [&](const std::string &why) {
        for (std::size_t i = done; i < group.size(); ++i)
            emit(*group[i],
                 CaseResult::fail(i == done ? why
                                            : concat("not run: ", group[done]->name, " ", why)));
    };
    if (pipe2(res, O_CLOEXEC) != 0 || pipe2(ack, O_CLOEXEC) != 0)
        return fail_rest(errno_text("pipe"));
    std::cout.flush();
    const pid_t pid = fork();
    if (pid == 0) {
        close(res[0]);
        close(ack[1]);
        group_child(group, res[1], ack[0]);
    }
    close(res[1]);
    close(ack[0]);
    const int pidfd = pid < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    std::string buf;
    bool exited = pid < 0 || pidfd < 0;
    bool timed_out = false;
    auto deadline = std::chrono::steady_clock::now();
    if (done < group.size())
        deadline += std::chrono::seconds(group[done]->options.timeout_s);
    while (!exited && done < group.size()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p[2] = {{.fd = pidfd, .events = POLLIN, .revents = 0},
                       {.fd = res[0], .events = POLLIN, .revents = 0}};
        if (poll(p, 2, static_cast<int>(left.count())) < 0 && errno != EINTR)
            break;
        if ((p[1].revents & POLLIN) != 0) {
            char chunk[4096];
            const ssize_t n = read(res[0], chunk, sizeof(chunk));
            if (n > 0)
                buf.append(chunk, static_cast<std::size_t>(n));
        }
        while (done < group.size()) {
            std::optional<CaseResult> r = decode(buf);
            if (!r)
                break;
            emit(*group[done++], *r);
            write_all(ack[1], "a");
            if (done < group.size())
                deadline = std::chrono::steady_clock::now() +
                           std::chrono::seconds(group[done]->options.timeout_s);
        }
        exited = (p[0].revents & POLLIN) != 0;
    }
    if (pidfd >= 0)
        close(pidfd);
    if (pid > 0 && !exited) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    fcntl(res[0], F_SETFL, O_NONBLOCK);
    buf += read_all(res[0]); // what the child wrote before it ended
    close(res[0]);
    close(ack[1]);
    while (done < group.size()) {
        std::optional<CaseResult> r = decode(buf);
        if (!r)
            break;
        emit(*group[done++], *r);
    }
    if (done == group.size())
        return;
    if (pid < 0)
        return fail_rest(errno_text("fork"));
    if (timed_out || !exited)
        return fail_rest(concat("timed out after ", group[done]->options.timeout_s, " s"));
    if (WIFSIGNALED(status))
        return fail_rest(concat("killed by signal ", WTERMSIG(status), " (",
                                strsignal(WTERMSIG(status)), ")"));
    fail_rest(concat("ended without a result (exit status ", WEXITSTATUS(status), ")"));
}

} // namespace

std::vector<Case> &registry()
{
    static std::vector<Case> cases;
    return cases;
}

void add_case(std::string name, CaseBody body, CaseOptions options)
{
    registry().push_back({std::move(name), std::move(body), options, {}});
}

void add_step(std::string sequence, std::string name, CaseBody body, CaseOptions options)
{
    registry().push_back({std::move(name), std::move(body), options, std::move(sequence)});
}

void add_result_case(std::string name, std::function<CaseResult()> body, CaseOptions options)
{
    add_case(
            std::move(name), [body = std::move(body)] { report(body()); }, options);
}

void report(const CaseResult &result)
{
    if (result.result != Result::pass)
        throw CaseEnd{result};
    if (!result.message.empty()) {
        KtapWriter w(std::cout);
        w.diag(result.message);
    }
}

void skip(std::string reason)
{
    throw CaseEnd{CaseResult::skip(std::move(reason))};
}

void fail(std::string message)
{
    throw CaseEnd{CaseResult::fail(std::move(message))};
}

namespace detail {

bool &case_failed()
{
    static bool failed = false;
    return failed;
}

Failure::Failure(const char *file, int line, std::string what, bool fatal)
    : what_(std::move(what)), fatal_(fatal)
{
    std::string_view f(file);
    if (const auto slash = f.rfind('/'); slash != std::string_view::npos)
        f.remove_prefix(slash + 1);
    where_ = concat(f, ":", line);
}

// NOLINTNEXTLINE(bugprone-exception-escape): ends an ASSERT_* case by throwing.
Failure::~Failure() noexcept(false)
{
    const std::string ctx = context_.str();
    const std::string msg = concat(where_, ": ", what_, ctx.empty() ? "" : ": ", ctx);
    if (fatal_ && std::uncaught_exceptions() == 0)
        throw CaseEnd{CaseResult::fail(msg)};
    KtapWriter w(std::cout);
    w.diag(msg);
    case_failed() = true;
}

} // namespace detail

int run_cases(const RunConfig &config, std::ostream &out)
{
    std::vector<const Case *> cases;
    for (const Case &c : registry()) {
        if (config.only.empty() || c.name == config.only)
            cases.push_back(&c);
    }
    KtapWriter w(out);
    w.header();
    w.plan(cases.size());
    for (const std::string &note : config.notes)
        w.diag(note);
    auto emit = [&](const Case &c, const CaseResult &r) {
        w.result(c.name, r);
        out.flush();
    };
    for (std::size_t i = 0; i < cases.size();) {
        // A case alone, or the steps of one sequence together.
        std::size_t end = i + 1;
        while (!cases[i]->sequence.empty() && end < cases.size() &&
               cases[end]->sequence == cases[i]->sequence)
            ++end;
        const std::vector<const Case *> group(cases.begin() + static_cast<std::ptrdiff_t>(i),
                                              cases.begin() + static_cast<std::ptrdiff_t>(end));
        if (config.skip_all.empty()) {
            run_group(group, emit);
        } else {
            for (const Case *c : group)
                emit(*c, CaseResult::skip(config.skip_all));
        }
        i = end;
    }
    w.totals();
    return w.exit_code();
}

int run_cases(const RunConfig &config)
{
    return run_cases(config, std::cout);
}

int main(int argc, char **argv)
{
    RunConfig config;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "--case" && i + 1 < argc) {
            config.only = argv[++i];
        } else {
            std::cerr << "usage: " << argv[0] << " [--case NAME]\n";
            return 2;
        }
    }
    if (geteuid() != 0)
        config.skip_all = "must be run as root";
    return run_cases(config);
}

} // namespace ksft

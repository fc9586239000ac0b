// The unprivileged side of the catalogue: dropping to uid 65534, and the user and
// network namespace of its own the userns rows work in.
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bad_input.hpp"
#include "sysfs.hpp"

namespace bad_input {
namespace {

std::string write_proc(const char *path, std::string_view value)
{
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return concat(path, ": ", errno_name(errno));
    const ssize_t n = ::write(fd, value.data(), value.size());
    const int e = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(value.size()))
        return concat(path, ": ", errno_name(e));
    return {};
}

// unshare(CLONE_NEWUSER | CLONE_NEWNET), map root of the new user namespace to 65534,

} // namespace

RunResult send_init(ChildCtx &c, Request r)
{
    RunResult res;
    res.ack = c.init.send(r);
    return res;
}

// Sends r in the child's own netns and checks that its links and its dummy's active
// queues stay as they were (unless check says what they must be after an accepted
// request).
RunResult send_own(ChildCtx &c, Request r,
                   const std::function<std::string(const Snapshot &, const Snapshot &)> &check)
{
    RunResult res;
    if (!c.own) {
        res.skip = c.userns_error;
        return res;
    }
    const Fix fx{c.own_dev, c.own_ifindex};
    Snapshot before = c.own->snapshot(fx);
    res.ack = c.own->send(r);
    Snapshot after = c.own->snapshot(fx);
    if (res.ack.err == 0 && check)
        res.state = check(before, after);
    else
        res.state = diff(before, after);
    res.note = summary(after);
    if (res.ack.err == 0 && !r.created.empty() && r.created != c.own_dev && r.created != c.big_dev)
        rtnl::delete_link(*c.own_lib, r.created);
    return res;
}

// Drops to uid/gid 65534 with no supplementary groups (and so no capabilities), keeping
// the process dumpable so that it may write its own uid_map later.
std::string drop_privileges()
{
    if (setgroups(0, nullptr) != 0)
        return concat("setgroups: ", errno_name(errno));
    if (setresgid(kNobody, kNobody, kNobody) != 0)
        return concat("setresgid: ", errno_name(errno));
    if (setresuid(kNobody, kNobody, kNobody) != 0)
        return concat("setresuid: ", errno_name(errno));
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    return {};
}

// open the sockets of the new netns and create the dummy the userns cases work on.
void enter_userns(ChildCtx &c)
{
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
        const int e = errno;
        // Without CONFIG_USER_NS there is no /proc/self/ns/user; Debian's kernels then
        // answer EPERM, not EINVAL (their kernel.unprivileged_userns_clone check).
        std::string why;
        if (access("/proc/self/ns/user", F_OK) != 0)
            why = " (kernel built without CONFIG_USER_NS)";
        else if (netutil::sysfs::read_file("/proc/sys/kernel/unprivileged_userns_clone")
                         .value_or("1")
                         .starts_with("0"))
            why = " (kernel.unprivileged_userns_clone is 0)";
        c.userns_error =
                concat("unshare(CLONE_NEWUSER | CLONE_NEWNET) as uid 65534: ", errno_name(e), why);
        return;
    }
    // Best effort: the capabilities in the new namespace do not depend on the maps.
    write_proc("/proc/self/setgroups", "deny");
    write_proc("/proc/self/uid_map", concat("0 ", kNobody, " 1\n"));
    write_proc("/proc/self/gid_map", concat("0 ", kNobody, " 1\n"));
    try {
        c.own_lib.emplace(NETLINK_ROUTE);
        Env env;
        env.sysfs = false; // /sys still shows the netns of the case
        if (std::string err = env.open(&*c.own_lib); !err.empty()) {
            c.userns_error = concat("in the new netns: ", err);
            return;
        }
        c.own = std::move(env);
    } catch (const std::exception &ex) {
        c.userns_error = concat("in the new netns: ", ex.what());
    }
}

std::string own_device_ready(ChildCtx &c)
{
    if (!c.own)
        return c.userns_error;
    if (c.own_ifindex == 0)
        return "the dummy of the own netns was not created (see userns.newlink_own_netns)";
    return {};
}

// Active TX/RX queues of the child's dummy must be tx/rx.
std::string own_queues_are(ChildCtx &c, unsigned tx, unsigned rx)
{
    const std::string q = c.own->netdev_queues(c.own_ifindex);
    const std::string want = concat("netdev tx/rx ", tx, "/", rx);
    return q == want ? std::string() : concat(q, ", expected ", want);
}

RunResult own_channels(ChildCtx &c, std::initializer_list<Count> counts)
{
    if (std::string err = own_device_ready(c); !err.empty())
        return RunResult{.skip = err};
    return send_own(c, channels_set(*c.own, c.own_dev, counts));
}
} // namespace bad_input

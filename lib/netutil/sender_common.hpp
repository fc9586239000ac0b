// What the AF_PACKET senders here and the UDP senders of mqbench share: threads pinned
// one per CPU that all set up before any starts its timed work, and the sendmmsg loop.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/socket.h>

namespace netutil::pkt {

struct ThreadResult {
    int cpu = -1;
    std::uint64_t sent = 0;
    std::uint64_t dropped = 0; // with count_drops: packets refused with ENOBUFS
    std::uint64_t retries = 0; // ENOBUFS/EAGAIN retries
    std::uint64_t elapsed_ns = 0;
    std::string error; // empty on success
};

// Owns a file descriptor (negative: none) and closes it on destruction.
class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd();
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    Fd(Fd &&) = delete;
    Fd &operator=(Fd &&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

// "<what>: <strerror(err)>".
std::string errno_str(std::string_view what, int err);

// Pins the calling thread to cpu. Returns an error message, or an empty string.
std::string pin_to_cpu(int cpu);

// The work of one thread of run_pinned_threads(), for cpus[index]. It sets up, then
// calls start(), which waits until every thread has finished its setup, and does the
// timed work. On a setup error it sets res.error and returns without calling start().
using ThreadBody = std::function<void(std::size_t index, const std::function<void()> &start,
                                      ThreadResult &res)>;

// Runs body on one thread per entry of cpus, each pinned to its CPU first (a CPU that
// cannot be pinned to is that thread's error, body does not run), and joins them. Sets
// ThreadResult::cpu, elapsed_ns (from start() to the return of body) and, for an
// exception thrown by body, error.
std::vector<ThreadResult> run_pinned_threads(const std::vector<int> &cpus, const ThreadBody &body);

// ENOBUFS, EAGAIN, EINTR: a full queue or an interrupted call, worth retrying.
bool transient_send_error(int err);

// The same message sent count times with sendmmsg(), batch messages a call.
struct BatchSend {
    int fd = -1;
    const std::uint8_t *data = nullptr; // the payload of every message
    std::size_t len = 0;
    const void *addr = nullptr; // msg_name of every message, none if null
    socklen_t addrlen = 0;
    unsigned batch = 1;      // messages a call; 0 counts as 1
    std::uint64_t count = 0; // messages to get through, sent or dropped
    // ENOBUFS means the message was dropped (by a qdisc, for example): count it in
    // ThreadResult::dropped and go on instead of retrying it. One message a call then,
    // so that every failure belongs to one message.
    bool count_drops = false;
    // Errors retried (after sched_yield(), counted in ThreadResult::retries); any other
    // error ends the loop with ThreadResult::error "sendmmsg: <strerror>".
    bool (*transient)(int) = transient_send_error;
};

// Sends until b.count messages went out or were dropped, an error, or stop (if not
// null) becomes true, checked between calls. Adds to res.sent, dropped and retries.
void send_batches(const BatchSend &b, const std::atomic<bool> *stop, ThreadResult &res);

} // namespace netutil::pkt

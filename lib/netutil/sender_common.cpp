#include "sender_common.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <latch>
#include <optional>
#include <thread>

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

namespace netutil::pkt {
namespace {

void thread_main(const std::vector<int> &cpus, std::size_t index, const ThreadBody &body,
                 std::latch &ready, ThreadResult &res)
{
    res.cpu = cpus[index];
    bool arrived = false;
    auto arrive = [&] {
        if (!arrived) {
            arrived = true;
            ready.arrive_and_wait();
        }
    };
    std::optional<std::chrono::steady_clock::time_point> t0;
    const std::function<void()> start = [&] {
        arrive();
        t0 = std::chrono::steady_clock::now();
    };
    try {
        if (std::string err = pin_to_cpu(res.cpu); !err.empty()) {
            res.error = std::move(err);
        } else {
            body(index, start, res);
            if (t0) {
                const auto t1 = std::chrono::steady_clock::now();
                res.elapsed_ns = static_cast<std::uint64_t>(
                        std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - *t0).count());
            }
        }
    } catch (const std::exception &e) {
        res.error = e.what();
    } catch (...) {
        res.error = "unknown exception";
    }
    arrive(); // never leave the other threads waiting
}

} // namespace

Fd::~Fd()
{
    if (fd_ >= 0)
        close(fd_);
}

std::string errno_str(std::string_view what, int err)
{
    return std::string(what) + ": " + std::strerror(err);
}

std::string pin_to_cpu(int cpu)
{
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return "invalid cpu " + std::to_string(cpu);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (const int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); err != 0)
        return errno_str("pthread_setaffinity_np(cpu " + std::to_string(cpu) + ")", err);
    return {};
}

std::vector<ThreadResult> run_pinned_threads(const std::vector<int> &cpus, const ThreadBody &body)
{
    std::vector<ThreadResult> results(cpus.size());
    if (cpus.empty())
        return results;
    std::latch ready(static_cast<std::ptrdiff_t>(cpus.size()));
    std::vector<std::thread> threads;
    threads.reserve(cpus.size());
    for (std::size_t i = 0; i < cpus.size(); ++i)
        threads.emplace_back(thread_main, std::cref(cpus), i, std::cref(body), std::ref(ready),
                             std::ref(results[i]));
    for (std::thread &t : threads)
        t.join();
    return results;
}

bool transient_send_error(int err)
{
    return err == ENOBUFS || err == EAGAIN || err == EINTR;
}

void send_batches(const BatchSend &b, const std::atomic<bool> *stop, ThreadResult &res)
{
    const unsigned batch = b.batch == 0 || b.count_drops ? 1 : b.batch;
    iovec iov{const_cast<std::uint8_t *>(b.data), b.len};
    std::vector<mmsghdr> msgs(batch);
    for (mmsghdr &m : msgs) {
        m.msg_hdr.msg_name = const_cast<void *>(b.addr);
        m.msg_hdr.msg_namelen = b.addr != nullptr ? b.addrlen : 0;
        m.msg_hdr.msg_iov = &iov;
        m.msg_hdr.msg_iovlen = 1;
    }
    auto stopped = [stop] {
        return stop != nullptr && stop->load(std::memory_order_relaxed);
    };
    while (res.sent + res.dropped < b.count && !stopped()) {
        const auto want = static_cast<unsigned>(
                std::min<std::uint64_t>(batch, b.count - res.sent - res.dropped));
        const int n = sendmmsg(b.fd, msgs.data(), want, 0);
        if (n < 0) {
            if (b.count_drops && errno == ENOBUFS) {
                ++res.dropped;
                continue;
            }
            if (b.transient != nullptr && b.transient(errno)) {
                ++res.retries;
                sched_yield();
                continue;
            }
            res.error = errno_str("sendmmsg", errno);
            return;
        }
        res.sent += static_cast<std::uint64_t>(n);
    }
}

} // namespace netutil::pkt

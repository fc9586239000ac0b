#include "udp_sender.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <latch>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

namespace mqbench {
namespace {

std::string errno_str(const std::string &what, int err)
{
    return what + ": " + std::strerror(err);
}

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd()
    {
        if (fd_ >= 0)
            close(fd_);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    Fd(Fd &&) = delete;
    Fd &operator=(Fd &&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

bool transient(int err)
{
    // ECONNREFUSED: an ICMP error for an earlier datagram of this connected socket.
    return err == ENOBUFS || err == EAGAIN || err == EINTR || err == ECONNREFUSED;
}

void send_loop(int fd, const UdpConfig &cfg, const std::atomic<bool> &stop,
               ksft::pkt::ThreadResult &res)
{
    std::vector<std::uint8_t> payload(cfg.payload);
    for (std::size_t i = 0; i < payload.size(); ++i)
        payload[i] = static_cast<std::uint8_t>(i);
    iovec iov{payload.data(), payload.size()};
    const unsigned batch = std::max(cfg.batch, 1U);
    std::vector<mmsghdr> msgs(batch);
    for (mmsghdr &m : msgs) {
        m.msg_hdr.msg_iov = &iov;
        m.msg_hdr.msg_iovlen = 1;
    }
    while (res.sent < cfg.count && !stop.load(std::memory_order_relaxed)) {
        const auto want =
                static_cast<unsigned>(std::min<std::uint64_t>(batch, cfg.count - res.sent));
        const int n = sendmmsg(fd, msgs.data(), want, 0);
        if (n < 0) {
            if (transient(errno)) {
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

template <typename Arrive>
void body(const UdpConfig &cfg, std::size_t index, const std::atomic<bool> &stop, Arrive &arrive,
          ksft::pkt::ThreadResult &res)
{
    auto fail = [&](std::string msg) {
        res.error = std::move(msg);
        arrive();
    };
    const int cpu = cfg.cpus[index];
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return fail("invalid cpu " + std::to_string(cpu));
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (const int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); err != 0)
        return fail(errno_str("pthread_setaffinity_np(cpu " + std::to_string(cpu) + ")", err));

    const Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0)
        return fail(errno_str("socket(AF_INET, SOCK_DGRAM)", errno));
    if (setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, cfg.dev.c_str(),
                   static_cast<socklen_t>(cfg.dev.size())) < 0)
        return fail(errno_str("SO_BINDTODEVICE " + cfg.dev, errno));
    sockaddr_in dst{};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(cfg.dst_port);
    dst.sin_addr.s_addr = htonl(cfg.dst_ip);
    if (connect(fd.get(), reinterpret_cast<const sockaddr *>(&dst), sizeof(dst)) < 0) {
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &dst.sin_addr, ip, sizeof(ip));
        return fail(errno_str(std::string("connect ") + ip + ":" + std::to_string(cfg.dst_port) +
                                      " via " + cfg.dev,
                              errno) +
                    " (the device needs an IPv4 address and a route to the destination)");
    }

    arrive();
    const auto t0 = std::chrono::steady_clock::now();
    send_loop(fd.get(), cfg, stop, res);
    const auto t1 = std::chrono::steady_clock::now();
    res.elapsed_ns = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
}

void thread_main(const UdpConfig &cfg, std::size_t index, const std::atomic<bool> &stop,
                 std::latch &ready, ksft::pkt::ThreadResult &res)
{
    res.cpu = cfg.cpus[index];
    bool arrived = false;
    auto arrive = [&] {
        if (!arrived) {
            arrived = true;
            ready.arrive_and_wait();
        }
    };
    try {
        body(cfg, index, stop, arrive, res);
    } catch (const std::exception &e) {
        res.error = e.what();
    } catch (...) {
        res.error = "unknown exception";
    }
    arrive();
}

} // namespace

std::vector<ksft::pkt::ThreadResult> run_udp_senders(const UdpConfig &cfg,
                                                     const std::atomic<bool> &stop)
{
    std::vector<ksft::pkt::ThreadResult> results(cfg.cpus.size());
    if (cfg.cpus.empty())
        return results;
    std::latch ready(static_cast<std::ptrdiff_t>(cfg.cpus.size()));
    std::vector<std::thread> threads;
    threads.reserve(cfg.cpus.size());
    for (std::size_t i = 0; i < cfg.cpus.size(); ++i)
        threads.emplace_back(thread_main, std::cref(cfg), i, std::cref(stop), std::ref(ready),
                             std::ref(results[i]));
    for (std::thread &t : threads)
        t.join();
    return results;
}

} // namespace mqbench

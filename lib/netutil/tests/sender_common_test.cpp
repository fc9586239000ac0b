#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sender_common.hpp"

namespace {

using namespace netutil::pkt;

// The CPUs this process may run on (a container may restrict them).
std::vector<int> allowed_cpus()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set))
            cpus.push_back(c);
    }
    return cpus;
}

TEST(PinnedThreads, ErrnoStr)
{
    EXPECT_EQ(errno_str("socket(AF_PACKET)", ENOENT),
              "socket(AF_PACKET): No such file or directory");
    EXPECT_EQ(errno_str(std::string("SO_BINDTODEVICE ") + "dq1_0", EPERM),
              "SO_BINDTODEVICE dq1_0: Operation not permitted");
}

TEST(PinnedThreads, FdClosesOnDestruction)
{
    int raw = -1;
    {
        const Fd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
        raw = fd.get();
        ASSERT_GE(raw, 0);
        EXPECT_GE(fcntl(raw, F_GETFD), 0);
    }
    EXPECT_EQ(fcntl(raw, F_GETFD), -1);
    EXPECT_EQ(errno, EBADF);
    const Fd none(-1); // nothing to close
    EXPECT_EQ(none.get(), -1);
}

TEST(PinnedThreads, PinRejectsInvalidCpu)
{
    EXPECT_EQ(pin_to_cpu(-1), "invalid cpu -1");
    EXPECT_EQ(pin_to_cpu(CPU_SETSIZE), "invalid cpu " + std::to_string(CPU_SETSIZE));
}

TEST(PinnedThreads, NoCpusNoThreads)
{
    bool ran = false;
    const auto res = run_pinned_threads(
            {}, [&](std::size_t, const std::function<void()> &, ThreadResult &) { ran = true; });
    EXPECT_TRUE(res.empty());
    EXPECT_FALSE(ran);
}

TEST(PinnedThreads, RunsPinnedAndTimed)
{
    const std::vector<int> cpus = allowed_cpus();
    ASSERT_FALSE(cpus.empty());
    std::vector<int> ran_on(cpus.size(), -1);
    const auto res = run_pinned_threads(
            cpus, [&](std::size_t index, const std::function<void()> &start, ThreadResult &r) {
                start();
                ran_on[index] = sched_getcpu();
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                r.sent = index + 1;
            });
    ASSERT_EQ(res.size(), cpus.size());
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        EXPECT_EQ(res[i].cpu, cpus[i]);
        EXPECT_EQ(res[i].error, "");
        EXPECT_EQ(res[i].sent, i + 1);
        EXPECT_EQ(ran_on[i], cpus[i]);
        EXPECT_GE(res[i].elapsed_ns, 2'000'000U);
    }
}

TEST(PinnedThreads, AllSetUpBeforeAnyStarts)
{
    const std::vector<int> cpus = allowed_cpus();
    ASSERT_FALSE(cpus.empty());
    const std::vector<int> doubled(2, cpus[0]); // two threads on one CPU is allowed
    std::atomic<int> set_up{0};
    std::vector<int> seen(doubled.size(), 0);
    run_pinned_threads(doubled,
                       [&](std::size_t index, const std::function<void()> &start, ThreadResult &) {
                           if (index == 1)
                               std::this_thread::sleep_for(std::chrono::milliseconds(20));
                           ++set_up;
                           start();
                           seen[index] = set_up.load();
                       });
    EXPECT_EQ(seen[0], 2);
    EXPECT_EQ(seen[1], 2);
}

TEST(PinnedThreads, ErrorsStayPerThread)
{
    const std::vector<int> cpus = allowed_cpus();
    ASSERT_FALSE(cpus.empty());
    const int good = cpus[0];
    // -1 cannot be pinned to; the other threads must neither hang nor run its body.
    const std::vector<int> list = {good, -1, good, good, good};
    std::vector<int> bodies(list.size(), 0);
    const auto res = run_pinned_threads(
            list, [&](std::size_t index, const std::function<void()> &start, ThreadResult &r) {
                ++bodies[index];
                switch (index) {
                case 2:
                    r.error = "setup failed"; // without start()
                    return;
                case 3:
                    start();
                    throw std::runtime_error("boom");
                case 4:
                    throw 42; // NOLINT: an exception of no std::exception type
                default:
                    start();
                }
            });
    ASSERT_EQ(res.size(), list.size());
    EXPECT_EQ(res[0].error, "");
    EXPECT_EQ(res[1].cpu, -1);
    EXPECT_EQ(res[1].error, "invalid cpu -1");
    EXPECT_EQ(bodies[1], 0);
    EXPECT_EQ(res[2].error, "setup failed");
    EXPECT_EQ(res[2].elapsed_ns, 0U);
    EXPECT_EQ(res[3].error, "boom");
    EXPECT_EQ(res[3].elapsed_ns, 0U);
    EXPECT_EQ(res[4].error, "unknown exception");
    for (std::size_t i = 0; i < list.size(); ++i)
        EXPECT_EQ(res[i].cpu, list[i]);
}

// A connected AF_UNIX datagram pair: [0] sends, [1] receives.
struct DgramPair {
    int fds[2] = {-1, -1};
    DgramPair()
    {
        if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fds) != 0)
            fds[0] = fds[1] = -1;
    }
    ~DgramPair()
    {
        for (const int fd : fds) {
            if (fd >= 0)
                close(fd);
        }
    }
    DgramPair(const DgramPair &) = delete;
    DgramPair &operator=(const DgramPair &) = delete;
    DgramPair(DgramPair &&) = delete;
    DgramPair &operator=(DgramPair &&) = delete;

    // Datagrams waiting at the receiver, each checked against want.
    int drain(const std::vector<std::uint8_t> &want) const
    {
        int n = 0;
        std::vector<std::uint8_t> buf(want.size() + 16);
        while (true) {
            const ssize_t got = recv(fds[1], buf.data(), buf.size(), MSG_DONTWAIT);
            if (got < 0)
                return n;
            EXPECT_EQ(std::vector<std::uint8_t>(buf.begin(), buf.begin() + got), want);
            ++n;
        }
    }
};

TEST(SendBatches, TransientErrors)
{
    for (const int err : {ENOBUFS, EAGAIN, EINTR})
        EXPECT_TRUE(transient_send_error(err)) << err;
    for (const int err : {EPERM, EINVAL, ENXIO, ENETDOWN, EMSGSIZE, ECONNREFUSED, EBADF})
        EXPECT_FALSE(transient_send_error(err)) << err;
}

TEST(SendBatches, SendsCountInBatches)
{
    const DgramPair p;
    ASSERT_GE(p.fds[0], 0);
    const std::vector<std::uint8_t> payload = {1, 2, 3, 4, 5};
    // Below net.unix.max_dgram_qlen (10 by default), so that nothing blocks.
    for (const unsigned batch : {0U, 1U, 3U, 64U}) {
        BatchSend b;
        b.fd = p.fds[0];
        b.data = payload.data();
        b.len = payload.size();
        b.batch = batch;
        b.count = 8;
        ThreadResult res;
        send_batches(b, nullptr, res);
        EXPECT_EQ(res.error, "") << batch;
        EXPECT_EQ(res.sent, 8U) << batch;
        EXPECT_EQ(res.dropped, 0U);
        EXPECT_EQ(p.drain(payload), 8) << batch;
    }
}

TEST(SendBatches, StopsWhenAsked)
{
    const DgramPair p;
    ASSERT_GE(p.fds[0], 0);
    const std::vector<std::uint8_t> payload = {9};
    const std::atomic<bool> stop{true};
    BatchSend b;
    b.fd = p.fds[0];
    b.data = payload.data();
    b.len = payload.size();
    b.count = 5;
    ThreadResult res;
    send_batches(b, &stop, res);
    EXPECT_EQ(res.sent, 0U);
    EXPECT_EQ(res.error, "");
    EXPECT_EQ(p.drain(payload), 0);
}

TEST(SendBatches, FatalErrorEndsTheLoop)
{
    const std::vector<std::uint8_t> payload = {1};
    BatchSend b;
    b.fd = -1;
    b.data = payload.data();
    b.len = payload.size();
    b.count = 3;
    ThreadResult res;
    send_batches(b, nullptr, res);
    EXPECT_EQ(res.error, "sendmmsg: Bad file descriptor");
    EXPECT_EQ(res.sent, 0U);
    EXPECT_EQ(res.retries, 0U);
}

TEST(SendBatches, RetriesWhatThePredicateCallsTransient)
{
    // A full non-blocking pair answers EAGAIN; a predicate that retries nothing ends the
    // loop there, the default one retries until stopped.
    const DgramPair p;
    ASSERT_GE(p.fds[0], 0);
    ASSERT_EQ(fcntl(p.fds[0], F_SETFL, O_NONBLOCK), 0);
    const std::vector<std::uint8_t> payload(64, 7);
    BatchSend b;
    b.fd = p.fds[0];
    b.data = payload.data();
    b.len = payload.size();
    b.count = 100000;
    b.transient = [](int) {
        return false;
    };
    ThreadResult res;
    send_batches(b, nullptr, res);
    EXPECT_EQ(res.error, "sendmmsg: " + std::string(std::strerror(EAGAIN)));
    EXPECT_GT(res.sent, 0U);
    EXPECT_LT(res.sent, b.count);

    b.transient = transient_send_error;
    std::atomic<bool> stop{false};
    ThreadResult res2;
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        stop = true;
    });
    send_batches(b, &stop, res2);
    stopper.join();
    EXPECT_EQ(res2.error, "");
    EXPECT_EQ(res2.sent, 0U); // still full
    EXPECT_GT(res2.retries, 0U);
}

} // namespace

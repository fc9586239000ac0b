// churn: the sender threads, one per CPU, pinned, each sending 64-byte frames one
// sendto() at a time from an AF_PACKET socket.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "churn_plan.hpp"
#include "common.hpp"
#include "packet_sender.hpp"

namespace churn {

enum Mode : int { kRun, kHold, kStop, kDeleting };

// One sender per CPU; see the top of the file for what each errno means.
class Senders {
public:
    Senders(int ifindex, std::vector<int> cpus)
        : ifindex_(ifindex), cpus_(std::move(cpus)), threads_(new Thread[cpus_.size()])
    {
        runner_ = std::thread([this] {
            pkt::run_pinned_threads(cpus_, [this](std::size_t i, const std::function<void()> &start,
                                                  pkt::ThreadResult &res) {
                body(i, start, res);
                if (!res.error.empty())
                    set_error(i, res.error);
            });
        });
    }
    ~Senders() { stop(); }
    Senders(const Senders &) = delete;
    Senders &operator=(const Senders &) = delete;
    Senders(Senders &&) = delete;
    Senders &operator=(Senders &&) = delete;

    std::size_t size() const { return cpus_.size(); }
    const std::vector<int> &cpus() const { return cpus_; }

    // Waits until every thread has its socket and is paused. Returns an error or "".
    std::string wait_ready()
    {
        const auto t0 = Clock::now();
        while (ready_.load() + failed_.load() < static_cast<int>(cpus_.size())) {
            if (Clock::now() - t0 > kHoldTimeout)
                return "the sender threads did not start within 5 s";
            std::this_thread::sleep_for(kPoll);
        }
        if (failed_.load() != 0)
            return concat("sender setup failed: ", errors_text());
        return hold() ? std::string() : "the sender threads did not pause within 5 s";
    }

    void resume()
    {
        mode_.store(kRun);
        mode_.notify_all();
    }

    // Pauses every sender between two packets: true once all running threads wait.
    bool hold()
    {
        mode_.store(kHold);
        const auto t0 = Clock::now();
        while (parked_.load() < alive_.load()) {
            if (Clock::now() - t0 > kHoldTimeout)
                return false;
            std::this_thread::sleep_for(kPoll);
        }
        return true;
    }

    // The device is about to be deleted: ENXIO/ENODEV then end a thread without an error.
    void expect_gone()
    {
        mode_.store(kDeleting);
        mode_.notify_all();
    }

    bool wait_ended(milliseconds timeout)
    {
        const auto t0 = Clock::now();
        while (alive_.load() != 0) {
            if (Clock::now() - t0 > timeout)
                return false;
            std::this_thread::sleep_for(kPoll);
        }
        return true;
    }

    void stop()
    {
        mode_.store(kStop);
        mode_.notify_all();
        if (runner_.joinable())
            runner_.join();
    }

    int alive() const { return alive_.load(); }

    churn::SenderCounts totals() const
    {
        churn::SenderCounts c;
        for (std::size_t i = 0; i < cpus_.size(); ++i) {
            c.sent += threads_[i].sent.load();
            c.nobufs += threads_[i].nobufs.load();
            c.netdown += threads_[i].netdown.load();
            c.again += threads_[i].again.load();
        }
        return c;
    }

    // The errno that ended thread i (0: still running or stopped by request).
    int end_errno(std::size_t i) const { return threads_[i].end_errno.load(); }

    // Errors reported since the last call.
    std::vector<std::string> take_errors()
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        std::vector<std::string> out;
        out.swap(new_errors_);
        return out;
    }

private:
    struct Thread {
        std::atomic<std::uint64_t> sent{0};
        std::atomic<std::uint64_t> nobufs{0};
        std::atomic<std::uint64_t> netdown{0};
        std::atomic<std::uint64_t> again{0};
        std::atomic<int> end_errno{0};
    };

    void set_error(std::size_t i, const std::string &err)
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        const std::string e = concat("sender on CPU ", cpus_[i], ": ", err);
        new_errors_.push_back(e);
        all_errors_.push_back(e);
    }

    std::string errors_text()
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        std::string out;
        for (const std::string &e : all_errors_)
            out += concat(out.empty() ? "" : "; ", e);
        return out;
    }

    void body(std::size_t i, const std::function<void()> &start, pkt::ThreadResult &res)
    {
        std::string err = run(i, start);
        if (!err.empty())
            res.error = std::move(err);
    }

    // Sets up thread i's socket, then sends until told to stop or an error ends it.
    std::string run(std::size_t i, const std::function<void()> &start);

    int ifindex_;
    std::vector<int> cpus_;
    std::unique_ptr<Thread[]> threads_;
    std::atomic<int> mode_{kHold};
    std::atomic<int> ready_{0};
    std::atomic<int> failed_{0};
    std::atomic<int> alive_{0};
    std::atomic<int> parked_{0};
    std::mutex mutex_;
    std::vector<std::string> new_errors_;
    std::vector<std::string> all_errors_;
    std::thread runner_; // last: starts once the members it uses exist
};

} // namespace churn

// The two subcommands and the measurement window around them.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "args.hpp"
#include "report.hpp"

namespace mqbench {

// A failure that stops the run before or while it starts (exit status 1).
class RuntimeFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Workload {
    std::function<void()> run;          // blocks until the traffic is done; own thread
    std::function<void()> request_stop; // called from the main thread (duration, signal)
    // Packets sent since the start, where observable (live progress).
    std::function<std::optional<std::uint64_t>()> progress;
};

// Runs w with wall time, /proc/stat, per-queue and perf measurements around it, live
// progress on stderr and SIGINT/SIGTERM handling; fills those parts of r. Call
// compute_totals() and finish() after filling r.per_thread.
struct Measurement;
class Window {
public:
    Window(const Options &o, int ifindex);
    ~Window();
    Window(const Window &) = delete;
    Window &operator=(const Window &) = delete;
    Window(Window &&) = delete;
    Window &operator=(Window &&) = delete;

    void run(Workload &w, Report &r);
    // Needs r.packets: fills cpu_ns_per_pkt.
    static void finish(Report &r);

private:
    const Options &o_;
    int ifindex_;
};

// Fill r and return the exit status; throw RuntimeFailure for missing prerequisites.
int run_pktgen(const Options &o, Report &r);
int run_gen(const Options &o, Report &r);

// Installs the SIGINT/SIGTERM handlers used by Window::run().
void install_signal_handlers();

} // namespace mqbench

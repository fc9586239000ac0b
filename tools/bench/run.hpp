// The two subcommands and the measurement window around them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "args.hpp"
#include "report.hpp"

namespace mqbench {

// A missing prerequisite or a setup step that failed (exit status 1).
class RuntimeFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Workload {
    std::function<void()> run;          // blocks until the traffic is done; runs on its own thread
    std::function<void()> request_stop; // called from the main thread (duration over, signal)
    // Packets sent since the start, where observable (live progress).
    std::function<std::optional<std::uint64_t>()> progress;
};

// Runs w inside the measurement window: wall time, /proc/stat, per-queue counters and perf
// counters around it, live progress on stderr once per second for runs longer than 2 s,
// stop after --duration or on SIGINT/SIGTERM. Fills wall_seconds, interrupted, cpu,
// per_queue*, counters*.
void measure(const Options &o, int ifindex, Workload &w, Report &r);

// After per_thread is filled: totals and cpu_ns_per_pkt.
void finalize(Report &r);

// Fill r and return the exit status; throw RuntimeFailure for missing prerequisites.
int run_pktgen(const Options &o, Report &r);
int run_gen(const Options &o, Report &r);

// The common part of the report (subcommand, args, device, threads, kernel).
Report make_report(const Options &o);

// Installs the SIGINT/SIGTERM handlers that measure() polls.
void install_signal_handlers();

} // namespace mqbench

// Results of one run and their JSON / table renderings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perf.hpp"
#include "procstat.hpp"
#include "queues.hpp"

namespace mqbench {

struct ThreadReport {
    unsigned index = 0;
    int cpu = -1;
    std::uint64_t packets = 0;
    double seconds = 0;
    double pps = 0;
    std::uint64_t errors = 0; // pktgen xmit errors / sender retries
    std::string error;
};

struct Report {
    std::string subcommand;
    nlohmann::ordered_json args; // options_to_json()
    std::string device;
    std::string kernel;
    unsigned threads = 0;
    std::vector<ThreadReport> per_thread;

    std::uint64_t packets = 0;
    double seconds = 0;      // longest per-thread send time
    double wall_seconds = 0; // whole measurement window
    double pps = 0;          // packets / seconds

    std::optional<procstat::Delta> cpu;
    std::optional<double> cpu_ns_per_pkt;
    std::optional<double> cpu_tick_ns; // resolution of the /proc/stat counters (USER_HZ)

    std::string per_queue_source = "unavailable";
    std::optional<queues::Counts> per_queue;
    std::string per_queue_note;

    std::vector<perf::Reading> counters;
    std::string counters_note;

    bool interrupted = false;
    std::vector<std::string> notes; // informational, not failures
    std::vector<std::string> errors;
};

// Fills packets, seconds and pps from per_thread (pps = sum of packets / max seconds) and
// each thread's pps.
void compute_totals(Report &r);

// The report as mqbench --json prints it (tools/bench/bench.py reads it); keys keep this
// order.
nlohmann::ordered_json to_json(const Report &r);
// Short human-readable table.
std::string to_table(const Report &r);

} // namespace mqbench

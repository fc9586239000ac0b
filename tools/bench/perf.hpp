// perf-stat-like system-wide counters through perf_event_open(2), one event per CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mqbench::perf {

struct EventSpec {
    std::string name; // as perf stat names it
    std::uint32_t type = 0;
    std::uint64_t config = 0;
    bool hardware = false;
};

// cycles, instructions, cache-references (hardware), then task-clock, context-switches,
// cpu-migrations (software).
std::vector<EventSpec> default_events();

struct Reading {
    std::string name;
    bool hardware = false;
    std::optional<double> value; // summed over CPUs, scaled for multiplexing; nullopt if
                                 // unavailable
    std::string error;           // why it is unavailable
};

// Scales a counter read with PERF_FORMAT_TOTAL_TIME_ENABLED|RUNNING; nullopt if it never ran.
std::optional<double> scale(std::uint64_t value, std::uint64_t enabled, std::uint64_t running);

// The report's counters_note for these readings taken on ncpus CPUs.
std::string note(const std::vector<Reading> &readings, std::size_t ncpus);

class Counters {
public:
    // Opens every event on every CPU, disabled. Events that fail on any CPU are recorded as
    // unavailable with the error.
    Counters(const std::vector<int> &cpus, std::vector<EventSpec> events = default_events());
    ~Counters();
    Counters(const Counters &) = delete;
    Counters &operator=(const Counters &) = delete;
    Counters(Counters &&) = delete;
    Counters &operator=(Counters &&) = delete;

    void start();
    void stop();
    std::vector<Reading> read() const;
    std::size_t cpus() const { return ncpus_; }

private:
    struct Event {
        EventSpec spec;
        std::vector<int> fds;
        std::string error;
    };
    std::vector<Event> events_;
    std::size_t ncpus_ = 0;
};

} // namespace mqbench::perf

// Counting tracepoint hits per device through tracefs.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ksft::tracefs {

// First of /sys/kernel/tracing and /sys/kernel/debug/tracing that holds a "trace" file.
std::optional<std::string> find_root();

// Counts lines of trace text that carry the field dev=<dev> (exact name). Comment lines are
// ignored. If event is not empty, only lines of that event ("<event>:") count.
std::size_t count_dev_lines(std::string_view trace_text, std::string_view dev,
                            std::string_view event = {});

// Same for any "<key>=<value>" field, e.g. ("ifindex", "7") for the qdisc events, which
// print the ifindex but not the device name. The value must be followed by a blank, a
// comma or the end of the line.
std::size_t count_field_lines(std::string_view trace_text, std::string_view key,
                              std::string_view value, std::string_view event = {});

// A private trace instance, <root>/instances/<name>: its own ring buffer, event switches
// and tracing_on, so that clearing or enabling there leaves the global buffer and every
// other instance alone. Removed again on destruction (rmdir, which tracefs allows on a
// populated instance directory once nothing has its files open).
class Instance {
public:
    // root: tracefs mount point; empty means find_root(). An existing directory of that
    // name is an error (it belongs to someone else), not reused.
    explicit Instance(std::string name, std::string root = {});
    ~Instance();
    Instance(const Instance &) = delete;
    Instance &operator=(const Instance &) = delete;
    Instance(Instance &&) = delete;
    Instance &operator=(Instance &&) = delete;

    // False if tracefs has no instances directory or mkdir failed; error() says why.
    bool available() const { return error_.empty(); }
    const std::string &error() const { return error_; }
    // The instance directory: pass it as the root of an Event.
    const std::string &path() const { return path_; }
    // Removes the instance now; false (with error() set) if rmdir fails.
    bool remove();

private:
    std::string path_;
    std::string error_;
    bool created_ = false;
};

// "<prefix>_<pid>": an instance name unique to this process.
std::string instance_name(std::string_view prefix);

// One tracepoint, events/<system>/<name>. Disabled again on destruction if it was enabled
// here, and tracing_on is restored.
class Event {
public:
    // root: tracefs mount point or an Instance::path(); empty means find_root().
    Event(std::string system, std::string name, std::string root = {});
    ~Event();
    Event(const Event &) = delete;
    Event &operator=(const Event &) = delete;
    Event(Event &&) = delete;
    Event &operator=(Event &&) = delete;

    // False if tracefs or the event is missing; error() says why (usable as a SKIP reason).
    bool available() const { return error_.empty(); }
    const std::string &error() const { return error_; }
    const std::string &root() const { return root_; }

    bool enable();
    bool disable();
    // Empties the trace buffer.
    bool clear();
    std::optional<std::string> read_trace();

    // Clears the buffer, enables the event, runs window, disables it and counts the
    // lines for dev. nullopt (with error() set) if any step fails.
    std::optional<std::size_t> count(std::string_view dev, const std::function<void()> &window);
    // Same, counting the lines of this event that carry key=value (count_field_lines()).
    std::optional<std::size_t> count_field(std::string_view key, std::string_view value,
                                           const std::function<void()> &window);

private:
    bool write_file(const std::string &path, std::string_view value);

    std::string system_;
    std::string name_;
    std::string root_;
    std::string error_;
    bool enabled_here_ = false;
    std::optional<std::string> saved_tracing_on_;
};

} // namespace ksft::tracefs

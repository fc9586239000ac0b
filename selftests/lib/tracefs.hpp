// Counting tracepoint hits per device in a private trace instance (libtracefs).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

struct tracefs_instance;

namespace ksft::tracefs {

// Where tracefs is mounted (libtracefs reads the mount table), or nullopt. Never mounts it.
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

// A private trace instance, <tracefs>/instances/<name> (tracefs_instance_create): its own
// ring buffer, event switches and tracing_on, so that clearing or enabling there leaves
// the global buffer and every other instance alone. Destroyed again on destruction.
class Instance {
public:
    // An existing instance of that name is an error (it belongs to someone else), not
    // reused.
    explicit Instance(std::string name);
    ~Instance();
    Instance(const Instance &) = delete;
    Instance &operator=(const Instance &) = delete;
    Instance(Instance &&) = delete;
    Instance &operator=(Instance &&) = delete;

    // False if tracefs is not mounted, has no instances or the instance could not be
    // created; error() says why (usable as a SKIP reason).
    bool available() const { return inst_ != nullptr && error_.empty(); }
    const std::string &error() const { return error_; }
    const std::string &name() const { return name_; }
    // The instance directory.
    const std::string &path() const { return path_; }
    // The libtracefs handle (nullptr when not available).
    tracefs_instance *get() const { return inst_; }
    // Destroys the instance now; false (with error() set) if that fails.
    bool remove();

private:
    std::string name_;
    std::string path_;
    std::string error_;
    tracefs_instance *inst_ = nullptr;
};

// "<prefix>_<pid>": an instance name unique to this process.
std::string instance_name(std::string_view prefix);

// One tracepoint, events/<system>/<name>, of an instance. Disabled again on destruction if
// it was enabled here, and the instance's tracing_on is restored.
class Event {
public:
    // instance must outlive the event.
    Event(Instance &instance, std::string system, std::string name);
    ~Event();
    Event(const Event &) = delete;
    Event &operator=(const Event &) = delete;
    Event(Event &&) = delete;
    Event &operator=(Event &&) = delete;

    // False if the instance or the event is missing; error() says why (usable as a SKIP
    // reason).
    bool available() const { return available_; }
    const std::string &error() const { return error_; }

    bool enable();
    bool disable();
    // Empties the instance's trace buffer.
    bool clear();
    std::optional<std::string> read_trace();

    // Clears the buffer, enables the event, runs window, disables it and counts the
    // lines for dev. nullopt (with error() set) if any step fails.
    std::optional<std::size_t> count(std::string_view dev, const std::function<void()> &window);
    // Same, counting the lines of this event that carry key=value (count_field_lines()).
    std::optional<std::size_t> count_field(std::string_view key, std::string_view value,
                                           const std::function<void()> &window);

private:
    bool failed(std::string what);

    Instance &instance_;
    std::string system_;
    std::string name_;
    std::string error_;
    bool available_ = false;
    bool enabled_here_ = false;
    bool turned_on_here_ = false;
};

} // namespace ksft::tracefs

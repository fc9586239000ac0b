#include "tracefs.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <unistd.h>

// libtracefs 1.6.4's tracefs.h is written for C: it has no extern "C" block, and its inline
// tracefs_hist_start() passes 0 for an enum parameter, which C++ rejects. This overload,
// declared and never defined, takes that call (the inline function is never used, so
// nothing refers to it); everything else resolves to the library's C functions.
struct tracefs_hist;
int tracefs_hist_command(tracefs_instance *instance, tracefs_hist *hist, int cmd);
extern "C" {
#include <tracefs.h>
}

namespace ksft::tracefs {
namespace {

// For the strings libtracefs returns from malloc().
struct FreeDeleter {
    void operator()(char *p) const { std::free(p); }
};

bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

bool line_has_field(std::string_view line, std::string_view key, std::string_view value)
{
    std::size_t pos = 0;
    while ((pos = line.find(key, pos)) != std::string_view::npos) {
        const bool start_ok = pos == 0 || is_space(line[pos - 1]);
        const std::size_t eq = pos + key.size();
        const std::size_t val = eq + 1;
        const bool match =
                eq < line.size() && line[eq] == '=' && line.compare(val, value.size(), value) == 0;
        const std::size_t end = val + value.size();
        const bool end_ok = end == line.size() ||
                            (end < line.size() && (is_space(line[end]) || line[end] == ','));
        if (start_ok && match && end_ok)
            return true;
        pos = eq;
    }
    return false;
}

bool line_has_event(std::string_view line, std::string_view event)
{
    // "<task>-<pid> [cpu] flags timestamp: <event>: fields"
    std::size_t pos = 0;
    while ((pos = line.find(event, pos)) != std::string_view::npos) {
        const std::size_t end = pos + event.size();
        if (pos > 0 && is_space(line[pos - 1]) && end < line.size() && line[end] == ':')
            return true;
        pos = end;
    }
    return false;
}

} // namespace

std::optional<std::string> find_root()
{
    const char *path = nullptr;
    if (tracefs_tracing_dir_is_mounted(false, &path) != 1 || path == nullptr)
        return std::nullopt;
    return std::string(path);
}

std::size_t count_dev_lines(std::string_view trace_text, std::string_view dev,
                            std::string_view event)
{
    return count_field_lines(trace_text, "dev", dev, event);
}

std::size_t count_field_lines(std::string_view trace_text, std::string_view key,
                              std::string_view value, std::string_view event)
{
    if (key.empty() || value.empty())
        return 0;
    std::size_t count = 0;
    std::size_t pos = 0;
    while (pos < trace_text.size()) {
        std::size_t nl = trace_text.find('\n', pos);
        if (nl == std::string_view::npos)
            nl = trace_text.size();
        const std::string_view line = trace_text.substr(pos, nl - pos);
        pos = nl + 1;
        const std::size_t first = line.find_first_not_of(" \t");
        if (first == std::string_view::npos || line[first] == '#')
            continue;
        if (!event.empty() && !line_has_event(line, event))
            continue;
        if (line_has_field(line, key, value))
            ++count;
    }
    return count;
}

Instance::Instance(std::string name) : name_(std::move(name))
{
    const auto root = find_root();
    if (!root) {
        error_ = "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)";
        return;
    }
    if (name_.empty() || name_.find('/') != std::string::npos) {
        error_ = "bad trace instance name '" + name_ + "'";
        return;
    }
    if (access((*root + "/instances").c_str(), F_OK) != 0) {
        error_ = "no trace instances in " + *root + " (" + *root + "/instances missing)";
        return;
    }
    errno = 0;
    inst_ = tracefs_instance_create(name_.c_str());
    if (inst_ == nullptr) {
        error_ = "creating trace instance " + name_ + " in " + *root +
                 "/instances failed: " + std::strerror(errno != 0 ? errno : EIO);
        return;
    }
    if (!tracefs_instance_is_new(inst_)) {
        tracefs_instance_free(inst_);
        inst_ = nullptr;
        error_ = "trace instance " + name_ + " exists already (not ours, left alone)";
        return;
    }
    const std::unique_ptr<char, decltype(&tracefs_put_tracing_file)> dir(
            tracefs_instance_get_dir(inst_), &tracefs_put_tracing_file);
    path_ = dir ? dir.get() : *root + "/instances/" + name_;
}

Instance::~Instance()
{
    remove();
}

bool Instance::remove()
{
    if (inst_ == nullptr)
        return error_.empty();
    if (tracefs_instance_destroy(inst_) != 0) {
        error_ = "destroying trace instance " + name_ + " failed: " + std::strerror(errno);
        return false;
    }
    tracefs_instance_free(inst_);
    inst_ = nullptr;
    return true;
}

std::string instance_name(std::string_view prefix)
{
    return std::string(prefix) + "_" + std::to_string(getpid());
}

Event::Event(Instance &instance, std::string system, std::string name)
    : instance_(instance), system_(std::move(system)), name_(std::move(name))
{
    if (!instance_.available()) {
        error_ = instance_.error();
        return;
    }
    if (!tracefs_event_file_exists(instance_.get(), system_.c_str(), name_.c_str(), "enable")) {
        error_ = "tracepoint " + system_ + ":" + name_ + " not available (no events/" + system_ +
                 "/" + name_ + " in " + instance_.path() + ")";
        return;
    }
    available_ = true;
}

Event::~Event()
{
    if (enabled_here_)
        disable();
    if (turned_on_here_ && instance_.available())
        tracefs_trace_off(instance_.get());
}

bool Event::failed(std::string what)
{
    error_ = std::move(what) + ": " + std::strerror(errno != 0 ? errno : EIO);
    return false;
}

bool Event::enable()
{
    if (!available())
        return false;
    errno = 0;
    if (!turned_on_here_ && tracefs_trace_is_on(instance_.get()) == 0) {
        if (tracefs_trace_on(instance_.get()) != 0)
            return failed("tracing_on of " + instance_.path());
        turned_on_here_ = true;
    }
    if (tracefs_event_enable(instance_.get(), system_.c_str(), name_.c_str()) != 0)
        return failed("enabling " + system_ + ":" + name_ + " in " + instance_.path());
    enabled_here_ = true;
    return true;
}

bool Event::disable()
{
    if (!available())
        return false;
    errno = 0;
    if (tracefs_event_disable(instance_.get(), system_.c_str(), name_.c_str()) != 0)
        return failed("disabling " + system_ + ":" + name_ + " in " + instance_.path());
    enabled_here_ = false;
    return true;
}

bool Event::clear()
{
    if (!available())
        return false;
    errno = 0;
    if (tracefs_instance_file_clear(instance_.get(), "trace") < 0)
        return failed("clearing " + instance_.path() + "/trace");
    return true;
}

std::optional<std::string> Event::read_trace()
{
    if (!available())
        return std::nullopt;
    errno = 0;
    int size = 0;
    const std::unique_ptr<char, FreeDeleter> text(
            tracefs_instance_file_read(instance_.get(), "trace", &size));
    if (!text) {
        failed("reading " + instance_.path() + "/trace");
        return std::nullopt;
    }
    return std::string(text.get(), static_cast<std::size_t>(size));
}

std::optional<std::size_t> Event::count(std::string_view dev, const std::function<void()> &window)
{
    return count_field("dev", dev, window);
}

std::optional<std::size_t> Event::count_field(std::string_view key, std::string_view value,
                                              const std::function<void()> &window)
{
    if (!clear() || !enable())
        return std::nullopt;
    try {
        window();
    } catch (...) {
        disable();
        throw;
    }
    if (!disable())
        return std::nullopt;
    auto text = read_trace();
    if (!text)
        return std::nullopt;
    return count_field_lines(*text, key, value, name_);
}

} // namespace ksft::tracefs

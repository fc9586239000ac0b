#include "tracefs.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ksft::tracefs {
namespace {

bool is_file(const std::string &path)
{
    return access(path.c_str(), F_OK) == 0;
}

std::optional<std::string> read_file(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

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
    for (const char *dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
        if (is_file(std::string(dir) + "/trace"))
            return std::string(dir);
    }
    return std::nullopt;
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

Instance::Instance(std::string name, std::string root)
{
    if (root.empty()) {
        auto found = find_root();
        if (!found) {
            error_ = "tracefs not mounted at /sys/kernel/tracing or /sys/kernel/debug/tracing";
            return;
        }
        root = *found;
    }
    const std::string dir = root + "/instances";
    if (!is_file(dir)) {
        error_ = "no trace instances in " + root + " (" + dir + " missing)";
        return;
    }
    if (name.empty() || name.find('/') != std::string::npos) {
        error_ = "bad trace instance name '" + name + "'";
        return;
    }
    path_ = dir + "/" + name;
    if (mkdir(path_.c_str(), 0750) != 0) {
        error_ = "mkdir " + path_ + ": " + std::strerror(errno);
        return;
    }
    created_ = true;
}

Instance::~Instance()
{
    remove();
}

bool Instance::remove()
{
    if (!created_)
        return true;
    if (rmdir(path_.c_str()) != 0) {
        error_ = "rmdir " + path_ + ": " + std::strerror(errno);
        return false;
    }
    created_ = false;
    return true;
}

std::string instance_name(std::string_view prefix)
{
    return std::string(prefix) + "_" + std::to_string(getpid());
}

Event::Event(std::string system, std::string name, std::string root)
    : system_(std::move(system)), name_(std::move(name)), root_(std::move(root))
{
    if (root_.empty()) {
        auto found = find_root();
        if (!found) {
            error_ = "tracefs not mounted at /sys/kernel/tracing or /sys/kernel/debug/tracing";
            return;
        }
        root_ = *found;
    } else if (!is_file(root_ + "/trace")) {
        error_ = "no tracefs at " + root_;
        return;
    }
    const std::string enable = root_ + "/events/" + system_ + "/" + name_ + "/enable";
    if (!is_file(enable))
        error_ = "tracepoint " + system_ + ":" + name_ + " not available (" + enable + " missing)";
}

Event::~Event()
{
    if (enabled_here_)
        disable();
    if (saved_tracing_on_)
        write_file(root_ + "/tracing_on", *saved_tracing_on_);
}

bool Event::write_file(const std::string &path, std::string_view value)
{
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) {
        error_ = "open " + path + ": " + std::strerror(errno);
        return false;
    }
    const ssize_t n = write(fd, value.data(), value.size());
    const int err = errno;
    close(fd);
    if (n != static_cast<ssize_t>(value.size())) {
        error_ = "write " + path + ": " + (n < 0 ? std::strerror(err) : "short write");
        return false;
    }
    return true;
}

bool Event::enable()
{
    if (!available())
        return false;
    if (!saved_tracing_on_) {
        auto on = read_file(root_ + "/tracing_on");
        if (on && !on->empty() && (*on)[0] != '1') {
            saved_tracing_on_ = on->substr(0, 1);
            if (!write_file(root_ + "/tracing_on", "1"))
                return false;
        }
    }
    if (!write_file(root_ + "/events/" + system_ + "/" + name_ + "/enable", "1"))
        return false;
    enabled_here_ = true;
    return true;
}

bool Event::disable()
{
    if (!write_file(root_ + "/events/" + system_ + "/" + name_ + "/enable", "0"))
        return false;
    enabled_here_ = false;
    return true;
}

bool Event::clear()
{
    return available() && write_file(root_ + "/trace", "");
}

std::optional<std::string> Event::read_trace()
{
    auto text = read_file(root_ + "/trace");
    if (!text)
        error_ = "cannot read " + root_ + "/trace";
    return text;
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

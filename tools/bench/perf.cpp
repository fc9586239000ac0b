#include "perf.hpp"

#include <cerrno>
#include <cstring>

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mqbench::perf {

std::vector<EventSpec> default_events()
{
    return {
            {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true},
            {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true},
            {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, true},
            {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false},
            {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false},
            {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false},
    };
}

std::optional<double> scale(std::uint64_t value, std::uint64_t enabled, std::uint64_t running)
{
    if (running == 0)
        return std::nullopt;
    if (running >= enabled)
        return static_cast<double>(value);
    return static_cast<double>(value) * static_cast<double>(enabled) / static_cast<double>(running);
}

namespace {

std::string note_counters(const std::vector<Reading> &readings, std::size_t ncpus)
{
    std::vector<const Reading *> hw_missing;
    std::vector<const Reading *> sw_missing;
    std::size_t hw = 0;
    std::size_t sw = 0;
    for (const Reading &r : readings) {
        (r.hardware ? hw : sw) += 1;
        if (!r.value)
            (r.hardware ? hw_missing : sw_missing).push_back(&r);
    }
    const std::string where =
            "system-wide on " + std::to_string(ncpus) + " CPU" + (ncpus == 1 ? "" : "s");
    auto list = [](const std::vector<const Reading *> &rs) {
        std::string out;
        for (const Reading *r : rs) {
            if (!out.empty())
                out += ", ";
            out += r->name;
            if (!r->error.empty())
                out += " (" + r->error + ")";
        }
        return out;
    };
    if (hw_missing.size() == hw && sw_missing.size() == sw)
        return "no counters: " + list(hw_missing) + ", " + list(sw_missing) +
               "; kernels without perf events (such as UML) have none";
    if (hw != 0 && hw_missing.size() == hw) {
        std::string n = "hardware counters unavailable (" + hw_missing.front()->error +
                        "): only software counters were counted, " + where +
                        "; expected under UML or QEMU TCG, which expose no PMU";
        if (!sw_missing.empty())
            n += "; also unavailable: " + list(sw_missing);
        return n;
    }
    if (hw_missing.empty() && sw_missing.empty())
        return "hardware and software counters, " + where;
    std::vector<const Reading *> missing = hw_missing;
    missing.insert(missing.end(), sw_missing.begin(), sw_missing.end());
    return "counted " + where + "; unavailable: " + list(missing);
}

} // namespace

std::string note(const std::vector<Reading> &readings, std::size_t ncpus)
{
    std::string n = note_counters(readings, ncpus);
    for (const Reading &r : readings) {
        if (r.name == "task-clock" && r.value)
            n += "; task-clock counted per CPU covers the whole window, idle time included";
    }
    return n;
}

namespace {

int perf_event_open(perf_event_attr *attr, int cpu)
{
    return static_cast<int>(syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

} // namespace

Counters::Counters(const std::vector<int> &cpus, std::vector<EventSpec> events)
    : ncpus_(cpus.size())
{
    for (EventSpec &spec : events) {
        Event ev{std::move(spec), {}, {}};
        perf_event_attr attr{};
        attr.size = sizeof(attr);
        attr.type = ev.spec.type;
        attr.config = ev.spec.config;
        attr.disabled = 1;
        attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        for (const int cpu : cpus) {
            const int fd = perf_event_open(&attr, cpu);
            if (fd < 0) {
                ev.error = std::string("perf_event_open: ") + std::strerror(errno);
                for (const int f : ev.fds)
                    close(f);
                ev.fds.clear();
                break;
            }
            ev.fds.push_back(fd);
        }
        if (cpus.empty())
            ev.error = "no CPUs";
        events_.push_back(std::move(ev));
    }
}

Counters::~Counters()
{
    for (const Event &ev : events_) {
        for (const int fd : ev.fds)
            close(fd);
    }
}

void Counters::start()
{
    for (const Event &ev : events_) {
        for (const int fd : ev.fds) {
            ioctl(fd, PERF_EVENT_IOC_RESET, 0);
            ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
        }
    }
}

void Counters::stop()
{
    for (const Event &ev : events_) {
        for (const int fd : ev.fds)
            ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    }
}

std::vector<Reading> Counters::read() const
{
    std::vector<Reading> out;
    for (const Event &ev : events_) {
        Reading r{ev.spec.name, ev.spec.hardware, std::nullopt, ev.error};
        if (!ev.fds.empty()) {
            double sum = 0;
            bool any = false;
            for (const int fd : ev.fds) {
                std::uint64_t buf[3] = {0, 0, 0};
                if (::read(fd, buf, sizeof(buf)) != static_cast<ssize_t>(sizeof(buf))) {
                    r.error = std::string("read: ") + std::strerror(errno);
                    any = false;
                    break;
                }
                if (auto v = scale(buf[0], buf[1], buf[2])) {
                    sum += *v;
                    any = true;
                }
            }
            if (any)
                r.value = sum;
            else if (r.error.empty())
                r.error = "never scheduled";
        }
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace mqbench::perf

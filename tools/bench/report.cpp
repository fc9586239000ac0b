#include "report.hpp"

#include <algorithm>
#include <cstdio>

#include "args.hpp"

namespace mqbench {

void compute_totals(Report &r)
{
    r.packets = 0;
    r.seconds = 0;
    for (ThreadReport &t : r.per_thread) {
        t.pps = t.seconds > 0 ? static_cast<double>(t.packets) / t.seconds : 0;
        r.packets += t.packets;
        r.seconds = std::max(r.seconds, t.seconds);
    }
    r.pps = r.seconds > 0 ? static_cast<double>(r.packets) / r.seconds : 0;
}

namespace {

std::optional<double> per_packet(const std::optional<double> &v, std::uint64_t packets)
{
    if (!v || packets == 0)
        return std::nullopt;
    return *v / static_cast<double>(packets);
}

std::string fmt(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
    return buf;
}

} // namespace

json::Value to_json(const Report &r)
{
    json::Value j = json::Value::object();
    j.set("tool", kToolName);
    j.set("version", kToolVersion);
    j.set("subcommand", r.subcommand);
    j.set("args", r.args);
    j.set("device", r.device);
    j.set("kernel", r.kernel);
    j.set("threads", r.threads);
    j.set("packets", r.packets);
    j.set("seconds", r.seconds);
    j.set("wall_seconds", r.wall_seconds);
    j.set("pps", r.pps);
    j.set("cpu_ns_per_pkt", r.cpu_ns_per_pkt);
    if (r.cpu) {
        json::Value c = json::Value::object();
        c.set("user_ns", r.cpu->user_ns);
        c.set("system_ns", r.cpu->system_ns);
        c.set("softirq_ns", r.cpu->softirq_ns);
        j.set("cpu", std::move(c));
    } else {
        j.set("cpu", nullptr);
    }
    j.set("cpu_tick_ns", r.cpu_tick_ns);

    json::Value threads = json::Value::array();
    for (const ThreadReport &t : r.per_thread) {
        json::Value o = json::Value::object();
        o.set("thread", t.index);
        o.set("cpu", t.cpu);
        o.set("packets", t.packets);
        o.set("seconds", t.seconds);
        o.set("pps", t.pps);
        o.set("errors", t.errors);
        o.set("error", t.error.empty() ? json::Value() : json::Value(t.error));
        threads.push(std::move(o));
    }
    j.set("per_thread", std::move(threads));

    if (r.per_queue) {
        json::Value q = json::Value::object();
        for (const auto &[id, n] : *r.per_queue)
            q.set(std::to_string(id), n);
        j.set("per_queue", std::move(q));
    } else {
        j.set("per_queue", nullptr);
    }
    j.set("per_queue_source", r.per_queue_source);
    j.set("per_queue_note", r.per_queue_note);

    json::Value counters = json::Value::object();
    json::Value totals = json::Value::object();
    json::Value unavailable = json::Value::array();
    for (const perf::Reading &c : r.counters) {
        counters.set(c.name, per_packet(c.value, r.packets));
        totals.set(c.name, c.value);
        if (!c.value)
            unavailable.push(c.name);
    }
    j.set("counters", std::move(counters));
    j.set("counters_total", std::move(totals));
    j.set("counters_unavailable", std::move(unavailable));
    j.set("counters_note", r.counters_note);

    j.set("interrupted", r.interrupted);
    json::Value notes = json::Value::array();
    for (const std::string &n : r.notes)
        notes.push(n);
    j.set("notes", std::move(notes));
    json::Value errors = json::Value::array();
    for (const std::string &e : r.errors)
        errors.push(e);
    j.set("errors", std::move(errors));
    return j;
}

std::string to_table(const Report &r)
{
    std::string out;
    char line[256];
    out += std::string(kToolName) + " " + r.subcommand + " on " + r.device + ", " +
           std::to_string(r.threads) + " thread" + (r.threads == 1 ? "" : "s") +
           (r.interrupted ? " (interrupted)" : "") + "\n";
    std::snprintf(line, sizeof(line), "%-7s %5s %14s %10s %14s %10s\n", "thread", "cpu", "packets",
                  "seconds", "pps", "errors");
    out += line;
    for (const ThreadReport &t : r.per_thread) {
        std::snprintf(line, sizeof(line), "%-7u %5d %14llu %10.3f %14.0f %10llu%s%s\n", t.index,
                      t.cpu, static_cast<unsigned long long>(t.packets), t.seconds, t.pps,
                      static_cast<unsigned long long>(t.errors), t.error.empty() ? "" : "  ",
                      t.error.c_str());
        out += line;
    }
    std::snprintf(line, sizeof(line), "%-7s %5s %14llu %10.3f %14.0f\n", "total", "",
                  static_cast<unsigned long long>(r.packets), r.seconds, r.pps);
    out += line;
    out += "wall time " + fmt(r.wall_seconds, 3) + " s\n";

    if (r.cpu_ns_per_pkt && r.cpu) {
        const auto pk = static_cast<double>(r.packets);
        out += "cpu " + fmt(*r.cpu_ns_per_pkt, 1) + " ns/pkt (user " + fmt(r.cpu->user_ns / pk, 1) +
               ", system " + fmt(r.cpu->system_ns / pk, 1) + ", softirq " +
               fmt(r.cpu->softirq_ns / pk, 1) + ")\n";
    } else {
        out += "cpu n/a\n";
    }

    out += "per-queue tx packets (" + r.per_queue_source + "):";
    if (r.per_queue) {
        for (const auto &[id, n] : *r.per_queue)
            out.append(" ").append(std::to_string(id)).append(":").append(std::to_string(n));
        out += "\n";
    } else {
        out += " unavailable";
        if (!r.per_queue_note.empty())
            out += " (" + r.per_queue_note + ")";
        out += "\n";
    }

    out += "counters per packet:";
    for (const perf::Reading &c : r.counters) {
        const auto v = per_packet(c.value, r.packets);
        out += " " + c.name + "=" + (v ? fmt(*v, 2) : std::string("n/a"));
    }
    out += "\n  " + r.counters_note + "\n";
    for (const std::string &n : r.notes)
        out += "note: " + n + "\n";
    for (const std::string &e : r.errors)
        out += "error: " + e + "\n";
    return out;
}

} // namespace mqbench

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

nlohmann::ordered_json to_json(const Report &r)
{
    using Json = nlohmann::ordered_json;
    Json j;
    j["tool"] = kToolName;
    j["version"] = kToolVersion;
    j["subcommand"] = r.subcommand;
    j["args"] = r.args;
    j["device"] = r.device;
    j["kernel"] = r.kernel;
    j["threads"] = r.threads;
    j["packets"] = r.packets;
    j["seconds"] = r.seconds;
    j["wall_seconds"] = r.wall_seconds;
    j["pps"] = r.pps;
    j["cpu_ns_per_pkt"] = json_or_null(r.cpu_ns_per_pkt);
    j["cpu"] = r.cpu ? Json{{"user_ns", r.cpu->user_ns},
                            {"system_ns", r.cpu->system_ns},
                            {"softirq_ns", r.cpu->softirq_ns}}
                     : Json(nullptr);
    j["cpu_tick_ns"] = json_or_null(r.cpu_tick_ns);

    Json threads = Json::array();
    for (const ThreadReport &t : r.per_thread) {
        threads.push_back({{"thread", t.index},
                           {"cpu", t.cpu},
                           {"packets", t.packets},
                           {"seconds", t.seconds},
                           {"pps", t.pps},
                           {"errors", t.errors},
                           {"error", t.error.empty() ? Json(nullptr) : Json(t.error)}});
    }
    j["per_thread"] = std::move(threads);

    Json per_queue(nullptr);
    if (r.per_queue) {
        per_queue = Json::object();
        for (const auto &[id, n] : *r.per_queue)
            per_queue[std::to_string(id)] = n;
    }
    j["per_queue"] = std::move(per_queue);
    j["per_queue_source"] = r.per_queue_source;
    j["per_queue_note"] = r.per_queue_note;

    Json counters = Json::object();
    Json totals = Json::object();
    Json unavailable = Json::array();
    for (const perf::Reading &c : r.counters) {
        counters[c.name] = json_or_null(per_packet(c.value, r.packets));
        totals[c.name] = json_or_null(c.value);
        if (!c.value)
            unavailable.push_back(c.name);
    }
    j["counters"] = std::move(counters);
    j["counters_total"] = std::move(totals);
    j["counters_unavailable"] = std::move(unavailable);
    j["counters_note"] = r.counters_note;

    j["interrupted"] = r.interrupted;
    j["notes"] = r.notes;
    j["errors"] = r.errors;
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

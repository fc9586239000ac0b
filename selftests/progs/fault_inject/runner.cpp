#include "runner.hpp"

namespace fault_inject {

// -- the fault loop --------------------------------------------------------------------

std::vector<Row> g_rows;

// Sites of one faultless run of the request under the current filter.
std::optional<unsigned> count_sites(const FailNth &nth, const Request &req, std::string &err)
{
    constexpr unsigned kBig = 1000000;
    nth.arm(kBig);
    const Status st = req.run();
    const unsigned left = nth.left();
    nth.disarm();
    if (std::string bad = req.check(st); !bad.empty()) {
        err = concat("faultless run: ", bad);
        return std::nullopt;
    }
    if (!st.ok()) {
        err = concat("faultless run failed: ", st.str());
        return std::nullopt;
    }
    return kBig - left;
}

CaseResult run_request(const FailNth &nth, Kmemleak &leaks, Request &req)
{
    Row row;
    row.request = req.name;
    auto finish = [&](CaseResult o) {
        if (req.teardown)
            req.teardown();
        if (const auto fresh = leaks.new_leaks()) {
            row.leaks = fresh->size();
            if (!fresh->empty() && o.result != ksft::Result::fail) {
                o = CaseResult::fail(concat(
                        fresh->size(), " leak(s) reported by kmemleak, first:\n", fresh->front()));
            }
        }
        row.note = o.message.substr(0, o.message.find('\n'));
        g_rows.push_back(row);
        return o;
    };
    if (std::string err = req.setup(); !err.empty())
        return finish(CaseResult::fail(concat("setup: ", err)));
    // The symbols as the setup left them: it may have loaded the module the focus
    // names (dummy, sch_*), which was not there when the program started.
    Symbols syms;
    if (!syms.load())
        return finish(CaseResult::fail("no text symbols in /proc/kallsyms"));

    const Range ack = syms.function("netlink_ack");
    const Range whole = syms.span("netlink_sendmsg", "netlink_recvmsg");
    if (!ack.valid() || !whole.valid())
        return finish(CaseResult::fail(
                "netlink_ack, netlink_sendmsg or netlink_recvmsg not in /proc/kallsyms"));
    if (std::string err = set_filter(whole, ack); !err.empty())
        return finish(CaseResult::fail(err));
    std::string err;
    const auto whole_sites = count_sites(nth, req, err);
    if (!whole_sites)
        return finish(CaseResult::fail(err));
    row.whole_sites = *whole_sites;
    Range focus = whole;
    focus.what = "whole request";
    if (*whole_sites > g_opts.whole_max) {
        focus = req.focus(syms);
        if (!focus.valid())
            return finish(CaseResult::fail("the focus of the request is not in /proc/kallsyms"));
        if (std::string e = set_filter(focus, ack); !e.empty())
            return finish(CaseResult::fail(e));
        const auto sites = count_sites(nth, req, err);
        if (!sites)
            return finish(CaseResult::fail(err));
        row.sites = *sites;
    } else {
        row.sites = *whole_sites;
    }
    row.focus = focus.what;
    if (row.sites == 0)
        return finish(CaseResult::fail(concat("no fault site under ", focus.what)));

    std::vector<std::string> bad;
    unsigned n = 1;
    for (; n <= kMaxTries; n++) {
        nth.arm(n);
        const Status st = req.run();
        const bool injected = nth.left() == 0;
        nth.disarm();
        const std::string problem = req.check(st);
        if (!problem.empty()) {
            row.inconsistencies++;
            if (bad.size() < 5)
                bad.push_back(concat("fault ", n, " -> ", st.str(), ": ", problem));
        }
        if (!injected) {
            if (!st.ok())
                bad.push_back(concat("try ", n, " injected no fault but failed: ", st.str()));
            break;
        }
        row.faults++;
    }
    if (n > kMaxTries)
        bad.push_back(concat("still faulting after ", kMaxTries, " tries"));
    // A request that failed none, or far fewer than half, of the sites its
    // faultless run counted did not test its error paths
    // (ci/matrix/debug_checks.py FAULT_MIN_SHARE).
    if (row.faults == 0 || 2 * row.faults < row.sites)
        bad.push_back(concat("only ", row.faults, " faults injected at ", row.sites, " sites"));
    if (row.faults != row.sites)
        ksft::KtapWriter(std::cout).diag(concat(req.name, ": ", row.faults, " faults, ", row.sites,
                                                " sites counted before (the count varies)"));
    if (!bad.empty()) {
        std::string msg = concat(row.inconsistencies, " inconsistent answer(s) under ", focus.what);
        for (const std::string &b : bad)
            msg += "\n" + b;
        return finish(CaseResult::fail(msg));
    }
    return finish(
            CaseResult::pass(concat(row.faults, " faults injected at ", row.sites, " sites under ",
                                    focus.what, " (", row.whole_sites, " in the whole request)")));
}

std::string table()
{
    std::vector<std::vector<std::string>> rows = {
            {"request", "sites (whole)", "focus", "sites", "faults", "inconsistent", "leaks"}};
    for (const Row &r : g_rows) {
        rows.push_back({r.request, std::to_string(r.whole_sites), r.focus, std::to_string(r.sites),
                        std::to_string(r.faults), std::to_string(r.inconsistencies),
                        r.leaks ? std::to_string(*r.leaks) : "no kmemleak"});
    }
    std::vector<std::size_t> w(rows[0].size(), 0);
    for (const auto &row : rows)
        for (std::size_t i = 0; i < row.size(); i++)
            w[i] = std::max(w[i], row[i].size());
    std::ostringstream out;
    for (std::size_t k = 0; k < rows.size(); k++) {
        out << "|";
        for (std::size_t i = 0; i < rows[k].size(); i++)
            out << " " << rows[k][i] << std::string(w[i] - rows[k][i].size(), ' ') << " |";
        out << "\n";
        if (k == 0) {
            out << "|";
            for (const std::size_t width : w)
                out << std::string(width + 2, '-') << "|";
            out << "\n";
        }
    }
    return out.str();
}

} // namespace fault_inject

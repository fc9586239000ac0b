// fault_inject: one request under test, the fault loop that runs it, the table of results.
#pragma once

#include "common.hpp"
#include "device.hpp"
#include "faults.hpp"

namespace fault_inject {

// -- the fault loop --------------------------------------------------------------------

// One request under test.
struct Request {
    std::string name;
    // Fault sites counted only under this stack range when the whole request has more
    // than --whole-max sites.
    std::function<Range(const Symbols &)> focus;
    // Builds what the request works on; an error message or "".
    std::function<std::string()> setup;
    std::function<Status()> run;
    // The state after a try with this answer: an inconsistency or "". Also puts the
    // state back for the next try (a failure to do so is returned too).
    std::function<std::string(const Status &)> check;
    std::function<void()> teardown;
};

struct Row {
    std::string request;
    unsigned whole_sites = 0;
    std::string focus;
    unsigned sites = 0;
    unsigned faults = 0;
    unsigned inconsistencies = 0;
    std::optional<std::size_t> leaks;
    std::string note;
};

extern std::vector<Row> g_rows;

// Sites of one faultless run of the request under the current filter.
std::optional<unsigned> count_sites(const FailNth &nth, const Request &req, std::string &err);

CaseResult run_request(const FailNth &nth, Kmemleak &leaks, Request &req);

std::string table();

} // namespace fault_inject

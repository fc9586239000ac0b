// KTAP / kselftest output and a minimal ordered test-case runner.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strutil.hpp" // netutil::cat

namespace ksft {

using netutil::cat;

// kselftest exit codes (tools/testing/selftests/kselftest.h).
inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitSkip = 4;

enum class Result { pass, fail, skip };

struct Outcome {
    Result result = Result::pass;
    std::string message;

    static Outcome pass(std::string msg = {}) { return {Result::pass, std::move(msg)}; }
    static Outcome fail(std::string msg) { return {Result::fail, std::move(msg)}; }
    static Outcome skip(std::string reason) { return {Result::skip, std::move(reason)}; }
};

// Writes "TAP version 13" style output as produced by kselftest.h.
class KtapWriter {
public:
    explicit KtapWriter(std::ostream &out) : out_(out) {}

    void header();
    void plan(std::size_t count);
    void ok(std::string_view name);
    void not_ok(std::string_view name);
    void skip(std::string_view name, std::string_view reason);
    void result(std::string_view name, const Outcome &outcome);
    // Each line of msg becomes a "# " line.
    void diag(std::string_view msg);
    void totals();

    unsigned passed() const { return pass_; }
    unsigned failed() const { return fail_; }
    unsigned skipped() const { return skip_; }
    // 1 if anything failed, else 0 if anything passed, else 4.
    int exit_code() const;

private:
    std::ostream &out_;
    unsigned next_ = 1;
    unsigned pass_ = 0;
    unsigned fail_ = 0;
    unsigned skip_ = 0;
};

// Registered cases run in order; an exception in a case is reported as "not ok".
class TestSuite {
public:
    using CaseFn = std::function<Outcome()>;

    void add(std::string name, CaseFn fn);
    // Report every case as skipped with this reason instead of running it.
    void skip_all(std::string reason) { skip_all_reason_ = std::move(reason); }
    // skip_all("must be run as root") unless is_root; without an argument, unless the
    // effective uid is 0.
    void require_root(bool is_root);
    void require_root();
    // Writes the whole report and returns the kselftest exit code.
    int run(std::ostream &out);
    int run();
    std::size_t size() const { return cases_.size(); }

private:
    std::vector<std::pair<std::string, CaseFn>> cases_;
    std::string skip_all_reason_;
};

// The fixture a program's cases share, built by `build` on first use and kept in `slot`.
// A setup that throws leaves a default fixture whose `error` (an optional Outcome) every
// case reports.
template <class Fixture, class Build>
Fixture &lazy_fixture(std::unique_ptr<Fixture> &slot, Build build)
{
    if (!slot) {
        try {
            slot = build();
        } catch (const std::exception &e) {
            slot = std::make_unique<Fixture>();
            slot->error = Outcome::fail(cat("setup: ", e.what()));
        }
    }
    return *slot;
}

} // namespace ksft

// KTAP / kselftest output: the result of a case and the writer of the report.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strutil.hpp" // netutil::concat

namespace ksft {

using netutil::concat;

// kselftest exit codes (tools/testing/selftests/kselftest.h).
inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitSkip = 4;

enum class Result { pass, fail, skip };

// What a case ended with: pass (message: a note), fail (why), skip (why not run). errnos: the
// positive errnos a failure ended with (a failed request's nl::Status::err), each written as a
// key line "# errno: NAME" (kErrnoKey) after the message, which the host's judge reads
// (ci/matrix/case.py); the message names them for humans as well.
struct CaseResult {
    Result result = Result::pass;
    std::string message;
    std::vector<int> errnos{};

    static CaseResult pass(std::string msg = {}) { return {Result::pass, std::move(msg)}; }
    static CaseResult fail(std::string msg) { return {Result::fail, std::move(msg)}; }
    static CaseResult fail(std::string msg, std::vector<int> errnos)
    {
        return {Result::fail, std::move(msg), std::move(errnos)};
    }
    static CaseResult skip(std::string reason) { return {Result::skip, std::move(reason)}; }
};

// The key of the diagnostic line that names a failure's errno: "# errno: EOPNOTSUPP", as
// "# Totals: ..." names the totals.
inline constexpr std::string_view kErrnoKey = "errno";

// Writes "TAP version 13" style output as produced by kselftest.h.
class KtapWriter {
public:
    explicit KtapWriter(std::ostream &out) : out_(out) {}

    void header();
    void plan(std::size_t count);
    void ok(std::string_view name);
    void not_ok(std::string_view name);
    void skip(std::string_view name, std::string_view reason);
    // A failure's message as "# " lines, then a "# errno: NAME" line per errno (once each,
    // in order), then "not ok".
    void result(std::string_view name, const CaseResult &outcome);
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

} // namespace ksft

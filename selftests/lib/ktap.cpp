#include "ktap.hpp"

#include <algorithm>
#include <iostream>

#include "nl.hpp" // netutil::nl::errno_name

namespace ksft {
namespace {

// Test names and directives must stay on one line and must not start a directive.
std::string one_line(std::string_view s)
{
    std::string out(s);
    for (char &c : out) {
        if (c == '\n' || c == '\r' || c == '#')
            c = c == '#' ? '_' : ' ';
    }
    return out;
}

std::string one_line_reason(std::string_view s)
{
    std::string out(s);
    for (char &c : out) {
        if (c == '\n' || c == '\r')
            c = ' ';
    }
    return out;
}

} // namespace

void KtapWriter::header()
{
    out_ << "TAP version 13\n";
}

void KtapWriter::plan(std::size_t count)
{
    out_ << "1.." << count << '\n';
}

void KtapWriter::ok(std::string_view name)
{
    out_ << "ok " << next_++ << ' ' << one_line(name) << '\n';
    ++pass_;
}

void KtapWriter::not_ok(std::string_view name)
{
    out_ << "not ok " << next_++ << ' ' << one_line(name) << '\n';
    ++fail_;
}

void KtapWriter::skip(std::string_view name, std::string_view reason)
{
    out_ << "ok " << next_++ << ' ' << one_line(name) << " # SKIP " << one_line_reason(reason)
         << '\n';
    ++skip_;
}

void KtapWriter::result(std::string_view name, const CaseResult &outcome)
{
    switch (outcome.result) {
    case Result::pass:
        if (!outcome.message.empty())
            diag(outcome.message);
        ok(name);
        break;
    case Result::fail:
        diag(outcome.message.empty() ? std::string("failed") : outcome.message);
        for (auto e = outcome.errnos.begin(); e != outcome.errnos.end(); ++e) {
            if (*e > 0 && std::find(outcome.errnos.begin(), e, *e) == e)
                out_ << "# " << kErrnoKey << ": " << netutil::nl::errno_name(*e) << '\n';
        }
        not_ok(name);
        break;
    case Result::skip:
        skip(name, outcome.message.empty() ? std::string("skipped") : outcome.message);
        break;
    }
}

void KtapWriter::diag(std::string_view msg)
{
    std::size_t pos = 0;
    while (true) {
        const std::size_t nl = msg.find('\n', pos);
        const std::string_view line = msg.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
        out_ << '#';
        if (!line.empty())
            out_ << ' ' << line;
        out_ << '\n';
        if (nl == std::string_view::npos || nl + 1 == msg.size())
            break;
        pos = nl + 1;
    }
}

void KtapWriter::totals()
{
    out_ << "# Totals: pass:" << pass_ << " fail:" << fail_ << " xfail:0 xpass:0 skip:" << skip_
         << " error:0\n";
    out_.flush();
}

int KtapWriter::exit_code() const
{
    if (fail_ > 0)
        return kExitFail;
    if (pass_ > 0)
        return kExitPass;
    return kExitSkip;
}

} // namespace ksft

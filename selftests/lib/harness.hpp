// A C++ counterpart of tools/testing/selftests/kselftest_harness.h: self-registering
// cases, fixtures with variants, assertions that print file:line and both values, and a
// runner that gives every case a process, a network namespace and a timeout of its own.
//
//   TEST(name) { ASSERT_EQ(a, b); EXPECT_TRUE(c) << "context"; }
//   TEST_OPTS(name, {.timeout_s = 300, .netns = ksft::Netns::init}) { ... }
//
//   FIXTURE(dev) { std::string name; };          // the fields of `self`
//   FIXTURE_VARIANT(dev) { const char *kind; };  // the fields of `variant`
//   FIXTURE_VARIANT_ADD(dev, fq_codel) { .kind = "fq_codel" };
//   FIXTURE_SETUP(dev) { self->name = ...; }
//   TEST_F(dev, idle_bypass) { ... }              // case "fq_codel_idle_bypass"
//
// A case named T of a fixture with a variant V is reported as "V_T" (kselftest_harness.h
// says "F.V.T"; these names are the ones selftests/expectations.json keys on).
//
// The runner (run_cases) writes KTAP. Each case runs in a child process (fork) that first
// enters a new network and mount namespace (sysfs mounted again so /sys/class/net is the
// case's netns, tracefs and debugfs mounted again where they were, lo up), unless the case
// asks for the init netns. The parent waits with the case's timeout: a case killed by a
// signal, one that times out and one that ends without a result each fail, alone; the next
// case runs. ASSERT_* ends the case on failure; EXPECT_* records the failure and goes on.
// SKIP(reason) and FAIL(message) end the case. An exception out of a case fails it.
#pragma once

#include <concepts>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ktap.hpp"

namespace ksft {

enum class Netns {
    own,  // a new network namespace (and mount namespace with its own sysfs)
    init, // the initial namespaces, pid 1's (where a module's parameters create devices)
};

struct CaseOptions {
    unsigned timeout_s = 120;
    Netns netns = Netns::own;
};

using CaseBody = std::function<void()>;

struct Case {
    std::string name;
    CaseBody body;
    CaseOptions options;
    std::string sequence; // empty, or the sequence it is a step of
};

// The cases in registration order (TEST/TEST_F register at static initialisation, in
// the order of definition in the file).
std::vector<Case> &registry();
void add_case(std::string name, CaseBody body, CaseOptions options = {});
// A step of a sequence: the steps of one sequence registered one after the other run in
// one process and netns, in order, as the phases of one workload do (churn); each is a
// case of its own with its own timeout, counted from the end of the step before. A step
// that crashes or times out fails, and so do the steps after it (not run).
void add_step(std::string sequence, std::string name, CaseBody body, CaseOptions options = {});
// A case whose body returns its result (pass with an optional note, fail, skip).
void add_result_case(std::string name, std::function<CaseResult()> body, CaseOptions options = {});

// Ends the case as result says: pass prints the note as diagnostics and returns; fail and
// skip end the case.
void report(const CaseResult &result);

struct RunConfig {
    std::string skip_all;           // every case reported skipped with this reason
    std::vector<std::string> notes; // diagnostics after the plan
    std::string only;               // run just this case (empty: all)
};

// Runs the registered cases, writes KTAP to out, returns the kselftest exit code.
int run_cases(const RunConfig &config, std::ostream &out);
int run_cases(const RunConfig &config = {});
// The standard main: "PROG [--case NAME]"; cases are skipped unless run as root.
int main(int argc, char **argv);

// The fixture the cases of a process share (one case, or the steps of a sequence), built
// by `build` on first use and kept in `slot`. A setup that throws leaves a default
// fixture whose `error` (an optional CaseResult) every case reports.
template <class Fixture, class Build>
Fixture &lazy_fixture(std::unique_ptr<Fixture> &slot, Build build)
{
    if (!slot) {
        try {
            slot = build();
        } catch (const std::exception &e) {
            slot = std::make_unique<Fixture>();
            slot->error = CaseResult::fail(concat("setup: ", e.what()));
        }
    }
    return *slot;
}

// ---- assertions ----

// Thrown to end a case early (ASSERT_*, SKIP, FAIL, report()).
struct CaseEnd {
    CaseResult result;
};

namespace detail {

template <class T>
concept Streamable = requires(std::ostream &os, const T &v)
{
    os << v;
};

template <class T>
std::string show(const T &v)
{
    if constexpr (std::same_as<T, bool>) {
        return v ? "true" : "false";
    } else if constexpr (requires {
                             v.has_value();
                             *v;
                         }) {
        return v.has_value() ? show(*v) : std::string("(none)");
    } else if constexpr (Streamable<T>) {
        std::ostringstream os;
        os << v;
        return os.str();
    } else {
        return "(not printable)";
    }
}

// Collects "<< context" after a failed check and reports the whole message when it goes
// out of scope: it ends the case for ASSERT_*, records the failure for EXPECT_*.
class Failure {
public:
    Failure(const char *file, int line, std::string what, bool fatal);
    Failure(const Failure &) = delete;
    Failure &operator=(const Failure &) = delete;
    // ASSERT_* ends the case by throwing CaseEnd from here, by design.
    // NOLINTNEXTLINE(bugprone-exception-escape)
    ~Failure() noexcept(false);

    template <class T>
    Failure &operator<<(const T &v)
    {
        context_ << v;
        return *this;
    }

private:
    std::string where_;
    std::string what_;
    std::ostringstream context_;
    bool fatal_;
};

// An active object for the expression "if (ok) ; else Failure(...) << ctx".
struct Voidify {
    void operator&(Failure &) {}
    void operator&(Failure &&) {}
};

template <class A, class B>
std::optional<std::string> compare(const char *op, bool ok, const char *sa, const A &a,
                                   const char *sb, const B &b)
{
    if (ok)
        return std::nullopt;
    return concat("Expected ", sa, " (", show(a), ") ", op, " ", sb, " (", show(b), ")");
}

// True when the case has a failed EXPECT_* so far (reset for each case).
bool &case_failed();

} // namespace detail

[[noreturn]] void skip(std::string reason);
[[noreturn]] void fail(std::string message);

} // namespace ksft

#define KSFT_CHECK_(failure_text, fatal)                                                           \
    if (const std::optional<std::string> ksft_failure_ = (failure_text); !ksft_failure_)           \
        ;                                                                                          \
    else                                                                                           \
        ksft::detail::Voidify() & ksft::detail::Failure(__FILE__, __LINE__, *ksft_failure_, fatal)

#define KSFT_CMP_(a, op, b, fatal)                                                                 \
    KSFT_CHECK_(([&]() {                                                                           \
                    const auto &ksft_a_ = (a);                                                     \
                    const auto &ksft_b_ = (b);                                                     \
                    return ksft::detail::compare(#op, ksft_a_ op ksft_b_, #a, ksft_a_, #b,         \
                                                 ksft_b_);                                         \
                }()),                                                                              \
                fatal)

#define KSFT_BOOL_(x, want, fatal)                                                                 \
    KSFT_CHECK_((static_cast<bool>(x) == (want)                                                    \
                         ? std::optional<std::string>()                                            \
                         : std::optional<std::string>(ksft::concat("Expected ", #x, " to be ",     \
                                                                   (want) ? "true" : "false"))),   \
                fatal)

#define ASSERT_EQ(a, b) KSFT_CMP_(a, ==, b, true)
#define ASSERT_NE(a, b) KSFT_CMP_(a, !=, b, true)
#define ASSERT_LT(a, b) KSFT_CMP_(a, <, b, true)
#define ASSERT_LE(a, b) KSFT_CMP_(a, <=, b, true)
#define ASSERT_GT(a, b) KSFT_CMP_(a, >, b, true)
#define ASSERT_GE(a, b) KSFT_CMP_(a, >=, b, true)
#define ASSERT_TRUE(x) KSFT_BOOL_(x, true, true)
#define ASSERT_FALSE(x) KSFT_BOOL_(x, false, true)
#define EXPECT_EQ(a, b) KSFT_CMP_(a, ==, b, false)
#define EXPECT_NE(a, b) KSFT_CMP_(a, !=, b, false)
#define EXPECT_LT(a, b) KSFT_CMP_(a, <, b, false)
#define EXPECT_LE(a, b) KSFT_CMP_(a, <=, b, false)
#define EXPECT_GT(a, b) KSFT_CMP_(a, >, b, false)
#define EXPECT_GE(a, b) KSFT_CMP_(a, >=, b, false)
#define EXPECT_TRUE(x) KSFT_BOOL_(x, true, false)
#define EXPECT_FALSE(x) KSFT_BOOL_(x, false, false)
// An empty string is no problem; anything else is the failure's text.
#define ASSERT_NO_PROBLEM(s)                                                                       \
    KSFT_CHECK_(([&]() -> std::optional<std::string> {                                             \
                    std::string ksft_s_ = (s);                                                     \
                    if (ksft_s_.empty())                                                           \
                        return std::nullopt;                                                       \
                    return ksft_s_;                                                                \
                }()),                                                                              \
                true)
#define SKIP(reason) ksft::skip(reason)
#define FAIL(message) ksft::fail(message)

#define KSFT_REGISTER_(id, ...)                                                                    \
    namespace {                                                                                    \
    const bool ksft_registered_##id = (__VA_ARGS__, true);                                         \
    }

// TEST(name) / TEST_OPTS(name, CaseOptions{...}): a case of its own.
#define TEST_OPTS(name, ...)                                                                       \
    static void ksft_test_##name();                                                                \
    KSFT_REGISTER_(name, ksft::add_case(#name, ksft_test_##name, ksft::CaseOptions __VA_ARGS__))   \
    static void ksft_test_##name()
#define TEST(name) TEST_OPTS(name, {})
// TEST_RESULT(name) { return CaseResult::...; }: a case whose body returns its result.
#define TEST_RESULT_OPTS(name, ...)                                                                \
    static ksft::CaseResult ksft_result_##name();                                                  \
    KSFT_REGISTER_(                                                                                \
            name, ksft::add_result_case(#name, ksft_result_##name, ksft::CaseOptions __VA_ARGS__)) \
    static ksft::CaseResult ksft_result_##name()
#define TEST_RESULT(name) TEST_RESULT_OPTS(name, {})

// Fixtures: FIXTURE(f) { fields }; optional FIXTURE_VARIANT(f) { fields } and
// FIXTURE_VARIANT_ADD(f, v) { initialisers }; FIXTURE_SETUP(f) (the fixture's destructor tears
// down); TEST_F(f, t) runs once per variant (or once when f has none).
namespace ksft::detail {
template <class Fixture>
struct FixtureTraits; // specialised by FIXTURE
template <class Variant>
struct VariantList {
    static std::vector<std::pair<std::string, const Variant *>> &all()
    {
        static std::vector<std::pair<std::string, const Variant *>> v;
        return v;
    }
};
struct NoVariant {};

// Registers test `t` of fixture F for each of F's variants (or once); definitions and
// variants register in file order, so a TEST_F after all FIXTURE_VARIANT_ADDs sees them.
// The fixture's destructor is its teardown (and the case's netns goes with its process).
template <class F, class V, class Setup, class Body>
void add_fixture_test(std::string_view test, CaseOptions options, Setup setup, Body body)
{
    auto &variants = VariantList<V>::all();
    auto one = [=](std::string name, const V *variant) {
        add_case(
                std::move(name),
                [=] {
                    F self{};
                    setup(&self, variant);
                    body(&self, variant);
                },
                options);
    };
    if (variants.empty()) {
        static const V none{};
        one(std::string(test), &none);
    }
    for (const auto &[vname, v] : variants)
        one(concat(vname, "_", test), v);
}
} // namespace ksft::detail

#define FIXTURE(f)                                                                                 \
    struct ksft_variant_##f;                                                                       \
    struct ksft_fixture_##f;                                                                       \
    static void ksft_setup_##f(ksft_fixture_##f *, const ksft_variant_##f *);                      \
    struct ksft_fixture_##f
// Without FIXTURE_VARIANT a fixture has one empty variant.
#define FIXTURE_NO_VARIANT(f)                                                                      \
    struct ksft_variant_##f {}
#define FIXTURE_VARIANT(f) struct ksft_variant_##f
#define FIXTURE_VARIANT_ADD(f, v)                                                                  \
    extern const ksft_variant_##f ksft_variant_##f##_##v;                                          \
    KSFT_REGISTER_(f##_variant_##v,                                                                \
                   ksft::detail::VariantList<ksft_variant_##f>::all().emplace_back(                \
                           #v, &ksft_variant_##f##_##v))                                           \
    const ksft_variant_##f ksft_variant_##f##_##v =
#define FIXTURE_SETUP(f)                                                                           \
    static void ksft_setup_##f([[maybe_unused]] ksft_fixture_##f *self,                            \
                               [[maybe_unused]] const ksft_variant_##f *variant)
#define TEST_F_OPTS(f, t, ...)                                                                     \
    static void ksft_test_##f##_##t(ksft_fixture_##f *, const ksft_variant_##f *);                 \
    KSFT_REGISTER_(f##_##t, ksft::detail::add_fixture_test<ksft_fixture_##f, ksft_variant_##f>(    \
                                    #t, ksft::CaseOptions __VA_ARGS__, ksft_setup_##f,             \
                                    ksft_test_##f##_##t))                                          \
    static void ksft_test_##f##_##t([[maybe_unused]] ksft_fixture_##f *self,                       \
                                    [[maybe_unused]] const ksft_variant_##f *variant)
#define TEST_F(f, t) TEST_F_OPTS(f, t, {})

// kselftest: a catalogue of invalid requests to the interfaces the series touches.
//
// Each case sends one request the kernel must refuse (or, where the catalogue says so,
// accept as a valid configuration) and checks three things: the errno, the extack
// (message, and the attribute it points at or names as missing) and that the state
// is what it was before: the links of the netns, the test device's active queue
// counts (sysfs queues/{tx,rx}-* and the netdev family's QUEUE_GET), its qdiscs and
// its filters. Requests are built by hand with libmnl (the library's raw send mode)
// so that malformed attributes, zero limits that tc would not send and truncated
// headers reach the kernel as such. The rows are tables, one file per area
// (rows_*.cpp).
//
// Every row states what it expects on the base and on the patched kernel. The kernel is
// the one the run is labelled with (--kernel base|patched, or SELFTEST_KERNEL, which the
// VM runner sets from the tree it built the kernel from); without a label the program
// stops. The case kernel_matches_label finds the kernel by capability (CHANNELS_GET on a
// dummy with two TX queues succeeds only with the series) and fails if that is not the
// label; the rows are judged against the label, whatever the detection says.
//
// `bad_input --markdown` prints the catalogue as the table of
// Documentation/bad-input.md (a host test compares the two).
//
// Needs root. Every case runs in a process and network namespace of its own (the
// harness). The rows of the area unpriv drop to uid/gid 65534 after setting up the
// test device; the rows of the area userns are the steps of one sequence that then
// enters a user and network namespace of its own. The state of the case's netns is
// compared, as root sees it, before and after each of these rows.

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "bad_input.hpp"
#include "ethtool.hpp"
#include "harness.hpp"

namespace bad_input {
namespace {

std::vector<Row> catalogue()
{
    std::vector<Row> rows;
    for (const std::vector<Row> *area :
         {&kChannelRows, &kLinkRows, &kTcRows, &kNetdevRows, &kUnprivRows, &kUsernsRows})
        rows.insert(rows.end(), area->begin(), area->end());
    return rows;
}

// ---- judging a row ----

// Checks the answer against the row's expectation for this kernel: an empty string if it
// matches, else what differs.
std::string judge(const Expect &want, const Ack &got, std::uint32_t mark)
{
    if (!got.answered)
        return concat("no answer: ", describe(got));
    if (got.err != want.err)
        return concat("expected ", want.err == 0 ? std::string("acceptance") : errno_name(want.err),
                      ", got ", describe(got));
    if (got.extack != want.msg)
        return concat("extack \"", got.extack, "\", expected ",
                      want.msg.empty() ? std::string("none") : concat("\"", want.msg, "\""));
    if (want.point == Point::bad && got.bad_attr_offset != mark)
        return concat("extack points at ",
                      got.bad_attr_offset ? concat("offset ", *got.bad_attr_offset)
                                          : std::string("no attribute"),
                      ", expected ", want.attr, " at offset ", mark);
    if (want.point == Point::missing && got.missing_attr_type != want.miss)
        return concat("extack names ",
                      got.missing_attr_type ? concat("missing type ", *got.missing_attr_type)
                                            : std::string("nothing"),
                      " as missing, expected ", want.attr, " (", want.miss, ")");
    return {};
}

CaseResult finish(const Row &row, Kernel k, const RunResult &res, std::uint32_t mark)
{
    if (!res.skip.empty())
        return CaseResult::skip(res.skip);
    if (!res.ack.answered && !res.state.empty()) // nothing was sent
        return CaseResult::fail(res.state);
    const Expect &want = k == Kernel::patched ? row.patched : row.base;
    std::string msg = concat("got ", describe(res.ack));
    if (std::string bad = judge(want, res.ack, mark); !bad.empty())
        return CaseResult::fail(concat(msg, "\n", bad));
    if (!res.state.empty())
        return CaseResult::fail(concat(msg, "\nstate: ", res.state));
    return CaseResult::pass(concat(msg, res.note.empty() ? "" : "\nstate: ", res.note));
}

// ---- running a row ----

// The environment of a case, as root, in the case's netns.
Env &root_env()
{
    static Env env;
    if (env.lib == nullptr) {
        if (std::string err = env.open(&rtnl::shared_socket()); !err.empty())
            ksft::fail(concat("setup: ", err));
    }
    return env;
}

RunResult setup_failed(const Device &d)
{
    RunResult res;
    if (d.error->result == ksft::Result::skip)
        res.skip = d.error->message;
    else
        res.state = concat("setup: ", d.error->message);
    return res;
}

// A row of the area init: as root, on a fresh test device.
RunResult run_init(Env &e, const Row &row, std::uint32_t &mark)
{
    Device d = make_device(row.tx_queues);
    if (d.error)
        return setup_failed(d);
    RunResult res;
    if (row.prep) {
        if (std::string err = row.prep(e, d.fix); !err.empty()) {
            res.state = concat("setup: ", err);
            return res;
        }
    }
    const Snapshot before = e.snapshot(d.fix);
    Request req = row.build(e, d.fix);
    if (!req.error.empty()) {
        res.state = concat("setup: ", req.error);
        return res;
    }
    mark = req.mark;
    res.ack = e.send(req);
    const Snapshot after = e.snapshot(d.fix);
    if (res.ack.err == 0 && row.check)
        res.state = row.check(e, d.fix, req, before, after);
    else
        res.state = diff(before, after);
    res.note = summary(after);
    // A link the request may have created, whatever the answer: do not leave it behind.
    if (!req.created.empty()) {
        rtnl::LinkInfo info;
        if (rtnl::get_link(*e.lib, req.created, info).ok())
            rtnl::delete_link(*e.lib, req.created);
    }
    return res;
}

// The unprivileged side of a case: the root-owned test device and the snapshots root
// takes of the case's netns, then uid 65534 (and, for userns rows, its own user and
// network namespace). Set up once per process: a userns sequence shares it.
struct Unprivileged {
    Device dev;
    ChildCtx ctx;
    std::string error;
    bool in_userns = false;
};

Unprivileged &unprivileged()
{
    static std::unique_ptr<Unprivileged> u;
    if (u)
        return *u;
    u = std::make_unique<Unprivileged>();
    u->dev = make_device(kTxQueues);
    if (u->dev.error)
        return *u;
    root_env();
    u->ctx.init_dev = u->dev.fix;
    u->error = drop_privileges();
    if (u->error.empty()) {
        // Opened as uid 65534 in the case's netns; kept after an unshare.
        static nl::Socket lib_sock(NETLINK_ROUTE);
        u->error = u->ctx.init.open(&lib_sock);
    }
    return *u;
}

// The rows that check the case's netns as a whole.
bool checks_case_netns(const Row &row)
{
    return row.state.find("netns of the case") != std::string_view::npos;
}

RunResult run_unprivileged(const Row &row)
{
    Unprivileged &u = unprivileged();
    if (u.dev.error)
        return setup_failed(u.dev);
    if (!u.error.empty())
        return RunResult{.state = concat("unprivileged setup: ", u.error)};
    if (row.where == Where::userns && !u.in_userns) {
        enter_userns(u.ctx);
        u.in_userns = true;
    }
    const Snapshot before = root_env().snapshot(u.dev.fix);
    RunResult res = row.child(u.ctx);
    if (!checks_case_netns(row) || !res.skip.empty())
        return res;
    const Snapshot after = root_env().snapshot(u.dev.fix);
    if (res.state.empty())
        res.state = diff(before, after);
    if (res.note.empty())
        res.note = concat("netns of the case: ", summary(after));
    return res;
}

CaseResult run_row(const Row &row, Kernel kernel)
{
    std::uint32_t mark = 0;
    const RunResult res =
            row.where == Where::init ? run_init(root_env(), row, mark) : run_unprivileged(row);
    return finish(row, kernel, res, mark);
}

// ---- markdown ----

std::string md_expect(const Expect &x)
{
    if (x.err == 0)
        return concat("accepted: ", x.why);
    std::string s = concat("`", errno_name(x.err), "`");
    s += x.msg.empty() ? std::string(", no message") : concat(", \"", x.msg, "\"");
    if (x.point == Point::bad)
        s += concat(", points at ", x.attr.starts_with("type") ? "" : "`", x.attr,
                    x.attr.starts_with("type") ? "" : "`");
    else if (x.point == Point::missing)
        s += concat(", missing `", x.attr, "` (", x.miss, ")");
    return s;
}

bool same(const Expect &a, const Expect &b)
{
    return a.err == b.err && a.msg == b.msg && a.point == b.point && a.attr == b.attr &&
           a.miss == b.miss;
}

void print_markdown(const std::vector<Row> &rows, std::ostream &out)
{
    out << "| case | request | sent as | patched kernel | base kernel | state checked after |\n"
        << "|---|---|---|---|---|---|\n";
    for (const Row &r : rows) {
        const std::string base = same(r.base, r.patched) && r.base.err != 0 ? std::string("same")
                                                                            : md_expect(r.base);
        out << "| `" << r.name << "` | " << r.request << " | " << r.how << " | "
            << md_expect(r.patched) << " | " << base << " | " << r.state << " |\n";
    }
}

// ---- the kernel ----

const char *kernel_name(Kernel k)
{
    return k == Kernel::patched ? "patched" : "base";
}

std::optional<Kernel> parse_kernel(std::string_view s)
{
    if (s == "patched")
        return Kernel::patched;
    if (s == "base")
        return Kernel::base;
    return std::nullopt;
}

// The series gives dummy get_channels: CHANNELS_GET on a dummy with two TX queues
// succeeds on the patched kernel and fails with EOPNOTSUPP on the base.
std::optional<Kernel> detect(std::string &how)
{
    const testdev::TestDummy d({.prefix = "bk", .tx_queues = 2});
    if (!d.ok()) {
        how = concat("cannot create a dummy: ", d.error().message);
        return std::nullopt;
    }
    netutil::ethtool::Ethtool eth;
    netutil::ethtool::Channels ch;
    const nl::Status st = eth.channels_get(d.name(), ch);
    if (st.ok()) {
        how = concat("CHANNELS_GET on a dummy with numtxqueues 2 succeeds (tx ", ch.tx_count, "/",
                     ch.tx_max, ")");
        return Kernel::patched;
    }
    how = concat("CHANNELS_GET on a dummy with numtxqueues 2: ", st.str());
    if (st.err == EOPNOTSUPP)
        return Kernel::base;
    return std::nullopt;
}

void kernel_matches_label(Kernel label)
{
    std::string how;
    const std::optional<Kernel> seen = detect(how);
    ASSERT_TRUE(seen.has_value()) << "cannot tell the kernel: " << how;
    ASSERT_EQ(std::string(kernel_name(*seen)), std::string(kernel_name(label)))
            << how << "; the rows are judged against the label";
    std::cout << "# kernel: " << kernel_name(label) << " (" << how << ")\n";
}

// The label: --kernel, else SELFTEST_KERNEL. An error message if neither is valid.
std::string kernel_label(int argc, char **argv, Kernel &out, bool &markdown)
{
    std::string value;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "--markdown")
            markdown = true;
        else if (a == "--kernel" && i + 1 < argc)
            value = argv[++i];
        else if (a.starts_with("--kernel="))
            value = a.substr(9);
        else
            return concat("unknown argument ", a);
    }
    if (markdown)
        return {};
    const char *env = std::getenv("SELFTEST_KERNEL");
    if (value.empty() && env != nullptr)
        value = env;
    if (value.empty())
        return "which kernel is this? give --kernel base|patched or SELFTEST_KERNEL";
    const std::optional<Kernel> k = parse_kernel(value);
    if (!k)
        return concat("kernel label \"", value, "\": expected base or patched");
    out = *k;
    return {};
}

} // namespace
} // namespace bad_input

int main(int argc, char **argv)
{
    using namespace bad_input;
    static const std::vector<Row> rows = catalogue();
    Kernel kernel = Kernel::patched;
    bool markdown = false;
    if (std::string err = kernel_label(argc, argv, kernel, markdown); !err.empty()) {
        std::cerr << argv[0] << ": " << err << "\nusage: " << argv[0]
                  << " --kernel base|patched | --markdown\n";
        return 2;
    }
    if (markdown) {
        print_markdown(rows, std::cout);
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    ksft::add_case("kernel_matches_label", [kernel] { kernel_matches_label(kernel); });
    for (const Row &row : rows) {
        auto body = [&row, kernel] {
            ksft::report(run_row(row, kernel));
        };
        if (row.where == Where::userns)
            ksft::add_step("userns", std::string(row.name), body);
        else
            ksft::add_case(std::string(row.name), body);
    }
    ksft::RunConfig config;
    if (geteuid() != 0)
        config.skip_all = "must be run as root";
    config.notes.push_back(concat("kernel label: ", kernel_name(kernel)));
    return ksft::run_cases(config);
}

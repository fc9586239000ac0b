// mqbench: multi-queue transmit benchmark (kernel pktgen or a user-space generator).
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "args.hpp"
#include "qstats.hpp"
#include "run.hpp"

namespace {

int real_main(int argc, char **argv)
{
    using namespace mqbench;
    const std::vector<std::string> args(argv + 1, argv + argc);
    const ParseResult pr = parse_args(args);
    if (pr.help) {
        std::cout << usage();
        return 0;
    }
    if (!pr.options) {
        std::cerr << kToolName << ": " << pr.error << "\n\n" << usage();
        return 2;
    }
    const Options &o = *pr.options;
    if (o.cmd == Subcommand::qstats)
        return qstats::run(o);
    install_signal_handlers();

    Report r = make_report(o);
    int rc = 1;
    try {
        rc = o.cmd == Subcommand::pktgen ? run_pktgen(o, r) : run_gen(o, r);
    } catch (const RuntimeFailure &e) {
        std::cerr << kToolName << ": " << e.what() << "\n";
        r.errors.emplace_back(e.what());
        rc = 1;
        if (!o.json)
            return rc;
    }
    if (o.json)
        // Bytes that are not UTF-8 (a device name may have them) become U+FFFD.
        std::cout << to_json(r).dump(2, ' ', false,
                                     nlohmann::ordered_json::error_handler_t::replace)
                  << "\n";
    else
        std::cout << to_table(r);
    std::cout.flush();
    return rc;
}

} // namespace

int main(int argc, char **argv)
{
    try {
        return real_main(argc, argv);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "mqbench: error: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "mqbench: unknown error\n");
    }
    return 1;
}

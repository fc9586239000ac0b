// Running a helper program (modprobe) from a case: its exit code and output.
#pragma once

#include <string>
#include <vector>

namespace ksft {

struct CmdResult {
    int status = -1;    // exit code, 127 if the program could not be started, 128 + signal
    std::string output; // stdout and stderr together, without trailing newlines
};

// Runs argv (argv[0] looked up in PATH) and waits for it. Throws std::runtime_error when
// no pipe can be made.
CmdResult run_cmd(const std::vector<std::string> &argv);

} // namespace ksft

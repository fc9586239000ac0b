// Small string helpers shared by the selftest library, the programs and mqbench.
#pragma once

#include <sstream>
#include <string>
#include <utility>

namespace netutil {

// Concatenate streamable values into a string.
template <typename... Args>
std::string concat(Args &&...args)
{
    std::ostringstream os;
    (os << ... << std::forward<Args>(args));
    return os.str();
}

} // namespace netutil

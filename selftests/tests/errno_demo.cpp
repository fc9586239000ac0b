// Built only for ctest (harness_test.cpp runs it): a case that fails with an errno and one
// that fails without, to show that the errno crosses from the case's process and is written
// as a "# errno: NAME" key line (ci/matrix/case.py reads it).
#include <cerrno>

#include "harness.hpp"

namespace {

TEST_RESULT(fails_with_errno)
{
    return ksft::CaseResult::fail("QSTATS_GET: EOPNOTSUPP (Operation not supported)",
                                  {EOPNOTSUPP, EINVAL, EOPNOTSUPP});
}

TEST_RESULT(fails_without_errno)
{
    return ksft::CaseResult::fail("no errno");
}

} // namespace

int main(int argc, char **argv)
{
    return ksft::main(argc, argv);
}

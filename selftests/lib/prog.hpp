// What the selftest programs (selftests/progs) share: the headers of netutil and ksft
// they build on, and the short names they use them by. A program brings the names into
// its own namespace with `using namespace ksft::prog;`.
#pragma once

#include "harness.hpp"
#include "ktap.hpp"
#include "link.hpp"
#include "netdev.hpp"
#include "nl.hpp"
#include "packet_sender.hpp"
#include "strutil.hpp"
#include "sysfs.hpp"
#include "tc.hpp"
#include "testdev.hpp"

namespace ksft::prog {

using ksft::CaseResult;
using ksft::testdev::TestDummy;
using netutil::concat;
using netutil::nl::errno_name;
using netutil::nl::Status;
namespace netdev = netutil::netdev;
namespace nl = netutil::nl;
namespace pkt = netutil::pkt;
namespace rtnl = netutil::rtnl;
namespace sysfs = netutil::sysfs;
namespace testdev = ksft::testdev;

} // namespace ksft::prog

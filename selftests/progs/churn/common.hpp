// churn: what its files share: the names, the timeouts, the clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "prog.hpp"

namespace churn {

using namespace ksft::prog;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kFrameLen = 64;
constexpr std::uint16_t kMatchallPrio = 1;
constexpr std::uint16_t kU32Prio = 2;
constexpr auto kHoldTimeout = std::chrono::seconds(5);
constexpr auto kDrainTimeout = std::chrono::seconds(2);
constexpr auto kSettleTimeout = std::chrono::seconds(3);
constexpr auto kGoneTimeout = std::chrono::seconds(10);
constexpr auto kDeleteLead = milliseconds(300);
constexpr auto kPoll = std::chrono::microseconds(500);
// Changes that take longer show how long in their line.
constexpr long long kSlowChangeMs = 200;

inline long long ms_since(Clock::time_point t0)
{
    return std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
}

} // namespace churn

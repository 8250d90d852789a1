// Deadline: the monotonic instant by which a network call must have finished. Every call of the
// http layer (a request, a retried series of requests, a credential fetch) takes one, so nothing
// waits on the network without a bound (CONVENTIONS.md, "Network I/O").
//
// Thread-safety: values and pure functions.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace ferry::http {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline DeadlineAfter(Clock::duration d) {
  return Clock::now() + d;
}

// Milliseconds left until `deadline`, 0 when it has passed.
inline int64_t MillisLeft(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max<int64_t>(0, left.count());
}

inline bool Expired(Deadline deadline) {
  return Clock::now() >= deadline;
}

}  // namespace ferry::http

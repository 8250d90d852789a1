// Clocks. Wall time for what goes into the log (commitInfo.timestamp, txn.lastUpdated,
// modificationTime); monotonic time for triggers, timeouts and durations.
#pragma once

#include <chrono>
#include <cstdint>

namespace ferry {

inline int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t MonotonicMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace ferry

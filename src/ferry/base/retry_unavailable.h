// RetryWhileUnavailable: the one loop that retries a step while it answers Unavailable ("retry
// with backoff", status.h) at start-up: a source's Start (pipeline/pipeline_source.cc,
// pipeline/router.cc) and a table's first read or creation (pipeline/table_setup.cc). The
// backoff doubles from `initial_backoff` up to `max_backoff`; the caller decides how to wait (a
// stop token that wakes on shutdown, or a plain sleep), when to give up (a shutdown, a patience
// budget) and what to log or count on each retry.
//
// Each round:
//   1. Call `attempt`. Anything but Unavailable (success included) is returned as it is.
//   2. If `stop.stopping` says so, return the Unavailable status.
//   3. If a `patience` is set and the time since the first attempt plus the next backoff passes
//      it, return the Unavailable status (a patience of zero: no retry at all).
//   4. Call `on_retry(status, backoff)` (log, metrics); a non-OK return ends the loop with it.
//   5. Wait the backoff (`stop.wait`, else sleep), double it up to `max_backoff`, go to 1.
//
// Thread-safety: a free function; it runs on the caller's thread and calls back on it.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry {

struct BackoffPolicy {
  std::chrono::milliseconds initial_backoff{250};
  std::chrono::milliseconds max_backoff{5000};
  // Step 3: the longest wait from the first attempt until the next one starts; none: no limit.
  std::optional<std::chrono::milliseconds> patience;
};

// How the loop waits and when a shutdown ends it; every member may be empty.
struct RetryStop {
  std::function<bool()> stopping;                                            // step 2
  std::function<void(std::chrono::milliseconds)> wait;                       // step 5; empty: sleep
  std::function<Status(const Status&, std::chrono::milliseconds)> on_retry;  // step 4
};

// REQUIRES: policy.initial_backoff > 0.
template <typename T>
Result<T> RetryWhileUnavailable(const BackoffPolicy& policy, const RetryStop& stop,
                                const std::function<Result<T>()>& attempt) {
  const auto start = std::chrono::steady_clock::now();
  std::chrono::milliseconds backoff = policy.initial_backoff;
  while (true) {
    Result<T> result = attempt();
    if (result.ok() || result.status().code() != StatusCode::kUnavailable) {
      return result;
    }
    if (stop.stopping && stop.stopping()) {
      return result;
    }
    if (policy.patience.has_value() &&
        std::chrono::steady_clock::now() - start + backoff > *policy.patience) {
      return result;
    }
    if (stop.on_retry) {
      if (Status st = stop.on_retry(result.status(), backoff); !st.ok()) {
        return st;
      }
    }
    if (stop.wait) {
      stop.wait(backoff);
    } else {
      std::this_thread::sleep_for(backoff);
    }
    backoff = std::min(backoff * 2, policy.max_backoff);
  }
}

// The same for an attempt that returns only a Status.
inline Status RetryWhileUnavailable(const BackoffPolicy& policy, const RetryStop& stop,
                                    const std::function<Status()>& attempt) {
  Result<bool> result = RetryWhileUnavailable<bool>(policy, stop, [&]() -> Result<bool> {
    Status st = attempt();
    if (!st.ok()) {
      return st;
    }
    return true;
  });
  return result.status();
}

}  // namespace ferry

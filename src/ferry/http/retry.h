// RetryPolicy: the one retry loop of ferry's network calls. Exponential backoff with full jitter
// (each wait uniform in [0, min(max_backoff, initial_backoff * 2^(n-1))]), bounded by a deadline
// and a number of attempts, retrying exactly what an attempt declares retryable: for HTTP, the
// classes outcome.h marks so (not sent; throttled; outcome unknown of an idempotent request).
//
// Retries are counted for metrics without this layer knowing metrics: a RetryCounters the caller
// owns (atomics it reads when it renders), and an optional callback per retry (to log it, or to
// feed a histogram). A Retry-After the server sent is honoured, within the deadline.
//
//   RetryPolicy retry(RetryOptions{}, &counters);
//   HttpOutcome out = SendWithRetry(client, retry, std::move(request),
//                                   {.prepare = sign, .parse_error = ParseS3Error});
//
// Thread-safety: a RetryPolicy is immutable after construction and may be shared by threads;
// the counters are atomics.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>

#include "ferry/base/status.h"
#include "ferry/http/client.h"
#include "ferry/http/deadline.h"

namespace ferry::http {

struct RetryOptions {
  // Attempts in all, the first included (1: never retry).
  int max_attempts = 10;
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10'000};
};

// Totals across every call made with one policy, read by the caller (metrics, logs, tests).
struct RetryCounters {
  std::atomic<uint64_t> attempts{0};
  std::atomic<uint64_t> retries{0};
  // Retries after a throttling answer (429, 503, SlowDown, ...).
  std::atomic<uint64_t> throttled{0};
  // Calls that ended in a retryable error because the deadline or the attempts ran out.
  std::atomic<uint64_t> exhausted{0};
};

// One retry about to happen, for the on_retry callback.
struct RetryEvent {
  int attempt = 0;  // the attempt that failed, 1-based
  Status cause;
  std::chrono::milliseconds delay{0};
  bool throttled = false;
};

// One attempt's verdict.
struct RetryStep {
  Status status;
  bool retryable = false;
  bool throttled = false;
  // A wait the server asked for (Retry-After), 0 when none.
  std::chrono::milliseconds retry_after{0};
};

class RetryPolicy {
 public:
  explicit RetryPolicy(RetryOptions options = {}, RetryCounters* counters = nullptr,
                       std::function<void(const RetryEvent&)> on_retry = {});

  // Runs `attempt` (given the 1-based attempt number) until it succeeds, fails for good, the
  // attempts are spent, the next wait would end past `deadline`, or `stop` is requested (then
  // the last error comes back as Cancelled). The result is the last attempt's status; when that
  // is a retryable error, its message says how many attempts were made.
  Status Run(Deadline deadline, const std::function<RetryStep(int attempt)>& attempt,
             std::stop_token stop = {}) const;

  // The jittered wait before retry number `retry` (1-based).
  std::chrono::milliseconds Backoff(int retry) const;

  const RetryOptions& options() const { return options_; }

 private:
  RetryOptions options_;
  RetryCounters* counters_;
  std::function<void(const RetryEvent&)> on_retry_;
};

struct SendHooks {
  // Runs before each attempt on a fresh copy of the request: sign it (x-amz-date must be
  // current, credentials may have been refreshed). An error ends the call; Unavailable is
  // retried like a failed attempt (a token endpoint that is briefly down).
  std::function<Status(HttpRequest*)> prepare;
  // Reads the service's error from a non-2xx response (S3's XML <Error>, Azure's
  // x-ms-error-code), so that the classification sees its code.
  std::function<ServiceError(const HttpResponse&)> parse_error;
  std::stop_token stop;
};

// Sends `request` with `policy` until its deadline: the last outcome, with `attempts` set. A
// BodyReader in the request is rewound before each retry. The request's deadline bounds the
// whole series (its default, as in Send, is the client's default_timeout from now).
HttpOutcome SendWithRetry(HttpClient& client, const RetryPolicy& policy, HttpRequest request,
                          const SendHooks& hooks = {});

}  // namespace ferry::http

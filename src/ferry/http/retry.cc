#include "ferry/http/retry.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

namespace ferry::http {

namespace {

uint64_t RandomBelow(uint64_t bound) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return bound == 0 ? 0 : std::uniform_int_distribution<uint64_t>(0, bound)(rng);
}

// Sleeps until `until` or until `stop` is requested; false when stopped.
bool SleepUntil(Clock::time_point until, std::stop_token stop) {
  if (!stop.stop_possible()) {
    std::this_thread::sleep_until(until);
    return true;
  }
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_until(lock, stop, until, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace

RetryPolicy::RetryPolicy(RetryOptions options, RetryCounters* counters,
                         std::function<void(const RetryEvent&)> on_retry)
    : options_(options), counters_(counters), on_retry_(std::move(on_retry)) {}

std::chrono::milliseconds RetryPolicy::Backoff(int retry) const {
  int64_t cap = options_.max_backoff.count();
  int64_t ceiling = options_.initial_backoff.count();
  for (int i = 1; i < retry && ceiling < cap; ++i) {
    ceiling *= 2;
  }
  ceiling = std::min(ceiling, cap);
  return std::chrono::milliseconds(
      static_cast<int64_t>(RandomBelow(static_cast<uint64_t>(std::max<int64_t>(ceiling, 0)))));
}

Status RetryPolicy::Run(Deadline deadline, const std::function<RetryStep(int attempt)>& attempt,
                        std::stop_token stop) const {
  Clock::time_point start = Clock::now();
  for (int n = 1;; ++n) {
    if (counters_ != nullptr) {
      counters_->attempts.fetch_add(1, std::memory_order_relaxed);
    }
    RetryStep step = attempt(n);
    if (step.status.ok() || !step.retryable) {
      return step.status;
    }
    std::chrono::milliseconds delay = std::max(Backoff(n), step.retry_after);
    bool out_of_attempts = n >= options_.max_attempts;
    bool out_of_time = Clock::now() + delay >= deadline;
    if (out_of_attempts || out_of_time || stop.stop_requested()) {
      if (stop.stop_requested()) {
        return Cancelled("{} (stopped during retries)", step.status.ToString());
      }
      if (counters_ != nullptr) {
        counters_->exhausted.fetch_add(1, std::memory_order_relaxed);
      }
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
      return step.status.WithContext("gave up after {} attempt{} in {} ms ({})", n,
                                     n == 1 ? "" : "s", elapsed.count(),
                                     out_of_attempts ? "attempt limit" : "deadline");
    }
    if (counters_ != nullptr) {
      counters_->retries.fetch_add(1, std::memory_order_relaxed);
      if (step.throttled) {
        counters_->throttled.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (on_retry_) {
      on_retry_(RetryEvent{
          .attempt = n, .cause = step.status, .delay = delay, .throttled = step.throttled});
    }
    if (!SleepUntil(Clock::now() + delay, stop)) {
      return Cancelled("{} (stopped during retries)", step.status.ToString());
    }
  }
}

HttpOutcome SendWithRetry(HttpClient& client, const RetryPolicy& policy, HttpRequest request,
                          const SendHooks& hooks) {
  if (request.deadline == Deadline{}) {
    request.deadline = DeadlineAfter(client.options().default_timeout);
  }
  HttpOutcome last;
  int attempts = 0;
  Status final_status = policy.Run(
      request.deadline,
      [&](int n) -> RetryStep {
        attempts = n;
        if (n > 1 && request.body_reader != nullptr) {
          if (!request.body_reader->rewind) {
            last.retryable = false;
            return RetryStep{.status = last.status};
          }
          Status rewound = request.body_reader->rewind();
          if (!rewound.ok()) {
            last = HttpOutcome{.status = rewound.WithContext("{}: rewinding the body for a retry",
                                                             DescribeRequest(request))};
            return RetryStep{.status = last.status};
          }
        }
        HttpRequest attempt = request;
        if (hooks.prepare) {
          Status prepared = hooks.prepare(&attempt);
          if (!prepared.ok()) {
            last = HttpOutcome{.status = prepared,
                               .retryable = prepared.code() == StatusCode::kUnavailable};
            return RetryStep{.status = prepared, .retryable = last.retryable};
          }
        }
        last = client.Send(attempt);
        if (!last.ok() && last.response_complete && hooks.parse_error) {
          ServiceError error = hooks.parse_error(last.response);
          last = ClassifyResponse(attempt, std::move(last.response), error);
        }
        return RetryStep{.status = last.status,
                         .retryable = last.retryable,
                         .throttled = last.throttled,
                         .retry_after = last.retry_after};
      },
      hooks.stop);
  last.status = final_status;
  last.attempts = attempts;
  return last;
}

}  // namespace ferry::http

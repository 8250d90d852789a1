#include "ferry/http/retry.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace ferry::http {
namespace {

using std::chrono::milliseconds;

RetryOptions Fast(int attempts = 10) {
  return RetryOptions{
      .max_attempts = attempts, .initial_backoff = milliseconds(1), .max_backoff = milliseconds(4)};
}

TEST(RetryPolicyTest, BackoffIsFullJitterUnderAnExponentialCeiling) {
  RetryPolicy p(
      RetryOptions{.initial_backoff = milliseconds(100), .max_backoff = milliseconds(1000)});
  for (int retry = 1; retry <= 12; ++retry) {
    int64_t ceiling = std::min<int64_t>(1000, int64_t{100} << std::min(retry - 1, 20));
    int64_t lowest = ceiling;
    int64_t highest = 0;
    for (int i = 0; i < 2000; ++i) {
      int64_t d = p.Backoff(retry).count();
      ASSERT_GE(d, 0);
      ASSERT_LE(d, ceiling) << retry;
      lowest = std::min(lowest, d);
      highest = std::max(highest, d);
    }
    // Spread over the whole range, not clustered at the ceiling (full jitter).
    EXPECT_LT(lowest, ceiling / 4) << retry;
    EXPECT_GT(highest, ceiling * 3 / 4) << retry;
  }
}

TEST(RetryPolicyTest, RetriesRetryableErrorsUntilSuccess) {
  RetryCounters counters;
  std::vector<RetryEvent> events;
  RetryPolicy p(Fast(), &counters, [&](const RetryEvent& e) { events.push_back(e); });
  Status s = p.Run(DeadlineAfter(std::chrono::minutes(1)), [](int attempt) {
    if (attempt < 4) {
      return RetryStep{
          .status = Unavailable("busy {}", attempt), .retryable = true, .throttled = attempt == 2};
    }
    return RetryStep{};
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(counters.attempts.load(), 4u);
  EXPECT_EQ(counters.retries.load(), 3u);
  EXPECT_EQ(counters.throttled.load(), 1u);
  EXPECT_EQ(counters.exhausted.load(), 0u);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].attempt, 2);
  EXPECT_TRUE(events[1].throttled);
  EXPECT_EQ(events[2].cause.message(), "busy 3");
}

TEST(RetryPolicyTest, FinalErrorsAreNotRetried) {
  RetryCounters counters;
  RetryPolicy p(Fast(), &counters);
  int calls = 0;
  Status s = p.Run(DeadlineAfter(std::chrono::minutes(1)), [&](int) {
    ++calls;
    return RetryStep{.status = NotFound("no such key"), .retryable = false};
  });
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no such key");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(counters.retries.load(), 0u);
}

TEST(RetryPolicyTest, StopsAtTheAttemptLimit) {
  RetryCounters counters;
  RetryPolicy p(Fast(3), &counters);
  int calls = 0;
  Status s = p.Run(DeadlineAfter(std::chrono::minutes(1)), [&](int) {
    ++calls;
    return RetryStep{.status = Unavailable("503"), .retryable = true};
  });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(calls, 3);
  EXPECT_NE(s.message().find("gave up after 3 attempts"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("attempt limit"), std::string::npos);
  EXPECT_EQ(counters.exhausted.load(), 1u);
}

TEST(RetryPolicyTest, StopsAtTheDeadline) {
  RetryPolicy p(RetryOptions{.max_attempts = 1'000'000,
                             .initial_backoff = milliseconds(2),
                             .max_backoff = milliseconds(2)});
  int calls = 0;
  Deadline deadline = DeadlineAfter(milliseconds(50));
  Status s = p.Run(deadline, [&](int) {
    ++calls;
    return RetryStep{.status = Unavailable("refused"), .retryable = true};
  });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("(deadline)"), std::string::npos) << s.ToString();
  EXPECT_GE(calls, 1);
  EXPECT_LT(calls, 1'000'000);
  // An attempt already past the deadline is not followed by another.
  calls = 0;
  s = p.Run(Clock::now(), [&](int) {
    ++calls;
    return RetryStep{.status = Unavailable("refused"), .retryable = true};
  });
  EXPECT_EQ(calls, 1);
}

TEST(RetryPolicyTest, HonoursRetryAfterWithinTheDeadline) {
  std::vector<milliseconds> delays;
  RetryPolicy p(Fast(), nullptr, [&](const RetryEvent& e) { delays.push_back(e.delay); });
  Status s = p.Run(DeadlineAfter(std::chrono::minutes(1)), [](int attempt) {
    if (attempt == 1) {
      return RetryStep{
          .status = Unavailable("429"), .retryable = true, .retry_after = milliseconds(30)};
    }
    return RetryStep{};
  });
  EXPECT_TRUE(s.ok());
  ASSERT_EQ(delays.size(), 1u);
  EXPECT_EQ(delays[0], milliseconds(30));
  // A Retry-After past the deadline ends the call instead of sleeping through it.
  int calls = 0;
  s = p.Run(DeadlineAfter(milliseconds(200)), [&](int) {
    ++calls;
    return RetryStep{
        .status = Unavailable("429"), .retryable = true, .retry_after = std::chrono::hours(1)};
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
}

TEST(RetryPolicyTest, AStopRequestEndsTheWait) {
  RetryPolicy p(RetryOptions{.max_attempts = 5,
                             .initial_backoff = std::chrono::hours(1),
                             .max_backoff = std::chrono::hours(1)});
  std::stop_source stop;
  std::atomic<int> calls{0};
  std::thread t([&] {
    Status s = p.Run(
        DeadlineAfter(std::chrono::hours(2)),
        [&](int) {
          calls.fetch_add(1);
          return RetryStep{.status = Unavailable("down"),
                           .retryable = true,
                           .retry_after = std::chrono::minutes(30)};
        },
        stop.get_token());
    EXPECT_EQ(s.code(), StatusCode::kCancelled);
    EXPECT_NE(s.message().find("down"), std::string::npos);
  });
  while (calls.load() == 0) {
    std::this_thread::yield();
  }
  stop.request_stop();
  t.join();
  EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace ferry::http

#include "ferry/base/retry_unavailable.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace ferry {
namespace {

using std::chrono::milliseconds;

// A RetryStop that records the waits instead of sleeping.
struct RecordedStop {
  std::vector<milliseconds> waits;
  std::vector<milliseconds> retries;
  RetryStop stop() {
    return {.stopping = {},
            .wait = [this](milliseconds d) { waits.push_back(d); },
            .on_retry =
                [this](const Status&, milliseconds d) {
                  retries.push_back(d);
                  return Status::OK();
                }};
  }
};

TEST(RetryWhileUnavailableTest, RetriesUnavailableWithDoublingBackoffUpToTheCap) {
  RecordedStop recorded;
  int calls = 0;
  Result<int> r = RetryWhileUnavailable<int>(
      {.initial_backoff = milliseconds(10), .max_backoff = milliseconds(30)}, recorded.stop(),
      [&]() -> Result<int> {
        if (++calls < 5) {
          return Unavailable("broker down {}", calls);
        }
        return 42;
      });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(calls, 5);
  const std::vector<milliseconds> expected{milliseconds(10), milliseconds(20), milliseconds(30),
                                           milliseconds(30)};
  EXPECT_EQ(recorded.waits, expected);
  EXPECT_EQ(recorded.retries, expected);
}

TEST(RetryWhileUnavailableTest, OtherErrorsEndTheLoopAtOnce) {
  RecordedStop recorded;
  int calls = 0;
  Status st = RetryWhileUnavailable({}, recorded.stop(), [&] {
    ++calls;
    return InvalidArgument("bad config");
  });
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(recorded.waits.empty());
}

TEST(RetryWhileUnavailableTest, AStopEndsTheLoopWithTheUnavailableStatus) {
  int calls = 0;
  bool waited = false;
  RetryStop stop{.stopping = [&] { return calls >= 2; },
                 .wait = [&](milliseconds) { waited = true; },
                 .on_retry = {}};
  Status st = RetryWhileUnavailable({}, stop, [&] {
    ++calls;
    return Unavailable("attempt {}", calls);
  });
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("attempt 2"), std::string::npos) << st.ToString();
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(waited);
}

TEST(RetryWhileUnavailableTest, OnRetryCanEndTheLoopWithItsOwnStatus) {
  int calls = 0;
  RetryStop stop{.stopping = {},
                 .wait = [](milliseconds) {},
                 .on_retry =
                     [&](const Status& st, milliseconds) {
                       return calls >= 3 ? st.WithContext("gave up") : Status::OK();
                     }};
  Status st = RetryWhileUnavailable({}, stop, [&] {
    ++calls;
    return Unavailable("down");
  });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.ToString().find("gave up"), std::string::npos) << st.ToString();
}

TEST(RetryWhileUnavailableTest, PatienceBoundsTheTimeSpentWaiting) {
  int calls = 0;
  Status st = RetryWhileUnavailable({.initial_backoff = milliseconds(20),
                                     .max_backoff = milliseconds(20),
                                     .patience = milliseconds(50)},
                                    {}, [&] {
                                      ++calls;
                                      return Unavailable("down");
                                    });
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  // Real sleeps of 20 ms: a third attempt starts at >= 40 ms, when 40 + 20 passes 50, so there
  // is never a fourth (however slow the machine).
  EXPECT_GE(calls, 1);
  EXPECT_LE(calls, 3);
}

TEST(RetryWhileUnavailableTest, ZeroPatienceMeansOneAttempt) {
  int calls = 0;
  Status st = RetryWhileUnavailable({.patience = milliseconds(0)}, {}, [&] {
    ++calls;
    return Unavailable("down");
  });
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(calls, 1);
}

TEST(RetryWhileUnavailableTest, SuccessAtFirstNeverWaits) {
  RecordedStop recorded;
  Status st = RetryWhileUnavailable({}, recorded.stop(), [] { return Status::OK(); });
  EXPECT_TRUE(st.ok());
  EXPECT_TRUE(recorded.waits.empty());
}

}  // namespace
}  // namespace ferry

#include "ferry/source/kafka/fetch_waker.h"

#include <gtest/gtest.h>

namespace ferry::source::kafka {
namespace {

TEST(FetchWakePolicyTest, WakesOnlyAfterHalfAQueueOfBytes) {
  FetchWakePolicy policy(/*queue_max_bytes=*/1000, /*queue_min_messages=*/0);
  EXPECT_FALSE(policy.QueueEmpty());  // nothing taken: the fetchers cannot be stopped on a cap
  policy.Took(400);
  EXPECT_FALSE(policy.QueueEmpty());
  policy.Took(100);  // 500 since the last wake: half the cap
  EXPECT_TRUE(policy.QueueEmpty());
  EXPECT_FALSE(policy.QueueEmpty());  // the count starts again
  policy.Took(499);
  EXPECT_FALSE(policy.QueueEmpty());
  policy.Took(1);
  EXPECT_TRUE(policy.QueueEmpty());
}

TEST(FetchWakePolicyTest, WakesAfterHalfTheMessageCap) {
  FetchWakePolicy policy(/*queue_max_bytes=*/1 << 30, /*queue_min_messages=*/10);
  for (int i = 0; i < 4; ++i) {
    policy.Took(1);
  }
  EXPECT_FALSE(policy.QueueEmpty());
  policy.Took(1);
  EXPECT_TRUE(policy.QueueEmpty());
}

TEST(FetchWakePolicyTest, NoCapsNeverWakes) {
  FetchWakePolicy policy(0, 0);
  for (int i = 0; i < 1000; ++i) {
    policy.Took(1 << 20);
  }
  EXPECT_FALSE(policy.QueueEmpty());
}

}  // namespace
}  // namespace ferry::source::kafka

#include "ferry/source/kafka/token_bucket.h"

#include <gtest/gtest.h>

namespace ferry::source::kafka {
namespace {

TEST(TokenBucketTest, UnlimitedAlwaysGivesTokens) {
  TokenBucket bucket;
  EXPECT_TRUE(bucket.unlimited());
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(bucket.TryTake(0));
  }
  EXPECT_EQ(bucket.MicrosUntilToken(0), 0);
}

TEST(TokenBucketTest, BurstsOneSecondThenRefillsAtRate) {
  TokenBucket bucket(10);  // 10 messages per second
  int taken = 0;
  while (bucket.TryTake(1'000'000)) {
    ++taken;
  }
  EXPECT_EQ(taken, 10);
  EXPECT_EQ(bucket.MicrosUntilToken(1'000'000), 100'000);
  EXPECT_FALSE(bucket.TryTake(1'050'000));
  EXPECT_TRUE(bucket.TryTake(1'100'000));
  EXPECT_FALSE(bucket.TryTake(1'100'000));
  // A long pause refills to the burst size, no more.
  taken = 0;
  while (bucket.TryTake(60'000'000)) {
    ++taken;
  }
  EXPECT_EQ(taken, 10);
}

TEST(TokenBucketTest, SlowRatesStillAllowOneMessage) {
  TokenBucket bucket(0.5);  // one message every two seconds
  EXPECT_TRUE(bucket.TryTake(0));
  EXPECT_FALSE(bucket.TryTake(1'000'000));
  EXPECT_EQ(bucket.MicrosUntilToken(1'000'000), 1'000'000);
  EXPECT_TRUE(bucket.TryTake(2'000'000));
}

TEST(TokenBucketTest, ClockGoingBackwardsGrantsNothing) {
  TokenBucket bucket(1);
  EXPECT_TRUE(bucket.TryTake(5'000'000));
  EXPECT_FALSE(bucket.TryTake(1'000'000));
  EXPECT_FALSE(bucket.TryTake(1'500'000));
  EXPECT_TRUE(bucket.TryTake(2'000'000));
}

}  // namespace
}  // namespace ferry::source::kafka

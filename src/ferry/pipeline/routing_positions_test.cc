// RoutingPositions (routing_positions.h): the low-water mark L of each partition as batches seal
// and commit, stale batches after a reassignment, a poll taken at once, and the wait for the
// outstanding count.

#include "ferry/pipeline/routing_positions.h"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <optional>
#include <vector>

namespace ferry::pipeline {
namespace {

TEST(RoutingPositionsTest, LowWaterMarkSkipsTheBatchAndWaitsForOthers) {
  RoutingPositions p;
  p.Reset(0, std::nullopt);
  // Positions 0..5: route 1 gets 0, 2, 4; route 2 gets 1, 3, 5.
  for (int64_t pos = 0; pos < 6; ++pos) {
    p.Take(0, pos, pos % 2 == 0 ? 1 : 2);
  }
  // Route 1 seals 0..2 (its 0 and 2): 1 of route 2 is outstanding: L = 0.
  EXPECT_EQ(p.Seal(0, 1, 2), 0);
  EXPECT_EQ(p.Durable(0), std::nullopt);  // not durable before the commit is acknowledged
  p.Committed(0, 1, 2);
  EXPECT_EQ(p.Durable(0), 0);
  // Route 2 seals up to 5: its own 1, 3, 5; route 1's 4 is outstanding: L = 3.
  EXPECT_EQ(p.Seal(0, 2, 5), 3);
  p.Committed(0, 2, 5);
  EXPECT_EQ(p.Durable(0), 3);
  // Route 1 seals 4: nothing else outstanding: L = 4 (capped at its sealed position).
  EXPECT_EQ(p.Seal(0, 1, 4), 4);
  p.Committed(0, 1, 4);
  EXPECT_EQ(p.Durable(0), 4);
  EXPECT_EQ(p.Outstanding(), 0);
  EXPECT_EQ(p.HighestWhenIdle(), (std::map<int32_t, int64_t>{{0, 5}}));
}

TEST(RoutingPositionsTest, AStaleBatchAfterReassignmentClaimsNothingNew) {
  RoutingPositions p;
  p.Reset(0, std::nullopt);
  for (int64_t pos = 10; pos <= 20; ++pos) {
    p.Take(0, pos, pos <= 15 ? 1 : 2);
  }
  // Revoked and assigned again, resuming after 12: route 1's batch of 10..15 is sealed late.
  p.Reset(0, 12);
  EXPECT_EQ(p.Seal(0, 1, 15), 12);
  p.Take(0, 13, 2);
  EXPECT_EQ(p.Seal(0, 1, 15), 12);
  // A message the table held already is durable.
  p.Skipped(0, 2, 13);
  EXPECT_EQ(p.Outstanding(), 0);
  EXPECT_EQ(p.skipped(), 1);
}

// A batch of the positions book's Take equals one Take per message.
TEST(RoutingPositionsTest, TakingAPollAtOnceEqualsOneByOne) {
  RoutingPositions one;
  RoutingPositions all;
  std::vector<RoutingPositions::Taken> taken;
  for (int32_t partition : {0, 1}) {
    one.Reset(partition, std::nullopt);
    all.Reset(partition, std::nullopt);
  }
  for (int64_t pos = 0; pos < 6; ++pos) {
    for (int32_t partition : {0, 1}) {
      taken.push_back({.partition = partition, .position = pos, .route = pos % 2 == 0 ? 1 : 2});
      one.Take(partition, pos, pos % 2 == 0 ? 1 : 2);
    }
  }
  all.Take(taken);
  EXPECT_EQ(all.Outstanding(), 12);
  EXPECT_EQ(all.Outstanding(1), one.Outstanding(1));
  EXPECT_EQ(all.Seal(0, 1, 4), one.Seal(0, 1, 4));
  all.Committed(0, 1, 4);
  one.Committed(0, 1, 4);
  EXPECT_EQ(all.LowNow(), one.LowNow());
  EXPECT_EQ(all.Outstanding(), 9);
}

// WaitWhileOutstanding returns when a commit moves the count, not at its timeout.
TEST(RoutingPositionsTest, AWaitForTheOutstandingCountEndsAtACommit) {
  RoutingPositions p;
  p.Reset(0, std::nullopt);
  p.Take(0, 1, 1);
  p.Take(0, 2, 1);
  auto waited =
      std::async(std::launch::async, [&] { p.WaitWhileOutstanding(2, std::chrono::minutes(2)); });
  p.Committed(0, 1, 2);
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the wait did not end at the commit";
  EXPECT_EQ(p.Outstanding(), 0);
}

// Routes are indices into per-route books: a large route id works, one never seen has nothing
// outstanding.
TEST(RoutingPositionsTest, RoutesAreCountedApartWhateverTheirNumber) {
  RoutingPositions p;
  p.Reset(0, std::nullopt);
  p.Take(0, 0, 999);
  p.Take(0, 1, 3);
  EXPECT_EQ(p.Outstanding(999), 1);
  EXPECT_EQ(p.Outstanding(3), 1);
  EXPECT_EQ(p.Outstanding(4), 0);
  EXPECT_EQ(p.Outstanding(5000), 0);
  EXPECT_EQ(p.Seal(0, 3, 1), std::nullopt) << "position 0 of route 999 is outstanding";
  p.Committed(0, 999, 0);
  EXPECT_EQ(p.Outstanding(999), 0);
  EXPECT_EQ(p.LowNow(), (std::map<int32_t, int64_t>{{0, 0}}));
}

TEST(RoutingPositionsTest, LowTimestampIsThatOfTheLastMessageOfTheDurablePrefix) {
  RoutingPositions p;
  p.Reset(0, std::nullopt);
  p.Reset(1, 41);
  // Positions 0..3 at 1000, 2000, 3000, 4000 µs: route 1 gets 0 and 2, route 2 gets 1 and 3.
  for (int64_t pos = 0; pos < 4; ++pos) {
    p.Take(0, pos, pos % 2 == 0 ? 1 : 2, (pos + 1) * 1000);
  }
  EXPECT_TRUE(p.LowTimestamps().empty());  // nothing durable yet, nothing known below L
  p.Seal(0, 1, 2);
  p.Committed(0, 1, 2);  // 0 and 2 durable; 1 is outstanding: L = 0
  EXPECT_EQ(p.LowNow().at(0), 0);
  EXPECT_EQ(p.LowTimestamps(), (std::map<int32_t, int64_t>{{0, 1000}}));
  p.Seal(0, 2, 3);
  p.Committed(0, 2, 3);  // everything durable: L = 3
  EXPECT_EQ(p.LowNow().at(0), 3);
  EXPECT_EQ(p.LowTimestamps(), (std::map<int32_t, int64_t>{{0, 4000}}));
  // A skipped message (its table held it) is durable too; a reassignment forgets the past.
  p.Take(1, 42, 1, 9000);
  p.Skipped(1, 1, 42);
  EXPECT_EQ(p.LowTimestamps(), (std::map<int32_t, int64_t>{{0, 4000}, {1, 9000}}));
  p.Reset(0, 3);
  EXPECT_EQ(p.LowTimestamps(), (std::map<int32_t, int64_t>{{1, 9000}}));
}

}  // namespace
}  // namespace ferry::pipeline

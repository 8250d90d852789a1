#include "ferry/source/jetstream/filter_cursor.h"

#include <gtest/gtest.h>

#include <vector>

namespace ferry::source::jetstream {
namespace {

using Verdict = FilterCursor::Verdict;
using Ranges = std::vector<SequenceRange>;

TEST(CheckStartTest, PositionInsideTheStreamIsFine) {
  auto check = CheckStart(11, 1, 100, true);
  ASSERT_TRUE(check.ok());
  EXPECT_FALSE(check->lost.has_value());
  // Exactly at the next sequence to be written: nothing new yet.
  check = CheckStart(101, 1, 100, true);
  ASSERT_TRUE(check.ok());
  EXPECT_FALSE(check->lost.has_value());
}

TEST(CheckStartTest, FirstSequencePastPositionIsLost) {
  auto check = CheckStart(11, 51, 100, true);
  ASSERT_TRUE(check.ok());
  ASSERT_TRUE(check->lost.has_value());
  EXPECT_EQ(*check->lost, (SequenceRange{11, 50}));
  // A purged stream: first = last + 1, everything before is gone.
  check = CheckStart(11, 101, 100, true);
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(*check->lost, (SequenceRange{11, 100}));
}

TEST(CheckStartTest, PositionPastTheStreamIsDataLossOnlyFromTheTable) {
  auto check = CheckStart(5001, 1, 10, true);
  EXPECT_EQ(check.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(check.status().message().find("5000"), std::string::npos);
  // A recreated, still empty stream.
  EXPECT_EQ(CheckStart(5001, 0, 0, true).status().code(), StatusCode::kDataLoss);
  // A start sequence the user chose in the future is allowed.
  EXPECT_TRUE(CheckStart(5001, 1, 10, false).ok());
  // Unknown start (policy all/time): nothing to compare.
  EXPECT_TRUE(CheckStart(0, 50, 100, true).ok());
}

TEST(FilterCursorTest, DropsAtOrBelowFloor) {
  FilterCursor cursor(true);
  cursor.Restart(5, true);
  EXPECT_EQ(cursor.Observe(4, 0), Verdict::kDuplicate);
  EXPECT_EQ(cursor.Observe(5, 3), Verdict::kDeliver);
  EXPECT_EQ(cursor.Observe(5, 3), Verdict::kDuplicate);
  EXPECT_EQ(cursor.Observe(6, 2), Verdict::kDeliver);
  EXPECT_EQ(cursor.floor(), 6u);
  EXPECT_EQ(cursor.resume_sequence(), 7u);
  EXPECT_FALSE(cursor.has_unverified_jumps());
}

TEST(FilterCursorTest, UnknownStartTakesTheFirstDeliveryWithoutAJump) {
  FilterCursor cursor(true);
  cursor.Restart(0, false);
  EXPECT_EQ(cursor.resume_sequence(), 0u);
  EXPECT_FALSE(cursor.floor_confirmed());
  EXPECT_EQ(cursor.Observe(40, 0), Verdict::kDeliver);
  EXPECT_FALSE(cursor.has_unverified_jumps());
  EXPECT_TRUE(cursor.floor_confirmed());
  EXPECT_EQ(cursor.resume_sequence(), 41u);
}

TEST(FilterCursorTest, WholeStreamFilterJumpSplitsIntoLostAndDeleted) {
  FilterCursor cursor(true);
  cursor.Restart(11, true);
  ASSERT_EQ(cursor.Observe(11, 0), Verdict::kDeliver);
  ASSERT_EQ(cursor.Observe(20, 0), Verdict::kDeliver);  // 12..19 skipped, even though pending 0
  ASSERT_TRUE(cursor.has_unverified_jumps());
  Ranges lost, deleted;
  cursor.Resolve(15, &lost, &deleted);
  EXPECT_EQ(lost, (Ranges{{12, 14}}));
  EXPECT_EQ(deleted, (Ranges{{15, 19}}));
  EXPECT_FALSE(cursor.has_unverified_jumps());
}

TEST(FilterCursorTest, WholeStreamJumpAboveFirstSequenceIsOnlyDeleted) {
  FilterCursor cursor(true);
  cursor.Restart(1, true);
  ASSERT_EQ(cursor.Observe(1, 5), Verdict::kDeliver);
  ASSERT_EQ(cursor.Observe(3, 4), Verdict::kDeliver);
  Ranges lost, deleted;
  cursor.Resolve(1, &lost, &deleted);
  EXPECT_TRUE(lost.empty());
  EXPECT_EQ(deleted, (Ranges{{2, 2}}));
}

TEST(FilterCursorTest, FilteredJumpWhileCaughtUpIsOtherSubjects) {
  FilterCursor cursor(false);
  cursor.Restart(1, true);
  ASSERT_EQ(cursor.Observe(10, 0), Verdict::kDeliver);  // first after start: checked
  Ranges lost, deleted;
  cursor.Resolve(1, &lost, &deleted);
  EXPECT_TRUE(lost.empty());
  ASSERT_EQ(cursor.Observe(2011, 0), Verdict::kDeliver);  // was caught up: ordinary
  EXPECT_FALSE(cursor.has_unverified_jumps());
}

TEST(FilterCursorTest, FilteredJumpWhileBehindIsCheckedAgainstFirstSequence) {
  FilterCursor cursor(false);
  cursor.Restart(10, true);
  ASSERT_EQ(cursor.Observe(10, 7), Verdict::kDeliver);
  ASSERT_EQ(cursor.Observe(30, 6), Verdict::kDeliver);
  ASSERT_TRUE(cursor.has_unverified_jumps());
  Ranges lost, deleted;
  cursor.Resolve(25, &lost, &deleted);
  EXPECT_EQ(lost, (Ranges{{11, 24}}));
  EXPECT_TRUE(deleted.empty());  // other subjects may have filled 25..29
  ASSERT_EQ(cursor.Observe(40, 5), Verdict::kDeliver);
  lost.clear();
  cursor.Resolve(25, &lost, &deleted);
  EXPECT_TRUE(lost.empty());
}

TEST(FilterCursorTest, RestartKeepsJumpsAndClearsPending) {
  FilterCursor cursor(false);
  cursor.Restart(1, true);
  ASSERT_EQ(cursor.Observe(1, 0), Verdict::kDeliver);
  ASSERT_EQ(cursor.Observe(5, 0), Verdict::kDeliver);  // caught up: not recorded
  cursor.Restart(cursor.resume_sequence(), true);
  ASSERT_EQ(cursor.Observe(9, 0), Verdict::kDeliver);  // first after restart: recorded
  EXPECT_TRUE(cursor.has_unverified_jumps());
  Ranges lost, deleted;
  cursor.Resolve(8, &lost, &deleted);
  EXPECT_EQ(lost, (Ranges{{6, 7}}));
}

}  // namespace
}  // namespace ferry::source::jetstream

// SharedBatchBudget (shared_batch_budget.h): the open batches of many tables under one budget.

#include "ferry/pipeline/shared_batch_budget.h"

#include <gtest/gtest.h>

namespace ferry::pipeline {
namespace {

TEST(SharedBatchBudgetTest, TheLargestBatchSealsOnceTheSumPassesTheLimit) {
  SharedBatchBudget budget(1000);
  budget.Report(0, 300);  // a
  budget.Report(0, 500);  // b
  EXPECT_FALSE(budget.ShouldSeal(500)) << "800 of 1000";
  budget.Report(0, 400);  // c: 1200 over 3 open batches
  EXPECT_TRUE(budget.ShouldSeal(500)) << "the largest";
  EXPECT_FALSE(budget.ShouldSeal(400)) << "above the average, but not the largest";
  EXPECT_FALSE(budget.ShouldSeal(300));
  EXPECT_FALSE(budget.ShouldSeal(0)) << "an empty batch has nothing to seal";
  budget.Report(500, 0);  // b sealed: 700
  EXPECT_FALSE(budget.ShouldSeal(400));
  EXPECT_EQ(budget.total(), 700);
}

// The largest batch that does not seal (its pipeline waits) holds the others back only up to a
// quarter of the limit more: then every batch at least the average seals.
TEST(SharedBatchBudgetTest, PastAQuarterMoreTheBatchesAboveTheAverageSealToo) {
  SharedBatchBudget budget(1000);
  budget.Report(0, 600);  // a: stuck
  budget.Report(0, 300);  // b
  budget.Report(0, 300);  // c: 1200
  EXPECT_FALSE(budget.ShouldSeal(300));
  budget.Report(300, 400);  // c grows: 1300 over 3, average 433
  EXPECT_FALSE(budget.ShouldSeal(400));
  budget.Report(300, 500);  // b grows: 1500, average 500
  EXPECT_TRUE(budget.ShouldSeal(500));
  EXPECT_FALSE(budget.ShouldSeal(400));
  EXPECT_TRUE(budget.ShouldSeal(600));
  // Equal sizes are counted apart.
  budget.Report(400, 500);  // c: 1600, two batches of 500
  budget.Report(500, 0);    // one of them sealed: 1100, a 600 and a 500 left
  EXPECT_EQ(budget.total(), 1100);
  EXPECT_TRUE(budget.ShouldSeal(600));
  EXPECT_FALSE(budget.ShouldSeal(500));
}

}  // namespace
}  // namespace ferry::pipeline

// SharedBatchBudget (shared_batch_budget.h): the open batches of many tables under one budget.

#include "ferry/pipeline/shared_batch_budget.h"

#include <gtest/gtest.h>

namespace ferry::pipeline {
namespace {

TEST(SharedBatchBudgetTest, TheLargestBatchesSealOnceTheSumPassesTheLimit) {
  SharedBatchBudget budget(1000);
  budget.Report(0, 300);  // a
  budget.Report(0, 500);  // b
  EXPECT_FALSE(budget.ShouldSeal(500)) << "800 of 1000";
  budget.Report(0, 400);  // c: 1200 over 3 open batches, average 400
  EXPECT_TRUE(budget.ShouldSeal(500));
  EXPECT_TRUE(budget.ShouldSeal(400));
  EXPECT_FALSE(budget.ShouldSeal(300));
  EXPECT_FALSE(budget.ShouldSeal(0)) << "an empty batch has nothing to seal";
  budget.Report(500, 0);  // b sealed: 700
  EXPECT_FALSE(budget.ShouldSeal(400));
  EXPECT_EQ(budget.total(), 700);
}

}  // namespace
}  // namespace ferry::pipeline

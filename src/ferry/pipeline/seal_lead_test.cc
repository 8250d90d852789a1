#include "ferry/pipeline/seal_lead.h"

#include <gtest/gtest.h>

namespace ferry::pipeline {
namespace {

using std::chrono::milliseconds;

TEST(SealLeadTest, FullMaxLatencyBeforeAnyCommit) {
  SealLead lead;
  EXPECT_EQ(lead.Lead(milliseconds(1000)).count(), 0);
  EXPECT_EQ(lead.Trigger(milliseconds(1000)).count(), 1000);
}

TEST(SealLeadTest, MedianOfTheRecentCommits) {
  SealLead lead;
  for (double s : {0.010, 0.040, 0.020, 0.900, 0.030}) {
    lead.Observe(s);
  }
  // Sorted 10, 20, 30, 40, 900: the median 30 ms, not the 900 ms outlier.
  EXPECT_EQ(lead.Lead(milliseconds(1000)).count(), 30);
  EXPECT_EQ(lead.Trigger(milliseconds(1000)).count(), 970);
}

TEST(SealLeadTest, AtMostHalfOfMaxLatency) {
  SealLead lead;
  for (int i = 0; i < 5; ++i) {
    lead.Observe(0.200);
  }
  EXPECT_EQ(lead.Lead(milliseconds(100)).count(), 50);
  EXPECT_EQ(lead.Trigger(milliseconds(100)).count(), 50);
  EXPECT_EQ(lead.Trigger(milliseconds(1000)).count(), 800);
}

TEST(SealLeadTest, OnlyTheLastWindowCounts) {
  SealLead lead;
  for (size_t i = 0; i < SealLead::kWindow; ++i) {
    lead.Observe(0.300);
  }
  for (size_t i = 0; i < SealLead::kWindow; ++i) {
    lead.Observe(0.010);
  }
  EXPECT_EQ(lead.Lead(milliseconds(1000)).count(), 10);
  lead.Observe(-1.0);  // a clock step: counts as zero
  EXPECT_EQ(lead.Lead(milliseconds(1000)).count(), 10);
}

}  // namespace
}  // namespace ferry::pipeline

// RouterMetrics (router_metrics.h): a routed pipeline's per-partition lag, in messages from the
// broker's head and L, and in seconds from the timestamp of the message at L.

#include "ferry/pipeline/router_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <vector>

#include "ferry/base/clock.h"
#include "ferry/testing/fake_source.h"

namespace ferry::pipeline {
namespace {

// Assigns every partition the source offers, with no committed position.
class Assignments final : public source::PartitionListener {
 public:
  Result<std::optional<int64_t>> OnAssigned(const source::PartitionInfo& partition) override {
    assigned[partition.index] = partition;
    return std::optional<int64_t>();
  }
  void OnRevoked(const source::PartitionInfo& partition) override {
    assigned.erase(partition.index);
  }
  std::map<int32_t, source::PartitionInfo> assigned;
};

TEST(RouterMetricsTest, LagInMessagesAndSecondsFromTheMessageAtL) {
  metrics::Registry registry;
  RouterMetrics metrics(&registry, "routed", std::chrono::milliseconds(0));
  testing::FakeSource source({.partitions = 2});
  Assignments listener;
  ASSERT_TRUE(source.Start(&listener).ok());
  std::vector<source::Message> none;
  ASSERT_TRUE(source.Poll(10, std::chrono::milliseconds(0), &none).ok());  // assigns
  ASSERT_EQ(listener.assigned.size(), 2u);
  for (int i = 0; i < 5; ++i) {
    source.Produce(0, "m");
    source.Produce(1, "m");
  }
  const metrics::Labels p0 = {{"pipeline", "routed"}, {"partition", "fake/t/0"}};
  const metrics::Labels p1 = {{"pipeline", "routed"}, {"partition", "fake/t/1"}};

  // Partition 0 holds 0..4 durable up to 1, whose message is 30 s old: 3 messages and 30 s
  // behind. Partition 1 is durable up to its head: no lag, whatever its message's age.
  const int64_t now = WallMicros();
  metrics.Update({}, &source, listener.assigned, {{0, 1}, {1, 4}},
                 {{0, now - 30'000'000}, {1, now - 60'000'000}});
  EXPECT_EQ(registry.Value("ferry_lag_messages", p0), 3);
  EXPECT_GE(registry.Value("ferry_lag_seconds", p0), 30);
  EXPECT_LT(registry.Value("ferry_lag_seconds", p0), 3600);
  EXPECT_EQ(registry.Value("ferry_lag_messages", p1), 0);
  EXPECT_EQ(registry.Value("ferry_lag_seconds", p1), 0);

  // Caught up: 0 s. Lagging without a known timestamp (a source that gives none, or nothing
  // durable yet since the assignment): 0 s, with the lag in messages still shown.
  metrics.Update({}, &source, listener.assigned, {{0, 4}, {1, 2}}, {{0, now}, {1, 0}});
  EXPECT_EQ(registry.Value("ferry_lag_seconds", p0), 0);
  EXPECT_EQ(registry.Value("ferry_lag_messages", p1), 2);
  EXPECT_EQ(registry.Value("ferry_lag_seconds", p1), 0);
  metrics.Update({}, &source, listener.assigned, {{0, 4}}, {});
  EXPECT_EQ(registry.Value("ferry_lag_messages", p1), 5);
  EXPECT_EQ(registry.Value("ferry_lag_seconds", p1), 0);
}

}  // namespace
}  // namespace ferry::pipeline

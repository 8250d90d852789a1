#include "ferry/metrics/metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace ferry::metrics {
namespace {

TEST(MetricsTest, RendersPrometheusText) {
  Registry r;
  r.GetCounter("ferry_rows_written_total", "Rows committed.", {{"pipeline", "events"}})
      ->Increment(5);
  r.GetGauge("ferry_partition_lag_messages", "Lag.",
             {{"pipeline", "a\"b"}, {"partition", "kafka/t/0"}})
      ->Set(3);
  Histogram* h = r.GetHistogram("ferry_batch_duration_seconds", "Batch time.", {}, {0.1, 1});
  h->Observe(0.05);
  h->Observe(0.5);
  h->Observe(7);
  EXPECT_EQ(r.RenderPrometheus(),
            "# HELP ferry_batch_duration_seconds Batch time.\n"
            "# TYPE ferry_batch_duration_seconds histogram\n"
            "ferry_batch_duration_seconds_bucket{le=\"0.1\"} 1\n"
            "ferry_batch_duration_seconds_bucket{le=\"1\"} 2\n"
            "ferry_batch_duration_seconds_bucket{le=\"+Inf\"} 3\n"
            "ferry_batch_duration_seconds_sum 7.55\n"
            "ferry_batch_duration_seconds_count 3\n"
            "# HELP ferry_partition_lag_messages Lag.\n"
            "# TYPE ferry_partition_lag_messages gauge\n"
            "ferry_partition_lag_messages{pipeline=\"a\\\"b\",partition=\"kafka/t/0\"} 3\n"
            "# HELP ferry_rows_written_total Rows committed.\n"
            "# TYPE ferry_rows_written_total counter\n"
            "ferry_rows_written_total{pipeline=\"events\"} 5\n");
}

TEST(MetricsTest, SameLabelsSameMetricAndConcurrentIncrements) {
  Registry r;
  Counter* a = r.GetCounter("c_total", "h", {{"k", "v"}});
  EXPECT_EQ(a, r.GetCounter("c_total", "h", {{"k", "v"}}));
  EXPECT_NE(a, r.GetCounter("c_total", "h", {{"k", "w"}}));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([a] {
      for (int i = 0; i < 10000; i++) {
        a->Increment();
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(r.Value("c_total", {{"k", "v"}}), 40000);
  EXPECT_EQ(r.Value("missing"), 0);
  auto values = r.Values("c_total");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].first, (Labels{{"k", "v"}}));
  EXPECT_EQ(values[0].second, 40000);
  EXPECT_TRUE(r.Values("missing").empty());
}

TEST(MetricsDeathTest, TypeClashIsABug) {
  Registry r;
  r.GetCounter("x_total", "h");
  EXPECT_DEATH(r.GetGauge("x_total", "h"), "x_total");
}

}  // namespace
}  // namespace ferry::metrics

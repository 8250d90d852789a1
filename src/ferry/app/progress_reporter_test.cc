#include "ferry/app/progress_reporter.h"

#include <gtest/gtest.h>

namespace ferry::app {
namespace {

TEST(ProgressReporterTest, BarShowsFractionRateLagAndEta) {
  EXPECT_EQ(RenderProgressBar({.rows = 5200, .lag = 4800, .rate = 1200}, 10),
            "[#####.....]  52%  5,200/10,000 rows  1,200 msg/s  lag 4,800  ETA 4s");
  EXPECT_EQ(RenderProgressBar({.rows = 0, .lag = 0, .rate = 0}, 4),
            "[####] 100%  0/0 rows  0 msg/s  lag 0  ETA 0s");
  EXPECT_EQ(RenderProgressBar({.rows = 0, .lag = 1'000'000, .rate = 0}, 4),
            "[....]   0%  0/1,000,000 rows  0 msg/s  lag 1,000,000  ETA ?");
}

TEST(ProgressReporterTest, LogLineAndLongEtas) {
  EXPECT_EQ(RenderProgressLine({.rows = 100, .lag = 9000, .rate = 100}),
            "progress: 100 rows, 100 msg/s, lag 9000, ETA 1m30s");
  EXPECT_EQ(RenderProgressLine({.rows = 1, .lag = 7200, .rate = 1}),
            "progress: 1 rows, 1 msg/s, lag 7200, ETA 2h00m");
}

TEST(ProgressReporterTest, StartsAndStopsOverALiveRegistry) {
  metrics::Registry registry;
  metrics::Counter* rows =
      registry.GetCounter("ferry_rows_written_total", "rows", {{"pipeline", "a"}});
  registry.GetGauge("ferry_lag_messages", "lag", {{"pipeline", "a"}, {"partition", "p0"}})->Set(30);
  registry.GetGauge("ferry_lag_messages", "lag", {{"pipeline", "a"}, {"partition", "p1"}})->Set(12);
  rows->Increment(8);
  // Not a terminal: lines go to the log; Stop() emits the last one with the totals.
  ProgressReporter reporter(&registry, false, std::chrono::milliseconds(10));
  reporter.Start();
  rows->Increment(50);
  reporter.Stop();  // no crash, no hang; the rendering is checked above
}

}  // namespace
}  // namespace ferry::app

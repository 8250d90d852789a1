// ProgressReporter: the progress of `ferry run --until-caught-up`, read from the metrics the
// pipelines set (ferry_rows_written_total, ferry_lag_messages), on its own thread.
//   On a terminal: one line redrawn in place, "[#####.....]  52%  5,200/10,000 rows  1,234 msg/s
//   lag 4,800  ETA 4s".
//   Otherwise: a log line every `interval` ("progress: N rows, X msg/s, lag L").
// The total is the rows written since start plus the current lag (heads move while running).
//
// Thread-safety: Start/Stop from one thread; the registry is read concurrently (it is
// thread-safe).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "ferry/metrics/metrics.h"

namespace ferry::app {

struct ProgressSample {
  int64_t rows = 0;  // rows committed since start
  int64_t lag = 0;   // messages between the committed positions and the heads
  double rate = 0;   // rows per second
};

// The terminal line for `s` (no "\r"); `width`: the bar's cells.
std::string RenderProgressBar(const ProgressSample& s, int width = 30);
// The log line for `s`.
std::string RenderProgressLine(const ProgressSample& s);

class ProgressReporter {
 public:
  ProgressReporter(const metrics::Registry* registry, bool terminal,
                   std::chrono::milliseconds interval);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  void Start();
  // Stops the thread and prints a last line (on a terminal, ends it with a newline).
  void Stop();

 private:
  ProgressSample Sample();
  void Loop();
  void Emit(const ProgressSample& s);

  const metrics::Registry* registry_;
  bool terminal_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point started_;
  double last_rows_ = 0;
  std::chrono::steady_clock::time_point last_time_;
  double rate_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ferry::app

// StatusHistory: the memory behind the status page of `ferry run` (`/` and `/api/status`).
//
// Once a second a thread of its own (Start) takes one sample (Sample): it reads the metrics
// registry -- the pipelines' counters, gauges and histogram totals, which the ingest path updates
// with relaxed atomics as it always does -- and appends one point per series to a fixed ring of
// kPoints (15 minutes):
//   per pipeline:  rows/s and MB/s committed, messages/s taken from the source, the mean batch
//                  duration and commit duration of the batches committed in that second (NaN:
//                  none);
//   per partition: lag in messages and in seconds. A routed pipeline's tables (series with a
//                  `table` label) have rows of their own, keyed "<partition> @ <table>"; its
//                  partition rows are the router's (ferry_routing_resume_position as the
//                  committed position), and its `up` is the router's.
// Rates are counter differences between two samples divided by the time between them. Every ring
// is allocated once, when its series is first seen, and never grows. The ingest path pays nothing
// for the history: no lock, no allocation, no extra work of its own; the sampler costs one scan
// of the registry a second, on its own thread.
//
// Samples are numbered (ticks, from 0). Read() hands the state to a reader under the lock;
// a reader asks for the points after a tick it already has, so a page that polls every second
// gets one new point per series instead of 900.
//
// The table figures come from the journal (metrics/journal.h); the last optimize and checkpoint
// times from a TableProbe (table_probe.h), run on the same thread every kProbeInterval.
//
// Thread-safety: Start/Stop from one thread; Sample and Read are thread-safe.
#pragma once

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ferry/app/status_page/table_probe.h"
#include "ferry/metrics/metrics.h"

namespace ferry::app {

// A pipeline as the configuration names it.
struct StatusPipelineInfo {
  std::string id;
  std::string source;  // "kafka topics events on host:9092", "jetstream stream ORDERS ..."
  std::string table;   // the table's path or URI
};

// A fixed ring of float samples, indexed by tick. Points not sampled are NaN.
class SeriesRing {
 public:
  static constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();
  explicit SeriesRing(size_t capacity) : values_(capacity, kMissing) {}
  void Set(int64_t tick, double value) { values_[Slot(tick)] = static_cast<float>(value); }
  // REQUIRES: `tick` is within the last capacity() ticks sampled.
  float At(int64_t tick) const { return values_[Slot(tick)]; }
  size_t capacity() const { return values_.size(); }

 private:
  size_t Slot(int64_t tick) const { return static_cast<size_t>(tick) % values_.size(); }
  std::vector<float> values_;
};

class StatusHistory {
 public:
  static constexpr size_t kPoints = 900;  // 15 minutes at one sample a second
  static constexpr std::chrono::milliseconds kStep{1000};
  static constexpr std::chrono::seconds kProbeInterval{30};
  // The "now" figures are the mean over this many samples.
  static constexpr int64_t kNowSamples = 10;

  struct PartitionState {
    double committed = NAN;  // NaN: unknown
    double head = NAN;
    double lag_messages = NAN;
    double lag_seconds = NAN;
    double rate_limit_pauses = 0;
    SeriesRing lag_messages_series{kPoints};
    SeriesRing lag_seconds_series{kPoints};
  };
  struct PipelineState {
    StatusPipelineInfo info;
    bool up = false;
    // Counter totals at the last sample.
    double rows = 0, bytes = 0, messages = 0, commits = 0, commits_failed = 0, commits_lost = 0;
    double bad_records = 0, dead_letters = 0, rate_limited_seconds = 0;
    uint64_t batches = 0, commit_count = 0;  // histogram counts
    double batch_seconds_sum = 0, commit_seconds_sum = 0;
    SeriesRing rows_per_s{kPoints};
    SeriesRing mb_per_s{kPoints};
    SeriesRing messages_per_s{kPoints};
    SeriesRing batch_seconds{kPoints};
    SeriesRing commit_seconds{kPoints};
    std::map<std::string, std::unique_ptr<PartitionState>> partitions;  // by partition key
    TableProbe::Times probe;
  };
  struct State {
    int64_t started_ms = 0;
    int64_t next_tick = 0;  // ticks [first_tick(), next_tick) are in the rings
    std::vector<int64_t> tick_ms = std::vector<int64_t>(kPoints, 0);  // wall time of each tick
    std::vector<std::unique_ptr<PipelineState>> pipelines;            // in configuration order

    int64_t first_tick() const {
      return next_tick > static_cast<int64_t>(kPoints) ? next_tick - static_cast<int64_t>(kPoints)
                                                       : 0;
    }
    int64_t TickMillis(int64_t tick) const { return tick_ms[static_cast<size_t>(tick) % kPoints]; }
  };

  // `probe` may be null (no table times: tests).
  StatusHistory(metrics::Registry* registry, std::vector<StatusPipelineInfo> pipelines,
                std::unique_ptr<TableProbe> probe);
  ~StatusHistory();
  StatusHistory(const StatusHistory&) = delete;
  StatusHistory& operator=(const StatusHistory&) = delete;

  // Samples now, then every kStep until Stop().
  void Start();
  void Stop();

  // One sample taken at wall time `now_ms`.
  void Sample(int64_t now_ms);
  // Asks the probe for every pipeline's table times (the thread does it every kProbeInterval).
  void Probe();

  // Calls `reader` with the state, under the lock (keep it short: the sampler waits).
  void Read(const std::function<void(const State&)>& reader) const;

  metrics::Registry* registry() const { return registry_; }

 private:
  void Loop();

  metrics::Registry* registry_;
  std::unique_ptr<TableProbe> probe_;
  mutable std::mutex mu_;
  State state_;
  std::map<std::string, PipelineState*> by_id_;  // into state_.pipelines
  int64_t last_sample_ms_ = 0;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ferry::app

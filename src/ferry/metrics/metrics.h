// Metrics: counters, gauges and histograms with labels, rendered in the Prometheus text format
// (version 0.0.4) for the `/metrics` endpoint of `ferry run`.
//
// Names follow Prometheus conventions: a `ferry_` prefix, base units (`_seconds`, `_bytes`),
// `_total` on counters. A metric is registered once per label set and the returned pointer stays
// valid for the registry's lifetime, so hot paths hold the pointer and pay one atomic add:
//
//   metrics::Counter* rows = registry.GetCounter("ferry_rows_written_total",
//       "Rows committed to the table.", {{"pipeline", "events"}});
//   rows->Increment(batch_rows);
//
// The registry also holds the process's Journal (journal.h): the events the status page lists
// beside the series it samples from here.
//
// Thread-safety: every method is thread-safe. Updates are lock-free; registration and rendering
// take a mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/metrics/journal.h"

namespace ferry::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  // REQUIRES: v >= 0 (a counter never goes down).
  void Increment(double v = 1) { value_.fetch_add(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // REQUIRES: `bounds` strictly increasing (the +Inf bucket is implicit).
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);

  const std::vector<double>& bounds() const { return bounds_; }
  // Non-cumulative count of bucket i (i == bounds().size() is +Inf).
  uint64_t bucket_count(size_t i) const { return counts_[i].load(std::memory_order_relaxed); }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// Bucket bounds for durations in seconds, 1 ms to about 2 minutes.
std::vector<double> DurationBuckets();

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Returns the metric with this name and labels, creating it on first use. A name is bound to
  // one type and help text: asking for it as another type is a bug (FERRY_CHECK).
  Counter* GetCounter(std::string_view name, std::string_view help, const Labels& labels = {});
  Gauge* GetGauge(std::string_view name, std::string_view help, const Labels& labels = {});
  Histogram* GetHistogram(std::string_view name, std::string_view help, const Labels& labels = {},
                          std::vector<double> bounds = DurationBuckets());

  // The Prometheus text exposition of every metric, families sorted by name.
  std::string RenderPrometheus() const;

  // Value of a counter or gauge (0 when absent): for tests and `ferry status`.
  double Value(std::string_view name, const Labels& labels = {}) const;
  // Every label set of a counter or gauge family with its value (empty when absent).
  std::vector<std::pair<Labels, double>> Values(std::string_view name) const;
  struct HistogramTotals {
    Labels labels;
    uint64_t count = 0;
    double sum = 0;
  };
  // Every label set of a histogram family with its count and sum (empty when absent).
  std::vector<HistogramTotals> Histograms(std::string_view name) const;

  Journal* journal() { return &journal_; }

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Family {
    Type type;
    std::string help;
    std::map<Labels, std::unique_ptr<Counter>> counters;
    std::map<Labels, std::unique_ptr<Gauge>> gauges;
    std::map<Labels, std::unique_ptr<Histogram>> histograms;
  };
  Family* GetFamily(std::string_view name, std::string_view help, Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
  Journal journal_;
};

}  // namespace ferry::metrics

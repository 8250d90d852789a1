// SharedBatchBudget: one byte budget for the open batches of several pipelines (the tables of a
// routed pipeline, router.h), so that ten busy tables hold about what one table would, without
// cutting each table's batches to a tenth in advance. Each pipeline reports the bytes of its
// open batch (Report) and asks whether to seal it early (ShouldSeal): once the sum passes the
// limit, every pipeline whose open batch is at least the average of the non-empty ones seals it,
// so the largest go first and small tables keep filling. A pipeline's own max_bytes still
// applies on top.
//
// Thread-safety: thread-safe (atomics); each pipeline reports from its own thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace ferry::pipeline {

class SharedBatchBudget {
 public:
  explicit SharedBatchBudget(int64_t limit) : limit_(limit) {}

  // A pipeline's open batch went from `before` to `after` bytes (0: empty, sealed or dropped).
  void Report(int64_t before, int64_t after) {
    if (before == after) {
      return;
    }
    total_.fetch_add(after - before, std::memory_order_relaxed);
    if (before == 0) {
      open_.fetch_add(1, std::memory_order_relaxed);
    } else if (after == 0) {
      open_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  // True when the open batches together pass the limit and `own` (this pipeline's open batch)
  // is at least their average.
  bool ShouldSeal(int64_t own) const {
    const int64_t total = total_.load(std::memory_order_relaxed);
    const int64_t open = open_.load(std::memory_order_relaxed);
    return own > 0 && total > limit_ && own * std::max<int64_t>(1, open) >= total;
  }
  int64_t limit() const { return limit_; }
  int64_t total() const { return total_.load(std::memory_order_relaxed); }

 private:
  const int64_t limit_;
  std::atomic<int64_t> total_{0};
  std::atomic<int64_t> open_{0};  // pipelines with a non-empty open batch
};

}  // namespace ferry::pipeline

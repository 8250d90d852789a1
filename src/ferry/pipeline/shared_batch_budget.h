// SharedBatchBudget: one byte budget for the open batches of several pipelines (the tables of a
// routed pipeline, router.h), so that ten busy tables hold about what one table would, without
// cutting each table's batches to a tenth in advance. Each pipeline reports the bytes of its
// open batch (Report) and asks whether to seal it early (ShouldSeal): once the sum passes the
// limit, the largest open batch seals, so the tables seal in turn at about twice their share
// (ten tables fed alike: files of about a fifth of the limit, not a tenth) and small tables keep
// filling. A largest batch that cannot seal at once (its pipeline waits for a commit or the
// schema registry) does not hold the others back: past a quarter of the limit more, every batch
// at least the average of the non-empty ones seals too. A pipeline's own max_bytes still applies
// on top.
//
// Thread-safety: thread-safe; each pipeline reports from its own thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>

namespace ferry::pipeline {

class SharedBatchBudget {
 public:
  explicit SharedBatchBudget(int64_t limit) : limit_(limit) {}

  // A pipeline's open batch went from `before` to `after` bytes (0: empty, sealed or dropped).
  void Report(int64_t before, int64_t after) {
    if (before == after) {
      return;
    }
    std::lock_guard lock(mu_);
    total_ += after - before;
    if (before > 0) {
      auto it = sizes_.find(before);
      if (it != sizes_.end()) {
        sizes_.erase(it);
      }
    }
    if (after > 0) {
      sizes_.insert(after);
    }
  }
  // True when the open batches together pass the limit and `own` (this pipeline's open batch)
  // is the largest, or, past a quarter of the limit more, at least their average.
  bool ShouldSeal(int64_t own) const {
    std::lock_guard lock(mu_);
    if (own <= 0 || total_ <= limit_ || sizes_.empty()) {
      return false;
    }
    if (own >= *sizes_.rbegin()) {
      return true;
    }
    return total_ > limit_ + limit_ / 4 && own * static_cast<int64_t>(sizes_.size()) >= total_;
  }
  int64_t limit() const { return limit_; }
  int64_t total() const {
    std::lock_guard lock(mu_);
    return total_;
  }

 private:
  const int64_t limit_;
  mutable std::mutex mu_;
  int64_t total_ = 0;             // mu_
  std::multiset<int64_t> sizes_;  // mu_: the non-empty open batches
};

}  // namespace ferry::pipeline

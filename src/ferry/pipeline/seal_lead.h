// SealLead: how much earlier than `max_latency` a pipeline seals a batch that only the latency
// trigger would seal, so that its rows become visible about `max_latency` after the first of
// them arrived rather than `max_latency` plus the batch's write and commit.
//
// A batch sealed by time waits for its Parquet files, their fsyncs and the log entry before a
// reader sees it. At `max_latency = "100ms"` that path (tens of milliseconds on a local disk,
// more on a shared or loaded machine) is a large share of what a row waits. The lead is the
// median write-and-commit time (SealedBatch::commit_seconds) of the last kWindow committed
// batches, at most half of max_latency so that a slow store never turns the trigger into a
// commit per poll. The row, byte and memory triggers are not changed.
//
// Thread-safety: none; the pipeline thread owns it.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>

namespace ferry::pipeline {

class SealLead {
 public:
  static constexpr size_t kWindow = 16;

  // One committed batch's write-and-commit time. Negative values count as zero.
  void Observe(double commit_seconds);

  // The time after its first row at which the latency trigger seals a batch: max_latency minus
  // the lead (the full max_latency before any batch was committed).
  std::chrono::milliseconds Trigger(std::chrono::milliseconds max_latency) const;

  // The lead alone (zero before any batch was committed).
  std::chrono::milliseconds Lead(std::chrono::milliseconds max_latency) const;

 private:
  std::array<double, kWindow> seconds_{};
  size_t count_ = 0;  // observations so far (the window holds min(count_, kWindow))
};

}  // namespace ferry::pipeline

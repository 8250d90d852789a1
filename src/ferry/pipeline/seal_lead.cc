#include "ferry/pipeline/seal_lead.h"

#include <algorithm>

namespace ferry::pipeline {

void SealLead::Observe(double commit_seconds) {
  seconds_[count_ % kWindow] = std::max(0.0, commit_seconds);
  ++count_;
}

std::chrono::milliseconds SealLead::Lead(std::chrono::milliseconds max_latency) const {
  const size_t n = std::min(count_, kWindow);
  if (n == 0) {
    return std::chrono::milliseconds(0);
  }
  std::array<double, kWindow> window = seconds_;
  auto mid = window.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(window.begin(), mid, window.begin() + static_cast<std::ptrdiff_t>(n));
  auto median = std::chrono::milliseconds(static_cast<int64_t>(*mid * 1000.0));
  return std::min(median, max_latency / 2);
}

std::chrono::milliseconds SealLead::Trigger(std::chrono::milliseconds max_latency) const {
  return max_latency - Lead(max_latency);
}

}  // namespace ferry::pipeline

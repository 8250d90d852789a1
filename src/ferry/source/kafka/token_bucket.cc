#include "ferry/source/kafka/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace ferry::source::kafka {

TokenBucket::TokenBucket(double rate_per_second)
    : rate_(rate_per_second), capacity_(std::max(1.0, rate_per_second)), tokens_(capacity_) {}

void TokenBucket::Refill(int64_t now_us) {
  if (last_us_ < 0 || now_us < last_us_) {
    last_us_ = now_us;
    return;
  }
  tokens_ = std::min(capacity_, tokens_ + static_cast<double>(now_us - last_us_) * rate_ / 1e6);
  last_us_ = now_us;
}

bool TokenBucket::TryTake(int64_t now_us) {
  if (unlimited()) {
    return true;
  }
  Refill(now_us);
  if (tokens_ < 1.0) {
    return false;
  }
  tokens_ -= 1.0;
  return true;
}

int64_t TokenBucket::MicrosUntilToken(int64_t now_us) {
  if (unlimited()) {
    return 0;
  }
  Refill(now_us);
  if (tokens_ >= 1.0) {
    return 0;
  }
  return static_cast<int64_t>(std::ceil((1.0 - tokens_) * 1e6 / rate_));
}

}  // namespace ferry::source::kafka

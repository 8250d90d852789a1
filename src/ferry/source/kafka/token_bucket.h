// TokenBucket: the per-partition rate limit of the Kafka source (like Spark's
// spark.streaming.kafka.maxRatePerPartition): `rate` messages per second, with bursts of up to
// one second's worth (at least one message). Time is passed in, so tests need no clock.
//
// Thread-safety: a value type; one owner.
#pragma once

#include <cstdint>

namespace ferry::source::kafka {

class TokenBucket {
 public:
  // Unlimited.
  TokenBucket() = default;
  // REQUIRES: rate_per_second >= 0; 0 means unlimited.
  explicit TokenBucket(double rate_per_second);

  bool unlimited() const { return rate_ <= 0; }
  // Takes one token if one is available at `now_us` (monotonic microseconds).
  bool TryTake(int64_t now_us);
  // Microseconds from `now_us` until a token is available; 0 if one is available now.
  int64_t MicrosUntilToken(int64_t now_us);

 private:
  void Refill(int64_t now_us);

  double rate_ = 0;      // tokens per second
  double capacity_ = 0;  // the largest burst
  double tokens_ = 0;
  int64_t last_us_ = -1;  // time of the last refill; -1 before the first use
};

}  // namespace ferry::source::kafka

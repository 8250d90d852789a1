// LogThrottle: lets the first of a run of repeated errors through, then one per interval, the
// interval doubling up to a ceiling, so an unreachable broker is reported without flooding the
// log. Reset() when the condition clears. Time is passed in (monotonic microseconds).
//
// Thread-safety: a value type; one owner.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ferry::source::kafka {

class LogThrottle {
 public:
  LogThrottle(int64_t first_interval_us, int64_t max_interval_us)
      : first_us_(first_interval_us), max_us_(max_interval_us), interval_us_(first_interval_us) {}

  // True if this occurrence should be logged; `*suppressed` is how many were swallowed since the
  // last one that was.
  bool Allow(int64_t now_us, int64_t* suppressed) {
    if (next_us_ >= 0 && now_us < next_us_) {
      ++suppressed_;
      return false;
    }
    *suppressed = suppressed_;
    suppressed_ = 0;
    next_us_ = now_us + interval_us_;
    interval_us_ = std::min(max_us_, interval_us_ * 2);
    active_ = true;
    return true;
  }
  // True once something was allowed since the last Reset.
  bool active() const { return active_; }
  void Reset() {
    next_us_ = -1;
    suppressed_ = 0;
    interval_us_ = first_us_;
    active_ = false;
  }

 private:
  int64_t first_us_;
  int64_t max_us_;
  int64_t interval_us_;
  int64_t next_us_ = -1;
  int64_t suppressed_ = 0;
  bool active_ = false;
};

}  // namespace ferry::source::kafka

// StopSignal: how a running pipeline is asked to stop (SIGTERM/SIGINT in `ferry run`, tests).
//
//   RequestDrain(timeout)  finish and commit the open batch, then return; give up on it (still
//                          exactly-once: it is simply not committed) once `timeout` has passed
//   RequestAbort()         return as soon as possible without committing the open batch
//
// Pipelines sleep through WaitFor(), so a stop request wakes every backoff at once.
//
// Thread-safety: every method is thread-safe. The Request* methods take a mutex, so they are not
// async-signal-safe: signal handlers hand the signal to a thread that calls them (run_command).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace ferry::pipeline {

class StopSignal {
 public:
  using Clock = std::chrono::steady_clock;

  void RequestDrain(std::chrono::milliseconds timeout) {
    std::lock_guard lock(mu_);
    if (!draining_) {
      draining_ = true;
      drain_deadline_ = Clock::now() + timeout;
    }
    cv_.notify_all();
  }
  void RequestAbort() {
    std::lock_guard lock(mu_);
    aborting_ = true;
    cv_.notify_all();
  }

  // A stop of either kind was requested.
  bool stopping() const {
    std::lock_guard lock(mu_);
    return draining_ || aborting_;
  }
  // The open batch must be given up: an abort, or a drain past its deadline.
  bool abandon() const {
    std::lock_guard lock(mu_);
    return aborting_ || (draining_ && Clock::now() >= drain_deadline_);
  }

  // Sleeps up to `duration`; returns early (true) when a stop is requested.
  bool WaitFor(std::chrono::milliseconds duration) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, duration, [this] { return draining_ || aborting_; });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool draining_ = false;
  bool aborting_ = false;
  Clock::time_point drain_deadline_;
};

}  // namespace ferry::pipeline

#include "ferry/delta/checkpointer.h"

#include <algorithm>
#include <utility>

#include "ferry/base/clock.h"
#include "ferry/base/failpoint.h"
#include "ferry/base/log.h"
#include "ferry/delta/checkpoint_writer.h"
#include "ferry/delta/log_cleanup.h"
#include "ferry/delta/table.h"

namespace ferry::delta {

namespace {

std::optional<int64_t> Newer(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a) {
    return b;
  }
  if (!b) {
    return a;
  }
  return std::max(*a, *b);
}

}  // namespace

bool CheckpointDue(int64_t version, int64_t interval, std::optional<int64_t> newest) {
  if (interval <= 0) {
    return false;
  }
  int64_t due = version - version % interval;
  return due > 0 && (!newest.has_value() || *newest < due);
}

int64_t CheckpointInterval(const Snapshot& snapshot) {
  auto properties = snapshot.properties();
  return properties.ok() ? properties->checkpoint_interval : 10;
}

CheckpointOutcome WriteCheckpointAndCleanUp(const Table& table, const Snapshot& snapshot) {
  CheckpointOutcome outcome;
  outcome.version = snapshot.version();
  outcome.status = FERRY_FAILPOINT("delta.commit.before_checkpoint");
  int64_t start = MonotonicMicros();
  if (outcome.status.ok()) {
    outcome.status = WriteCheckpoint(table, snapshot);
  }
  outcome.micros = MonotonicMicros() - start;
  outcome.wall_ms = WallMillis();
  if (outcome.status.ok()) {
    // Metadata cleanup (log_cleanup.h) after each checkpoint; best effort.
    auto cleanup = CleanupLog(table, snapshot, outcome.wall_ms);
    if (!cleanup.ok()) {
      FERRY_LOG_WARN("log cleanup of {} after checkpoint {} failed: {}", table.Describe(),
                     outcome.version, cleanup.status().ToString());
    }
  }
  return outcome;
}

BackgroundCheckpointer::BackgroundCheckpointer(const Table& table)
    : table_(table), thread_([this] { Run(); }) {}

BackgroundCheckpointer::~BackgroundCheckpointer() {
  Stop();
}

bool BackgroundCheckpointer::DueLocked(const Snapshot& snapshot) const {
  return CheckpointDue(snapshot.version(), CheckpointInterval(snapshot), newest_);
}

void BackgroundCheckpointer::RecordLocked(CheckpointOutcome outcome) {
  if (outcome.status.ok()) {
    newest_ = Newer(newest_, outcome.version);
  }
  last_failed_ = !outcome.status.ok();
  done_.push_back(std::move(outcome));
}

void BackgroundCheckpointer::Offer(const Snapshot& snapshot) {
  std::lock_guard lock(mu_);
  newest_ = Newer(newest_, snapshot.newest_checkpoint_version());
  if (stop_ || running_ || !DueLocked(snapshot)) {
    return;
  }
  job_ = snapshot;
  running_ = true;
  cv_.notify_all();
}

std::vector<CheckpointOutcome> BackgroundCheckpointer::TakeFinished() {
  std::lock_guard lock(mu_);
  return std::exchange(done_, {});
}

std::optional<int64_t> BackgroundCheckpointer::newest() const {
  std::lock_guard lock(mu_);
  return newest_;
}

void BackgroundCheckpointer::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || job_.has_value(); });
    if (!job_.has_value()) {
      return;  // stopped, nothing left to write
    }
    Snapshot snapshot = std::move(*job_);
    job_.reset();
    lock.unlock();
    CheckpointOutcome outcome = WriteCheckpointAndCleanUp(table_, snapshot);
    snapshot = Snapshot();  // the writer's next commit need not copy the state again
    lock.lock();
    RecordLocked(std::move(outcome));
    running_ = false;
    cv_.notify_all();
  }
}

void BackgroundCheckpointer::Stop() {
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return !running_; });
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

void BackgroundCheckpointer::Finish(const Snapshot* last) {
  Stop();
  if (last == nullptr) {
    return;
  }
  {
    std::lock_guard lock(mu_);
    newest_ = Newer(newest_, last->newest_checkpoint_version());
    // After a failure the store may be down: a stopping pipeline does not wait for its retries
    // again (the next commit to the table writes the checkpoint).
    if (last->version() < 0 || last_failed_ || !DueLocked(*last)) {
      return;
    }
  }
  CheckpointOutcome outcome = WriteCheckpointAndCleanUp(table_, *last);
  std::lock_guard lock(mu_);
  RecordLocked(std::move(outcome));
}

}  // namespace ferry::delta

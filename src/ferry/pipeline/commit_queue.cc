#include "ferry/pipeline/commit_queue.h"

#include <utility>

#include "ferry/base/check.h"

namespace ferry::pipeline {

CommitQueue::CommitQueue(size_t max_in_flight)
    : max_in_flight_(max_in_flight), thread_([this] { Loop(); }) {
  FERRY_CHECK(max_in_flight >= 1);
}

CommitQueue::~CommitQueue() {
  {
    std::lock_guard lock(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void CommitQueue::Submit(Job job) {
  {
    std::lock_guard lock(mu_);
    FERRY_CHECK(entries_.size() < max_in_flight_);
    entries_.push_back(Entry{.job = std::move(job), .status = Status::OK()});
  }
  cv_.notify_all();
}

void CommitQueue::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return shutdown_ || done_ < entries_.size(); });
    if (shutdown_) {
      return;
    }
    // References into a deque survive push_back and pop_front of other elements, and an entry
    // is popped only once it is done.
    Entry& entry = entries_[done_];
    Job job = std::move(entry.job);
    if (failed_) {
      entry.status = Cancelled("not run: an earlier batch of this pipeline failed");
    } else {
      lock.unlock();
      Status status = job();
      job = nullptr;  // what the job captured is released on this thread
      lock.lock();
      entry.status = std::move(status);
      failed_ = !entry.status.ok();
    }
    ++done_;
    cv_.notify_all();
  }
}

Status CommitQueue::PopFront() {
  Status status = std::move(entries_.front().status);
  entries_.pop_front();
  --done_;
  if (entries_.empty()) {
    failed_ = false;
  }
  return status;
}

Status CommitQueue::Take() {
  std::unique_lock lock(mu_);
  FERRY_CHECK(!entries_.empty());
  cv_.wait(lock, [this] { return done_ > 0; });
  return PopFront();
}

std::optional<Status> CommitQueue::TryTake() {
  std::lock_guard lock(mu_);
  if (done_ == 0) {
    return std::nullopt;
  }
  return PopFront();
}

void CommitQueue::WaitIdle() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return done_ == entries_.size(); });
}

size_t CommitQueue::in_flight() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace ferry::pipeline

// CommitQueue: the writer thread of a pipeline. The pipeline thread seals a batch and submits the
// work that writes its Parquet files and commits them (a Job; the pipeline's call
// BatchCommitter::Commit); the queue runs the jobs on its own thread while the pipeline thread
// polls and decodes the next batch, and hands the outcomes back in submission order for what must
// happen on the pipeline thread (acks, positions, metrics).
//
//   CommitQueue queue(/*max_in_flight=*/1);
//   if (queue.full()) { Handle(queue.Take()); }   // waits for the oldest batch's outcome
//   queue.Submit([&committer, batch, stop] { return committer.Commit(batch, stop); });
//   while (auto done = queue.TryTake()) { Handle(*done); }
//
// Invariants (the pipeline's exactly-once argument rests on them; commit_queue_test.cc checks
// each):
//   1. Order: jobs run one at a time, in submission order; job N+1 starts only after job N has
//      returned. Delta commits are therefore made strictly in batch order.
//   2. Bounded: at most max_in_flight jobs are submitted and not yet taken back (Submit requires
//      room; Take makes it). Memory is the open batch plus max_in_flight sealed ones.
//   3. Stop on failure: a job that returns an error stops the queue. The jobs behind it do not
//      run (they were built on the failed batch's positions) and come back as Cancelled. The queue
//      runs jobs again once every outcome has been taken back.
//   4. Hand-back: outcomes are taken in submission order, and an outcome is visible only after its
//      job has returned, so everything the job wrote happens-before Take()/TryTake() returns it.
//   5. Idle: WaitIdle() returns when no job is running or waiting to run; until the next Submit
//      the pipeline thread may use what the jobs use (table, snapshot, dedup index).
//
// A job is never interrupted: it must watch the pipeline's StopSignal itself. The destructor
// waits for the running job and drops the jobs that have not started.
//
// Thread-safety: Submit, Take, TryTake, WaitIdle, full and in_flight are called from one thread
// (the pipeline's); jobs run on the queue's thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "ferry/base/status.h"

namespace ferry::pipeline {

class CommitQueue {
 public:
  using Job = std::function<Status()>;

  // REQUIRES: max_in_flight >= 1.
  explicit CommitQueue(size_t max_in_flight);
  ~CommitQueue();
  CommitQueue(const CommitQueue&) = delete;
  CommitQueue& operator=(const CommitQueue&) = delete;

  // REQUIRES: !full().
  void Submit(Job job);
  // The oldest outcome, waiting for its job to return. REQUIRES: in_flight() > 0.
  Status Take();
  // The oldest outcome if its job has returned; nullopt otherwise (or when nothing is in flight).
  std::optional<Status> TryTake();
  // Waits until no job is running or waiting to run (outcomes may wait to be taken).
  void WaitIdle();

  size_t in_flight() const;
  bool full() const { return in_flight() >= max_in_flight_; }
  size_t max_in_flight() const { return max_in_flight_; }

 private:
  struct Entry {
    Job job;
    Status status;
  };
  void Loop();
  Status PopFront();

  const size_t max_in_flight_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Submitted and not taken back, oldest first; the first `done_` have returned (invariant 1
  // makes the finished ones a prefix).
  std::deque<Entry> entries_;
  size_t done_ = 0;
  bool failed_ = false;  // a job failed: skip the rest until everything is taken back
  bool shutdown_ = false;
  // Last member: the thread starts after the state it uses is built, and the destructor joins
  // it before that state is destroyed.
  std::thread thread_;
};

}  // namespace ferry::pipeline

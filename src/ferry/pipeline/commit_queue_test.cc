#include "ferry/pipeline/commit_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

namespace ferry::pipeline {
namespace {

// A gate a job waits on, so a test decides when each job returns.
class Gate {
 public:
  void Open() { promise_.set_value(); }
  void Wait() { future_.wait(); }

 private:
  std::promise<void> promise_;
  std::shared_future<void> future_ = promise_.get_future().share();
};

TEST(CommitQueueTest, JobsRunOneAtATimeInSubmissionOrder) {
  CommitQueue queue(3);
  std::mutex mu;
  std::vector<int> started;
  std::vector<int> finished;
  std::atomic<int> running = 0;
  std::atomic<int> max_running = 0;
  Gate gate;
  for (int i = 0; i < 3; ++i) {
    queue.Submit([&, i] {
      int now = ++running;
      max_running = std::max(max_running.load(), now);
      {
        std::lock_guard lock(mu);
        started.push_back(i);
      }
      if (i == 0) {
        gate.Wait();  // job 1 must not start while job 0 has not returned
      }
      {
        std::lock_guard lock(mu);
        finished.push_back(i);
      }
      --running;
      return Status::OK();
    });
  }
  EXPECT_TRUE(queue.full());
  gate.Open();
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(queue.Take().ok());
  }
  EXPECT_EQ(started, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(finished, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(max_running.load(), 1);
  EXPECT_EQ(queue.in_flight(), 0u);
}

TEST(CommitQueueTest, InFlightCountsUntilTheOutcomeIsTakenBack) {
  CommitQueue queue(1);
  EXPECT_FALSE(queue.full());
  queue.Submit([] { return Status::OK(); });
  queue.WaitIdle();
  // The job has returned, but its outcome (the batch's acks) is still the pipeline's to handle:
  // the slot stays taken, so a second sealed batch cannot pile up behind it.
  EXPECT_TRUE(queue.full());
  EXPECT_EQ(queue.in_flight(), 1u);
  std::optional<Status> done = queue.TryTake();
  ASSERT_TRUE(done.has_value());
  EXPECT_TRUE(done->ok());
  EXPECT_FALSE(queue.full());
  EXPECT_FALSE(queue.TryTake().has_value());
}

TEST(CommitQueueTest, TryTakeSeesAnOutcomeOnlyAfterItsJobReturned) {
  CommitQueue queue(1);
  Gate gate;
  int written = 0;  // written by the job, read after Take: invariant 4 orders the two
  queue.Submit([&] {
    gate.Wait();
    written = 42;
    return Status::OK();
  });
  EXPECT_FALSE(queue.TryTake().has_value());
  gate.Open();
  EXPECT_TRUE(queue.Take().ok());
  EXPECT_EQ(written, 42);
}

TEST(CommitQueueTest, AFailedJobStopsTheJobsBehindItUntilAllAreTakenBack) {
  CommitQueue queue(3);
  std::atomic<int> ran = 0;
  Gate gate;
  queue.Submit([&] {
    gate.Wait();
    ++ran;
    return Aborted("lost to another writer");
  });
  queue.Submit([&] {
    ++ran;
    return Status::OK();
  });
  queue.Submit([&] {
    ++ran;
    return Status::OK();
  });
  gate.Open();
  EXPECT_EQ(queue.Take().code(), StatusCode::kAborted);
  EXPECT_EQ(queue.Take().code(), StatusCode::kCancelled);
  EXPECT_EQ(queue.Take().code(), StatusCode::kCancelled);
  EXPECT_EQ(ran.load(), 1);
  // Everything taken back: the queue runs jobs again (the pipeline fenced and goes on).
  queue.Submit([&] {
    ++ran;
    return Status::OK();
  });
  EXPECT_TRUE(queue.Take().ok());
  EXPECT_EQ(ran.load(), 2);
}

TEST(CommitQueueTest, WaitIdleWaitsForTheRunningAndQueuedJobs) {
  CommitQueue queue(2);
  std::atomic<int> ran = 0;
  Gate gate;
  queue.Submit([&] {
    gate.Wait();
    ++ran;
    return Status::OK();
  });
  queue.Submit([&] {
    ++ran;
    return Status::OK();
  });
  std::thread opener([&] { gate.Open(); });
  queue.WaitIdle();
  EXPECT_EQ(ran.load(), 2);
  opener.join();
  EXPECT_EQ(queue.in_flight(), 2u);
  EXPECT_TRUE(queue.Take().ok());
  EXPECT_TRUE(queue.Take().ok());
}

TEST(CommitQueueTest, DestructionWaitsForTheRunningJob) {
  std::atomic<bool> started = false;
  std::atomic<bool> finished = false;
  Gate gate;
  std::thread opener;
  {
    CommitQueue queue(1);
    queue.Submit([&] {
      started = true;
      gate.Wait();
      finished = true;
      return Status::OK();
    });
    while (!started) {
      std::this_thread::yield();
    }
    opener = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      gate.Open();
    });
  }
  // A job is never cut short: the commit it was making is whole when the queue is gone.
  EXPECT_TRUE(finished.load());
  opener.join();
}

}  // namespace
}  // namespace ferry::pipeline

// The pipeline and its source: an unreachable broker, redeliveries, revoked partitions, and a
// start that fails.

#include <gtest/gtest.h>

#include "ferry/testing/pipeline_fixture.h"

namespace ferry::pipeline {
namespace {

// A one-shot run against a broker it never reaches gives up after max_wait and says why
// (issue 16: `ferry run --until-caught-up --max-wait`); one that reaches it is not cut short.
TEST_F(PipelineTest, UntilCaughtUpGivesUpAfterMaxWaitWithoutContact) {
  Broker unreachable{.partitions = 2, .per_partition = 5, .assign_at_start = false};
  auto p =
      Make(&unreachable, {.until_caught_up = true, .max_wait = std::chrono::milliseconds(300)});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  Status st = (*p)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("no contact with the broker"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("0 partition(s) assigned"), std::string::npos) << st.message();

  Broker reachable{.partitions = 2, .per_partition = 50};
  auto q =
      Make(&reachable,
           {.max_rows = 10, .until_caught_up = true, .max_wait = std::chrono::milliseconds(5000)});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE((*q)->Run(&stop).ok());
  EXPECT_EQ(Ids(), Expected(2, 50));
}

TEST_F(PipelineTest, RedeliveriesAreDropped) {
  Broker broker{.partitions = 1, .per_partition = 50};
  {
    auto p = Make(&broker, {.until_caught_up = true});
    ASSERT_TRUE(p.ok());
    StopSignal stop;
    ASSERT_TRUE((*p)->Run(&stop).ok());
  }
  broker.per_partition = 60;
  auto p = Make(&broker, {.max_latency = std::chrono::hours(1)});
  ASSERT_TRUE(p.ok());
  StopSignal stop;
  const double before = Metric("ferry_messages_received_total");  // 50 from the first run
  std::thread run([&] { EXPECT_TRUE((*p)->Run(&stop).ok()); });
  while (Metric("ferry_messages_received_total") < before + 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  broker.latest.load()->Redeliver(0, 40);  // the broker sends 40..59 again
  while (Metric("ferry_redeliveries_dropped_total") < 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop.RequestDrain(std::chrono::seconds(30));
  run.join();
  EXPECT_EQ(Ids(), Expected(1, 60));
  EXPECT_EQ(Metric("ferry_redeliveries_dropped_total"), 20);
}

TEST_F(PipelineTest, ARevokedPartitionLeavesTheOpenBatch) {
  Broker broker{.partitions = 2, .per_partition = 10};
  auto p = Make(&broker, {.max_latency = std::chrono::hours(1)});
  ASSERT_TRUE(p.ok());
  StopSignal stop;
  std::thread run([&] { EXPECT_TRUE((*p)->Run(&stop).ok()); });
  while (Metric("ferry_messages_received_total") < 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  broker.latest.load()->Revoke(0);
  // The revoke is applied inside the next poll; the drain must come after it.
  WaitUntil([&] { return !broker.latest.load()->events_pending(); });
  stop.RequestDrain(std::chrono::seconds(30));
  run.join();
  std::vector<int64_t> ids = Ids();
  ASSERT_EQ(ids.size(), 10u);
  EXPECT_EQ(ids.front(), 1'000'000);
  delta::Snapshot snap = Latest();
  EXPECT_EQ(snap.position("events/kafka/events/0"), std::nullopt);
  EXPECT_EQ(snap.position("events/kafka/events/1"), 9);
}

// A source whose Start fails (Unavailable, as JetStream's does when the table's store cannot be
// read for a partition's position) the first `failures` times.
class FailingStartSource final : public source::Source {
 public:
  FailingStartSource(std::unique_ptr<source::Source> inner, std::atomic<int>* failures)
      : inner_(std::move(inner)), failures_(failures) {}
  Status Start(source::PartitionListener* l) override {
    if (failures_->fetch_sub(1) > 0) {
      return Unavailable("list s3://lake/events/_delta_log/: gave up after 4 attempts");
    }
    return inner_->Start(l);
  }
  Status Poll(size_t max, std::chrono::milliseconds timeout,
              std::vector<source::Message>* out) override {
    return inner_->Poll(max, timeout, out);
  }
  void Acknowledge(std::span<const source::CommittedPosition> p) override {
    inner_->Acknowledge(p);
  }
  Result<std::vector<source::PartitionHead>> Heads() override { return inner_->Heads(); }
  Status Close() override { return inner_->Close(); }

 private:
  std::unique_ptr<source::Source> inner_;
  std::atomic<int>* failures_;
};

// A start that finds the store or the broker unreachable is retried with backoff, as a poll is
// (the JetStream torture test's store faults hit it); a stop while it retries ends the run.
TEST_F(PipelineTest, AnUnreachableStartIsRetried) {
  std::atomic<int> failures = 3;
  wrap_source_ = [&](SourceFactory inner) -> SourceFactory {
    return [&failures, inner]() -> Result<std::unique_ptr<source::Source>> {
      FERRY_ASSIGN_OR_RETURN(auto s, inner());
      return std::unique_ptr<source::Source>(
          std::make_unique<FailingStartSource>(std::move(s), &failures));
    };
  };
  Broker broker{.partitions = 2, .per_partition = 20};
  auto p =
      Make(&broker, {.initial_backoff = std::chrono::milliseconds(5), .until_caught_up = true});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  Status st = (*p)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Ids(), Expected(2, 20));
  EXPECT_EQ(Metric("ferry_source_unavailable_total"), 3);

  // Never reachable: a stop ends the retries, OK with nothing read.
  failures = 1 << 30;
  Broker more{.partitions = 1, .per_partition = 5};
  auto q = Make(&more, {.initial_backoff = std::chrono::milliseconds(5)});
  ASSERT_TRUE(q.ok());
  Status result;
  std::thread run([&] { result = (*q)->Run(&stop); });
  WaitUntil([&] { return Metric("ferry_source_unavailable_total") >= 6; });
  stop.RequestDrain(std::chrono::milliseconds(1000));
  run.join();
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(Ids(), Expected(2, 20));
}

TEST_F(PipelineTest, ARevokeWaitsForTheBatchInFlightThatHoldsThePartition) {
  Broker broker{.partitions = 2, .per_partition = 10};
  // Held: both partitions' 20 rows, sealed.
  auto run = StartHeld(&broker, {.max_rows = 20, .max_latency = std::chrono::hours(1)});
  ASSERT_NE(run, nullptr);
  broker.latest.load()->Revoke(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the revoke waits inside Poll
  run->gated->Open();
  run->stop.RequestDrain(std::chrono::seconds(30));
  run->thread.join();
  ASSERT_TRUE(run->result.ok()) << run->result.ToString();
  // The sealed rows of the revoked partition were committed before it was given up.
  EXPECT_EQ(Ids(), Expected(2, 10));
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 9);
  EXPECT_EQ(Latest().position("events/kafka/events/1"), 9);
}

// A source whose first `unanswered` head queries get no answer from the broker (positions
// unknown: a Kafka ListOffsets that timed out right after an assignment) and which delivers one
// message per poll.
class UnansweredHeadsSource final : public source::Source {
 public:
  UnansweredHeadsSource(std::unique_ptr<source::Source> inner, std::atomic<int>* unanswered)
      : inner_(std::move(inner)), unanswered_(unanswered) {}
  Status Start(source::PartitionListener* l) override { return inner_->Start(l); }
  Status Poll(size_t, std::chrono::milliseconds timeout,
              std::vector<source::Message>* out) override {
    return inner_->Poll(1, timeout, out);
  }
  void Acknowledge(std::span<const source::CommittedPosition> p) override {
    inner_->Acknowledge(p);
  }
  Result<std::vector<source::PartitionHead>> Heads() override {
    FERRY_ASSIGN_OR_RETURN(std::vector<source::PartitionHead> heads, inner_->Heads());
    if (unanswered_->fetch_sub(1) > 0) {
      for (source::PartitionHead& h : heads) {
        h.first_position.reset();
        h.last_position.reset();
      }
    }
    return heads;
  }
  Status Close() override { return inner_->Close(); }

 private:
  std::unique_ptr<source::Source> inner_;
  std::atomic<int>* unanswered_;
};

// A head the broker did not answer is unknown, not an empty partition: --until-caught-up reads
// on and asks again (it once took the unanswered partitions as caught up and ended with their
// messages unread: 9,996 of 10,000 ids in the real-broker kill test).
TEST_F(PipelineTest, UntilCaughtUpDoesNotTakeAnUnansweredHeadForAnEmptyPartition) {
  std::atomic<int> unanswered = 2;
  wrap_source_ = [&](SourceFactory inner) -> SourceFactory {
    return [&unanswered, inner]() -> Result<std::unique_ptr<source::Source>> {
      FERRY_ASSIGN_OR_RETURN(auto s, inner());
      return std::unique_ptr<source::Source>(
          std::make_unique<UnansweredHeadsSource>(std::move(s), &unanswered));
    };
  };
  Broker broker{.partitions = 2, .per_partition = 20};
  auto p = Make(&broker, {.until_caught_up = true});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  Status st = (*p)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_LE(unanswered.load(), 0);  // the unanswered queries were made
  EXPECT_EQ(Ids(), Expected(2, 20));
}

}  // namespace
}  // namespace ferry::pipeline

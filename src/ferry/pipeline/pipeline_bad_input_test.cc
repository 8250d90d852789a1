// Bad input and the decoder: a bad message that stops the pipeline, skipped and dead-lettered
// records, and a registry outage that holds messages.

#include <gtest/gtest.h>

#include "ferry/testing/pipeline_fixture.h"

namespace ferry::pipeline {
namespace {

TEST_F(PipelineTest, ABadMessageStopsThePipelineNamingItsPosition) {
  Broker broker{.partitions = 1, .per_partition = 20};
  broker.overrides[{0, 10}] = R"({"id": "not a number", "payload": 1})";
  auto p = Make(&broker, {.until_caught_up = true});
  ASSERT_TRUE(p.ok());
  StopSignal stop;
  Status st = (*p)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("topic events partition 0 offset 10"), std::string::npos)
      << st.ToString();
  // The rows before it are committed, nothing after it.
  EXPECT_EQ(Ids(), Expected(1, 10));
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 9);
}

TEST_F(PipelineTest, SkippedBadRecordsAreCountedAndConsumed) {
  Broker broker{.partitions = 1, .per_partition = 20};
  broker.overrides[{0, 5}] = "{not json";
  broker.overrides[{0, 19}] = R"({"id": 99999999999999999999})";  // overflows BIGINT
  auto p = Make(&broker, {.on_bad_record = OnBadRecord::kSkip, .until_caught_up = true});
  ASSERT_TRUE(p.ok());
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());
  EXPECT_EQ(Ids().size(), 18u);
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 19);
  EXPECT_EQ(Metric("ferry_bad_records_total",
                   {{"pipeline", "events"}, {"action", "skipped"}, {"reason", "malformed"}}),
            1);
  EXPECT_EQ(Metric("ferry_bad_records_total",
                   {{"pipeline", "events"}, {"action", "skipped"}, {"reason", "overflow"}}),
            1);
}

// A decoder whose schema registry is down for messages with an id from `from` on: Unavailable,
// as the Avro decoder answers when it cannot fetch a writer schema, with nothing appended.
class RegistryOutageDecoder final : public transform::Decoder {
 public:
  RegistryOutageDecoder(std::unique_ptr<transform::Decoder> inner, int64_t from,
                        std::atomic<bool>* down)
      : inner_(std::move(inner)), from_(from), down_(down) {}
  const std::vector<int>& output_columns() const override { return inner_->output_columns(); }
  Status Append(std::string_view payload, columnar::RecordBatch* batch) override {
    int64_t id = std::stoll(std::string(payload.substr(payload.find(':') + 1)));
    if (id >= from_ && down_->load()) {
      return Unavailable("schema registry http://registry:8081: connection refused");
    }
    return inner_->Append(payload, batch);
  }

 private:
  std::unique_ptr<transform::Decoder> inner_;
  int64_t from_;
  std::atomic<bool>* down_;
};

// An unreachable schema registry is not bad input (issue 20): the messages wait, the rows before
// them are committed, the journal says so, and once it answers every message is written once.
TEST_F(PipelineTest, ARegistryOutageHoldsMessagesAndSkipsNone) {
  std::atomic<bool> down = true;
  wrap_decoder_ = [&](std::unique_ptr<transform::Decoder> inner) {
    return std::make_unique<RegistryOutageDecoder>(std::move(inner), 10, &down);
  };
  Broker broker{.partitions = 1, .per_partition = 30};
  auto p = Make(&broker, {.max_latency = std::chrono::milliseconds(20),
                          .on_bad_record = OnBadRecord::kSkip,
                          .initial_backoff = std::chrono::milliseconds(5),
                          .max_backoff = std::chrono::milliseconds(40),
                          .until_caught_up = true});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  Status result;
  std::thread run([&] { result = (*p)->Run(&stop); });
  WaitUntil([&] { return Metric("ferry_decode_unavailable_total") >= 5; });
  // The ten messages before the outage are committed while the rest wait.
  WaitUntil([&] { return Metric("ferry_rows_written_total") == 10; });
  EXPECT_EQ(registry_.journal()->Read().at({"events"}).state,
            metrics::PipelineState::kWaitingForRegistry);
  EXPECT_NE(registry_.journal()->Read().at({"events"}).error.find("connection refused"),
            std::string::npos);
  down = false;
  run.join();
  ASSERT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(Ids(), Expected(1, 30));
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 29);
  EXPECT_EQ(Metric("ferry_bad_records_total",
                   {{"pipeline", "events"}, {"action", "skipped"}, {"reason", "other"}}),
            0);

  // A one-shot run gives up after max_wait, naming the registry; what was read is committed.
  down = true;
  Broker more{.partitions = 1, .per_partition = 40};
  auto q = Make(&more, {.max_latency = std::chrono::milliseconds(20),
                        .initial_backoff = std::chrono::milliseconds(5),
                        .max_backoff = std::chrono::milliseconds(40),
                        .until_caught_up = true,
                        .max_wait = std::chrono::milliseconds(300)});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  Status st = (*q)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("schema registry did not answer"), std::string::npos) << st.message();
  EXPECT_EQ(Ids(), Expected(1, 30));  // 30..39 wait for the registry: none is written or skipped
}

TEST_F(PipelineTest, DeadLettersExactlyOnceAcrossACrashBetweenTheTwoCommits) {
  Broker broker{.partitions = 2, .per_partition = 30};
  broker.overrides[{0, 3}] = "{not json";
  broker.overrides[{1, 7}] = R"({"id": "seven"})";
  broker.overrides[{1, 29}] = R"({"payload": "no id"})";   // a missing NOT NULL field
  broker.overrides[{1, 11}] = std::string(10 << 20, 'x');  // 10 MiB of garbage
  {
    // The main commit keeps failing after the dead letters are committed; then the process
    // "dies" (abort): the dead-letter table holds them, the table does not.
    failpoint::DisarmAll();
    ASSERT_TRUE(failpoint::Arm("pipeline.before_commit", "error(EIO)").ok());
    auto p = Make(&broker, {.on_bad_record = OnBadRecord::kDeadLetter,
                            .initial_backoff = std::chrono::milliseconds(5)});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    StopSignal stop;
    std::thread run([&] { (void)(*p)->Run(&stop); });
    while (failpoint::HitCount("pipeline.before_commit") < 3) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    stop.RequestAbort();
    run.join();
    failpoint::DisarmAll();
    EXPECT_GE(DeadRows().size(), 1u);
    EXPECT_EQ(Latest().position("events/kafka/events/0"), std::nullopt);
  }
  // The restart reads everything again: the bad records already dead-lettered are not repeated.
  auto p = Make(&broker, {.on_bad_record = OnBadRecord::kDeadLetter, .until_caught_up = true});
  ASSERT_TRUE(p.ok());
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());
  std::vector<std::string> dead = DeadRows();
  ASSERT_EQ(dead.size(), 4u);
  EXPECT_NE(dead[0].find("source_partition=kafka/events/0|position=3|"), std::string::npos)
      << dead[0];
  EXPECT_NE(dead[0].find("error="), std::string::npos);
  EXPECT_EQ(Ids().size(), 56u);  // good + dead-letter = published
  EXPECT_EQ(Latest().position("events/kafka/events/1"), 29);
}

}  // namespace
}  // namespace ferry::pipeline

// The pipeline end to end over a fake broker: every message once, with its position in the same
// commit, across restarts, aborts, storage faults, a second writer and batches in flight.

#include <gtest/gtest.h>

#include "ferry/testing/pipeline_fixture.h"

namespace ferry::pipeline {
namespace {

TEST_F(PipelineTest, EveryMessageOnceWithItsPositionInTheSameCommit) {
  Broker broker{.partitions = 3, .per_partition = 100};
  auto p = Make(&broker, {.max_rows = 40, .until_caught_up = true});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());

  EXPECT_EQ(Ids(), Expected(3, 100));
  delta::Snapshot snap = Latest();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(snap.position(fmt::format("events/kafka/events/{}", i)), 99);
  }
  EXPECT_EQ(Metric("ferry_rows_written_total"), 300);
  // Acks come after commits and name the committed positions.
  std::map<int32_t, int64_t> acked;
  for (const auto& a : broker.latest.load()->acknowledged()) {
    acked[a.partition] = std::max(acked[a.partition], a.position);
  }
  EXPECT_EQ(acked, (std::map<int32_t, int64_t>{{0, 99}, {1, 99}, {2, 99}}));
  // No commit holds more than max_rows rows.
  EXPECT_GE(snap.version(), 8);
}

TEST_F(PipelineTest, MetadataColumnsHoldOffsetPartitionAndKey) {
  Broker broker{.partitions = 2, .per_partition = 3};
  auto p = Make(&broker, {.until_caught_up = true});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());
  auto table = delta::Table::Open(store_, "events");
  auto rows = testing::ReadTableRows(**table, Latest());
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 6u);
  std::set<std::string> set(rows->begin(), rows->end());
  EXPECT_EQ(set.count("id=0|payload=test #0|_key=k0|_offset=0|_partition=0"), 1u);
  EXPECT_EQ(set.count("id=1000002|payload=test #1000002|_key=k2|_offset=2|_partition=1"), 1u);
}

TEST_F(PipelineTest, RestartResumesAfterTheTablePosition) {
  Broker broker{.partitions = 2, .per_partition = 50};
  {
    auto p = Make(&broker, {.max_rows = 30, .until_caught_up = true});
    ASSERT_TRUE(p.ok());
    StopSignal stop;
    ASSERT_TRUE((*p)->Run(&stop).ok());
  }
  broker.per_partition = 80;  // the producers went on
  auto p = Make(&broker, {.max_rows = 30, .until_caught_up = true});
  ASSERT_TRUE(p.ok());
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());
  EXPECT_EQ(Ids(), Expected(2, 80));
  EXPECT_EQ(Metric("ferry_redeliveries_dropped_total"), 0);
}

TEST_F(PipelineTest, AnAbortDoesNotCommitTheOpenBatch) {
  Broker broker{.partitions = 1, .per_partition = 10};
  auto p = Make(&broker, {.max_latency = std::chrono::hours(1)});
  ASSERT_TRUE(p.ok());
  StopSignal stop;
  Status result;
  std::thread run([&] { result = (*p)->Run(&stop); });
  while (Metric("ferry_messages_received_total") < 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop.RequestAbort();
  run.join();
  EXPECT_EQ(result.code(), StatusCode::kCancelled);
  EXPECT_TRUE(Ids().empty());
  EXPECT_EQ(Latest().position("events/kafka/events/0"), std::nullopt);
}

TEST_F(PipelineTest, StorageErrorsAreRetriedWithoutDuplicates) {
  auto faulty = std::make_shared<FaultInjectingStore>(store_);
  using Op = FaultInjectingStore::Op;
  using When = FaultInjectingStore::When;
  Broker broker{.partitions = 2, .per_partition = 30};
  auto p = Make(
      &broker,
      {.max_rows = 20, .initial_backoff = std::chrono::milliseconds(1), .until_caught_up = true},
      faulty);
  ASSERT_TRUE(p.ok());
  // A data file that fails to publish, a commit that fails before it is written, and one that
  // is written but reported failed (an unknown outcome).
  faulty->InjectError(Op::kAtomicClose, When::kBefore, IOError("injected EIO"), 1);
  faulty->InjectError(Op::kPutIfAbsent, When::kBefore, IOError("injected EIO"), 2);
  faulty->InjectError(Op::kPutIfAbsent, When::kAfter, IOError("injected EIO"), 3);
  StopSignal stop;
  Status st = (*p)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Ids(), Expected(2, 30));
  // The data-file failure reaches the pipeline (a retried batch); the two commit failures are
  // resolved inside the Delta transaction by reading the version back (transaction.h, step 3).
  EXPECT_GE(Metric("ferry_commits_total", {{"pipeline", "events"}, {"outcome", "failed"}}), 1);
  EXPECT_GE(faulty->count(FaultInjectingStore::Op::kPutIfAbsent), 4);
}

TEST_F(PipelineTest, TwoWritersOfOnePartitionNeverDuplicate) {
  // Two pipelines (a zombie and its successor) consume the same partitions into one table at
  // once: the commit protocol fences whichever is behind.
  Broker a{.partitions = 2, .per_partition = 300};
  Broker b{.partitions = 2, .per_partition = 300};
  auto pa = Make(&a, {.max_rows = 7, .until_caught_up = true});
  auto pb = Make(&b, {.max_rows = 11, .until_caught_up = true});
  ASSERT_TRUE(pa.ok() && pb.ok());
  StopSignal stop;
  Status sa, sb;
  std::thread ta([&] { sa = (*pa)->Run(&stop); });
  std::thread tb([&] { sb = (*pb)->Run(&stop); });
  ta.join();
  tb.join();
  ASSERT_TRUE(sa.ok()) << sa.ToString();
  ASSERT_TRUE(sb.ok()) << sb.ToString();
  EXPECT_EQ(Ids(), Expected(2, 300));
}

TEST_F(PipelineTest, ATableWithAnotherSchemaIsRefused) {
  auto opened = OpenOrCreateTable(store_, "events", {.schema_ddl = "id BIGINT, name STRING"});
  ASSERT_TRUE(opened.ok());
  auto again = OpenOrCreateTable(store_, "events", {.schema_ddl = "id BIGINT, payload STRING"});
  EXPECT_EQ(again.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(again.status().message().find("declares column `payload STRING`"), std::string::npos)
      << again.status().ToString();
  auto missing = OpenOrCreateTable(store_, "other", {});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST_F(PipelineTest, DerivedColumnsAndWhereStillConsumeEveryPosition) {
  Broker broker{.partitions = 2, .per_partition = 50};
  auto p = Make(&broker, {.max_rows = 30,
                          .transform = {.columns = {{.name = "even", .expr = "id % 2 = 0"},
                                                    {.name = "label", .expr = "upper(payload)"}},
                                        .where = "even"},
                          .until_caught_up = true});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());
  delta::Snapshot snap = Latest();
  EXPECT_EQ(snap.schema()->ToString(),
            "id BIGINT NOT NULL, payload STRING, _key STRING, _offset BIGINT, _partition INT, "
            "even BOOLEAN, label STRING");
  std::vector<int64_t> even;
  for (int64_t id : Expected(2, 50)) {
    if (id % 2 == 0) {
      even.push_back(id);
    }
  }
  EXPECT_EQ(Ids(), even);
  // The filtered messages were consumed: the positions reach the last offset.
  EXPECT_EQ(snap.position("events/kafka/events/0"), 49);
  EXPECT_EQ(snap.position("events/kafka/events/1"), 49);
  EXPECT_EQ(Metric("ferry_rows_filtered_total"), 50);
  auto table = delta::Table::Open(store_, "events");
  auto rows = testing::ReadTableRows(**table, snap);
  EXPECT_EQ((*rows)[0], "id=0|payload=test #0|_key=k0|_offset=0|_partition=0|even=1|label=TEST #0");
}

TEST_F(PipelineTest, DedupDropsKeysCommittedBeforeEvenAcrossRestarts) {
  // The producer sent every message twice (positions 2n and 2n + 1 hold id n).
  Broker broker{.partitions = 2, .per_partition = 200};
  for (int p = 0; p < 2; ++p) {
    for (int64_t n = 0; n < 200; ++n) {
      broker.overrides[{p, n}] = Message(p * 1'000'000 + n / 2);
    }
  }
  DedupSpec dedup{.key = "id", .window = std::chrono::hours(24)};
  {
    broker.per_partition = 120;
    auto p = Make(&broker, {.max_rows = 25, .dedup = dedup, .until_caught_up = true});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    StopSignal stop;
    ASSERT_TRUE((*p)->Run(&stop).ok());
  }
  // A restart (new process: the index is rebuilt from the table) that reads the rest, and a
  // redelivery of old duplicates under new positions.
  broker.per_partition = 200;
  broker.overrides[{0, 199}] = Message(3);
  auto p = Make(&broker, {.max_rows = 25, .dedup = dedup, .until_caught_up = true});
  ASSERT_TRUE(p.ok());
  StopSignal stop;
  ASSERT_TRUE((*p)->Run(&stop).ok());
  std::vector<int64_t> expected;
  for (int part = 0; part < 2; ++part) {
    for (int64_t n = 0; n < 100; ++n) {
      expected.push_back(part * 1'000'000 + n);
    }
  }
  std::sort(expected.begin(), expected.end());
  // id 99 of partition 0 was only in position 198 (199 now holds id 3 again): still once.
  EXPECT_EQ(Ids(), expected);
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 199);
  EXPECT_GE(Metric("ferry_dedup_hits_total"), 100);
}

TEST_F(PipelineTest, TheNextBatchIsReadWhileABatchCommitsAndWaitsBehindIt) {
  Broker broker{.partitions = 1, .per_partition = 40};
  // Batch 1 (offsets 0..9) is stuck in its commit; batch 2 is read meanwhile.
  auto run = StartHeld(&broker, {.max_rows = 10, .max_in_flight = 1, .until_caught_up = true});
  ASSERT_NE(run, nullptr);
  WaitUntil([&] { return Metric("ferry_messages_received_total") >= 20; });
  // Bounded: batch 2 is full and waits for batch 1's outcome; nothing more is read, nothing is
  // acknowledged, nothing is committed.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(Metric("ferry_messages_received_total"), 20);
  EXPECT_EQ(Metric("ferry_commits_total", {{"pipeline", "events"}, {"outcome", "succeeded"}}), 0);
  EXPECT_TRUE(broker.latest.load()->acknowledged().empty());
  EXPECT_EQ(Latest().position("events/kafka/events/0"), std::nullopt);
  run->Release();
  ASSERT_TRUE(run->result.ok()) << run->result.ToString();
  EXPECT_EQ(Ids(), Expected(1, 40));
  // Commits strictly in batch order: version v holds offsets up to 10 * v - 1.
  auto table = delta::Table::Open(store_, "events");
  for (int64_t v = 1; v <= 4; ++v) {
    auto snap = (*table)->LoadSnapshot(v);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    EXPECT_EQ(snap->position("events/kafka/events/0"), 10 * v - 1);
  }
  // Acks follow the commits, in order.
  std::vector<int64_t> acked;
  for (const auto& a : broker.latest.load()->acknowledged()) {
    acked.push_back(a.position);
  }
  EXPECT_EQ(acked, (std::vector<int64_t>{9, 19, 29, 39}));
}

TEST_F(PipelineTest, ALostCommitDropsTheBatchesBehindItAndResumesFromTheTable) {
  Broker broker{.partitions = 1, .per_partition = 40};
  auto run = StartHeld(&broker, {.max_rows = 10, .max_in_flight = 1, .until_caught_up = true});
  ASSERT_NE(run, nullptr);
  WaitUntil([&] { return Metric("ferry_messages_received_total") >= 20; });
  // Another writer (the partition's new owner) commits offsets up to 14 first.
  {
    auto table = delta::Table::Open(store_, "events");
    ASSERT_TRUE(table.ok());
    delta::Transaction txn(**table, Latest());
    txn.SetPosition("events/kafka/events/0", 14);
    ASSERT_TRUE(txn.Commit().ok());
  }
  run->Release();
  ASSERT_TRUE(run->result.ok()) << run->result.ToString();
  // Batch 1 (0..9) lost, batch 2 (10..19, read while batch 1 committed) dropped unwritten; the
  // pipeline resumed after 14.
  std::vector<int64_t> expected;
  for (int64_t id = 15; id < 40; ++id) {
    expected.push_back(id);
  }
  EXPECT_EQ(Ids(), expected);
  EXPECT_EQ(Latest().position("events/kafka/events/0"), 39);
  EXPECT_EQ(Metric("ferry_batches_abandoned_total"), 1);
}

TEST_F(PipelineTest, EveryMessageOnceWithoutOverlapAndWithTwoBatchesInFlight) {
  for (int in_flight : {0, 2}) {
    store_ = std::make_shared<storage::InMemoryStore>();
    Broker broker{.partitions = 3, .per_partition = 100};
    auto p = Make(&broker, {.max_rows = 40, .max_in_flight = in_flight, .until_caught_up = true});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    StopSignal stop;
    Status st = (*p)->Run(&stop);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(Ids(), Expected(3, 100)) << "max_in_flight " << in_flight;
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(Latest().position(fmt::format("events/kafka/events/{}", i)), 99);
    }
  }
}

}  // namespace
}  // namespace ferry::pipeline

#include "ferry/pipeline/pipeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "ferry/base/failpoint.h"
#include "ferry/pipeline/table_setup.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/fake_source.h"
#include "ferry/testing/fault_injecting_store.h"
#include "ferry/testing/forwarding_store.h"
#include "ferry/testing/table_verifier.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::pipeline {
namespace {

using testing::FakeSource;
using testing::FaultInjectingStore;

std::string Message(int64_t id) {
  return fmt::format(R"({{"id": {}, "payload": "test #{}"}})", id, id);
}

// Forwards to a FakeSource the test keeps, so the test can still look at it (acks) after the
// pipeline has closed and dropped its source.
class SharedSource final : public source::Source {
 public:
  explicit SharedSource(std::shared_ptr<FakeSource> fake) : fake_(std::move(fake)) {}
  Status Start(source::PartitionListener* l) override { return fake_->Start(l); }
  Status Poll(size_t max, std::chrono::milliseconds timeout,
              std::vector<source::Message>* out) override {
    return fake_->Poll(max, timeout, out);
  }
  void Acknowledge(std::span<const source::CommittedPosition> p) override { fake_->Acknowledge(p); }
  Result<std::vector<source::PartitionHead>> Heads() override { return fake_->Heads(); }
  Status Close() override { return fake_->Close(); }

 private:
  std::shared_ptr<FakeSource> fake_;
};

// A broker for the tests: each partition holds messages with ids partition * 1'000'000 + n. Every
// source the pipeline asks for sees the same messages (a restarted consumer).
struct Broker {
  int partitions = 1;
  int64_t per_partition = 0;
  std::map<std::pair<int, int64_t>, std::string> overrides;  // (partition, position) -> payload
  std::vector<std::shared_ptr<FakeSource>> sources;          // every source made, in order
  std::atomic<FakeSource*> latest = nullptr;
  // false: a broker that never assigns a partition (an unreachable cluster, to the pipeline).
  bool assign_at_start = true;

  SourceFactory Factory() {
    return [this]() -> Result<std::unique_ptr<source::Source>> {
      auto s =
          std::make_shared<FakeSource>(FakeSource::Options{.prefix = "kafka/events",
                                                           .partitions = partitions,
                                                           .assign_all_at_start = assign_at_start});
      for (int p = 0; p < partitions; ++p) {
        for (int64_t n = 0; n < per_partition; ++n) {
          auto it = overrides.find({p, n});
          s->Produce(p, it != overrides.end() ? it->second : Message(p * 1'000'000 + n),
                     fmt::format("k{}", n));
        }
      }
      sources.push_back(s);
      latest = s.get();
      return std::unique_ptr<source::Source>(std::make_unique<SharedSource>(std::move(s)));
    };
  }
};

// Holds the next commit of table `events` (its put-if-absent of a log entry) until Open(): the
// tests see what the pipeline thread does while a batch is in the writer thread.
class GatedStore final : public testing::ForwardingStore {
 public:
  explicit GatedStore(std::shared_ptr<storage::ObjectStore> base)
      : ForwardingStore(std::move(base)) {}

  // The next commit waits at the gate.
  void Arm() {
    std::lock_guard lock(mu_);
    armed_ = true;
    open_ = false;
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // A commit is waiting at the gate.
  bool Holding() const {
    std::lock_guard lock(mu_);
    return holding_;
  }

  Status PutIfAbsent(std::string_view key, std::string_view data) override {
    if (key.starts_with("events/_delta_log/") && key.ends_with(".json")) {
      std::unique_lock lock(mu_);
      if (armed_) {
        armed_ = false;
        holding_ = true;
        cv_.wait(lock, [this] { return open_; });
        holding_ = false;
      }
    }
    return ForwardingStore::PutIfAbsent(key, data);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool open_ = false;
  bool holding_ = false;
};

template <typename Pred>
void WaitUntil(Pred pred) {
  while (!pred()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

class PipelineTest : public ::testing::Test {
 protected:
  std::shared_ptr<storage::ObjectStore> store_ = std::make_shared<storage::InMemoryStore>();
  metrics::Registry registry_;
  std::map<std::string, std::string> metadata_ = {
      {"offset", "_offset"}, {"partition", "_partition"}, {"key", "_key"}};
  // Wraps the source factory Make passes, when set.
  std::function<SourceFactory(SourceFactory)> wrap_source_;
  // Wraps the JSON decoder Make builds, when set.
  std::function<std::unique_ptr<transform::Decoder>(std::unique_ptr<transform::Decoder>)>
      wrap_decoder_;

  Result<std::unique_ptr<Pipeline>> Make(Broker* broker, PipelineOptions options = {},
                                         std::shared_ptr<storage::ObjectStore> store = nullptr) {
    FERRY_ASSIGN_OR_RETURN(OpenedTable opened,
                           OpenOrCreateTable(store ? store : store_, "events",
                                             {.schema_ddl = "id BIGINT NOT NULL, payload STRING",
                                              .metadata_columns = metadata_,
                                              .transform = options.transform}));
    FERRY_ASSIGN_OR_RETURN(auto decoder,
                           transform::JsonDecoder::Create(
                               InputSchema(*opened.snapshot.schema(), options.transform.columns),
                               {.columns = {"id", "payload"}}));
    std::unique_ptr<transform::Decoder> wrapped = std::move(decoder);
    if (wrap_decoder_) {
      wrapped = wrap_decoder_(std::move(wrapped));
    }
    if (options.id.empty()) {
      options.id = "events";
    }
    options.metadata_columns = metadata_;
    options.commit.checkpoint = true;
    bool dead_letter = options.on_bad_record == OnBadRecord::kDeadLetter;
    FERRY_ASSIGN_OR_RETURN(
        auto pipeline,
        Pipeline::Create(std::move(options), std::move(opened.table), std::move(opened.snapshot),
                         wrap_source_ ? wrap_source_(broker->Factory()) : broker->Factory(),
                         std::move(wrapped), &registry_));
    if (dead_letter) {
      FERRY_ASSIGN_OR_RETURN(OpenedTable dead,
                             OpenOrCreateTable(store_, "dead", {.schema_ddl = kDeadLetterSchema}));
      FERRY_RETURN_IF_ERROR(
          pipeline->SetDeadLetterTable(std::move(dead.table), std::move(dead.snapshot)));
    }
    return pipeline;
  }

  // A pipeline running on a thread whose next commit waits in a GatedStore until Release().
  struct HeldRun {
    std::shared_ptr<GatedStore> gated;
    std::unique_ptr<Pipeline> pipeline;
    StopSignal stop;
    Status result;
    std::thread thread;
    // Opens the gate and waits for Run() to return.
    void Release() {
      gated->Open();
      thread.join();
    }
  };
  // Starts the pipeline and returns once its first commit is held (nullptr if Make failed).
  std::unique_ptr<HeldRun> StartHeld(Broker* broker, PipelineOptions options) {
    auto run = std::make_unique<HeldRun>();
    run->gated = std::make_shared<GatedStore>(store_);
    auto p = Make(broker, std::move(options), run->gated);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) {
      return nullptr;
    }
    run->pipeline = std::move(*p);
    run->gated->Arm();
    HeldRun* r = run.get();
    run->thread = std::thread([r] { r->result = r->pipeline->Run(&r->stop); });
    WaitUntil([r] { return r->gated->Holding(); });
    return run;
  }

  // The dead-letter table's rows (sorted).
  std::vector<std::string> DeadRows() {
    auto table = delta::Table::Open(store_, "dead");
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    auto rows = testing::ReadTableRows(**table, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return *rows;
  }

  // Every row's id, from ferry's own reader.
  std::vector<int64_t> Ids() {
    auto table = delta::Table::Open(store_, "events");
    EXPECT_TRUE(table.ok());
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    auto rows = testing::ReadTableRows(**table, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<int64_t> ids;
    for (const std::string& row : *rows) {
      ids.push_back(std::stoll(row.substr(3, row.find('|') - 3)));
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  delta::Snapshot Latest() {
    auto table = delta::Table::Open(store_, "events");
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok());
    return *snap;
  }
  static std::vector<int64_t> Expected(int partitions, int64_t per_partition) {
    std::vector<int64_t> ids;
    for (int p = 0; p < partitions; ++p) {
      for (int64_t n = 0; n < per_partition; ++n) {
        ids.push_back(p * 1'000'000 + n);
      }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  double Metric(std::string_view name, metrics::Labels labels = {{"pipeline", "events"}}) {
    return registry_.Value(name, labels);
  }
};

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
  // The revoke is applied inside the next poll, before the drain commits.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop.RequestDrain(std::chrono::seconds(30));
  run.join();
  std::vector<int64_t> ids = Ids();
  ASSERT_EQ(ids.size(), 10u);
  EXPECT_EQ(ids.front(), 1'000'000);
  delta::Snapshot snap = Latest();
  EXPECT_EQ(snap.position("events/kafka/events/0"), std::nullopt);
  EXPECT_EQ(snap.position("events/kafka/events/1"), 9);
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
  EXPECT_EQ(registry_.journal()->Read().at("events").state,
            metrics::PipelineState::kWaitingForRegistry);
  EXPECT_NE(registry_.journal()->Read().at("events").error.find("connection refused"),
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

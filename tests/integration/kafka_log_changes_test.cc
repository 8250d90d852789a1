// `ferry run` against a real Apache Kafka broker (KRaft, ferry/testing/kafka_broker.h) while the
// broker's logs change under it: issue 38's proofs 5 (offsets with holes) and 6 (topology
// changes), end to end with the real binaries.
//   - A compacted topic (small segments, cleanup.policy=compact, a low dirty ratio): a restart
//     whose next offset was compacted away resumes at the next record the broker kept; no gap is
//     reported, and the table holds what it read before plus exactly the records that survived
//     compaction after its position (as kcat, an independent reader, sees them).
//   - Retention deleting unread records (DeleteRecords through the admin API: deterministic):
//     with on_gap unset or "fail" the run stops with DataLoss naming topic, partition and the
//     missing range; with on_gap = "continue" it skips to the log start and records the range in
//     the commit (`ferry table history --json`).
//   - Retention by time (retention.ms) passing while ferry is stopped, made deterministic by the
//     records' own timestamps instead of a wall-clock wait (KafkaRetentionByTimeTest): the same
//     two outcomes.
//   - Retention by size (retention.bytes, small segments) passing while ferry is stopped, the
//     new log start read with ListOffsets before ferry starts (KafkaRetentionBySizeTest): the
//     same two outcomes.
//   - Partitions added to a topic while ferry runs, and a new topic matching a regex
//     subscription, are ingested (group and manual assignment).
//   - A topic deleted and recreated under a running ferry stops it with an error naming topic,
//     partition, the table's offset and the new log's range (group and manual assignment);
//     nothing of the new topic is ingested.
//   - A partition new to the table, started by `latest` or `earliest` at offset 200, whose topic
//     is deleted and recreated before anything was read: ferry starts it again at the new log's
//     end or start (no table position, nothing taken: nothing lost) and ingests what follows.
//
// One broker serves the whole binary (WHOLE_BINARY); each test has its own topics, group and
// table. CTest runs the binary on Kafka 4.x and again on 3.9.x (kafka_log_changes_test_kafka3).
// Label: integration. Needs `make setup-kafka`.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kafka_child_process.h"
#include "kafka_e2e_fixture.h"
#include "pipeline_e2e_support.h"

#include "ferry/testing/kafka_broker.h"
#include "ferry/testing/kafka_records.h"
#include "ferry/testing/subprocess.h"
#include "ferry/testing/wait_until.h"

namespace ferry {
namespace {

using e2e::Ids;
using e2e::kFerry;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::milliseconds;
using std::chrono::seconds;

// One record as kcat prints it with -f '%o %k %s\n'.
struct Record {
  int64_t offset = 0;
  std::string key;
  int64_t id = 0;
};

class KafkaLogChangesTest : public e2e::KafkaE2eTest {
 protected:
  void SetUp() override {
    Result<testing::KafkaBroker*> broker = testing::KafkaBroker::Shared();
    ASSERT_TRUE(broker.ok()) << broker.status().ToString();
    broker_ = *broker;
    Result<std::string> kcat =
        testing::FindProgram("kcat", {"/usr/bin/kcat"}, "Debian package kcat");
    ASSERT_TRUE(kcat.ok()) << kcat.status().ToString();
    kcat_ = *kcat;
    dir_ = e2e::FreshTestDir("ferry-kafka-log-changes");
    brokers_ = broker_->bootstrap();
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '-');
    // A number of its own per run: --gtest_repeat must not meet an earlier run's topic.
    static int runs = 0;
    name += "-" + std::to_string(++runs);
    topic_ = "lc-" + name;
    group_ = "ferry-" + name;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string BrokerLog() const { return "\nKafka broker log:\n" + broker_->Log(40); }

  // The topic configuration for segments below 1 MiB: 4.x refuses a small segment.bytes and
  // offers internal.segment.bytes for tests instead; 3.x knows only segment.bytes.
  std::string SmallSegmentBytesKey() const {
    return broker_->version().rfind("3.", 0) == 0 ? "segment.bytes" : "internal.segment.bytes";
  }

  // Produces records with kcat to partition 0 of `topic`, one per (key, id), each about 1 KB,
  // in batches of at most 4 KiB (a batch larger than a small segment is refused).
  void ProduceKeyed(const std::string& topic,
                    const std::vector<std::pair<std::string, int64_t>>& records) {
    const std::string file = (dir_ / "kcat-input.txt").string();
    {
      std::ofstream out(file, std::ios::trunc);
      for (const auto& [key, id] : records) {
        out << key << "|"
            << fmt::format(R"({{"id": {}, "dateTime": "-", "payload": "{}"}})", id,
                           std::string(900, 'x'))
            << "\n";
      }
    }
    Result<testing::ProgramOutput> r =
        testing::RunProgram({kcat_, "-P", "-b", brokers_, "-t", topic, "-p", "0", "-K|", "-X",
                             "acks=all", "-X", "batch.size=4096", "-l", file},
                            milliseconds(60000));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->exit_code, 0) << r->err << BrokerLog();
  }

  // What partition 0 of `topic` holds from `from` on (kBeginning: the log start), read by kcat.
  static constexpr int64_t kBeginning = -2;
  std::vector<Record> ReadWithKcat(const std::string& topic, int64_t from) {
    Result<testing::ProgramOutput> r = testing::RunProgram(
        {kcat_, "-C", "-b", brokers_, "-t", topic, "-p", "0", "-o",
         from == kBeginning ? "beginning" : std::to_string(from), "-e", "-q", "-f", "%o %k %s\\n"},
        milliseconds(60000));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::vector<Record> out;
    if (!r.ok()) {
      return out;
    }
    std::istringstream lines(r->out);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      Record rec;
      fields >> rec.offset >> rec.key;
      const size_t id = line.find("\"id\": ");
      rec.id = id == std::string::npos ? -1 : std::stoll(line.substr(id + 6));
      out.push_back(rec);
    }
    return out;
  }

  void RunUntilCaughtUp(const std::string& config) {
    CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
    ASSERT_EQ(r.exit_code, 0) << r.err << BrokerLog();
    EXPECT_EQ(r.err.find("DataLoss"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("were skipped"), std::string::npos) << r.err;
  }

  testing::KafkaBroker* broker_ = nullptr;
  std::string kcat_;
};

// ---- Proof 5: offsets with holes ----

// Ids 1..100 with keys k1..k100 of their own (nothing for the cleaner while ferry reads them,
// offsets 0..99), then ids 101..400 write each of those keys three times more, so that the
// cleaner keeps only the last record of each key (offsets 300..399) and 40 records with keys of
// their own (ids 401..440), the last of which stay in the active segment. The restart's next
// offset, 100, is gone, as is everything up to 299, yet the log start stays 0: not a gap.
TEST_F(KafkaLogChangesTest, CompactedTopicRestartResumesAcrossTheHoles) {
  Status created = broker_->CreateTopic(topic_, 1,
                                        {{"cleanup.policy", "compact"},
                                         {SmallSegmentBytesKey(), "16384"},
                                         {"segment.ms", "100"},
                                         {"min.cleanable.dirty.ratio", "0.01"},
                                         {"min.compaction.lag.ms", "0"}});
  ASSERT_TRUE(created.ok()) << created.ToString();
  std::vector<std::pair<std::string, int64_t>> first;
  // Keys of their own: the cleaner, which may run while ferry reads them, has nothing to remove.
  for (int64_t id = 1; id <= 100; ++id) {
    first.emplace_back(fmt::format("k{}", id), id);
  }
  ASSERT_NO_FATAL_FAILURE(ProduceKeyed(topic_, first));
  std::string config = WriteConfig({}, "", R"(assignment = "manual")");
  ASSERT_NO_FATAL_FAILURE(RunUntilCaughtUp(config));
  ExpectIds(Ids(1, 100));

  std::vector<std::pair<std::string, int64_t>> more;
  // Every key of the first 100 three times more: the records ferry read become removable.
  for (int64_t id = 101; id <= 400; ++id) {
    more.emplace_back(fmt::format("k{}", (id - 1) % 100 + 1), id);
  }
  for (int64_t id = 401; id <= 440; ++id) {
    more.emplace_back(fmt::format("tail{}", id), id);
  }
  ASSERT_NO_FATAL_FAILURE(ProduceKeyed(topic_, more));
  // Wait for the cleaner: from offset 100 on only ids 301..440 are left, each key once.
  std::vector<int64_t> survivors;
  const auto produced = std::chrono::steady_clock::now();
  const auto deadline = produced + seconds(90);
  while (true) {
    std::vector<Record> left = ReadWithKcat(topic_, 100);
    survivors.clear();
    for (const Record& r : left) {
      survivors.push_back(r.id);
    }
    if (survivors == Ids(301, 440) || std::chrono::steady_clock::now() > deadline) {
      ASSERT_EQ(survivors, Ids(301, 440)) << "the cleaner did not compact in 90 s" << BrokerLog();
      ASSERT_EQ(left.front().offset, 300);
      // For docs/kafka.md: how long the cleaner took after the last record was acknowledged.
      fprintf(stderr, "KAFKA_COMPACTION waited_ms=%lld\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(
                                         std::chrono::steady_clock::now() - produced)
                                         .count()));
      break;
    }
    std::this_thread::sleep_for(milliseconds(500));
  }
  std::vector<Record> all = ReadWithKcat(topic_, 0);
  ASSERT_FALSE(all.empty());
  EXPECT_GT(all.front().offset, 99) << "the records ferry read were not compacted";

  // The restart: next offset 100, compacted away, within the log (start 0): no gap.
  ASSERT_NO_FATAL_FAILURE(RunUntilCaughtUp(config));
  std::vector<int64_t> expected = Ids(1, 100);
  expected.insert(expected.end(), survivors.begin(), survivors.end());
  ExpectIds(expected);
  EXPECT_EQ(e2e::ReadKafkaTable(table()).txns[fmt::format("events/kafka/{}/0", topic_)], 439);
  // Caught up: another run adds nothing.
  ASSERT_NO_FATAL_FAILURE(RunUntilCaughtUp(config));
  ExpectIds(expected);
  std::string history = RunCommand({kFerry, "table", "history", table(), "--json"}).out;
  EXPECT_EQ(history.find("gaps"), std::string::npos) << history;
}

// Ids 1..50 ingested (offsets 0..49), 51..100 produced while ferry is away, then DeleteRecords
// moves the log start to 80 (as retention would): offsets 50..79 were never ingested.
class KafkaRetentionGapTest : public KafkaLogChangesTest {
 protected:
  std::string PrepareGap(const std::string& pipeline_keys, const std::string& properties = "") {
    Status created = broker_->CreateTopic(topic_, 1);
    EXPECT_TRUE(created.ok()) << created.ToString();
    std::string config = WriteConfig({}, properties, "", pipeline_keys);
    auto producer = StartProducer(topic_, 50, 1, 0);
    EXPECT_EQ(producer->Wait(), 0) << producer->Log();
    RunUntilCaughtUp(config);
    producer = StartProducer(topic_, 50, 51, 0);
    EXPECT_EQ(producer->Wait(), 0) << producer->Log();
    Result<int64_t> low = broker_->DeleteRecords(topic_, 0, 80);
    EXPECT_TRUE(low.ok()) << low.status().ToString();
    EXPECT_EQ(low.ok() ? *low : -1, 80);
    return config;
  }
};

class KafkaRetentionGapFailTest : public KafkaRetentionGapTest,
                                  public ::testing::WithParamInterface<std::string> {};

TEST_P(KafkaRetentionGapFailTest, StopsNamingTopicPartitionAndTheMissingRange) {
  std::string config = PrepareGap(GetParam() == "default" ? "" : R"(on_gap = "fail")");
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string expected = fmt::format(
      "kafka/{0}/0: offsets 50..79 of topic '{0}' partition 0 are no longer on the broker (log "
      "start is now 80)",
      topic_);
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("on_gap = \"continue\""), std::string::npos) << r.err;
  ExpectIds(Ids(1, 50));  // nothing skipped to
}

INSTANTIATE_TEST_SUITE_P(OnGap, KafkaRetentionGapFailTest, ::testing::Values("default", "fail"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

// Under each kind of assignor: the partition is assigned again at the log start with
// rd_kafka_assign (eager) or rd_kafka_incremental_unassign/assign (cooperative).
class KafkaRetentionGapContinueTest : public KafkaRetentionGapTest,
                                      public ::testing::WithParamInterface<std::string> {};

TEST_P(KafkaRetentionGapContinueTest, SkipsAndRecordsTheRange) {
  std::string config =
      PrepareGap(R"(on_gap = "continue")",
                 fmt::format(R"(, "partition.assignment.strategy" = "{}")",
                             GetParam() == "eager" ? "range,roundrobin" : "cooperative-sticky"));
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err << BrokerLog();
  EXPECT_NE(r.err.find(fmt::format("kafka/{}/0 positions 50..79 were skipped", topic_)),
            std::string::npos)
      << r.err;
  std::vector<int64_t> expected = Ids(1, 50);
  for (int64_t id = 81; id <= 100; ++id) {
    expected.push_back(id);
  }
  ExpectIds(expected);
  std::string history = RunCommand({kFerry, "table", "history", table(), "--json"}).out;
  EXPECT_NE(history.find(R"(\"first\":50,\"last\":79)"), std::string::npos) << history;
}

INSTANTIATE_TEST_SUITE_P(Assignors, KafkaRetentionGapContinueTest,
                         ::testing::Values("eager", "cooperative"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

// Retention by time, deterministic: the broker deletes a segment once its newest record's
// timestamp is older than retention.ms, so the records ferry must lose carry timestamps two days
// old (CreateTime, set by the producer) and the ones after the gap carry the present. Ids 1..50
// (old) are ingested while the topic keeps everything (retention.ms = -1); with ferry stopped,
// ids 51..100 (old) and 101..120 (now) follow. segment.ms = 100 rolls a new segment at each
// append after an old first record, so the new records never share a segment with old ones.
// Then retention.ms = 1 hour: within the broker's retention check (every second here) every
// segment up to offset 99 goes, and the log start becomes 100 (waited for as a condition, with
// kcat); ids 101..120 are an hour away from it. The restart's next offset, 50, is below it.
class KafkaRetentionByTimeTest : public KafkaLogChangesTest,
                                 public ::testing::WithParamInterface<std::string> {
 protected:
  // Produces ids first..last to partition 0 of `topic` with CreateTime `timestamp_ms` (0: now),
  // acks=all, with librdkafka (kcat cannot set a record's timestamp).
  void ProduceAt(const std::string& topic, int64_t first, int64_t last, int64_t timestamp_ms) {
    Status produced =
        testing::ProduceIds(brokers_, topic, first, last, {.timestamp_ms = timestamp_ms});
    ASSERT_TRUE(produced.ok()) << produced.ToString() << BrokerLog();
  }

  std::string Prepare(const std::string& pipeline_keys) {
    const int64_t now_ms = std::chrono::duration_cast<milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    const int64_t old_ms = now_ms - 2 * 24 * 3600 * 1000LL;
    Status created =
        broker_->CreateTopic(topic_, 1, {{"retention.ms", "-1"}, {"segment.ms", "100"}});
    EXPECT_TRUE(created.ok()) << created.ToString();
    std::string config = WriteConfig({}, "", "", pipeline_keys);
    ProduceAt(topic_, 1, 50, old_ms);
    RunUntilCaughtUp(config);
    ProduceAt(topic_, 51, 100, old_ms);
    ProduceAt(topic_, 101, 120, 0);
    Status altered =
        broker_->SetTopicConfigs(topic_, {{"retention.ms", "3600000"}, {"segment.ms", "100"}});
    EXPECT_TRUE(altered.ok()) << altered.ToString();
    const auto deadline = std::chrono::steady_clock::now() + seconds(90);
    std::vector<Record> left;
    while (std::chrono::steady_clock::now() < deadline) {
      left = ReadWithKcat(topic_, kBeginning);
      if (!left.empty() && left.front().offset == 100) {
        break;
      }
      std::this_thread::sleep_for(milliseconds(500));
    }
    EXPECT_FALSE(left.empty());
    EXPECT_EQ(left.empty() ? -1 : left.front().offset, 100)
        << "retention did not remove offsets 0..99 within 90 s" << BrokerLog();
    EXPECT_EQ(left.size(), 20u);
    return config;
  }
};

TEST_P(KafkaRetentionByTimeTest, GapPerOnGap) {
  std::string config = Prepare(fmt::format(R"(on_gap = "{}")", GetParam()));
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  if (GetParam() == "fail") {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(fmt::format("kafka/{0}/0: offsets 50..99 of topic '{0}' partition 0 are "
                                     "no longer on the broker (log start is now 100)",
                                     topic_)),
              std::string::npos)
        << r.err;
    ExpectIds(Ids(1, 50));
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err << BrokerLog();
  EXPECT_NE(r.err.find(fmt::format("kafka/{}/0 positions 50..99 were skipped", topic_)),
            std::string::npos)
      << r.err;
  std::vector<int64_t> expected = Ids(1, 50);
  for (int64_t id = 101; id <= 120; ++id) {
    expected.push_back(id);
  }
  ExpectIds(expected);
  std::string history = RunCommand({kFerry, "table", "history", table(), "--json"}).out;
  EXPECT_NE(history.find(R"(\"first\":50,\"last\":99)"), std::string::npos) << history;
}

INSTANTIATE_TEST_SUITE_P(OnGap, KafkaRetentionByTimeTest, ::testing::Values("fail", "continue"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

// Retention by size (retention.bytes) passing while ferry is stopped. Small segments (16 KiB,
// records of about 1 KB in batches of at most 4 KiB) make the deletion land on a segment
// boundary the test reads instead of predicting: ids 1..50 are ingested while the topic keeps
// everything (retention.bytes = -1); with ferry stopped ids 51..150 follow; then retention.bytes
// becomes 32 KiB, and within the broker's retention check (every second here) the oldest
// segments go until the partition holds at most that much beyond its newest segment. The test
// waits until the log start (ListOffsets earliest) has moved past offset 50 and takes it as L;
// nothing is produced afterwards, so L stays. The restart's next offset, 50, is below L.
class KafkaRetentionBySizeTest : public KafkaLogChangesTest,
                                 public ::testing::WithParamInterface<std::string> {
 protected:
  static constexpr int64_t kLast = 150;

  // Returns the configuration; sets log_start_ to L.
  std::string Prepare(const std::string& pipeline_keys) {
    Status created = broker_->CreateTopic(
        topic_, 1, {{"retention.bytes", "-1"}, {SmallSegmentBytesKey(), "16384"}});
    EXPECT_TRUE(created.ok()) << created.ToString();
    std::string config = WriteConfig({}, "", "", pipeline_keys);
    const testing::ProduceIdsOptions big{.payload_bytes = 900};
    Status produced = testing::ProduceIds(brokers_, topic_, 1, 50, big);
    EXPECT_TRUE(produced.ok()) << produced.ToString();
    RunUntilCaughtUp(config);
    produced = testing::ProduceIds(brokers_, topic_, 51, kLast, big);
    EXPECT_TRUE(produced.ok()) << produced.ToString();
    Status altered = broker_->SetTopicConfigs(
        topic_, {{"retention.bytes", "32768"}, {SmallSegmentBytesKey(), "16384"}});
    EXPECT_TRUE(altered.ok()) << altered.ToString();
    const auto deadline = std::chrono::steady_clock::now() + seconds(90);
    while (std::chrono::steady_clock::now() < deadline) {
      Result<testing::Watermarks> w = testing::QueryWatermarks(brokers_, topic_, 0);
      EXPECT_TRUE(w.ok()) << w.status().ToString();
      if (w.ok() && w->low > 50) {
        log_start_ = w->low;
        EXPECT_EQ(w->high, kLast);
        break;
      }
      std::this_thread::sleep_for(milliseconds(500));
    }
    EXPECT_GT(log_start_, 50) << "retention.bytes removed nothing within 90 s" << BrokerLog();
    EXPECT_LT(log_start_, kLast) << "retention.bytes removed every record" << BrokerLog();
    // What is left, by an independent reader: offsets L..149, ids L + 1..150.
    std::vector<Record> left = ReadWithKcat(topic_, kBeginning);
    EXPECT_FALSE(left.empty());
    EXPECT_EQ(left.empty() ? -1 : left.front().offset, log_start_);
    EXPECT_EQ(static_cast<int64_t>(left.size()), kLast - log_start_);
    fprintf(stderr, "KAFKA_RETENTION_BYTES log start moved to %lld (of %lld records)\n",
            static_cast<long long>(log_start_), static_cast<long long>(kLast));
    return config;
  }

  int64_t log_start_ = -1;
};

TEST_P(KafkaRetentionBySizeTest, GapPerOnGap) {
  std::string config = Prepare(fmt::format(R"(on_gap = "{}")", GetParam()));
  ASSERT_GT(log_start_, 50);
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  if (GetParam() == "fail") {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(fmt::format("kafka/{0}/0: offsets 50..{1} of topic '{0}' partition 0 are "
                                     "no longer on the broker (log start is now {2})",
                                     topic_, log_start_ - 1, log_start_)),
              std::string::npos)
        << r.err;
    ExpectIds(Ids(1, 50));
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err << BrokerLog();
  EXPECT_NE(
      r.err.find(fmt::format("kafka/{}/0 positions 50..{} were skipped", topic_, log_start_ - 1)),
      std::string::npos)
      << r.err;
  std::vector<int64_t> expected = Ids(1, 50);
  for (int64_t id = log_start_ + 1; id <= kLast; ++id) {
    expected.push_back(id);
  }
  ExpectIds(expected);
  std::string history = RunCommand({kFerry, "table", "history", table(), "--json"}).out;
  EXPECT_NE(history.find(fmt::format(R"(\"first\":50,\"last\":{})", log_start_ - 1)),
            std::string::npos)
      << history;
}

INSTANTIATE_TEST_SUITE_P(OnGap, KafkaRetentionBySizeTest, ::testing::Values("fail", "continue"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

// ---- Proof 6: topology changes, under group and manual assignment ----

class KafkaTopologyTest : public KafkaLogChangesTest,
                          public ::testing::WithParamInterface<std::string> {
 protected:
  std::string AssignmentKey() const {
    return GetParam() == "manual" ? R"(assignment = "manual")" : "";
  }
};

// A 2-partition topic grows to 4 while ferry runs; keyed ids then land on all four.
TEST_P(KafkaTopologyTest, PartitionsAddedWhileRunningAreIngested) {
  ASSERT_TRUE(broker_->CreateTopic(topic_, 2).ok());
  std::string config = WriteConfig({}, "", AssignmentKey());
  auto ferry = StartFerry(config);
  auto producer = StartProducer(topic_, 1000, 1, 0);
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  ASSERT_EQ(WaitForRows(1000), 1000u) << ferry->Log() << BrokerLog();
  Status grown = broker_->AddPartitions(topic_, 4);
  ASSERT_TRUE(grown.ok()) << grown.ToString();
  producer = StartProducer(topic_, 1000, 1001, 0);
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  EXPECT_EQ(WaitForRows(2000), 2000u) << ferry->Log() << BrokerLog();
  ASSERT_EQ(kill(ferry->pid(), SIGTERM), 0);
  EXPECT_EQ(ferry->Wait(), 0) << ferry->Log();
  ExpectIds(Ids(1, 2000));
  e2e::KafkaTable t = e2e::ReadKafkaTable(table());
  EXPECT_EQ(t.max_offset.count(2), 1u) << "nothing ingested from the new partition 2";
  EXPECT_EQ(t.max_offset.count(3), 1u) << "nothing ingested from the new partition 3";
}

// `topics = ["^<prefix>-.*"]`: a topic created while ferry runs is picked up.
TEST_P(KafkaTopologyTest, RegexSubscriptionPicksUpANewTopic) {
  const std::string a = topic_ + "-a";
  const std::string b = topic_ + "-b";
  ASSERT_TRUE(broker_->CreateTopic(a, 2).ok());
  std::string config = WriteConfig({"^" + topic_ + "-.*"}, "", AssignmentKey());
  auto ferry = StartFerry(config);
  auto producer = StartProducer(a, 500, 1, 0);
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  ASSERT_EQ(WaitForRows(500), 500u) << ferry->Log() << BrokerLog();
  ASSERT_TRUE(broker_->CreateTopic(b, 2).ok());
  producer = StartProducer(b, 500, 501, 0);
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  EXPECT_EQ(WaitForRows(1000), 1000u) << ferry->Log() << BrokerLog();
  ASSERT_EQ(kill(ferry->pid(), SIGTERM), 0);
  EXPECT_EQ(ferry->Wait(), 0) << ferry->Log();
  e2e::KafkaTable t = e2e::ReadKafkaTable(table());
  EXPECT_TRUE(t.ids == Ids(1, 1000)) << t.ids.size() << " rows";
  e2e::ExpectDuckDbCounts(t.files, "id", 1000);
  std::set<std::string> topics;
  for (const auto& [app_id, version] : t.txns) {
    topics.insert(app_id.substr(0, app_id.rfind('/')));
  }
  EXPECT_EQ(topics, (std::set<std::string>{"events/kafka/" + a, "events/kafka/" + b}));
}

// Offsets 0..199 ingested; the topic is deleted and created again with 10 records while ferry
// runs. Its position (199) lies past the new log's end: ferry stops, naming topic, partition,
// the table's offset and the new log's range (empty if it looks before the 10 records land), and
// ingests nothing of the new topic.
TEST_P(KafkaTopologyTest, TopicDeletedAndRecreatedStopsWithAClearError) {
  ASSERT_TRUE(broker_->CreateTopic(topic_, 1).ok());
  std::string config = WriteConfig({}, "", AssignmentKey());
  auto ferry = StartFerry(config);
  auto producer = StartProducer(topic_, 200, 1, 0);
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  ASSERT_EQ(WaitForRows(200), 200u) << ferry->Log() << BrokerLog();
  Status deleted = broker_->DeleteTopic(topic_);
  ASSERT_TRUE(deleted.ok()) << deleted.ToString();
  // Longer than the metadata refresh (1 s): ferry sees the topic gone before it is back.
  std::this_thread::sleep_for(milliseconds(2500));
  Status created = broker_->CreateTopic(topic_, 1);
  ASSERT_TRUE(created.ok()) << created.ToString();
  producer = StartProducer(topic_, 10, 1001, 0);
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  Result<int> exit = ferry->WaitFor(milliseconds(120000));
  ASSERT_TRUE(exit.ok()) << "ferry kept running after the topic was recreated\n"
                         << ferry->Log() << BrokerLog();
  EXPECT_EQ(*exit, 1) << ferry->Log();
  const std::string stopped = fmt::format(
      "kafka/{0}/0: the table's position for topic '{0}' partition 0 is offset 199 (next to "
      "read: 200), but the broker's log now holds ",
      topic_);
  // The running ferry may look before or after the 10 new records land: "offsets 0..9" or "no
  // records (log start and end 0)"; either way it stops.
  EXPECT_NE(ferry->Log().find(stopped), std::string::npos) << ferry->Log();
  ExpectIds(Ids(1, 200));
  const std::string expected = stopped + "offsets 0..9";
  // A restart says the same and still ingests nothing.
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  ExpectIds(Ids(1, 200));
}

// A partition new to the table, started by the policy at the log end (`latest`: offset 200) or
// the log start (`earliest`, after DeleteRecords removed all 200 records: offset 200 too), whose
// topic is deleted and recreated before anything was read. With manual assignment the assignment
// stays and librdkafka's next fetch, at 200, is past the new log's end. The table holds no
// position for the partition and nothing was taken, so nothing is lost: ferry starts it again at
// the new log's end (or start) instead of stopping on a table position that does not exist, and
// ingests what is produced to the new topic from then on, each record once.
class KafkaPolicyStartRecreatedTest : public KafkaLogChangesTest,
                                      public ::testing::WithParamInterface<std::string> {};

TEST_P(KafkaPolicyStartRecreatedTest, StartsAgainInTheNewLog) {
  const std::string policy = GetParam();
  ASSERT_TRUE(broker_->CreateTopic(topic_, 1).ok());
  auto producer = StartProducer(topic_, 200, 1, 0);
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  if (policy == "earliest") {
    Result<int64_t> low = broker_->DeleteRecords(topic_, 0, 200);
    ASSERT_TRUE(low.ok()) << low.status().ToString();
    ASSERT_EQ(*low, 200);
  }
  start_ = policy;
  std::string config = WriteConfig({}, "", R"(assignment = "manual")");
  auto ferry = StartFerry(config);
  // Waits until ferry logs `line`; a ferry that exits first ends the wait, failing it.
  auto logged = [&](std::string_view what, const std::string& line) {
    ::testing::AssertionResult waited = testing::WaitFor(
        what,
        [&] {
          return ferry->Log().find(line) != std::string::npos || ferry->ExitReport().has_value();
        },
        milliseconds(60000));
    if (waited && ferry->Log().find(line) == std::string::npos) {
      return ::testing::AssertionFailure() << *ferry->ExitReport();
    }
    return waited;
  };
  const std::string key = fmt::format("kafka/{}/0", topic_);
  ASSERT_TRUE(logged("ferry's start at offset 200", key + " starts at 200 (" + policy + ")"))
      << ferry->Log();
  Status deleted = broker_->DeleteTopic(topic_);
  ASSERT_TRUE(deleted.ok()) << deleted.ToString();
  Status created = broker_->CreateTopic(topic_, 1);
  ASSERT_TRUE(created.ok()) << created.ToString();
  const std::string which = policy == "latest" ? "end" : "start";
  const std::string restarted =
      fmt::format("{}: offset 200, the log {} that start = \"{}\" chose, is past the broker's log",
                  key, which, policy);
  // The new log is empty until ferry has started again (the test produces only then), so the
  // new start is 0 either way.
  const std::string at_zero = fmt::format("starting at the new log {} (offset 0)", which);
  ASSERT_TRUE(logged("ferry's start in the new log", restarted)) << ferry->Log() << BrokerLog();
  EXPECT_NE(ferry->Log().find(at_zero), std::string::npos) << ferry->Log();
  producer = StartProducer(topic_, 10, 1001, 0);
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  EXPECT_EQ(WaitForRows(10), 10u) << ferry->Log() << BrokerLog();
  ASSERT_EQ(kill(ferry->pid(), SIGTERM), 0);
  EXPECT_EQ(ferry->Wait(), 0) << ferry->Log();
  EXPECT_EQ(ferry->Log().find("DataLoss"), std::string::npos) << ferry->Log();
  EXPECT_EQ(ferry->Log().find("table's position"), std::string::npos) << ferry->Log();
  ExpectIds(Ids(1001, 1010));
}

INSTANTIATE_TEST_SUITE_P(Policies, KafkaPolicyStartRecreatedTest,
                         ::testing::Values("latest", "earliest"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

INSTANTIATE_TEST_SUITE_P(Assignments, KafkaTopologyTest, ::testing::Values("group", "manual"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

}  // namespace
}  // namespace ferry

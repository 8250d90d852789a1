// `ferry run` against the mock Kafka cluster, end to end with the real binaries: the restart
// scenarios users reported against Spark (stop mid-way, restart, count rows), consumer groups
// with kills and zombies, broker outages and injected request errors. Every test ends by
// reading the table back with ferry's reader and with DuckDB: each id exactly once.
// Label: integration.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <thread>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "kafka_e2e_fixture.h"
#include "kafka_test_support.h"
#include "pipeline_e2e_support.h"
#include <nlohmann/json.hpp>

namespace ferry {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using source::kafka::testing::StartMockKafka;
using std::chrono::milliseconds;
using std::chrono::seconds;

using e2e::KafkaTable;
using e2e::kFerry;

class KafkaPipelineTest : public e2e::KafkaE2eTest {
 protected:
  void SetUp() override {
    dir_ = e2e::FreshTestDir("ferry-kafka-pipeline");
    auto mock = StartMockKafka(kFerry, 3, {"events:4"});
    ASSERT_TRUE(mock.ok()) << mock.status().ToString();
    mock_ = std::move(mock->child);
    brokers_ = mock->bootstrap;
  }
  void TearDown() override {
    mock_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string Control(const std::string& command) {
    EXPECT_TRUE(mock_->WriteLine(command).ok());
    auto answer = mock_->ReadLine(milliseconds(10000));
    return answer.ok() ? *answer : answer.status().ToString();
  }

  std::unique_ptr<ChildProcess> mock_;
};

class KafkaRestartTest : public KafkaPipelineTest, public ::testing::WithParamInterface<int> {};

// The reported Spark problem: 10,000 messages, the job stopped mid-way and restarted.
TEST_P(KafkaRestartTest, StoppedMidWayAndRestartedHoldsEveryMessageOnce) {
  const int sig = GetParam();
  std::string config = WriteConfig();
  auto producer = StartProducer("events", 10000, 1, 2500);
  auto ferry = StartFerry(config);
  ASSERT_GE(WaitForRows(2000), 2000u);
  ASSERT_EQ(kill(ferry->pid(), sig), 0);
  int code = ferry->Wait();
  if (sig == SIGTERM) {
    EXPECT_EQ(code, 0) << "a drained stop exits 0";
  } else {
    EXPECT_EQ(code, 128 + SIGKILL);
  }
  size_t at_stop = e2e::ReadKafkaTable(table()).ids.size();
  EXPECT_LT(at_stop, 10000u) << "stopped after the end: the test proves nothing";
  EXPECT_EQ(producer->Wait(), 0);

  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectExactlyOnce(1, 10000);
}

INSTANTIATE_TEST_SUITE_P(Signals, KafkaRestartTest, ::testing::Values(SIGTERM, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return std::string(param.param == SIGTERM ? "SIGTERM" : "SIGKILL");
                         });

// Manual assignment (no group membership): a SIGKILL mid-way, then two processes misconfigured
// onto the same table at once (each reads every partition; the commit fencing keeps one copy),
// then a catch-up run: each id once.
TEST_F(KafkaPipelineTest, ManualAssignmentKilledThenTwoProcessesAtOnce) {
  std::string config = WriteConfig({"events"}, "", R"(assignment = "manual")");
  auto producer = StartProducer("events", 10000, 1, 2500);
  auto first = StartFerry(config);
  ASSERT_GE(WaitForRows(2000), 2000u);
  ASSERT_EQ(kill(first->pid(), SIGKILL), 0);
  EXPECT_EQ(first->Wait(), 128 + SIGKILL);
  size_t at_kill = e2e::ReadKafkaTable(table()).ids.size();

  auto a = StartFerry(config);
  auto b = StartFerry(config);
  ASSERT_GE(WaitForRows(at_kill + 2000), at_kill + 2000);
  EXPECT_EQ(producer->Wait(), 0);
  ASSERT_EQ(kill(a->pid(), SIGTERM), 0);
  ASSERT_EQ(kill(b->pid(), SIGTERM), 0);
  EXPECT_EQ(a->Wait(), 0);
  EXPECT_EQ(b->Wait(), 0);

  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectExactlyOnce(1, 10000);
}

TEST_F(KafkaPipelineTest, TwoProcessesInOneGroupOneKilledAndRestarted) {
  std::string config = WriteConfig();
  auto producer = StartProducer("events", 10000, 1, 2000);
  auto a = StartFerry(config);
  auto b = StartFerry(config);
  ASSERT_GE(WaitForRows(3000), 3000u);
  kill(a->pid(), SIGKILL);
  EXPECT_EQ(a->Wait(), 128 + SIGKILL);
  std::this_thread::sleep_for(seconds(2));
  a = StartFerry(config);
  EXPECT_EQ(producer->Wait(), 0);
  EXPECT_EQ(WaitForRows(10000, seconds(180)), 10000u);
  kill(a->pid(), SIGTERM);
  kill(b->pid(), SIGTERM);
  EXPECT_EQ(a->Wait(), 0);
  EXPECT_EQ(b->Wait(), 0);
  ExpectExactlyOnce(1, 10000);
}

// A process frozen (SIGSTOP) long enough to lose its partitions wakes up with an open batch:
// its commit must lose to the new owner's positions, not duplicate them.
TEST_F(KafkaPipelineTest, AZombieThatWakesUpIsFenced) {
  std::string config = WriteConfig();
  auto producer = StartProducer("events", 8000, 1, 2000);
  auto a = StartFerry(config);
  auto b = StartFerry(config);
  ASSERT_GE(WaitForRows(1500), 1500u);
  kill(a->pid(), SIGSTOP);
  // session.timeout.ms is 6 s: the group gives a's partitions to b, which commits them.
  std::this_thread::sleep_for(seconds(12));
  kill(a->pid(), SIGCONT);
  EXPECT_EQ(producer->Wait(), 0);
  EXPECT_EQ(WaitForRows(8000, seconds(180)), 8000u);
  kill(a->pid(), SIGTERM);
  kill(b->pid(), SIGTERM);
  EXPECT_EQ(a->Wait(), 0);
  EXPECT_EQ(b->Wait(), 0);
  ExpectExactlyOnce(1, 8000);
}

TEST_F(KafkaPipelineTest, BrokersDownAndInjectedRequestErrors) {
  std::string config = WriteConfig();
  ASSERT_EQ(StartProducer("events", 3000, 1, 0)->Wait(), 0);
  auto ferry = StartFerry(config);
  ASSERT_GE(WaitForRows(1000), 1000u);
  EXPECT_EQ(Control("errors Fetch 5 NOT_LEADER_FOR_PARTITION"), "ok");
  EXPECT_EQ(Control("errors OffsetCommit 5 REQUEST_TIMED_OUT"), "ok");
  ASSERT_EQ(WaitForRows(3000), 3000u);
  EXPECT_EQ(Control("down all"), "ok");
  std::this_thread::sleep_for(seconds(10));
  EXPECT_EQ(Control("up all"), "ok");
  ASSERT_EQ(StartProducer("events", 3000, 3001, 0)->Wait(), 0);
  EXPECT_EQ(WaitForRows(6000), 6000u);
  kill(ferry->pid(), SIGTERM);
  EXPECT_EQ(ferry->Wait(), 0);
  ExpectExactlyOnce(1, 6000);
}

// A one-shot run with every broker unreachable exits 1 after --max-wait and says why, instead of
// retrying forever (issue 16); the next run, with the brokers back, ingests everything once.
TEST_F(KafkaPipelineTest, UntilCaughtUpWithEveryBrokerDownExitsAfterMaxWait) {
  std::string config = WriteConfig();
  ASSERT_EQ(StartProducer("events", 500, 1, 0)->Wait(), 0);
  EXPECT_EQ(Control("down all"), "ok");
  const auto start = std::chrono::steady_clock::now();
  CommandResult down =
      RunCommand({kFerry, "run", "--config", config, "--until-caught-up", "--max-wait", "3s"});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(down.exit_code, 1) << down.err;
  EXPECT_NE(down.err.find("no contact with the broker"), std::string::npos) << down.err;
  // Bounded: it gave up (the test's own generous bound, not a performance threshold).
  EXPECT_LT(took, seconds(120));
  CommandResult usage =
      RunCommand({kFerry, "run", "--config", config, "--until-caught-up", "--max-wait", "soon"});
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  EXPECT_NE(usage.err.find("--max-wait"), std::string::npos) << usage.err;
  EXPECT_EQ(Control("up all"), "ok");
  CommandResult up = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  EXPECT_EQ(up.exit_code, 0) << up.err;
  ExpectExactlyOnce(1, 500);
}

TEST_F(KafkaPipelineTest, ANewTopicMatchingTheRegexIsPickedUpWhileRunning) {
  std::string config = WriteConfig({"^events.*"});
  ASSERT_EQ(StartProducer("events", 1000, 1, 0)->Wait(), 0);
  auto ferry = StartFerry(config);
  ASSERT_GE(WaitForRows(1000), 1000u);
  EXPECT_EQ(Control("topic events-new 2"), "ok");
  ASSERT_EQ(StartProducer("events-new", 1000, 1001, 0)->Wait(), 0);
  EXPECT_EQ(WaitForRows(2000), 2000u);
  kill(ferry->pid(), SIGTERM);
  EXPECT_EQ(ferry->Wait(), 0);
  KafkaTable t = e2e::ReadKafkaTable(table());
  std::vector<int64_t> expected(2000);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_TRUE(t.ids == expected);
  EXPECT_EQ(t.txns.count("events/kafka/events-new/0") + t.txns.count("events/kafka/events-new/1"),
            2u);
}

// Issue 6's bad-record matrix: every kind of bad message ends in the dead-letter table with its
// reason, exactly once, even when ferry is killed between the dead-letter commit and the main
// commit; good + dead-letter = published. The table is partitioned by a derived column.
TEST_F(KafkaPipelineTest, BadRecordsGoToTheDeadLetterTableExactlyOnce) {
  const int kPerPartition = 500;
  auto payload = [](int32_t partition, int i) -> std::string {
    int64_t id = partition * 100000 + i;
    switch (i % 50) {
      case 7:
        return R"({"id": )";  // malformed JSON
      case 17:
        return R"({"id": "seventeen", "payload": "wrong type"})";
      case 27:
        return R"({"id": 1e30, "payload": "overflow"})";
      case 37:
        return fmt::format("{{\"id\": {}, \"payload\": \"\xff\xfe bad utf-8\"}}", id);
      case 47:
        return R"({"payload": "missing the required id"})";
      default:
        return fmt::format(
            R"({{"id": {}, "dateTime": "11/{:02}/2026 - 07:10:00 +0000", "payload": "test #{}"}})",
            id, 1 + i % 3, id);
    }
  };
  for (int32_t p = 0; p < 4; ++p) {
    ASSERT_TRUE(source::kafka::testing::Produce(brokers_, "events", p, kPerPartition, [&](int i) {
                  return payload(p, i);
                }).ok());
  }
  std::string dead = (dir_ / "dead").string();
  std::string path = e2e::WriteConfig(
      dir_ / "ferry.toml",
      {{.table = table(),
        .schema = "id BIGINT NOT NULL, dateTime STRING, payload STRING",
        .keys = fmt::format("partition_by = [\"date_only\"]\non_bad_record = \"dead_letter\"\n"
                            "dead_letter_table = \"{}\"",
                            dead),
        .source = e2e::KafkaSection({.brokers = brokers_, .group_id = "ferry-test", .start = ""}),
        .sections = "[[pipeline.columns]]\nname = \"date_only\"\n"
                    "expr = \"from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z'), "
                    "'MM/dd/yyyy')\"",
        .max_rows = 300}});
  // Killed between a dead-letter commit and its batch's commit.
  setenv("FERRY_FAILPOINTS", "pipeline.after_dead_letter_commit=crash@2", 1);
  CommandResult crashed = RunCommand({kFerry, "run", "--config", path, "--until-caught-up"});
  unsetenv("FERRY_FAILPOINTS");
  EXPECT_EQ(crashed.exit_code, 128 + SIGKILL) << crashed.err;
  CommandResult r = RunCommand({kFerry, "run", "--config", path, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  e2e::TableContents good = e2e::ReadTable(table());
  e2e::TableContents bad = e2e::ReadTable(dead);
  const size_t bad_per_partition = 5 * (kPerPartition / 50);
  EXPECT_EQ(bad.rows.size(), 4 * bad_per_partition);
  EXPECT_EQ(good.rows.size(), 4 * (kPerPartition - bad_per_partition));
  std::set<std::string> dead_positions;
  std::map<std::string, int> reasons;
  for (const std::string& row : bad.rows) {
    EXPECT_TRUE(dead_positions
                    .insert(e2e::Field(row, "source_partition") + "@" + e2e::Field(row, "position"))
                    .second)
        << "dead-lettered twice: " << row;
    std::string error = e2e::Field(row, "error");
    EXPECT_NE(error.find("topic events partition"), std::string::npos) << error;
    reasons[error.substr(error.find("offset"))]++;
  }
  std::set<int64_t> ids;
  for (const std::string& row : good.rows) {
    EXPECT_TRUE(ids.insert(e2e::IntField(row, "id")).second) << "duplicate " << row;
    EXPECT_EQ(e2e::Field(row, "date_only").substr(0, 3), "11/") << row;
  }
  // The table is partitioned by the derived column.
  for (const std::string& file : good.files) {
    EXPECT_NE(file.find("/date_only=11%2F0"), std::string::npos) << file;
  }
  for (int32_t p = 0; p < 4; ++p) {
    EXPECT_EQ(good.txns[fmt::format("events/kafka/events/{}", p)], kPerPartition - 1);
  }
}

// A `headers` metadata column through `ferry run`: every message's headers land in the table,
// value for value (the source reads headers only for such a pipeline: kafka_source_options.h).
// Without the column the same run writes no headers anywhere and still holds every id.
TEST_F(KafkaPipelineTest, AHeadersColumnHoldsEachMessagesHeaders) {
  const int kPerPartition = 300;
  for (int32_t p = 0; p < 4; ++p) {
    ASSERT_TRUE(source::kafka::testing::Produce(brokers_, "events", p, kPerPartition, [&](int i) {
                  return fmt::format(R"({{"id": {}, "payload": "test #{}"}})", p * 100000 + i, i);
                }).ok());
  }
  auto config = [&](const std::string& name, const std::string& metadata) {
    return e2e::WriteConfig(
        dir_ / (name + ".toml"),
        {{.id = name,
          .table = (dir_ / name).string(),
          .schema = "id BIGINT NOT NULL, payload STRING",
          .metadata_columns = metadata,
          .source = e2e::KafkaSection(
              {.brokers = brokers_, .group_id = "ferry-" + name, .assignment = "manual"}),
          .max_rows = 500}});
  };
  for (const std::string& name : {std::string("with"), std::string("without")}) {
    std::string metadata = R"(offset = "_offset", partition = "_partition")";
    if (name == "with") {
      metadata += R"(, headers = "_headers")";
    }
    CommandResult r =
        RunCommand({kFerry, "run", "--config", config(name, metadata), "--until-caught-up"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    e2e::TableContents t = e2e::ReadTable((dir_ / name).string());
    ASSERT_EQ(t.rows.size(), 4u * kPerPartition) << name;
    std::set<int64_t> ids;
    for (const std::string& row : t.rows) {
      EXPECT_TRUE(ids.insert(e2e::IntField(row, "id")).second) << "duplicate " << row;
      int64_t offset = e2e::IntField(row, "_offset");
      if (name == "with") {
        // Produce() sends one header, seq = the message's index in its partition (= its offset).
        std::string headers = e2e::Field(row, "_headers");
        EXPECT_NE(headers.find("seq"), std::string::npos) << row;
        EXPECT_NE(headers.find(std::to_string(offset)), std::string::npos) << row;
      } else {
        EXPECT_EQ(row.find("_headers"), std::string::npos) << row;
      }
    }
    e2e::ExpectDuckDbCounts(t.files, "id", 4u * kPerPartition);
  }
}

// format = "debezium-json" through `ferry run` (docs/cdc.md): Debezium change events, bare and
// with the schema wrapper, become rows with their op and source columns; the tombstone after the
// delete is consumed without a row; an envelope without op goes to the dead-letter table.
TEST_F(KafkaPipelineTest, DebeziumEnvelopesBecomeRowsWithOpAndSourceColumns) {
  auto change = [](std::string_view op, std::string_view before, std::string_view after, int n) {
    return fmt::format(
        R"({{"before":{},"after":{},"source":{{"connector":"postgresql","db":"shop",)"
        R"("table":"customers","lsn":{},"ts_ms":{}}},"op":"{}","ts_ms":{}}})",
        before, after, 100 + n, 1700000000000 + n, op, 1700000000500 + n);
  };
  const std::vector<std::string> values = {
      change("c", "null", R"({"id":1,"name":"a"})", 0),
      R"({"schema":{"type":"struct","fields":[]},"payload":)" +
          change("r", "null", R"({"id":2,"name":"b"})", 1) + "}",
      change("u", R"({"id":1,"name":"a"})", R"({"id":1,"name":"a2"})", 2),
      change("d", R"({"id":2,"name":null})", "null", 3),
      "",  // the tombstone after the delete
      R"({"before":null,"after":{"id":9}})",
  };
  const std::vector<int> keys = {1, 2, 1, 2, 2, 9};
  ASSERT_TRUE(
      source::kafka::testing::Produce(
          brokers_, "events", 0, static_cast<int>(values.size()),
          [&](int i) { return values[static_cast<size_t>(i)]; },
          [&](int i) { return fmt::format(R"({{"id":{}}})", keys[static_cast<size_t>(i)]); })
          .ok());
  std::string dead = (dir_ / "dead").string();
  std::string path = e2e::WriteConfig(
      dir_ / "ferry.toml",
      {{.table = table(),
        .schema = "id BIGINT NOT NULL, name STRING, _op STRING, _lsn BIGINT, _source_ts TIMESTAMP",
        .metadata_columns = R"(offset = "_offset")",
        .keys = fmt::format("on_bad_record = \"dead_letter\"\ndead_letter_table = \"{}\"", dead),
        .source = e2e::KafkaSection(
            {.brokers = brokers_, .group_id = "ferry-cdc", .assignment = "manual"}),
        .sections = "[pipeline.decode]\nformat = \"debezium-json\"\n"
                    "envelope_columns = { op = \"_op\", \"source.lsn\" = \"_lsn\", "
                    "\"source.ts_ms\" = \"_source_ts\" }",
        .max_rows = 100}});
  CommandResult check = RunCommand({kFerry, "config", "check", path});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  CommandResult r = RunCommand({kFerry, "run", "--config", path, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  e2e::TableContents t = e2e::ReadTable(table());
  std::vector<std::string> got;
  for (const std::string& row : t.rows) {
    got.push_back(fmt::format("{} {} {} {} {} {}", e2e::Field(row, "_offset"),
                              e2e::Field(row, "id"), e2e::Field(row, "name"),
                              e2e::Field(row, "_op"), e2e::Field(row, "_lsn"),
                              e2e::Field(row, "_source_ts")));
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{
                     "0 1 a c 100 1700000000000000", "1 2 b r 101 1700000000001000",
                     "2 1 a2 u 102 1700000000002000", "3 2 null d 103 1700000000003000"}));
  e2e::TableContents bad = e2e::ReadTable(dead);
  ASSERT_EQ(bad.rows.size(), 1u);
  EXPECT_EQ(e2e::Field(bad.rows[0], "position"), "5");
  EXPECT_NE(e2e::Field(bad.rows[0], "error").find("field 'op': missing"), std::string::npos)
      << bad.rows[0];
  EXPECT_EQ(t.txns["events/kafka/events/0"], 5);
  e2e::ExpectDuckDbCounts(t.files, "_offset", 4);
}

// Producers that sent every message twice, ferry killed twice along the way: each id once.
TEST_F(KafkaPipelineTest, DedupKeepsEachIdOnceAcrossKills) {
  std::string config = WriteConfig({"events"}, "", "", R"(dedup = { key = "id", window = "1h" })");
  auto first = StartProducer("events", 4000, 1, 2000);
  auto second = StartProducer("events", 4000, 1, 2000);
  for (int kill_at : {1500, 3000}) {
    auto ferry = StartFerry(config);
    WaitForRows(static_cast<size_t>(kill_at));
    kill(ferry->pid(), SIGKILL);
    EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);
  }
  EXPECT_EQ(first->Wait(), 0);
  EXPECT_EQ(second->Wait(), 0);
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  KafkaTable t = e2e::ReadKafkaTable(table());
  std::vector<int64_t> expected(4000);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_TRUE(t.ids == expected) << t.ids.size() << " rows";
  // The last run loaded the index kept beside the table instead of scanning the table.
  EXPECT_NE(r.err.find("dedup index loaded"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(table() + "/_ferry/dedup/events/base.idx"));
}

// A small max_memory (docs/memory.md): 24 MiB leaves each batch 1.5 MiB, so the budget, not
// max_rows, max_bytes or max_latency, cuts the batches; a SIGKILL mid-way and a catch-up run
// still leave each id exactly once. `config check` names the keys that do not fit.
TEST_F(KafkaPipelineTest, ASmallMaxMemoryCutsBatchesAndKeepsEveryMessageOnce) {
  std::string config = WriteConfig();
  {
    std::ifstream in(config);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string batch = "max_rows = 700\nmax_latency = \"200ms\"";
    ASSERT_NE(text.find(batch), std::string::npos);
    text.replace(text.find(batch), batch.size(),
                 "max_rows = 1000000\nmax_bytes = \"256MB\"\nmax_latency = \"60s\"");
    std::ofstream(config) << "max_memory = \"24MiB\"\n" << text;
  }
  CommandResult check = RunCommand({kFerry, "config", "check", config});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_NE(check.out.find("pipeline[0].batch.max_bytes 244.1 MiB is more than a batch may hold "
                           "under max_memory 24 MiB"),
            std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("batches are cut at 1.5 MiB"), std::string::npos) << check.out;

  // 30,000 messages of about 400 bytes: about 3 MiB in each of the 4 partitions (under the
  // mock's 5 MiB retention), about 10 MiB decoded.
  constexpr int64_t kCount = 30000;
  CommandResult produced = RunCommand(
      {kFerry, "produce", "kafka", "--brokers", brokers_, "--topic", "events", "--count",
       std::to_string(kCount), "--key", "k{{seq}}", "--timeout", "120", "--template",
       R"({"id": {{seq}}, "dateTime": "{{now:MM/dd/yyyy - HH:mm:ss Z}}", "payload": "{{rand:300}}"})"});
  ASSERT_EQ(produced.exit_code, 0) << produced.err;

  auto ferry = StartFerry(config);
  ASSERT_GE(WaitForRows(3000), 3000u);
  ASSERT_EQ(kill(ferry->pid(), SIGKILL), 0);
  EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);

  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("batches are cut at 1.5 MiB"), std::string::npos) << r.err;
  ExpectExactlyOnce(1, kCount);
  // The killed run committed only when the budget's byte cap fired (max_rows and max_latency
  // are far off), and the catch-up run cut the rest at least once before its final commit.
  EXPECT_GE(e2e::ReadKafkaTable(table()).files.size(), 3u);
}

}  // namespace
}  // namespace ferry

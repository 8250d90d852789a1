// `ferry run` against a real nats-server (JetStream file store) end to end, on Debian's 2.9.10 and
// on the pinned current release (TestedNatsServers()): the restart scenario
// reported against nats-spark-connector, a batch slower than any ack wait, a server killed
// mid-stream, two filters, a retention overrun, a WorkQueue stream, two processes on one filter.
// Every test ends by reading the table back (ferry's reader and DuckDB): each message once.
// Label: integration.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config_toml.h"
#include "jetstream_test_client.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"
#include <nlohmann/json.hpp>

#include "ferry/testing/nats_server.h"
#include "ferry/testing/wait_until.h"

namespace ferry {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";

// The payload as it is, into the column `payload`.
constexpr char kRawDecode[] = "[pipeline.decode]\nformat = \"raw\"\ncolumn = \"payload\"";

class JetStreamPipelineTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(e2e::StartNatsServer(&server_, &client_, GetParam()));
    if (IsSkipped()) {
      return;
    }
    dir_ = e2e::FreshTestDir("ferry-js-pipeline");
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string table() const { return (dir_ / "table").string(); }

  std::string WriteConfig(const std::vector<std::string>& subjects,
                          const std::string& extra_pipeline_keys = "") {
    return e2e::WriteConfig(
        dir_ / "ferry.toml",
        {{.id = "newstream",
          .table = table(),
          .schema = "payload STRING",
          .metadata_columns = R"(sequence = "_sequence", subject = "_subject")",
          .keys = extra_pipeline_keys,
          .source = e2e::JetStreamSection({.servers = server_->url(),
                                           .stream = "newstream",
                                           .subjects = subjects,
                                           .start = "all",
                                           .extra = R"(reconnect_wait = "200ms")"}),
          .sections = kRawDecode,
          .max_rows = 700}});
  }

  std::unique_ptr<ChildProcess> StartFerry(const std::string& config) {
    auto p = ChildProcess::Start({kFerry, "run", "--config", config});
    EXPECT_TRUE(p.ok());
    return std::move(*p);
  }
  std::unique_ptr<ChildProcess> StartProducer(const std::string& subject, int count, int first,
                                              int rate) {
    auto p = ChildProcess::Start({kFerry, "produce", "nats", "--server", server_->url(), "--stream",
                                  "newstream", "--subject", subject, "--count",
                                  std::to_string(count), "--first", std::to_string(first), "--rate",
                                  std::to_string(rate), "--template", "test #{{seq}}"});
    EXPECT_TRUE(p.ok());
    return std::move(*p);
  }
  size_t WaitForRows(size_t rows, seconds deadline = seconds(120)) {
    return e2e::WaitForRows(table(), rows, deadline);
  }
  // Payloads "test #first" .. "test #last" each exactly once (ferry's reader and DuckDB).
  void ExpectExactlyOnce(int first, int last, const e2e::TableContents& t) {
    std::multiset<std::string> payloads;
    for (const std::string& row : t.rows) {
      payloads.insert(e2e::Field(row, "payload"));
    }
    std::multiset<std::string> expected;
    for (int i = first; i <= last; ++i) {
      expected.insert("test #" + std::to_string(i));
    }
    ASSERT_EQ(payloads.size(), expected.size());
    EXPECT_TRUE(payloads == expected) << "payloads differ (duplicates or missing)";
    e2e::ExpectDuckDbCounts(t.files, "payload", expected.size());
  }

  std::unique_ptr<testing::NatsServer> server_;
  std::unique_ptr<testing::JetStreamTestClient> client_;
  std::filesystem::path dir_;
};

// nats-spark-connector duplicated the last batch here: 10,000 published, 10,100 rows.
TEST_P(JetStreamPipelineTest, ReportedScenarioSigkillMidWayAndRestart) {
  ASSERT_TRUE(client_->AddStream({.name = "newstream", .subjects = {"newsub"}}).ok());
  std::string config = WriteConfig({"newsub"});
  auto producer = StartProducer("newsub", 10000, 1, 2500);
  auto ferry = StartFerry(config);
  ASSERT_GE(WaitForRows(2000), 2000u);
  kill(ferry->pid(), SIGKILL);
  EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);
  EXPECT_LT(e2e::ReadTable(table()).rows.size(), 10000u);
  EXPECT_EQ(producer->Wait(), 0);
  // The restart resumes from the table: no consumer state, no ack wait to sit out.
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  e2e::TableContents t = e2e::ReadTable(table());
  ExpectExactlyOnce(1, 10000, t);
  EXPECT_EQ(t.txns["newstream/jetstream/newstream/newsub"], 10000);
}

// The tests that run on one server only: what they check does not depend on the server's
// version, and each costs more than half a minute.
class JetStreamPipelineOneServerTest : public JetStreamPipelineTest {};

// A batch held open longer than the server's default ack wait (30 s): nothing is redelivered
// into the table because ferry's consumer does not depend on acks (AckNone on every server, so
// this runs on Debian's only: 37 s, most of the suite's time on one server).
TEST_P(JetStreamPipelineOneServerTest, ABatchSlowerThanAnyAckWait) {
  ASSERT_TRUE(client_->AddStream({.name = "newstream", .subjects = {"newsub"}}).ok());
  ASSERT_TRUE(client_->Publish("newsub", 3000, "test #").ok());
  std::string config = WriteConfig({"newsub"});
  setenv("FERRY_FAILPOINTS", "pipeline.before_commit=sleep(35000)@1", 1);
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  unsetenv("FERRY_FAILPOINTS");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  e2e::TableContents t = e2e::ReadTable(table());
  ExpectExactlyOnce(1, 3000, t);
}

TEST_P(JetStreamPipelineTest, ServerKilledAndRestartedMidStream) {
  ASSERT_TRUE(client_->AddStream({.name = "newstream", .subjects = {"newsub"}}).ok());
  ASSERT_TRUE(client_->Publish("newsub", 5000, "test #").ok());
  client_.reset();
  auto ferry = StartFerry(WriteConfig({"newsub"}));
  ASSERT_GE(WaitForRows(700), 700u);
  ASSERT_TRUE(server_->Kill9().ok());
  std::this_thread::sleep_for(seconds(2));
  ASSERT_TRUE(server_->Restart().ok());
  auto client = testing::JetStreamTestClient::Connect(server_->url());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Publish("newsub", 5000, "test #", 5001).ok());
  EXPECT_EQ(WaitForRows(10000), 10000u);
  kill(ferry->pid(), SIGTERM);
  EXPECT_EQ(ferry->Wait(), 0);
  ExpectExactlyOnce(1, 10000, e2e::ReadTable(table()));
}

TEST_P(JetStreamPipelineTest, TwoFiltersAtDifferentSpeedsKeepTheirOwnPositions) {
  ASSERT_TRUE(client_->AddStream({.name = "newstream", .subjects = {"newsub.>"}}).ok());
  auto fast = StartProducer("newsub.fast", 6000, 1, 3000);
  auto slow = StartProducer("newsub.slow", 600, 6001, 300);
  auto ferry = StartFerry(WriteConfig({"newsub.fast", "newsub.slow"}));
  EXPECT_EQ(fast->Wait(), 0);
  EXPECT_EQ(slow->Wait(), 0);
  EXPECT_EQ(WaitForRows(6600), 6600u);
  kill(ferry->pid(), SIGTERM);
  EXPECT_EQ(ferry->Wait(), 0);
  e2e::TableContents t = e2e::ReadTable(table());
  ExpectExactlyOnce(1, 6600, t);
  auto state = client_->State("newstream");
  ASSERT_TRUE(state.ok());
  // Each filter's position is the sequence of its own last message; one of them is the last.
  int64_t fast_pos = t.txns["newstream/jetstream/newstream/newsub.fast"];
  int64_t slow_pos = t.txns["newstream/jetstream/newstream/newsub.slow"];
  EXPECT_EQ(std::max(fast_pos, slow_pos), static_cast<int64_t>(state->last_seq));
  for (const std::string& row : t.rows) {
    int64_t seq = e2e::IntField(row, "_sequence");
    EXPECT_LE(seq, e2e::Field(row, "_subject") == "newsub.fast" ? fast_pos : slow_pos);
  }
}

TEST_P(JetStreamPipelineTest, RetentionOverrunStopsOrIsRecorded) {
  ASSERT_TRUE(
      client_->AddStream({.name = "newstream", .subjects = {"newsub"}, .max_msgs = 1000}).ok());
  ASSERT_TRUE(client_->Publish("newsub", 500, "test #").ok());
  std::string config = WriteConfig({"newsub"});
  ASSERT_EQ(RunCommand({kFerry, "run", "--config", config, "--until-caught-up"}).exit_code, 0);
  // 3,000 more while ferry is down: the stream keeps the last 1,000 (2501..3500).
  ASSERT_TRUE(client_->Publish("newsub", 3000, "test #", 501).ok());
  CommandResult failed = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_NE(failed.err.find("501"), std::string::npos) << failed.err;
  EXPECT_EQ(e2e::ReadTable(table()).rows.size(), 500u);

  config = WriteConfig({"newsub"}, R"(on_gap = "continue")");
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  e2e::TableContents t = e2e::ReadTable(table());
  EXPECT_EQ(t.rows.size(), 1500u);
  EXPECT_EQ(t.txns["newstream/jetstream/newstream/newsub"], 3500);
  // The skipped range is recorded in the commit that follows it.
  std::string history = RunCommand({kFerry, "table", "history", table(), "--json"}).out;
  EXPECT_NE(history.find(R"(\"first\":501,\"last\":2500)"), std::string::npos) << history;
}

TEST_P(JetStreamPipelineTest, AWorkQueueStreamIsRefused) {
  ASSERT_TRUE(
      client_
          ->AddStream(
              {.name = "newstream", .subjects = {"newsub"}, .retention = js_WorkQueuePolicy})
          .ok());
  CommandResult r =
      RunCommand({kFerry, "run", "--config", WriteConfig({"newsub"}), "--until-caught-up"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("WorkQueue"), std::string::npos) << r.err;
}

TEST_P(JetStreamPipelineTest, TwoProcessesOnOneFilterAreFencedNotDuplicated) {
  ASSERT_TRUE(client_->AddStream({.name = "newstream", .subjects = {"newsub"}}).ok());
  std::string config = WriteConfig({"newsub"});
  auto producer = StartProducer("newsub", 6000, 1, 3000);
  auto a = StartFerry(config);
  auto b = StartFerry(config);
  EXPECT_EQ(producer->Wait(), 0);
  EXPECT_EQ(WaitForRows(6000), 6000u);
  kill(a->pid(), SIGTERM);
  kill(b->pid(), SIGTERM);
  EXPECT_EQ(a->Wait(), 0);
  EXPECT_EQ(b->Wait(), 0);
  ExpectExactlyOnce(1, 6000, e2e::ReadTable(table()));
}

// The bad-record matrix on JetStream: malformed JSON, a wrong type, an overflow, invalid UTF-8
// and a missing required field end in the dead-letter table exactly once, across a crash
// between the dead-letter commit and the main commit.
TEST_P(JetStreamPipelineTest, BadRecordsGoToTheDeadLetterTableExactlyOnce) {
  ASSERT_TRUE(client_->AddStream({.name = "newstream", .subjects = {"newsub"}}).ok());
  const int kCount = 1000;
  int bad = 0;
  for (int i = 1; i <= kCount; ++i) {
    std::string body;
    switch (i % 40) {
      case 5:
        body = R"({"id": )";
        break;
      case 15:
        body = R"({"id": true})";
        break;
      case 25:
        body = R"({"id": 123456789012345678901234567890})";
        break;
      case 35:
        body = fmt::format("{{\"id\": {}, \"payload\": \"\xc3\x28\"}}", i);
        break;
      case 0:
        body = R"({"payload": "no id"})";
        break;
      default:
        body = fmt::format(R"({{"id": {}, "payload": "test #{}"}})", i, i);
    }
    bad += (i % 40 == 5 || i % 40 == 15 || i % 40 == 25 || i % 40 == 35 || i % 40 == 0) ? 1 : 0;
    jsPubAck* ack = nullptr;
    ASSERT_EQ(js_Publish(&ack, client_->js(), "newsub", body.data(), static_cast<int>(body.size()),
                         nullptr, nullptr),
              NATS_OK);
    jsPubAck_Destroy(ack);
  }
  std::string dead = (dir_ / "dead").string();
  std::string path = e2e::WriteConfig(
      dir_ / "ferry.toml",
      {{.id = "newstream",
        .table = table(),
        .schema = "id BIGINT NOT NULL, payload STRING",
        .metadata_columns = R"(sequence = "_sequence")",
        .keys = fmt::format("on_bad_record = \"dead_letter\"\ndead_letter_table = \"{}\"", dead),
        .source = e2e::JetStreamSection(
            {.servers = server_->url(), .stream = "newstream", .subjects = {"newsub"}}),
        .max_rows = 150}});
  setenv("FERRY_FAILPOINTS", "pipeline.after_dead_letter_commit=crash@3", 1);
  CommandResult crashed = RunCommand({kFerry, "run", "--config", path, "--until-caught-up"});
  unsetenv("FERRY_FAILPOINTS");
  EXPECT_EQ(crashed.exit_code, 128 + SIGKILL) << crashed.err;
  CommandResult r = RunCommand({kFerry, "run", "--config", path, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  e2e::TableContents good = e2e::ReadTable(table());
  e2e::TableContents dead_rows = e2e::ReadTable(dead);
  EXPECT_EQ(dead_rows.rows.size(), static_cast<size_t>(bad));
  EXPECT_EQ(good.rows.size() + dead_rows.rows.size(), static_cast<size_t>(kCount));
  std::set<std::string> positions;
  for (const std::string& row : dead_rows.rows) {
    EXPECT_TRUE(positions.insert(e2e::Field(row, "position")).second) << row;
    EXPECT_NE(e2e::Field(row, "error").find("stream newstream subject newsub sequence"),
              std::string::npos)
        << row;
  }
  EXPECT_EQ(good.txns["newstream/jetstream/newstream/newsub"], kCount);
}

// A routed pipeline on a stream with subjects orders.<region>.<kind>, one table per region and
// kind by subject token (docs/decisions/routing.md), through a SIGKILL: every message in exactly
// one table, once, in the table its subject names.
TEST_P(JetStreamPipelineTest, RoutedBySubjectTokensThroughAKill) {
  ASSERT_TRUE(client_->AddStream({.name = "newstream", .subjects = {"orders.>"}}).ok());
  const std::vector<std::string> subjects = {"orders.eu.created", "orders.eu.paid",
                                             "orders.us.created", "orders.us.paid"};
  const int per_subject = 1500;
  std::vector<std::unique_ptr<ChildProcess>> producers;
  for (size_t i = 0; i < subjects.size(); ++i) {
    producers.push_back(
        StartProducer(subjects[i], per_subject, static_cast<int>(i) * per_subject + 1, 600));
  }
  std::string path = e2e::WriteConfig(
      dir_ / "ferry.toml",
      {{.id = "orders",
        .table = dir_.string() + "/{subject:2}_{subject:3}",
        .schema = "payload STRING",
        .metadata_columns = R"(sequence = "_sequence", subject = "_subject")",
        .source = e2e::JetStreamSection({.servers = server_->url(),
                                         .stream = "newstream",
                                         .subjects = {"orders.>"},
                                         .start = "all"}),
        .sections = fmt::format("[pipeline.table_name_rules]\nfallback = \"{}/other\"\n\n"
                                "[pipeline.routing]\nposition_commit_interval = \"200ms\"\n\n{}",
                                dir_.string(), kRawDecode),
        .max_rows = 300}});
  auto table_of = [&](const std::string& subject) {
    return (dir_ / (subject.substr(7, 2) + "_" + subject.substr(10))).string();
  };
  auto total = [&] {
    size_t n = 0;
    for (const std::string& s : subjects) {
      n += e2e::ReadTable(table_of(s)).rows.size();
    }
    return n;
  };
  auto ferry = StartFerry(path);
  testing::WaitUntil([&] { return total() >= 1500; }, seconds(60));
  kill(ferry->pid(), SIGKILL);
  EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);
  EXPECT_LT(total(), subjects.size() * per_subject) << "killed after the end: proves nothing";
  for (auto& p : producers) {
    EXPECT_EQ(p->Wait(), 0);
  }
  CommandResult r = RunCommand({kFerry, "run", "--config", path, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::multiset<std::string> payloads;
  std::vector<std::string> files;
  for (size_t i = 0; i < subjects.size(); ++i) {
    e2e::TableContents t = e2e::ReadTable(table_of(subjects[i]));
    for (const std::string& row : t.rows) {
      payloads.insert(e2e::Field(row, "payload"));
      EXPECT_EQ(e2e::Field(row, "_subject"), subjects[i]) << row;
      int n = std::stoi(e2e::Field(row, "payload").substr(6));
      EXPECT_EQ((n - 1) / per_subject, static_cast<int>(i)) << row;
    }
    files.insert(files.end(), t.files.begin(), t.files.end());
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "other"));
  std::multiset<std::string> expected;
  for (int i = 1; i <= static_cast<int>(subjects.size()) * per_subject; ++i) {
    expected.insert("test #" + std::to_string(i));
  }
  ASSERT_EQ(payloads.size(), expected.size());
  EXPECT_TRUE(payloads == expected) << "payloads differ (duplicates or missing)";
  e2e::ExpectDuckDbCounts(files, "payload", expected.size());
  // `ferry status`: per table, the stream filter's position each table holds; the resume
  // position is the stream's last sequence after the run to the end, so no table lags.
  CommandResult status = RunCommand({kFerry, "status", "--config", path, "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  std::map<std::string, nlohmann::json> by_table;
  std::istringstream lines(status.out);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json row = nlohmann::json::parse(line);
    EXPECT_EQ(row["partition"], "jetstream/newstream/orders.>") << line;
    by_table[row["table"].get<std::string>()] = row;
  }
  ASSERT_EQ(by_table.size(), subjects.size() + 1) << status.out;  // and the fallback, empty
  EXPECT_TRUE(by_table[(dir_ / "other").string()]["position"].is_null()) << status.out;
  for (const std::string& subject : subjects) {
    const nlohmann::json& row = by_table[table_of(subject)];
    CommandResult inspect = RunCommand({kFerry, "table", "inspect", table_of(subject), "--json"});
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const nlohmann::json inspected = nlohmann::json::parse(inspect.out);
    EXPECT_EQ(row["position"], inspected["txns"]["orders/jetstream/newstream/orders.>"]) << row;
    EXPECT_EQ(row["head"], static_cast<int64_t>(subjects.size()) * per_subject) << row;
    EXPECT_EQ(row["resume"], row["head"]) << row;
    EXPECT_EQ(row["lag"], 0) << row;
  }
}

INSTANTIATE_TEST_SUITE_P(Servers, JetStreamPipelineTest,
                         ::testing::ValuesIn(testing::TestedNatsServers()),
                         testing::NatsServerParamName());
INSTANTIATE_TEST_SUITE_P(Servers, JetStreamPipelineOneServerTest,
                         ::testing::Values(testing::kDebianNatsServer),
                         testing::NatsServerParamName());

}  // namespace
}  // namespace ferry

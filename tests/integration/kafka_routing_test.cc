// A routed pipeline (`table = ".../t_{field:event_type}"`) through the real `ferry` binary and
// the mock Kafka cluster: one topic with four event types, producers running, ferry SIGKILLed
// several times mid-run and restarted, then a run to the end. Verdict (ferry's reader and
// DuckDB): every id in exactly one table, once, in its event type's table. The messages read
// again after the kills are counted from ferry's log and printed. Label: integration.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"

namespace ferry {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using source::kafka::testing::StartMockKafka;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";
constexpr const char* kTypes[] = {"order_created", "order_paid", "order_shipped", "user_signup"};
constexpr int64_t kPerType = 5000;

class KafkaRoutingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = e2e::FreshTestDir("ferry-kafka-routing");
    auto mock = StartMockKafka(kFerry, 3, {"events:4"});
    ASSERT_TRUE(mock.ok()) << mock.status().ToString();
    mock_ = std::move(mock->child);
    brokers_ = mock->bootstrap;
  }
  void TearDown() override {
    mock_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string Table(std::string_view type) const {
    return (dir_ / ("t_" + std::string(type))).string();
  }

  // `extra`: more of the pipeline's tables ([pipeline.maintenance]).
  std::string WriteConfig(const std::string& extra = "") {
    std::string path = (dir_ / "ferry.toml").string();
    std::ofstream(path) << fmt::format(R"toml([[pipeline]]
id = "events"
table = "{0}/t_{{field:event_type}}"
schema = "id BIGINT NOT NULL, event_type STRING, payload STRING"
metadata_columns = {{ offset = "_offset", partition = "_partition" }}

[pipeline.table_name_rules]
fallback = "{0}/t_unknown"

[pipeline.routing]
position_commit_interval = "300ms"

[pipeline.kafka]
brokers = "{1}"
topics = ["events"]
group_id = "ferry-routing-test"
start = "earliest"
properties = {{ "session.timeout.ms" = "6000", "heartbeat.interval.ms" = "500" }}

[pipeline.batch]
max_rows = 300
max_latency = "200ms"
{2}
)toml",
                                       dir_.string(), brokers_, extra);
    return path;
  }

  // One producer per type: ids type * kPerType + 1 .. (type + 1) * kPerType, interleaved in the
  // topic's partitions as they run at once.
  std::vector<std::unique_ptr<ChildProcess>> StartProducers(int64_t per_type = kPerType) {
    std::vector<std::unique_ptr<ChildProcess>> out;
    for (int t = 0; t < 4; ++t) {
      std::string tmpl = fmt::format(
          R"({{"id": {{{{seq}}}}, "event_type": "{}", "payload": "p{{{{seq}}}}"}})", kTypes[t]);
      auto p = ChildProcess::Start({kFerry, "produce", "kafka", "--brokers", brokers_, "--topic",
                                    "events", "--count", std::to_string(per_type), "--start",
                                    std::to_string(t * kPerType + 1), "--rate", "400", "--key",
                                    "k{{seq}}", "--template", tmpl});
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      out.push_back(std::move(*p));
    }
    return out;
  }

  size_t TotalRows() {
    size_t n = 0;
    for (const char* type : kTypes) {
      n += e2e::ReadTable(Table(type)).rows.size();
    }
    return n;
  }

  std::filesystem::path dir_;
  std::unique_ptr<ChildProcess> mock_;
  std::string brokers_;
};

TEST_F(KafkaRoutingTest, FourEventTypesToFourTablesThroughKillsExactlyOnce) {
  std::string config = WriteConfig();
  CommandResult check = RunCommand({kFerry, "config", "check", config});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  auto producers = StartProducers();
  for (int kill_round = 0; kill_round < 3; ++kill_round) {
    auto ferry = ChildProcess::Start({kFerry, "run", "--config", config});
    ASSERT_TRUE(ferry.ok());
    size_t goal = TotalRows() + 1500;
    for (int i = 0; i < 600 && TotalRows() < goal; ++i) {
      std::this_thread::sleep_for(milliseconds(100));
    }
    ASSERT_EQ(kill((*ferry)->pid(), SIGKILL), 0);
    EXPECT_EQ((*ferry)->Wait(), 128 + SIGKILL);
  }
  EXPECT_LT(TotalRows(), 4u * kPerType) << "killed after the end: the test proves nothing";
  for (auto& p : producers) {
    EXPECT_EQ(p->Wait(), 0);
  }
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Re-reads of the last run: messages it polled that their table held already (the router's
  // last log line counts them).
  std::smatch counted;
  std::regex reread(R"(pipeline events: stopped; (\d+) messages were read again)");
  ASSERT_TRUE(std::regex_search(r.err, counted, reread)) << r.err;
  const int64_t rereads = std::stoll(counted[1]);

  std::map<int64_t, int> seen;
  std::vector<std::string> files;
  for (int t = 0; t < 4; ++t) {
    e2e::TableContents contents = e2e::ReadTable(Table(kTypes[t]));
    for (const std::string& row : contents.rows) {
      int64_t id = e2e::IntField(row, "id");
      ++seen[id];
      EXPECT_EQ(e2e::Field(row, "event_type"), kTypes[t]) << row;
      EXPECT_EQ((id - 1) / kPerType, t) << "id " << id << " in table " << kTypes[t];
    }
    files.insert(files.end(), contents.files.begin(), contents.files.end());
  }
  EXPECT_FALSE(std::filesystem::exists(Table("unknown"))) << "nothing lacks an event_type";
  ASSERT_EQ(seen.size(), 4u * kPerType);
  for (int64_t id = 1; id <= 4 * kPerType; ++id) {
    EXPECT_EQ(seen[id], 1) << "id " << id;
  }
  e2e::ExpectDuckDbCounts(files, "id", 4 * kPerType);
  // `ferry verify` over the four tables together: each table's positions agree with its data,
  // and every id is in exactly one of them, once.
  std::vector<std::string> verify = {kFerry, "verify"};
  for (const char* type : kTypes) {
    verify.push_back(Table(type));
  }
  const std::string total = std::to_string(4 * kPerType);
  for (const std::string& arg : {std::string("--id"), std::string("id"), std::string("--expect"),
                                 total, std::string("--range"), "1.." + total}) {
    verify.push_back(arg);
  }
  CommandResult v = RunCommand(verify);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_NE(v.out.find("OK: every id in exactly one table, once"), std::string::npos) << v.out;
  std::printf(
      "[ routing ] after 3 SIGKILLs, the final run re-read %lld messages that their "
      "table held already (of %lld)\n",
      static_cast<long long>(rereads), static_cast<long long>(4 * kPerType));
}

// [pipeline.maintenance] on a routed pipeline: the scheduled optimize covers every table the
// pipeline routes to (each packed into one file once ingestion is done, an OPTIMIZE commit in
// each log), the scheduled vacuum runs on each too, and the tables still hold every id once.
TEST_F(KafkaRoutingTest, ScheduledMaintenanceCoversEveryRoutedTable) {
  constexpr int64_t kPer = 600;
  std::string config =
      WriteConfig("[pipeline.maintenance]\noptimize_every = \"1s\"\nvacuum_every = \"1s\"\n");
  CommandResult check = RunCommand({kFerry, "config", "check", config});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  auto ferry = ChildProcess::Start({kFerry, "run", "--config", config});
  ASSERT_TRUE(ferry.ok());
  auto producers = StartProducers(kPer);
  for (auto& p : producers) {
    EXPECT_EQ(p->Wait(), 0);
  }
  // Once ingestion is done, the next scheduled optimize packs each table into one file.
  auto packed = [&] {
    for (const char* type : kTypes) {
      e2e::TableContents t = e2e::ReadTable(Table(type));
      if (t.rows.size() != static_cast<size_t>(kPer) || t.files.size() != 1) {
        return false;
      }
    }
    return true;
  };
  for (int i = 0; i < 1200 && !packed(); ++i) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_EQ(kill((*ferry)->pid(), SIGTERM), 0);
  EXPECT_EQ((*ferry)->Wait(), 0) << (*ferry)->Log();
  std::string log = (*ferry)->Log(1 << 20);
  for (int t = 0; t < 4; ++t) {
    SCOPED_TRACE(kTypes[t]);
    e2e::TableContents contents = e2e::ReadTable(Table(kTypes[t]));
    EXPECT_EQ(contents.rows.size(), static_cast<size_t>(kPer));
    EXPECT_EQ(contents.files.size(), 1u);
    std::vector<int64_t> ids;
    for (const std::string& row : contents.rows) {
      ids.push_back(e2e::IntField(row, "id"));
    }
    std::sort(ids.begin(), ids.end());
    ASSERT_EQ(ids.size(), static_cast<size_t>(kPer));
    for (int64_t i = 0; i < kPer; ++i) {
      EXPECT_EQ(ids[static_cast<size_t>(i)], t * kPerType + 1 + i);
    }
    CommandResult history = RunCommand({kFerry, "table", "history", Table(kTypes[t]), "--json"});
    EXPECT_EQ(history.exit_code, 0) << history.err;
    EXPECT_NE(history.out.find("OPTIMIZE"), std::string::npos) << history.out;
    EXPECT_NE(log.find(fmt::format("scheduled vacuum {}:", Table(kTypes[t]))), std::string::npos)
        << log;
  }
}

// `ferry run --until-caught-up --max-wait` on a routed pipeline whose broker is gone: exit 1
// after the wait, saying why, instead of waiting forever.
TEST_F(KafkaRoutingTest, UntilCaughtUpWithTheBrokerGoneExitsAfterMaxWait) {
  std::string config = WriteConfig();
  mock_.reset();  // the cluster goes away
  CommandResult down =
      RunCommand({kFerry, "run", "--config", config, "--until-caught-up", "--max-wait", "3s"});
  EXPECT_EQ(down.exit_code, 1) << down.err;
  EXPECT_NE(down.err.find("pipeline events: no contact with the broker"), std::string::npos)
      << down.err;
  EXPECT_NE(down.err.find("max wait 3000 ms"), std::string::npos) << down.err;
}

}  // namespace
}  // namespace ferry

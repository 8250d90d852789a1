// A routed pipeline (`table = ".../t_{field:event_type}"`) through the real `ferry` binary and
// the mock Kafka cluster: one topic with four event types, producers running, ferry SIGKILLed
// several times mid-run and restarted, then a run to the end. Verdict (ferry's reader and
// DuckDB): every id in exactly one table, once, in its event type's table. The messages read
// again after the kills are counted from ferry's log and printed. While it runs, /metrics has
// per-table series and /api/status per-table partition rows; after it, `ferry status --json`
// lists the four tables with the positions they hold, `ferry verify` finds them through the
// configuration and through the positions table, and fails naming a duplicated id's tables.
// Label: integration.

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config_toml.h"
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
using source::kafka::testing::StartMockKafka;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";
constexpr const char* kTypes[] = {"order_created", "order_paid", "order_shipped", "user_signup"};
constexpr int64_t kPerType = 5000;

int FreePort() {
  Result<int> port = ferry::testing::PickFreePort();
  EXPECT_TRUE(port.ok()) << port.status().ToString();
  return port.ok() ? *port : 0;
}

// One JSON object per line (ferry status --json).
std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      out.push_back(nlohmann::json::parse(line));
    }
  }
  return out;
}

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
    port_ = FreePort();
    return e2e::WriteConfig(
        dir_ / "ferry.toml",
        {{.table = dir_.string() + "/t_{field:event_type}",
          .schema = "id BIGINT NOT NULL, event_type STRING, payload STRING",
          .source = e2e::KafkaSection(
              {.brokers = brokers_,
               .group_id = "ferry-routing-test",
               .properties = R"("session.timeout.ms" = "6000", "heartbeat.interval.ms" = "500")"}),
          .sections = fmt::format("[pipeline.table_name_rules]\nfallback = \"{}/t_unknown\"\n\n"
                                  "[pipeline.routing]\nposition_commit_interval = \"300ms\"",
                                  dir_.string()),
          .max_rows = 300,
          .after = extra}},
        fmt::format("[metrics]\nlisten = \"127.0.0.1:{}\"", port_));
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
  int port_ = 0;
};

// What one scrape of a running routed pipeline showed.
struct Observed {
  std::set<std::string> tables_with_versions;  // ferry_table_version{..., table=T}
  bool tables_open = false;                    // ferry_routing_tables_open{pipeline="events"}
  bool resume_positions = false;               // ferry_routing_resume_position{..., partition}
  bool status_table_rows = false;              // /api/status: "<partition> @ <table>" rows
};

void Observe(httplib::Client& client, const std::vector<std::string>& tables, Observed* seen) {
  if (auto r = client.Get("/metrics"); r && r->status == 200) {
    for (const std::string& t : tables) {
      if (r->body.find(fmt::format("ferry_table_version{{pipeline=\"events\",table=\"{}\"}}", t)) !=
          std::string::npos) {
        seen->tables_with_versions.insert(t);
      }
    }
    seen->tables_open =
        seen->tables_open ||
        r->body.find("ferry_routing_tables_open{pipeline=\"events\"}") != std::string::npos;
    seen->resume_positions =
        seen->resume_positions ||
        r->body.find(
            "ferry_routing_resume_position{pipeline=\"events\",partition=\"kafka/events/") !=
            std::string::npos;
  }
  if (auto r = client.Get("/api/status"); r && r->status == 200) {
    nlohmann::json status = nlohmann::json::parse(r->body);
    for (const nlohmann::json& part : status["pipelines"][0]["partitions"]) {
      std::string key = part["key"];
      seen->status_table_rows = seen->status_table_rows || key.find(" @ ") != std::string::npos;
    }
  }
}

// A table's txns (appId -> version), by `ferry table inspect --json`.
std::map<std::string, int64_t> Txns(const std::string& table) {
  CommandResult r = RunCommand({kFerry, "table", "inspect", table, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, int64_t> out;
  const nlohmann::json inspected = nlohmann::json::parse(r.out);
  for (const auto& [app_id, version] : inspected["txns"].items()) {
    out[app_id] = version.get<int64_t>();
  }
  return out;
}

// After the run to the end: `ferry status` and `ferry verify` of the routed pipeline, then a
// duplicate written into a second table makes `ferry verify` fail naming both tables.
void CheckStatusAndVerify(const std::string& config, const std::vector<std::string>& tables) {
  CommandResult status = RunCommand({kFerry, "status", "--config", config, "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  std::map<std::string, int> rows_per_table;
  std::map<std::string, int64_t> heads;
  std::map<std::string, std::map<std::string, int64_t>> txns;
  for (const std::string& table : tables) {
    txns[table] = Txns(table);
  }
  const std::string fallback =
      (std::filesystem::path(tables[0]).parent_path() / "t_unknown").string();
  for (const nlohmann::json& row : JsonLines(status.out)) {
    const std::string table = row["table"];
    const std::string partition = row["partition"];
    ++rows_per_table[table];
    if (table == fallback) {
      EXPECT_TRUE(row["position"].is_null()) << "nothing went to the fallback: " << row.dump();
    } else {
      ASSERT_TRUE(txns[table].count("events/" + partition)) << row.dump() << "\n" << status.out;
      EXPECT_EQ(row["position"], txns[table]["events/" + partition]) << row.dump();
    }
    // Everything polled is durable after a drain: the resume position is the head, no lag.
    EXPECT_EQ(row["resume"], row["head"]) << row.dump();
    EXPECT_EQ(row["lag"], 0) << row.dump();
    heads[partition] = row["head"];
  }
  // The four tables and the fallback (static: shown though nothing was routed there).
  EXPECT_EQ(rows_per_table.size(), 5u) << status.out;
  for (const std::string& table : {tables[0], tables[1], tables[2], tables[3], fallback}) {
    EXPECT_EQ(rows_per_table[table], 4) << table << " has a row per partition\n" << status.out;
  }
  EXPECT_EQ(heads.size(), 4u);

  const std::string total = std::to_string(4 * kPerType);
  auto verify = [&](std::vector<std::string> how) {
    std::vector<std::string> args = {kFerry, "verify"};
    args.insert(args.end(), how.begin(), how.end());
    for (const std::string& arg : {std::string("--id"), std::string("id"), std::string("--expect"),
                                   total, std::string("--json")}) {
      args.push_back(arg);
    }
    return RunCommand(args);
  };
  CommandResult by_config = verify({"--config", config, "--pipeline", "events"});
  EXPECT_EQ(by_config.exit_code, 0) << by_config.out << by_config.err;
  nlohmann::json report = nlohmann::json::parse(by_config.out);
  EXPECT_EQ(report["tables"].size(), 4u) << by_config.out;
  EXPECT_EQ(report["rows"], 4 * kPerType);
  EXPECT_EQ(report["in_several_tables"], 0);
  EXPECT_EQ(report["ok"], true);
  std::filesystem::path dir = std::filesystem::path(tables[0]).parent_path();
  const std::string positions = (dir / "_ferry_routing_events").string();
  CommandResult by_positions = verify({"--routing", positions});
  EXPECT_EQ(by_positions.exit_code, 0) << by_positions.out << by_positions.err;
  EXPECT_EQ(nlohmann::json::parse(by_positions.out)["tables"].size(), 4u);

  // A data file of the second table committed into the first as well (a hand-written commit
  // with the second table's add action): its ids are in two tables now.
  std::filesystem::path from = tables[1];
  std::filesystem::path to = tables[0];
  std::string add_line;
  for (const auto& entry : std::filesystem::directory_iterator(from / "_delta_log")) {
    if (entry.path().extension() != ".json" || !add_line.empty()) {
      continue;
    }
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("{\"add\"", 0) == 0) {
        add_line = line;
        break;
      }
    }
  }
  ASSERT_FALSE(add_line.empty());
  const std::string file = nlohmann::json::parse(add_line)["add"]["path"];
  std::filesystem::copy_file(from / file, to / file);
  // The next version: the largest NNNNNNNNNNNNNNNNNNNN.json + 1 (a SIGKILLed writer may have
  // left a temporary "<prefix><hex>-NNN...json" beside them: not a version).
  int64_t next = 0;
  for (const auto& entry : std::filesystem::directory_iterator(to / "_delta_log")) {
    const std::string stem = entry.path().stem().string();
    int64_t version = -1;
    const auto [end, ec] = std::from_chars(stem.data(), stem.data() + stem.size(), version);
    if (entry.path().extension() == ".json" && stem.size() == 20 && ec == std::errc() &&
        end == stem.data() + stem.size()) {
      next = std::max<int64_t>(next, version + 1);
    }
  }
  std::ofstream(to / "_delta_log" / fmt::format("{:020d}.json", next)) << add_line << "\n";
  CommandResult dup = verify({"--routing", positions});
  EXPECT_EQ(dup.exit_code, 1) << dup.out << dup.err;
  nlohmann::json bad = nlohmann::json::parse(dup.out);
  EXPECT_GT(bad["in_several_tables"].get<int64_t>(), 0) << dup.out;
  ASSERT_FALSE(bad["several_listed"].empty());
  // The tables that hold the first id listed: both (named as the store describes them).
  const std::string holders = bad["several_listed"][0]["tables"].dump();
  EXPECT_NE(holders.find(from.filename().string()), std::string::npos) << holders;
  EXPECT_NE(holders.find(to.filename().string()), std::string::npos) << holders;
  CommandResult text = RunCommand({kFerry, "verify", "--routing", positions, "--id", "id"});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("ids in more than one table"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("NOT CLEAN"), std::string::npos) << text.out;
}

TEST_F(KafkaRoutingTest, FourEventTypesToFourTablesThroughKillsExactlyOnce) {
  std::string config = WriteConfig();
  CommandResult check = RunCommand({kFerry, "config", "check", config});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  auto producers = StartProducers();
  std::vector<std::string> tables;
  for (const char* type : kTypes) {
    tables.push_back(Table(type));
  }
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(2);
  Observed observed;
  for (int kill_round = 0; kill_round < 3; ++kill_round) {
    auto ferry = ChildProcess::Start({kFerry, "run", "--config", config});
    ASSERT_TRUE(ferry.ok());
    size_t goal = TotalRows() + 1500;
    testing::WaitUntil(
        [&] {
          Observe(client, tables, &observed);
          return TotalRows() >= goal;
        },
        seconds(60));
    // The status page samples once a second: give it a few seconds to show the tables' rows.
    testing::WaitUntil(
        [&] {
          Observe(client, tables, &observed);
          return observed.status_table_rows;
        },
        seconds(5));
    ASSERT_EQ(kill((*ferry)->pid(), SIGKILL), 0);
    EXPECT_EQ((*ferry)->Wait(), 128 + SIGKILL);
  }
  EXPECT_LT(TotalRows(), 4u * kPerType) << "killed after the end: the test proves nothing";
  // Scraped while the runs ran: a table version per table, the router's own series.
  EXPECT_EQ(observed.tables_with_versions.size(), 4u);
  EXPECT_TRUE(observed.tables_open);
  EXPECT_TRUE(observed.resume_positions);
  EXPECT_TRUE(observed.status_table_rows);
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
  CheckStatusAndVerify(config, tables);
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
  testing::WaitUntil(packed, seconds(120));
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

// Routing under kills (issue 21, docs/RELIABILITY.md "Routing"; docs/decisions/routing.md): one
// `ferry run` with two routed pipelines on the mock Kafka cluster, SIGKILLed at random moments
// and restarted while producers run:
//   - "events": one topic with five event types in turn (`{{cycle:...}}`), routed by
//     `{field:event_type}` into five tables, plus a sixth type, `audit`, published only at the
//     start, whose table then goes quiet (it must not hold the resume position back);
//   - "cdc": a pattern subscription (`^cdc\..*`) routed by `{topic}`, with new topics created
//     while ferry runs and is killed, each becoming a table on its first message.
// The last kill is followed directly by `ferry run --until-caught-up` (no drain), whose count
// of messages read again after a SIGKILL is the re-read figure. Verdict: every id in exactly
// one table, once, in the table its event type or topic names (ferry's reader), and `ferry
// verify` over each pipeline's tables together. Label: fault; `make torture` sets the long
// form's sizes.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "mock_kafka_torture.h"
#include "pipeline_e2e_support.h"
#include "torture_support.h"
#include "torture_table.h"

namespace ferry::fault {
namespace {

using std::chrono::milliseconds;

constexpr int kEventPartitions = 8;
constexpr int kCdcPartitions = 2;
constexpr const char* kEventTypes[] = {"order_created", "order_paid", "order_shipped",
                                       "user_signup", "user_login"};
constexpr int kTypeCount = 5;
constexpr int64_t kAuditCount = 150;
// Ids of topic cdc.tJ: kCdcBase * (J + 1) + 1 ...
constexpr int64_t kCdcBase = 10'000'000;

class RoutingTortureTest : public MockKafkaTortureTest {
 protected:
  void SetUp() override {
    settings_ = TortureSettings::FromEnv(/*default_messages=*/9000, /*default_kills=*/12);
    if (settings_.messages > 9000) {  // the long form: a tenth of its ids, at most 200,000
      settings_.messages = std::clamp<int64_t>(settings_.messages / 10, 9000, 200000);
    }
    settings_.messages -= settings_.messages % kTypeCount;
    StartTorture("ferry-torture-routing", {fmt::format("events:{}", kEventPartitions),
                                           fmt::format("cdc.t0:{}", kCdcPartitions)});
    logs_ = (dir_ / "logs").string();
    std::filesystem::create_directories(logs_);
  }

  std::string TypeTable(std::string_view type) const {
    return (dir_ / "by_type" / std::string(type)).string();
  }
  // `{topic}` of cdc.tJ, after table_name_rules ('.' is not an allowed character: '_').
  std::string CdcTable(int j) const { return (dir_ / "cdc" / fmt::format("cdc_t{}", j)).string(); }

  std::string WriteConfig() const {
    const int64_t max_rows = std::max<int64_t>(100, settings_.messages / 100);
    std::vector<e2e::PipelineToml> pipelines;
    for (const auto& [id, table, topic] :
         {std::tuple{"events", (dir_ / "by_type").string() + "/{field:event_type}",
                     std::string("events")},
          std::tuple{"cdc", (dir_ / "cdc").string() + "/{topic}", std::string(R"(^cdc\\..*)")}}) {
      pipelines.push_back(
          {.id = id,
           .table = table,
           .schema = "id BIGINT NOT NULL, event_type STRING, payload STRING",
           .metadata_columns = R"(offset = "_offset", partition = "_partition", topic = "_topic")",
           .keys = R"(on_bad_record = "fail")",
           .source = e2e::KafkaSection(
               {.brokers = brokers_,
                .topics = {topic},
                .group_id = fmt::format("ferry-routing-torture-{}", id),
                .assignment = "manual",
                .properties = R"("topic.metadata.refresh.interval.ms" = "1000")"}),
           .sections = fmt::format("[pipeline.table_name_rules]\nfallback = \"{}/{}_unknown\"\n\n"
                                   "[pipeline.routing]\nposition_commit_interval = \"1s\"",
                                   dir_.string(), id),
           .max_rows = max_rows});
    }
    return e2e::WriteConfig(dir_ / "ferry.toml", pipelines);
  }

  std::unique_ptr<Process> Produce(const std::string& topic, int64_t first, int64_t count,
                                   int64_t rate, const std::string& templ, const std::string& log) {
    auto p = Process::Start(KafkaProducerArgs(brokers_, topic, first, count, rate, templ), {},
                            logs_ + "/" + log);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? std::move(*p) : nullptr;
  }

  // Creates topic cdc.tJ and starts its producer (ids kCdcBase * (J + 1) + 1 ...).
  std::unique_ptr<Process> NewCdcTopic(int j, int64_t count, int64_t rate) {
    if (j > 0) {
      EXPECT_TRUE(mock_->WriteLine(fmt::format("topic cdc.t{} {}", j, kCdcPartitions)).ok());
      Result<std::string> reply = mock_->ReadLine(std::chrono::seconds(20));
      EXPECT_TRUE(reply.ok() && *reply == "ok")
          << (reply.ok() ? *reply : reply.status().ToString());
    }
    return Produce(fmt::format("cdc.t{}", j), kCdcBase * (j + 1) + 1, count, rate,
                   R"({"id": {{seq}}, "event_type": "cdc", "payload": "c{{seq}}"})",
                   fmt::format("producer-cdc-{}.log", j));
  }

  // Every row of `tables`: id -> how many times, with `check(table index, row)` for each.
  std::map<int64_t, int> Ids(const std::vector<std::string>& tables,
                             const std::function<void(size_t, const std::string&)>& check) {
    std::map<int64_t, int> seen;
    for (size_t t = 0; t < tables.size(); ++t) {
      for (const std::string& row : e2e::ReadTable(tables[t]).rows) {
        ++seen[e2e::IntField(row, "id")];
        check(t, row);
      }
    }
    return seen;
  }

  // `ferry verify T1 T2 ... --id id --expect N`: exit 0 and the together line.
  void VerifyTogether(const std::vector<std::string>& tables, int64_t expect) {
    std::vector<std::string> argv = {kFerry, "verify"};
    argv.insert(argv.end(), tables.begin(), tables.end());
    for (const std::string& a : {std::string("--id"), std::string("id"), std::string("--expect"),
                                 std::to_string(expect)}) {
      argv.push_back(a);
    }
    const std::string log = logs_ + "/verify.log";
    std::filesystem::remove(log);
    EXPECT_EQ(RunToExit(argv, {}, log), 0) << Tail(log, 60);
    EXPECT_NE(ReadFile(log).find("OK: every id in exactly one table, once"), std::string::npos)
        << Tail(log, 60);
  }

  std::string logs_;
};

TEST_F(RoutingTortureTest, FieldAndPatternRoutingThroughKillsExactlyOnce) {
  const int64_t n = settings_.messages;
  const int kills = std::max(3, settings_.kills);
  const int64_t per_cdc = std::max<int64_t>(300, n / 10);
  // New cdc topics while running: one every other kill, cdc.t1 .. cdc.t<cdc_topics - 1>.
  const int cdc_topics = 1 + std::min(4, kills / 2);
  std::mt19937_64 rng(settings_.seed);
  fmt::print("torture routing: {}\n", settings_.Describe());
  const std::string config = WriteConfig();
  ASSERT_EQ(RunToExit({kFerry, "config", "check", config}, {}, logs_ + "/check.log"), 0)
      << Tail(logs_ + "/check.log");

  // The producers run across the kills: about 1.5 s of traffic per kill.
  const int64_t rate = std::max<int64_t>(200, n * 2 / (3 * kills));
  std::string types;
  for (const char* t : kEventTypes) {
    types += (types.empty() ? "" : ",") + std::string(t);
  }
  std::vector<std::unique_ptr<Process>> producers;
  producers.push_back(Produce(
      "events", 1, n, rate,
      R"({"id": {{seq}}, "event_type": "{{cycle:)" + types + R"(}}", "payload": "p{{seq}}"})",
      "producer-events.log"));
  producers.push_back(Produce("events", n + 1, kAuditCount, 1000,
                              R"({"id": {{seq}}, "event_type": "audit", "payload": "a{{seq}}"})",
                              "producer-audit.log"));
  producers.push_back(NewCdcTopic(0, per_cdc, std::max<int64_t>(100, rate / 4)));
  for (const auto& p : producers) {
    ASSERT_NE(p, nullptr);
  }

  int incarnation = 0;
  std::unique_ptr<Process> ferry;
  std::string ferry_log;
  auto start = [&] {
    ferry_log = fmt::format("{}/ferry-{}.log", logs_, incarnation++);
    auto p = Process::Start({kFerry, "run", "--config", config}, {}, ferry_log);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ferry = std::move(*p);
  };
  const TableLocation watched = TableLocation::Local(TypeTable(kEventTypes[0]));
  int created = 1;
  start();
  for (int k = 0; k < kills; ++k) {
    if (k % 2 == 1 && created < cdc_topics) {
      producers.push_back(NewCdcTopic(created++, per_cdc, std::max<int64_t>(100, rate / 4)));
    }
    if (rng() % 3 == 0) {
      std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(0, 1500)(rng)));
    } else {
      WaitForNewVersion(watched, ferry.get(), milliseconds(20000));
      std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(0, 800)(rng)));
    }
    ASSERT_TRUE(ferry->Running()) << "ferry exited before kill " << k << ":\n" << Tail(ferry_log);
    ferry->Signal(SIGKILL);
    EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);
    if (k + 1 < kills) {
      start();
    }
  }
  for (auto& producer : producers) {
    EXPECT_EQ(producer->Wait(), 0) << Tail(logs_ + "/producer-events.log");
  }
  int64_t held_before = 0;
  for (const char* t : kEventTypes) {
    held_before += static_cast<int64_t>(e2e::ReadTable(TypeTable(t)).rows.size());
  }
  EXPECT_LT(held_before, n) << "the kills came after the end: the test proves nothing";
  // Topics created while ferry ran (and was killed) became tables before the final run.
  int cdc_tables_before = 0;
  for (int j = 0; j < created; ++j) {
    cdc_tables_before += std::filesystem::exists(std::filesystem::path(CdcTable(j)) / "_delta_log");
  }
  EXPECT_GE(cdc_tables_before, 2) << "no topic created while ferry ran became a table";

  // Straight after the last SIGKILL: catch up, and count what was read again.
  const std::string final_log = logs_ + "/final.log";
  ASSERT_EQ(RunToExit({kFerry, "run", "--config", config, "--until-caught-up"}, {}, final_log), 0)
      << Tail(final_log, 60);
  const std::string final_text = ReadFile(final_log);
  std::map<std::string, int64_t> rereads;
  for (const char* id : {"events", "cdc"}) {
    std::smatch m;
    const std::regex line(
        fmt::format(R"(pipeline {}: stopped; (\d+) messages were read again)", id));
    ASSERT_TRUE(std::regex_search(final_text, m, line)) << Tail(final_log, 60);
    rereads[id] = std::stoll(m[1]);
  }

  // events: every id once, in its type's table; audit's quiet table holds its 150.
  std::vector<std::string> event_tables;
  for (const char* t : kEventTypes) {
    event_tables.push_back(TypeTable(t));
  }
  event_tables.push_back(TypeTable("audit"));
  std::map<int64_t, int> seen = Ids(event_tables, [&](size_t t, const std::string& row) {
    const int64_t id = e2e::IntField(row, "id");
    const std::string want =
        id > n ? std::string("audit") : std::string(kEventTypes[(id - 1) % kTypeCount]);
    EXPECT_EQ(t < kTypeCount ? std::string(kEventTypes[t]) : std::string("audit"), want)
        << "id " << id << " in " << event_tables[t];
    EXPECT_EQ(e2e::Field(row, "event_type"), want) << row;
  });
  EXPECT_EQ(static_cast<int64_t>(seen.size()), n + kAuditCount);
  int64_t duplicates = 0;
  int64_t missing = 0;
  for (int64_t id = 1; id <= n + kAuditCount; ++id) {
    auto it = seen.find(id);
    missing += it == seen.end() ? 1 : 0;
    duplicates += it != seen.end() && it->second > 1 ? it->second - 1 : 0;
  }
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(missing, 0);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "events_unknown")) << "every message has a type";
  VerifyTogether(event_tables, n + kAuditCount);

  // cdc: every topic made a table of its own, holding exactly its ids once.
  std::vector<std::string> cdc_tables;
  for (int j = 0; j < created; ++j) {
    cdc_tables.push_back(CdcTable(j));
  }
  int64_t cdc_duplicates = 0;
  int64_t cdc_missing = 0;
  std::map<int64_t, int> cdc_seen = Ids(cdc_tables, [&](size_t t, const std::string& row) {
    const int64_t id = e2e::IntField(row, "id");
    EXPECT_EQ((id - 1) / kCdcBase - 1, static_cast<int64_t>(t))
        << "id " << id << " in " << cdc_tables[t];
    EXPECT_EQ(e2e::Field(row, "_topic"), fmt::format("cdc.t{}", t)) << row;
  });
  for (int j = 0; j < created; ++j) {
    for (int64_t id = kCdcBase * (j + 1) + 1; id <= kCdcBase * (j + 1) + per_cdc; ++id) {
      auto it = cdc_seen.find(id);
      cdc_missing += it == cdc_seen.end() ? 1 : 0;
      cdc_duplicates += it != cdc_seen.end() && it->second > 1 ? it->second - 1 : 0;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(cdc_seen.size()), created * per_cdc);
  EXPECT_EQ(cdc_duplicates, 0);
  EXPECT_EQ(cdc_missing, 0);
  VerifyTogether(cdc_tables, created * per_cdc);

  // A restart resumes at the largest low-water mark over the tables, not at the quiet audit
  // table's (nor from the start): what the last run read again is a bounded window.
  EXPECT_LT(rereads["events"], (n + kAuditCount) / 2) << Tail(final_log, 60);
  fmt::print(
      "TORTURE routing: kills={} messages={} tables={} cdc_topics={} (tables before the final run: "
      "{}) cdc_messages={} duplicates={} missing={} rereads_after_last_kill={} (events) {} (cdc) "
      "seed={}\n",
      kills, n + kAuditCount, event_tables.size() + cdc_tables.size(), created, cdc_tables_before,
      created * per_cdc, duplicates + cdc_duplicates, missing + cdc_missing, rereads["events"],
      rereads["cdc"], settings_.seed);
}

}  // namespace
}  // namespace ferry::fault

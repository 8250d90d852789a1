// Schema evolution under kills (issue 19, docs/RELIABILITY.md "Schema evolution"): messages gain
// top-level and nested fields and an INT field starts receiving values past 2^31 while `ferry
// run` is SIGKILLed and restarted; then two processes evolve one table at once, with the same and
// with different new fields, also killed and restarted. Each id once (`ferry verify`); new columns
// null in the files written before them and filled in the files after, checked by DuckDB reading
// the live files into the table's final schema. Kafka on the mock cluster, manual assignment (no
// group joins between kills). Label: fault; `make torture` sets the long form's sizes.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "config_toml.h"
#include "duckdb_statements.h"
#include "kafka_child_process.h"
#include "mock_kafka_torture.h"
#include "pipeline_e2e_support.h"
#include "torture_support.h"
#include <nlohmann/json.hpp>

namespace ferry::fault {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kPartitions = 8;

// The rows of the last of `statements`, run by DuckDB (tests/duckdb/query.mjs).
std::vector<Json> Duck(const std::vector<std::string>& statements) {
  return duckdb_statements::Run(statements);
}

std::string SqlList(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& f : files) {
    out += (out.empty() ? "'" : ", '") + f + "'";
  }
  return "[" + out + "]";
}

// One SELECT over every live file that yields `columns` (name -> SQL over the file's columns,
// or the NULL of its type when the file lacks the column), with the file's columns listed by
// DuckDB's own parquet_schema(): the files read into the table's final schema.
struct FinalColumn {
  std::string name;     // the file column it comes from (a nested leaf name for "loc.alt")
  std::string present;  // SQL when the file has it
  std::string missing;  // SQL when it does not
};
std::string UnionOfFiles(const std::vector<std::string>& files,
                         const std::vector<FinalColumn>& columns) {
  std::vector<Json> schema =
      Duck({"SELECT file_name, name FROM parquet_schema(" + SqlList(files) + ")"});
  std::map<std::string, std::set<std::string>> names;
  for (const Json& row : schema) {
    names[row["file_name"].get<std::string>()].insert(row["name"].get<std::string>());
  }
  std::string sql;
  for (const std::string& file : files) {
    std::string select;
    for (const FinalColumn& c : columns) {
      bool has = names[file].count(c.name) != 0;
      select += (select.empty() ? "" : ", ") + (has ? c.present : c.missing);
    }
    sql += (sql.empty() ? "" : " UNION ALL ") +
           fmt::format("SELECT {} FROM read_parquet('{}')", select, file);
  }
  return sql;
}

class SchemaEvolutionTortureTest : public MockKafkaTortureTest {
 protected:
  void SetUp() override {
    settings_ = TortureSettings::FromEnv(/*default_messages=*/3000, /*default_kills=*/10);
    // The long form's sizes are for the main scenario: a tenth of its ids (at most 100,000)
    // and half its kills are plenty for the schema changes here.
    if (settings_.messages > 3000) {
      settings_.messages = std::clamp<int64_t>(settings_.messages / 10, 3000, 100000);
      settings_.kills = std::max(10, settings_.kills / 2);
    }
    StartTorture("ferry-torture-evolution",
                 {fmt::format("events:{}", kPartitions), fmt::format("a:{}", kPartitions),
                  fmt::format("b:{}", kPartitions)},
                 {.duckdb = true});
  }

  std::vector<std::string> Producer(const std::string& topic, int64_t first, int64_t count,
                                    int64_t rate, const std::string& templ) const {
    return KafkaProducerArgs(brokers_, topic, first, count, rate, templ);
  }

  // argv as one shell word each (the templates hold no single quote).
  static std::string Quoted(const std::vector<std::string>& argv) {
    std::string s;
    for (const std::string& x : argv) {
      s += (s.empty() ? "'" : " '") + x + "'";
    }
    return s;
  }

  std::string Config(const std::string& id, const std::string& topic, const std::string& table,
                     const std::string& schema) const {
    return e2e::WriteConfig(
        dir_ / (id + ".toml"),
        {{.id = id,
          .table = table,
          .schema = schema,
          .metadata_columns = R"(offset = "_offset", partition = "_partition", topic = "_topic")",
          .keys = "schema_evolution = \"add_columns_and_widen\"\non_bad_record = \"fail\"",
          .source = e2e::KafkaSection({.brokers = brokers_,
                                       .topics = {topic},
                                       .group_id = "ferry-evolution-" + id,
                                       .assignment = "manual"}),
          .max_rows = std::max<int64_t>(60, settings_.messages / 200),
          .max_latency = "150ms"}});
  }

  // Starts `ferry run` on each config and kills one at random, `kills` times, restarting it,
  // while the producers run; then stops everything and catches up.
  void KillLoop(const std::vector<std::string>& configs, int kills, std::mt19937_64* rng,
                const std::string& table, std::vector<std::unique_ptr<Process>>* producers) {
    const std::string logs = (dir_ / "logs").string();
    std::filesystem::create_directories(logs);
    std::vector<std::unique_ptr<Process>> ferries(configs.size());
    std::vector<std::string> ferry_logs(configs.size());
    int incarnation = 0;
    auto start = [&](size_t i) {
      ferry_logs[i] = fmt::format("{}/ferry-{}-{}.log", logs, i, incarnation++);
      auto p = Process::Start({kFerry, "run", "--config", configs[i]}, {}, ferry_logs[i]);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      ferries[i] = std::move(*p);
    };
    for (size_t i = 0; i < configs.size(); ++i) {
      start(i);
    }
    for (int k = 0; k < kills; ++k) {
      const size_t victim = (*rng)() % configs.size();
      if ((*rng)() % 3 == 0) {
        std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(0, 800)(*rng)));
      } else {
        WaitForNewVersion(TableLocation::Local(table), ferries[victim].get(), milliseconds(20000));
        std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(0, 600)(*rng)));
      }
      ASSERT_TRUE(ferries[victim]->Running()) << "ferry exited before kill " << k << ":\n"
                                              << Tail(ferry_logs[victim]);
      ferries[victim]->Signal(SIGKILL);
      EXPECT_EQ(ferries[victim]->Wait(), 128 + SIGKILL);
      start(victim);
    }
    for (auto& producer : *producers) {
      EXPECT_EQ(producer->Wait(), 0) << Tail(logs + "/producer.log");
    }
    for (size_t i = 0; i < configs.size(); ++i) {
      // A ferry started after the last kill may not have blocked SIGTERM yet (it would die of
      // it, 143, with an empty log): it is stopped once it reads its partitions, as
      // kafka_torture_test waits for.
      WaitUntilReading(ferries[i].get(), ferry_logs[i], std::chrono::seconds(60));
      ferries[i]->Signal(SIGTERM);
      EXPECT_EQ(ferries[i]->Wait(), 0) << Tail(ferry_logs[i]);
    }
    for (size_t i = 0; i < configs.size(); ++i) {
      const std::string log = fmt::format("{}/final-{}.log", logs, i);
      EXPECT_EQ(RunToExit({kFerry, "run", "--config", configs[i], "--until-caught-up"}, {}, log), 0)
          << Tail(log);
    }
  }

  Json Inspect(const std::string& table) {
    const std::string out = (dir_ / "inspect.json").string();
    EXPECT_EQ(RunToExit({"/bin/sh", "-c",
                         fmt::format("'{}' table inspect '{}' --json > '{}'", kFerry, table, out)}),
              0);
    return Json::parse(ReadFile(out), nullptr, false);
  }
};

// Ids 1..a plain; a+1..b add `score` and the nested `loc.alt`; b+1..N add `tags` and put `n`
// (an INT column) past 2^31.
TEST_F(SchemaEvolutionTortureTest, FieldsAppearAndTypesWidenBetweenKills) {
  const int64_t n = settings_.messages;
  const int64_t a = n / 3;
  const int64_t b = 2 * n / 3;
  const std::string table = (dir_ / "table").string();
  const std::string logs = (dir_ / "logs").string();
  std::filesystem::create_directories(logs);
  std::mt19937_64 rng(settings_.seed);
  fmt::print("torture evolution: {}\n", settings_.Describe());
  const std::string config =
      Config("evolve", "events", table,
             "id BIGINT NOT NULL, payload STRING, loc STRUCT<lat: DOUBLE>, n INT");
  const int64_t rate = std::max<int64_t>(50, n / std::max(1, settings_.kills));
  // The three phases one after the other, in the background.
  std::vector<std::unique_ptr<Process>> producers;
  auto phases = Process::Start(
      {"/bin/sh", "-c",
       Quoted(Producer("events", 1, a, rate,
                       R"({"id": {{seq}}, "payload": "p{{seq}}", "loc": {"lat": 1.5}, "n": 7})")) +
           " && " +
           Quoted(Producer(
               "events", a + 1, b - a, rate,
               R"({"id": {{seq}}, "payload": "p", "loc": {"lat": 1.5, "alt": {{seq}} }, "n": 7, "score": {{seq}} })")) +
           " && " +
           Quoted(Producer(
               "events", b + 1, n - b, rate,
               R"({"id": {{seq}}, "payload": "p", "loc": {"lat": 1.5, "alt": {{seq}} }, "n": {{seq}}000000000, "score": {{seq}}, "tags": ["t{{seq}}"]})"))},
      {}, logs + "/producer.log");
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  producers.push_back(std::move(*phases));
  KillLoop({config}, settings_.kills, &rng, table, &producers);

  VerifyResult v = Verify(TableLocation::Local(table), n);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_EQ(v.rows, n) << v.output;
  EXPECT_EQ(v.duplicates, 0) << v.output;
  EXPECT_EQ(v.missing, 0) << v.output;
  EXPECT_EQ(v.position_mismatches, 0) << v.output;

  Json inspect = Inspect(table);
  ASSERT_TRUE(inspect.is_object());
  std::set<std::string> features;
  for (const Json& f : inspect["protocol"].value("readerFeatures", Json::array())) {
    features.insert(f.get<std::string>());
  }
  EXPECT_TRUE(features.count("typeWidening")) << inspect["protocol"].dump();
  std::map<std::string, std::string> types;
  for (const Json& f : inspect["schema"]["fields"]) {
    types[f["name"].get<std::string>()] = f["type"].dump();
  }
  EXPECT_EQ(types["n"], "\"long\"");
  EXPECT_EQ(types["score"], "\"long\"");
  EXPECT_NE(types["loc"].find("\"alt\""), std::string::npos) << types["loc"];
  EXPECT_NE(types["tags"].find("array"), std::string::npos) << types["tags"];
  // Each change once in the history.
  int widened = 0;
  int added = 0;
  for (const Json& version : inspect["schema_history"]) {
    for (const Json& change : version.value("changes", Json::array())) {
      std::string text = change.get<std::string>();
      widened += text.rfind("widen column n ", 0) == 0 ? 1 : 0;
      added += text.rfind("add column ", 0) == 0 ? 1 : 0;
    }
  }
  EXPECT_EQ(widened, 1);
  EXPECT_EQ(added, 3);

  // DuckDB reads every live file into the final schema.
  e2e::TableContents contents = e2e::ReadTable(table);
  ASSERT_FALSE(contents.files.empty());
  std::string all = UnionOfFiles(
      contents.files, {{"id", "id", "NULL::BIGINT"},
                       {"n", "CAST(n AS BIGINT) AS n", "NULL::BIGINT AS n"},
                       {"score", "score", "NULL::BIGINT AS score"},
                       {"alt", "struct_extract(loc, 'alt') AS alt", "NULL::BIGINT AS alt"},
                       {"tags", "tags", "NULL::VARCHAR[] AS tags"}});
  std::vector<Json> counts = Duck({fmt::format(
      "SELECT count(*) AS rows, count(DISTINCT id) AS ids, "
      "sum(CASE WHEN id <= {a} AND (score IS NOT NULL OR alt IS NOT NULL) THEN 1 ELSE 0 END) AS "
      "old_filled, "
      "sum(CASE WHEN id > {a} AND (score IS DISTINCT FROM id OR alt IS DISTINCT FROM id) THEN 1 "
      "ELSE 0 END) AS new_wrong, "
      "sum(CASE WHEN id <= {b} AND (n IS DISTINCT FROM 7 OR tags IS NOT NULL) THEN 1 ELSE 0 END) "
      "AS before_wide_wrong, "
      "sum(CASE WHEN id > {b} AND (n IS DISTINCT FROM id * 1000000000 OR tags[1] IS DISTINCT "
      "FROM 't' || id) THEN 1 ELSE 0 END) AS wide_wrong FROM ({all})",
      fmt::arg("a", a), fmt::arg("b", b), fmt::arg("all", all))});
  ASSERT_EQ(counts.size(), 1u);
  const Json& c = counts[0];
  EXPECT_EQ(c["rows"].get<std::string>(), std::to_string(n)) << c.dump();
  EXPECT_EQ(c["ids"].get<std::string>(), std::to_string(n)) << c.dump();
  for (const char* zero : {"old_filled", "new_wrong", "before_wide_wrong", "wide_wrong"}) {
    EXPECT_EQ(c[zero].dump(), "\"0\"") << zero << ": " << c.dump();
  }
  fmt::print(
      "TORTURE evolution: kills={} messages={} rows={} distinct={} duplicates={} missing={} "
      "files={} verify_exit={} seed={}\n",
      settings_.kills, n, v.rows, v.distinct, v.duplicates, v.missing, contents.files.size(),
      v.exit_code, settings_.seed);
}

// Two processes, one table: topic a's messages gain `shared` and `only_a`, topic b's `shared`
// and `only_b`, at different moments; both are killed and restarted at random.
TEST_F(SchemaEvolutionTortureTest, TwoProcessesEvolveOneTableBetweenKills) {
  const int64_t n = std::max<int64_t>(1000, settings_.messages / 2);
  const std::string table = (dir_ / "table").string();
  const std::string logs = (dir_ / "logs").string();
  std::filesystem::create_directories(logs);
  std::mt19937_64 rng(settings_.seed + 1);
  fmt::print("torture evolution, two processes: {} ids each, {}\n", n, settings_.Describe());
  const std::string schema = "id BIGINT NOT NULL, payload STRING";
  std::vector<std::string> configs = {Config("a", "a", table, schema),
                                      Config("b", "b", table, schema)};
  const int64_t rate = std::max<int64_t>(50, n / std::max(1, settings_.kills));
  // a: plain until n/4, then shared + only_a; b (ids n+1..2n): plain until n/2, then shared +
  // only_b (a struct).
  std::vector<std::unique_ptr<Process>> producers;
  for (const auto& [topic, first, switch_at, extra] :
       {std::tuple<std::string, int64_t, int64_t, std::string>{
            "a", 1, n / 4, R"("shared": {{seq}}, "only_a": "a{{seq}}")"},
        std::tuple<std::string, int64_t, int64_t, std::string>{
            "b", n + 1, n / 2, R"("shared": {{seq}}, "only_b": {"k": {{seq}} })"}}) {
    auto p = Process::Start(
        {"/bin/sh", "-c",
         Quoted(Producer(topic, first, switch_at, rate, R"({"id": {{seq}}, "payload": "p"})")) +
             " && " +
             Quoted(Producer(topic, first + switch_at, n - switch_at, rate,
                             R"({"id": {{seq}}, "payload": "p", )" + extra + "}"))},
        {}, logs + "/producer-" + topic + ".log");
    ASSERT_TRUE(p.ok());
    producers.push_back(std::move(*p));
  }
  KillLoop(configs, settings_.kills, &rng, table, &producers);

  VerifyResult v = Verify(TableLocation::Local(table), 2 * n);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_EQ(v.rows, 2 * n) << v.output;
  EXPECT_EQ(v.duplicates, 0) << v.output;
  EXPECT_EQ(v.missing, 0) << v.output;
  EXPECT_EQ(v.position_mismatches, 0) << v.output;
  Json inspect = Inspect(table);
  std::vector<std::string> names;
  for (const Json& f : inspect["schema"]["fields"]) {
    names.push_back(f["name"].get<std::string>());
  }
  for (const char* name : {"shared", "only_a", "only_b"}) {
    EXPECT_EQ(std::count(names.begin(), names.end(), name), 1) << name << ": " << inspect.dump();
  }
  e2e::TableContents contents = e2e::ReadTable(table);
  std::string all = UnionOfFiles(contents.files,
                                 {{"id", "id", "NULL::BIGINT"},
                                  {"shared", "shared", "NULL::BIGINT AS shared"},
                                  {"only_a", "only_a", "NULL::VARCHAR AS only_a"},
                                  {"k", "struct_extract(only_b, 'k') AS k", "NULL::BIGINT AS k"}});
  std::vector<Json> counts = Duck({fmt::format(
      "SELECT count(*) AS rows, count(DISTINCT id) AS ids, "
      "sum(CASE WHEN id <= {n} AND id > {qa} AND (shared IS DISTINCT FROM id OR only_a IS "
      "DISTINCT FROM 'a' || id OR k IS NOT NULL) THEN 1 ELSE 0 END) AS a_wrong, "
      "sum(CASE WHEN id > {n} + {hb} AND (shared IS DISTINCT FROM id OR k IS DISTINCT FROM id OR "
      "only_a IS NOT NULL) THEN 1 ELSE 0 END) AS b_wrong, "
      "sum(CASE WHEN (id <= {qa} OR (id > {n} AND id <= {n} + {hb})) AND (shared IS NOT NULL OR "
      "only_a IS NOT NULL OR k IS NOT NULL) THEN 1 ELSE 0 END) AS plain_filled FROM ({all})",
      fmt::arg("n", n), fmt::arg("qa", n / 4), fmt::arg("hb", n / 2), fmt::arg("all", all))});
  ASSERT_EQ(counts.size(), 1u);
  const Json& c = counts[0];
  EXPECT_EQ(c["rows"].get<std::string>(), std::to_string(2 * n)) << c.dump();
  for (const char* zero : {"a_wrong", "b_wrong", "plain_filled"}) {
    EXPECT_EQ(c[zero].dump(), "\"0\"") << zero << ": " << c.dump();
  }
  fmt::print(
      "TORTURE evolution two processes: kills={} messages={} rows={} duplicates={} missing={} "
      "verify_exit={} seed={}\n",
      settings_.kills, 2 * n, v.rows, v.duplicates, v.missing, v.exit_code, settings_.seed);
}

}  // namespace
}  // namespace ferry::fault

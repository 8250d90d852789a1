// Upserts under kills (issue 42, docs/RELIABILITY.md "Upserts"): a generated change stream
// (change_stream.h: inserts, updates, deletes as tombstones, deletes of absent keys, re-inserts
// of deleted keys, hot keys among them) is produced to Kafka (the mock cluster) while an upsert
// pipeline (`mode = "upsert"`, key id) applies it and is SIGKILLed at random moments and
// restarted; then it catches up. The final table must equal the state the test replays from the
// same stream, row for row, as read by
//   - ferry's reader (deletion vectors applied),
//   - DuckDB over the live Parquet files with the rows of ferry's decoded deletion vectors left
//     out by DuckDB's file_row_number (DuckDB cannot apply Delta's deletion vectors from the
//     Parquet files alone),
//   - `ferry verify --key id`: one live row per key, positions not behind the data.
// Three tables: deletion vectors on a local disk, copy-on-write on a local disk, deletion
// vectors on S3 (radosgw). Short form: 2,000 keys and 8,000 changes, 8 kills (4 on S3);
// `make torture` (FERRY_TORTURE_MESSAGES set): a tenth of its messages as keys (at most
// 100,000), four changes per key, its kills. Label: fault.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "change_stream.h"
#include "config_toml.h"
#include "duckdb_statements.h"
#include "kafka_child_process.h"
#include "mock_kafka_torture.h"
#include "pipeline_e2e_support.h"
#include "s3_torture_store.h"
#include "torture_support.h"
#include <nlohmann/json.hpp>

namespace ferry::fault {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kPartitions = 16;
constexpr int64_t kMemstoreBytes = int64_t{1} << 30;

struct UpsertRun {
  std::string name;  // the topic, the pipeline and the figures' label
  TableLocation table;
  bool deletion_vectors = true;
};

class UpsertTortureTest : public MockKafkaTortureTest {
 protected:
  void SetUp() override {
    settings_ = TortureSettings::FromEnv(/*default_messages=*/20000, /*default_kills=*/8);
    stream_.keys = std::clamp<int64_t>(settings_.messages / 10, 2000, 100000);
    stream_.changes = 4 * stream_.keys;
    stream_.seed = settings_.seed;
    StartTorture("ferry-torture-upsert",
                 {fmt::format("dv:{}", kPartitions), fmt::format("cow:{}", kPartitions),
                  fmt::format("s3:{}", kPartitions)},
                 {.duckdb = true});
  }

  std::string Config(const UpsertRun& run) const {
    return e2e::WriteConfig(
        dir_ / (run.name + ".toml"),
        {{.id = run.name,
          .table = run.table.uri(),
          .schema = "id BIGINT NOT NULL, v STRING, n BIGINT",
          .keys = std::string("mode = \"upsert\"\nkey = [\"id\"]\non_bad_record = \"fail\"\n") +
                  (run.deletion_vectors
                       ? "table_properties = { \"delta.enableDeletionVectors\" = \"true\" }\n"
                       : ""),
          .source = e2e::KafkaSection({.brokers = brokers_,
                                       .topics = {run.name},
                                       .group_id = "ferry-upsert-" + run.name,
                                       .assignment = "manual"}),
          .sections = "[pipeline.decode]\nformat = \"json\"\n",
          .max_rows = std::max<int64_t>(100, stream_.changes / 100),
          .max_latency = "150ms"}});
  }

  void Run(const UpsertRun& run, int kills);

  ChangeStreamOptions stream_;
};

// Each row of the replayed state as "id|v|n".
std::vector<std::string> ExpectedRows(const std::map<int64_t, std::string>& state) {
  std::vector<std::string> out;
  for (const auto& [id, value] : state) {
    Json row = Json::parse(value);
    out.push_back(
        fmt::format("{}|{}|{}", id, row["v"].get<std::string>(), row["n"].get<int64_t>()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// DuckDB's count of the live rows (`files` with their deleted rows left out by position) that
// differ from the expected state, both ways.
Json DuckDbComparison(const std::vector<LiveFile>& files, const std::filesystem::path& dir,
                      const std::map<int64_t, std::string>& state) {
  // The live files under one directory (links to a local table's files; the copies of a remote
  // table's are there already), read by glob: a list of thousands of paths would not fit in one
  // command-line argument.
  const std::filesystem::path files_dir = dir / "files";
  std::filesystem::create_directories(files_dir);
  std::ofstream deleted(dir / "deleted.csv");
  int64_t deleted_rows = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::filesystem::path link = files_dir / fmt::format("f{:06}.parquet", i);
    if (std::filesystem::absolute(files[i].path).parent_path() != files_dir) {
      std::filesystem::create_symlink(std::filesystem::absolute(files[i].path), link);
    } else {
      std::filesystem::rename(files[i].path, link);
    }
    for (uint64_t row : files[i].deleted_rows) {
      deleted << link.string() << "," << row << "\n";
      ++deleted_rows;
    }
  }
  deleted.close();
  std::ofstream expected(dir / "expected.csv");
  for (const auto& [id, value] : state) {
    Json row = Json::parse(value);
    expected << id << "," << row["v"].get<std::string>() << "," << row["n"].get<int64_t>() << "\n";
  }
  expected.close();
  std::vector<std::string> statements = {
      fmt::format("CREATE TABLE expected AS SELECT * FROM read_csv('{}', header = false, "
                  "columns = {{'id': 'BIGINT', 'v': 'VARCHAR', 'n': 'BIGINT'}})",
                  (dir / "expected.csv").string()),
      "CREATE TABLE deleted (f VARCHAR, r BIGINT)"};
  if (deleted_rows > 0) {
    statements.push_back(fmt::format(
        "INSERT INTO deleted SELECT * FROM read_csv('{}', header = false, columns = {{'f': "
        "'VARCHAR', 'r': 'BIGINT'}})",
        (dir / "deleted.csv").string()));
  }
  statements.push_back(fmt::format(
      "CREATE TABLE actual AS SELECT id, v, n FROM read_parquet('{}/*.parquet', filename = true, "
      "file_row_number = true) p WHERE NOT EXISTS (SELECT 1 FROM deleted d WHERE d.f = "
      "p.filename AND d.r = p.file_row_number)",
      files_dir.string()));
  statements.push_back(
      "SELECT (SELECT count(*) FROM actual) AS rows, (SELECT count(DISTINCT id) FROM actual) AS "
      "ids, (SELECT count(*) FROM deleted) AS deleted, (SELECT count(*) FROM (SELECT * FROM "
      "actual EXCEPT ALL SELECT * FROM expected)) AS extra, (SELECT count(*) FROM (SELECT * FROM "
      "expected EXCEPT ALL SELECT * FROM actual)) AS lacking");
  std::vector<Json> rows = duckdb_statements::Run(statements);
  return rows.size() == 1 ? rows[0] : Json();
}

void UpsertTortureTest::Run(const UpsertRun& run, int kills) {
  const std::filesystem::path work = dir_ / run.name;
  const std::string logs = (work / "logs").string();
  std::filesystem::create_directories(logs);
  std::mt19937_64 rng(settings_.seed);
  ChangeCounts counts;
  const std::vector<Change> changes = GenerateChangeStream(stream_, &counts);
  const std::map<int64_t, std::string> state = Replay(changes);
  fmt::print(
      "torture upsert {}: {} keys, {} changes ({} inserts, {} updates, {} deletes, {} "
      "re-inserts, {} deletes of absent keys), {} live at the end; {}\n",
      run.name, stream_.keys, changes.size(), counts.inserts, counts.updates, counts.deletes,
      counts.reinserts, counts.void_deletes, state.size(), settings_.Describe());
  const std::string lines = (work / "changes.txt").string();
  {
    std::ofstream out(lines);
    for (const Change& change : changes) {
      out << ChangeLine(change) << "\n";
    }
  }
  const std::string config = Config(run);
  const auto start_time = std::chrono::steady_clock::now();
  // The producer spreads the stream over the kill loop.
  const int64_t rate =
      std::max<int64_t>(200, static_cast<int64_t>(changes.size()) / std::max(1, kills * 2));
  auto producer =
      Process::Start({kFerry, "produce", "kafka", "--brokers", brokers_, "--topic", run.name,
                      "--lines", lines, "--rate", std::to_string(rate), "-X", "linger.ms=50"},
                     {}, logs + "/producer.log");
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  const std::vector<std::string> argv = run.table.WithFlags({kFerry, "run", "--config", config});
  int incarnation = 0;
  std::unique_ptr<Process> ferry;
  std::string ferry_log;
  auto start = [&] {
    ferry_log = fmt::format("{}/ferry-{}.log", logs, incarnation++);
    auto p = Process::Start(argv, run.table.env(), ferry_log);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ferry = std::move(*p);
  };
  start();
  for (int k = 0; k < kills; ++k) {
    if (rng() % 3 == 0) {
      std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(0, 800)(rng)));
    } else {
      WaitForNewVersion(run.table, ferry.get(), milliseconds(30000));
      std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(0, 600)(rng)));
    }
    ASSERT_TRUE(ferry->Running()) << "ferry exited before kill " << k << ":\n" << Tail(ferry_log);
    ferry->Signal(SIGKILL);
    EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);
    start();
  }
  EXPECT_EQ((*producer)->Wait(), 0) << Tail(logs + "/producer.log");
  WaitUntilReading(ferry.get(), ferry_log, seconds(60));
  ferry->Signal(SIGTERM);
  EXPECT_EQ(ferry->Wait(), 0) << Tail(ferry_log);
  const std::string final_log = logs + "/final.log";
  std::vector<std::string> final_argv = argv;
  final_argv.push_back("--until-caught-up");
  EXPECT_EQ(RunToExit(final_argv, run.table.env(), final_log), 0) << Tail(final_log);
  // The last start found the key index the runs before it wrote beside the table (of this table,
  // key and history), loaded it and read only the commits after it: no rebuild from the table.
  const std::string final_text = ReadFile(final_log);
  EXPECT_NE(final_text.find("loaded from the file persisted at version"), std::string::npos)
      << Tail(final_log);
  EXPECT_EQ(final_text.find("rebuilding from the table"), std::string::npos) << Tail(final_log);

  // ferry's reader.
  std::vector<std::string> read;
  for (const std::string& row : LiveTableRows(run.table)) {
    read.push_back(
        fmt::format("{}|{}|{}", e2e::Field(row, "id"), e2e::Field(row, "v"), e2e::Field(row, "n")));
  }
  std::sort(read.begin(), read.end());
  const std::vector<std::string> expected = ExpectedRows(state);
  EXPECT_EQ(read.size(), expected.size());
  EXPECT_TRUE(read == expected) << "ferry's reader disagrees with the replayed state";

  // `ferry verify --key id`.
  const std::string verify_out = (work / "verify.json").string();
  std::vector<std::string> verify_argv =
      run.table.WithFlags({kFerry, "verify", run.table.uri(), "--key", "id", "--expect",
                           std::to_string(state.size()), "--json"});
  const int verify_exit = RunToExit(verify_argv, run.table.env(), verify_out);
  const std::string verify_text = ReadFile(verify_out);
  Json verify;
  std::istringstream verify_lines(verify_text);
  for (std::string line; std::getline(verify_lines, line);) {
    if (!line.empty() && line[0] == '{') {
      verify = Json::parse(line, nullptr, false);
    }
  }
  EXPECT_EQ(verify_exit, 0) << verify_text;
  ASSERT_TRUE(verify.is_object()) << verify_text;
  EXPECT_EQ(verify.value("rows", int64_t{-1}), static_cast<int64_t>(state.size())) << verify_text;
  EXPECT_EQ(verify.value("duplicates", int64_t{-1}), 0) << verify_text;
  EXPECT_EQ(verify.value("positions_checked", false), true) << verify_text;

  // DuckDB over the files, ferry's deletion vectors applied by position.
  auto files = LocalLiveFilesWithDeletions(run.table, (work / "files").string());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  int64_t files_with_dv = 0;
  for (const LiveFile& f : *files) {
    files_with_dv += f.deleted_rows.empty() ? 0 : 1;
  }
  if (run.deletion_vectors) {
    EXPECT_GT(files_with_dv, 0) << "no deletion vector: the DuckDB check did not test them";
  } else {
    EXPECT_EQ(files_with_dv, 0) << "deletion vectors in a copy-on-write table";
  }
  Json duck = DuckDbComparison(*files, work / "duckdb", state);
  ASSERT_TRUE(duck.is_object());
  EXPECT_EQ(duck["rows"].get<std::string>(), std::to_string(state.size())) << duck.dump();
  EXPECT_EQ(duck["ids"].get<std::string>(), std::to_string(state.size())) << duck.dump();
  EXPECT_EQ(duck["extra"].get<std::string>(), "0") << duck.dump();
  EXPECT_EQ(duck["lacking"].get<std::string>(), "0") << duck.dump();

  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  fmt::print(
      "TORTURE upsert-{}: kills={} keys={} changes={} live={} rows={} duckdb_rows={} "
      "files={} files_with_dv={} verify_exit={} wall={:.1f}s seed={}\n",
      run.name, kills, stream_.keys, changes.size(), state.size(), read.size(),
      duck["rows"].get<std::string>(), files->size(), files_with_dv, verify_exit, wall,
      settings_.seed);
}

TEST_F(UpsertTortureTest, DeletionVectorsOnLocalDiskUnderKills) {
  Run({.name = "dv",
       .table = TableLocation::Local((dir_ / "dv-table").string()),
       .deletion_vectors = true},
      settings_.kills);
}

TEST_F(UpsertTortureTest, CopyOnWriteOnLocalDiskUnderKills) {
  Run({.name = "cow",
       .table = TableLocation::Local((dir_ / "cow-table").string()),
       .deletion_vectors = false},
      settings_.kills);
}

TEST_F(UpsertTortureTest, DeletionVectorsOnS3UnderKills) {
  auto store = S3TortureStore::Start(settings_.seed, kMemstoreBytes);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Run({.name = "s3", .table = (*store)->Table("upsert"), .deletion_vectors = true},
      settings_.ForObjectStore().kills);
}

}  // namespace
}  // namespace ferry::fault

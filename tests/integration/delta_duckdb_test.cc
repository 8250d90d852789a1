// Independent check of the Delta tables ferry writes: the test replays the _delta_log itself
// (plain JSON with nlohmann for commits, DuckDB for the Parquet checkpoints; none of ferry's
// snapshot code) and reads every live data file with DuckDB (tests/duckdb, `make setup-npm`).
// Expected rows, partition values and paths are computed from the test's own input.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "duckdb_statements.h"
#include <nlohmann/json.hpp>

#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/optimize.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/local_store.h"

namespace ferry {
namespace {

using columnar::DataType;
using columnar::Field;
using Json = nlohmann::json;

std::vector<Json> Duck(const std::vector<std::string>& statements) {
  return duckdb_statements::Run(statements);
}

std::string Lit(const std::string& s) {
  return duckdb_statements::Literal(s);
}

std::string Lit(const std::optional<std::string>& s) {
  return s.has_value() ? Lit(*s) : "NULL";
}

// %XX decoding: undoes both the URI encoding of add.path and the Hive escaping of directories.
std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// ---- The input: rows the test writes, and the same rows rendered as the check expects them.

const char* const kStrings[] = {"plain", "with space", "a=b", "s/t",
                                "100%",  "ünï©ødé ✓",  "",    "#:&+'"};
constexpr int kNumStrings = 8;
const int32_t kInts[] = {0, -7, 2147483647};
const int32_t kDates[] = {0, 19782};  // 1970-01-01, 2024-02-29
const int64_t kTimestamps[] = {1631099471000000, 1631099471123456, -1000000};

struct Row {
  int64_t id;
  std::optional<std::string> name;
  std::optional<int64_t> ts;
  std::optional<std::string> p_str;
  std::optional<int32_t> p_int;
  std::optional<int32_t> p_date;
  std::optional<int64_t> p_ts;
};

Row MakeRow(int64_t i) {
  Row r;
  r.id = i;
  if (i % 5 != 0) {
    r.name = std::string(kStrings[i % kNumStrings]) + "-" + std::to_string(i);
  }
  if (i % 6 != 0) {
    r.ts = kTimestamps[i % 3] + i;
  }
  if (i % 9 != 4) {
    r.p_str = kStrings[(i / 2) % kNumStrings];
  }
  if (i % 4 != 1) {
    r.p_int = kInts[i % 3];
  }
  if (i % 7 != 3) {
    r.p_date = kDates[i % 2];
  }
  if (i % 8 != 5) {
    r.p_ts = kTimestamps[(i / 3) % 3];
  }
  return r;
}

template <typename T>
std::string Text(const std::optional<T>& v) {
  if (!v.has_value()) {
    return "null";
  }
  if constexpr (std::is_same_v<T, std::string>) {
    return *v;
  } else {
    return std::to_string(*v);
  }
}

std::string Render(const Row& r) {
  // Spark (and ferry) write an empty partition string as null.
  std::optional<std::string> p_str = r.p_str;
  if (p_str.has_value() && p_str->empty()) {
    p_str.reset();
  }
  return std::to_string(r.id) + "|" + Text(r.name) + "|" + Text(r.ts) + "|" + Text(p_str) + "|" +
         Text(r.p_int) + "|" + Text(r.p_date) + "|" + Text(r.p_ts);
}

columnar::SchemaPtr TestSchema() {
  return std::make_shared<const columnar::Schema>(std::vector<Field>{
      {"id", DataType::Int64(), false, {}},
      {"name", DataType::String(), true, {}},
      {"ts", DataType::Timestamp(), true, {}},
      {"p_str", DataType::String(), true, {}},
      {"p_int", DataType::Int32(), true, {}},
      {"p_date", DataType::Date(), true, {}},
      {"p_ts", DataType::Timestamp(), true, {}},
  });
}

columnar::RecordBatch MakeBatch(int64_t begin, int64_t end) {
  auto batch = columnar::RecordBatch::MakeEmpty(TestSchema());
  for (int64_t i = begin; i < end; ++i) {
    Row r = MakeRow(i);
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(r.id);
    auto str = [&](int c, const std::optional<std::string>& v) {
      if (v.has_value()) {
        batch.mutable_column(c)->As<columnar::BinaryColumn>()->Append(*v);
      } else {
        batch.mutable_column(c)->AppendNull();
      }
    };
    auto ts = [&](int c, const std::optional<int64_t>& v) {
      if (v.has_value()) {
        batch.mutable_column(c)->As<columnar::TimestampColumn>()->Append(*v);
      } else {
        batch.mutable_column(c)->AppendNull();
      }
    };
    str(1, r.name);
    ts(2, r.ts);
    str(3, r.p_str);
    if (r.p_int.has_value()) {
      batch.mutable_column(4)->As<columnar::Int32Column>()->Append(*r.p_int);
    } else {
      batch.mutable_column(4)->AppendNull();
    }
    if (r.p_date.has_value()) {
      batch.mutable_column(5)->As<columnar::DateColumn>()->Append(*r.p_date);
    } else {
      batch.mutable_column(5)->AppendNull();
    }
    ts(6, r.p_ts);
  }
  return batch;
}

// ---- The test's own log replay.

struct LiveFile {
  std::string path;  // add.path as logged
  std::map<std::string, std::optional<std::string>> partition_values;
  int64_t size = 0;
  Json stats;
};

struct Replay {
  int64_t version = -1;
  std::map<std::string, LiveFile> files;  // by path
  std::map<std::string, int64_t> txns;
  Json protocol;
  Json metadata;
};

LiveFile FileFromAdd(const Json& add) {
  LiveFile f;
  f.path = add.at("path").get<std::string>();
  for (const auto& [k, v] : add.at("partitionValues").items()) {
    f.partition_values[k] = v.is_null() ? std::nullopt : std::optional(v.get<std::string>());
  }
  f.size = add.at("size").get<int64_t>();
  if (add.contains("stats") && add.at("stats").is_string()) {
    f.stats = Json::parse(add.at("stats").get<std::string>());
  }
  return f;
}

void Apply(const Json& action, Replay* r) {
  if (action.contains("add") && !action.at("add").is_null()) {
    LiveFile f = FileFromAdd(action.at("add"));
    r->files[f.path] = f;
  }
  if (action.contains("remove") && !action.at("remove").is_null()) {
    r->files.erase(action.at("remove").at("path").get<std::string>());
  }
  if (action.contains("txn") && !action.at("txn").is_null()) {
    r->txns[action.at("txn").at("appId").get<std::string>()] =
        action.at("txn").at("version").get<int64_t>();
  }
  if (action.contains("protocol") && !action.at("protocol").is_null()) {
    r->protocol = action.at("protocol");
  }
  if (action.contains("metaData") && !action.at("metaData").is_null()) {
    r->metadata = action.at("metaData");
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ApplyCommit(const std::string& log_dir, int64_t version, Replay* r) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020lld.json", static_cast<long long>(version));
  std::istringstream lines(ReadFile(log_dir + "/" + name));
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    ASSERT_FALSE(line.empty()) << name;
    Json action = Json::parse(line, nullptr, false);
    ASSERT_FALSE(action.is_discarded()) << name << ": " << line;
    ASSERT_EQ(action.size(), 1u) << "one action per line: " << line;
    Apply(action, r);
    n++;
  }
  ASSERT_GT(n, 0) << name;
  r->version = version;
}

// Every JSON action of a checkpoint, read by DuckDB (one row per action, struct columns).
std::vector<Json> ReadCheckpoint(const std::string& file) {
  std::vector<Json> actions;
  auto rows =
      Duck({"SELECT to_json(add) AS add, to_json(remove) AS remove, to_json(txn) AS txn, "
            "to_json(protocol) AS protocol, to_json(metaData) AS metaData FROM "
            "read_parquet(" +
            Lit(file) + ")"});
  for (const Json& row : rows) {
    Json action = Json::object();
    for (const auto& [k, v] : row.items()) {
      if (!v.is_null()) {
        action[k] = Json::parse(v.get<std::string>());
      }
    }
    actions.push_back(action);
  }
  return actions;
}

class DeltaDuckDbTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string modules = std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/node_modules/@duckdb";
    ASSERT_TRUE(std::filesystem::exists(modules)) << "run `make setup-npm` first";
  }
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-delta-duckdb-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
};

TEST_F(DeltaDuckDbTest, LogReplayAndDataFilesAgreeWithWhatWasWritten) {
  std::shared_ptr<storage::ObjectStore> store = *storage::LocalStore::Create(dir_);
  auto table = *delta::Table::Open(store, "t");
  delta::TableSpec spec;
  spec.schema = TestSchema();
  spec.partition_columns = {"p_str", "p_int", "p_date", "p_ts"};
  spec.configuration = {{"delta.checkpointInterval", "3"}};
  auto snap = table->Create(spec);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  // Seven commits (versions 1-7): checkpoints at 3 and 6; commit 4 has two batches.
  std::vector<std::string> expected;
  int64_t next = 0;
  for (int c = 1; c <= 7; ++c) {
    auto writer = delta::TableWriter::Create(*table, *snap);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    for (int b = 0; b < (c == 4 ? 2 : 1); ++b) {
      int64_t n = 15 + 4 * c;
      ASSERT_TRUE((*writer)->Write(MakeBatch(next, next + n)).ok());
      for (int64_t i = next; i < next + n; ++i) {
        expected.push_back(Render(MakeRow(i)));
      }
      next += n;
    }
    auto adds = (*writer)->Finish();
    ASSERT_TRUE(adds.ok()) << adds.status().ToString();
    delta::Transaction txn(*table, *snap);
    txn.AddFiles(std::move(*adds));
    txn.SetPosition("app/a", c * 10);
    if (c % 2 == 0) {
      txn.SetPosition("app/b " + std::string("ü"), c);
    }
    auto result = txn.Commit();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_EQ(result->version, c);
    ASSERT_TRUE(result->checkpoint_status.ok()) << result->checkpoint_status.ToString();
    snap = std::move(result->snapshot);
  }
  std::sort(expected.begin(), expected.end());

  // 1. The log: contiguous versions 0..7, checkpoints 3 and 6, _last_checkpoint names 6.
  std::string log_dir = dir_ + "/t/_delta_log";
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(log_dir)) {
    names.insert(e.path().filename().string());
  }
  for (int v = 0; v <= 7; ++v) {
    char name[32];
    std::snprintf(name, sizeof(name), "%020d.json", v);
    EXPECT_EQ(names.count(name), 1u) << name;
  }
  EXPECT_EQ(names.count("00000000000000000008.json"), 0u);
  EXPECT_EQ(names.count("00000000000000000003.checkpoint.parquet"), 1u);
  EXPECT_EQ(names.count("00000000000000000006.checkpoint.parquet"), 1u);
  Json last = Json::parse(ReadFile(log_dir + "/_last_checkpoint"));
  EXPECT_EQ(last.at("version").get<int64_t>(), 6);

  // 2. Replay: all JSON commits from 0; and checkpoint 6 + commit 7. Both must agree, and
  //    checkpoint 3 must equal the JSON replay at version 3.
  Replay full;
  Replay at3;
  for (int v = 0; v <= 7; ++v) {
    ApplyCommit(log_dir, v, &full);
    if (v == 3) {
      at3 = full;
    }
  }
  for (int cp : {3, 6}) {
    char name[48];
    std::snprintf(name, sizeof(name), "/%020d.checkpoint.parquet", cp);
    std::vector<Json> actions = ReadCheckpoint(log_dir + name);
    Replay from_cp;
    int adds = 0;
    for (const Json& a : actions) {
      EXPECT_FALSE(a.contains("commitInfo"));
      adds += a.contains("add") ? 1 : 0;
      Apply(a, &from_cp);
    }
    if (cp == 6) {
      EXPECT_EQ(last.at("size").get<int64_t>(), static_cast<int64_t>(actions.size()));
      EXPECT_EQ(last.at("numOfAddFiles").get<int64_t>(), adds);
      EXPECT_EQ(last.at("sizeInBytes").get<int64_t>(),
                static_cast<int64_t>(std::filesystem::file_size(log_dir + name)));
      ApplyCommit(log_dir, 7, &from_cp);
    }
    const Replay& want = cp == 3 ? at3 : full;
    ASSERT_EQ(from_cp.files.size(), want.files.size()) << "checkpoint " << cp;
    for (const auto& [path, f] : want.files) {
      ASSERT_EQ(from_cp.files.count(path), 1u) << path;
      const LiveFile& g = from_cp.files.at(path);
      EXPECT_EQ(g.size, f.size) << path;
      EXPECT_EQ(g.partition_values, f.partition_values) << path;
      EXPECT_EQ(g.stats, f.stats) << path;
    }
    EXPECT_EQ(from_cp.txns, want.txns) << "checkpoint " << cp;
    // A checkpoint's protocol row also has null readerFeatures/writerFeatures columns.
    for (const char* key : {"minReaderVersion", "minWriterVersion"}) {
      EXPECT_EQ(from_cp.protocol.at(key), want.protocol.at(key)) << "checkpoint " << cp;
    }
    EXPECT_EQ(from_cp.metadata.at("schemaString"), want.metadata.at("schemaString"));
    EXPECT_EQ(from_cp.metadata.at("partitionColumns"), want.metadata.at("partitionColumns"));
  }
  EXPECT_EQ(full.txns, (std::map<std::string, int64_t>{{"app/a", 70}, {"app/b ü", 6}}));
  EXPECT_EQ(full.protocol.at("minReaderVersion").get<int>(), 1);
  EXPECT_EQ(full.protocol.at("minWriterVersion").get<int>(), 2);
  EXPECT_EQ(full.metadata.at("partitionColumns"),
            Json::array({"p_str", "p_int", "p_date", "p_ts"}));

  // 3. Every live file: the path decodes to a file on disk of add.size bytes; its directories
  //    are `col=<Hive-escaped value>` in partition-column order and agree with partitionValues.
  std::vector<std::string> files;
  std::vector<std::string> selects;
  const std::vector<std::string> pcols = {"p_str", "p_int", "p_date", "p_ts"};
  for (const auto& [path, f] : full.files) {
    EXPECT_EQ(path.find(' '), std::string::npos) << "add.path is URI-encoded: " << path;
    std::string relative = PercentDecode(path);
    std::string file = dir_ + "/t/" + relative;
    ASSERT_TRUE(std::filesystem::exists(file)) << path;
    EXPECT_EQ(static_cast<int64_t>(std::filesystem::file_size(file)), f.size) << path;
    std::vector<std::string> parts;
    std::istringstream segs(relative);
    std::string seg;
    while (std::getline(segs, seg, '/')) {
      parts.push_back(seg);
    }
    ASSERT_EQ(parts.size(), pcols.size() + 1) << relative;
    EXPECT_EQ(parts.back().rfind("part-", 0), 0u) << relative;
    EXPECT_NE(parts.back().find("-c000."), std::string::npos) << relative;
    for (size_t i = 0; i < pcols.size(); ++i) {
      std::string prefix = pcols[i] + "=";
      ASSERT_EQ(parts[i].rfind(prefix, 0), 0u) << relative;
      std::string dir_value = PercentDecode(parts[i].substr(prefix.size()));
      const std::optional<std::string>& logged = f.partition_values.at(pcols[i]);
      if (!logged.has_value()) {
        EXPECT_EQ(dir_value, "__HIVE_DEFAULT_PARTITION__") << relative;
      } else if (pcols[i] != "p_ts") {
        EXPECT_EQ(dir_value, *logged) << relative;
      }
      // Hive escapes '/', '=', '%', ':', '#', '\'' in directory names.
      for (char c : std::string("/=#'")) {
        EXPECT_EQ(parts[i].substr(prefix.size()).find(c), std::string::npos) << relative;
      }
    }
    // The data files hold the non-partition columns; the partition values come from the log.
    // Timestamps: the directory says "YYYY-MM-DD HH:MM:SS[.f]" (UTC), the log ISO-8601 with Z;
    // both are parsed by DuckDB and must be the same instant.
    std::string dir_ts = PercentDecode(parts[3].substr(5));
    const auto& pv = f.partition_values;
    std::string dir_ts_sql = dir_ts == "__HIVE_DEFAULT_PARTITION__"
                                 ? "NULL"
                                 : "epoch_us(CAST(" + Lit(dir_ts) + " AS TIMESTAMP))";
    selects.push_back(
        "SELECT id::VARCHAR AS id, coalesce(name, 'null') AS name, coalesce(epoch_us(ts)::VARCHAR, "
        "'null') AS ts, coalesce(" +
        Lit(pv.at("p_str")) + ", 'null') AS p_str, coalesce(CAST(" + Lit(pv.at("p_int")) +
        " AS INTEGER)::VARCHAR, 'null') AS p_int, coalesce((CAST(" + Lit(pv.at("p_date")) +
        " AS DATE) - DATE '1970-01-01')::VARCHAR, 'null') AS p_date, coalesce(epoch_us(CAST(" +
        Lit(pv.at("p_ts")) + " AS TIMESTAMPTZ))::VARCHAR, 'null') AS p_ts, " + dir_ts_sql +
        " IS NOT DISTINCT FROM epoch_us(CAST(" + Lit(pv.at("p_ts")) +
        " AS TIMESTAMPTZ)) AS ts_dir_ok FROM read_parquet(" + Lit(file) + ")");
    files.push_back(file);
  }
  ASSERT_GT(files.size(), 20u);

  // 4. DuckDB reads every file: same rows as written (with partition values from the log).
  std::vector<std::string> got;
  for (size_t begin = 0; begin < selects.size(); begin += 40) {
    std::string sql;
    for (size_t i = begin; i < std::min(selects.size(), begin + 40); ++i) {
      sql += (sql.empty() ? "" : " UNION ALL ") + selects[i];
    }
    for (const Json& row : Duck({sql})) {
      EXPECT_TRUE(row.at("ts_dir_ok").get<bool>()) << row.dump();
      got.push_back(row.at("id").get<std::string>() + "|" + row.at("name").get<std::string>() +
                    "|" + row.at("ts").get<std::string>() + "|" +
                    row.at("p_str").get<std::string>() + "|" + row.at("p_int").get<std::string>() +
                    "|" + row.at("p_date").get<std::string>() + "|" +
                    row.at("p_ts").get<std::string>());
    }
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_EQ(got, expected);

  // 5. Stats against DuckDB's own count, min, max and null count of each file.
  std::string list;
  for (const std::string& file : files) {
    list += (list.empty() ? "" : ", ") + Lit(file);
  }
  auto stats_rows = Duck(
      {"SELECT filename, count(*)::VARCHAR AS n, min(id)::VARCHAR AS min_id, max(id)::VARCHAR AS "
       "max_id, (count(*) - count(name))::VARCHAR AS null_names, (count(*) - "
       "count(ts))::VARCHAR AS null_ts FROM read_parquet([" +
       list + "], filename = true) GROUP BY filename"});
  ASSERT_EQ(stats_rows.size(), files.size());
  std::map<std::string, Json> by_file;
  for (const Json& row : stats_rows) {
    by_file[row.at("filename").get<std::string>()] = row;
  }
  for (const auto& [path, f] : full.files) {
    std::string file = dir_ + "/t/" + PercentDecode(path);
    ASSERT_EQ(by_file.count(file), 1u) << file;
    const Json& d = by_file.at(file);
    ASSERT_TRUE(f.stats.is_object()) << path;
    EXPECT_EQ(std::to_string(f.stats.at("numRecords").get<int64_t>()), d.at("n")) << path;
    EXPECT_EQ(std::to_string(f.stats.at("minValues").at("id").get<int64_t>()), d.at("min_id"));
    EXPECT_EQ(std::to_string(f.stats.at("maxValues").at("id").get<int64_t>()), d.at("max_id"));
    EXPECT_EQ(std::to_string(f.stats.at("nullCount").at("name").get<int64_t>()),
              d.at("null_names"));
    EXPECT_EQ(std::to_string(f.stats.at("nullCount").at("ts").get<int64_t>()), d.at("null_ts"));
    // Partition columns have no stats.
    EXPECT_FALSE(f.stats.at("nullCount").contains("p_str")) << path;
  }
}

// ferry's optimize on a copy of a table Spark wrote with deletion vectors
// (delta-golden/dv-partitioned-with-checkpoint: col1 = 0..49, col2 = "foo<part>", then DELETEs
// of col1 = 0, 2, ..., 28). Read independently: the OPTIMIZE commit (plain JSON) names the files
// it removed and added; DuckDB reads both sets. The new files hold exactly the removed files'
// rows minus those Spark's DELETE predicates matched, and no add carries a deletion vector.
TEST_F(DeltaDuckDbTest, OptimizeOfSparkDeletionVectorsKeepsExactlyTheLiveRows) {
  const std::string name = "dv-partitioned-with-checkpoint";
  std::filesystem::copy(std::string(FERRY_TESTDATA_DIR) + "/delta-golden/" + name,
                        dir_ + "/" + name, std::filesystem::copy_options::recursive);
  std::shared_ptr<storage::ObjectStore> store = *storage::LocalStore::Create(dir_);
  auto table = *delta::Table::Open(store, name);
  auto result = delta::Optimize(*table, delta::OptimizeOptions{});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(result->version.has_value());

  char commit_name[32];
  std::snprintf(commit_name, sizeof(commit_name), "%020lld",
                static_cast<long long>(*result->version));
  std::ifstream commit(dir_ + "/" + name + "/_delta_log/" + commit_name + ".json");
  ASSERT_TRUE(commit.good());
  std::vector<std::string> added;
  std::vector<std::string> removed;
  int removed_with_dv = 0;
  std::string line;
  while (std::getline(commit, line)) {
    Json action = Json::parse(line);
    if (action.contains("add")) {
      EXPECT_FALSE(action["add"].contains("deletionVector")) << line;
      EXPECT_FALSE(action["add"]["dataChange"].get<bool>());
      added.push_back(dir_ + "/" + name + "/" + PercentDecode(action["add"]["path"]));
    } else if (action.contains("remove")) {
      removed_with_dv += action["remove"].contains("deletionVector") ? 1 : 0;
      removed.push_back(dir_ + "/" + name + "/" + PercentDecode(action["remove"]["path"]));
    }
  }
  ASSERT_FALSE(added.empty());
  EXPECT_EQ(removed_with_dv, 2);
  auto rows = [](const std::vector<std::string>& files) {
    std::string list;
    for (const std::string& file : files) {
      list += (list.empty() ? "" : ", ") + Lit(file);
    }
    std::multiset<std::string> out;
    for (const Json& row : Duck({"SELECT col1::VARCHAR AS c1, col2 FROM read_parquet([" + list +
                                 "], hive_partitioning = false)"})) {
      out.insert(row.at("c1").get<std::string>() + "/" + row.at("col2").get<std::string>());
    }
    return out;
  };
  std::multiset<std::string> expected;
  for (const std::string& row : rows(removed)) {
    const int col1 = std::stoi(row.substr(0, row.find('/')));
    if (!(col1 < 30 && col1 % 2 == 0)) {  // Spark's DELETE predicates
      expected.insert(row);
    }
  }
  const std::multiset<std::string> got = rows(added);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(static_cast<int64_t>(got.size()), result->rows);
}

}  // namespace
}  // namespace ferry

// Column mapping checked by a reader ferry did not write: DuckDB (tests/duckdb, `make setup-npm`)
// reads the Parquet files ferry writes into column-mapped tables. The log is parsed here with
// nlohmann (not ferry's snapshot code) to learn the physical names and ids the files must carry.
//   1. Copies of Spark's golden tables `table-with-columnmapping-mode-{name,id}` (read in place,
//      copied to a temp dir): ferry reads Spark's rows and appends them again; DuckDB finds the
//      same column names and field ids in ferry's file as in Spark's, and the same rows.
//   2. A table ferry creates in id mode, partitioned: DuckDB sees the log's physical names and ids
//      in the file, and the values under them; the partition directory uses the physical name.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "duckdb_statements.h"
#include <nlohmann/json.hpp>

#include "ferry/columnar/column.h"
#include "ferry/columnar/ddl.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/local_store.h"

namespace ferry {
namespace {

using Json = nlohmann::json;

std::vector<Json> Duck(const std::vector<std::string>& statements) {
  return duckdb_statements::Run(statements);
}

std::string Lit(const std::string& s) {
  return duckdb_statements::Literal(s);
}

std::string Quoted(const std::string& name) {
  return "\"" + name + "\"";
}

// Every action of the log's commits, in order (the tables here have no checkpoints).
std::vector<Json> LogActions(const std::string& table_dir) {
  std::vector<std::string> commits;
  for (const auto& e : std::filesystem::directory_iterator(table_dir + "/_delta_log")) {
    if (e.path().extension() == ".json") {
      commits.push_back(e.path().string());
    }
  }
  std::sort(commits.begin(), commits.end());
  std::vector<Json> out;
  for (const std::string& path : commits) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty()) {
        out.push_back(Json::parse(line));
      }
    }
  }
  return out;
}

// %XX decoding of add.path.
std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// "name#id" of every field with a field_id in a Parquet file, sorted.
std::vector<std::string> FieldIds(const std::string& file) {
  std::vector<std::string> out;
  for (const Json& row : Duck({"SELECT name, field_id FROM parquet_schema(" + Lit(file) +
                               ") WHERE field_id IS NOT NULL"})) {
    out.push_back(row["name"].get<std::string>() + "#" + row["field_id"].get<std::string>());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class ColumnMappingDuckDbTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string modules = std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/node_modules/@duckdb";
    ASSERT_TRUE(std::filesystem::exists(modules)) << "run `make setup-npm` first";
  }
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-colmap-duckdb-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<delta::Table> Open(const std::string& dir) {
    auto store = storage::LocalStore::Create(dir);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    auto table = delta::Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)), "");
    EXPECT_TRUE(table.ok());
    return std::move(*table);
  }

  // Step 1 for one golden table.
  void AppendToSparkTable(const std::string& golden) {
    const std::string dir = dir_ + "/" + golden;
    std::filesystem::copy(std::string(FERRY_TESTDATA_DIR) + "/delta-golden/" + golden, dir,
                          std::filesystem::copy_options::recursive);
    std::vector<std::string> spark_files;
    for (const Json& a : LogActions(dir)) {
      if (a.contains("add")) {
        spark_files.push_back(dir + "/" + PercentDecode(a["add"]["path"]));
      }
    }
    ASSERT_EQ(spark_files.size(), 2u);

    auto table = Open(dir);
    auto snap = table->LoadSnapshot();
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    auto writer = delta::TableWriter::Create(*table, *snap);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    for (const auto& [key, add] : snap->files()) {
      auto rows = delta::ReadLiveFile(*table, *snap, add);
      ASSERT_TRUE(rows.ok()) << rows.status().ToString();
      Status st = (*writer)->Write(*rows);
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
    auto adds = (*writer)->Finish();
    ASSERT_TRUE(adds.ok()) << adds.status().ToString();
    delta::Transaction txn(*table, *snap);
    txn.AddFiles(std::move(*adds));
    ASSERT_TRUE(txn.Commit().ok());

    std::string ferry_file;
    for (const Json& a : LogActions(dir)) {
      if (a.contains("add")) {
        std::string file = dir + "/" + PercentDecode(a["add"]["path"]);
        if (std::find(spark_files.begin(), spark_files.end(), file) == spark_files.end()) {
          ferry_file = file;
        }
      }
    }
    ASSERT_FALSE(ferry_file.empty());
    // The same physical column names and field ids as Spark's files, at every depth.
    std::vector<std::string> spark_ids = FieldIds(spark_files[0]);
    EXPECT_EQ(spark_ids.size(), 30u);  // maxColumnId = 30, every field has one
    EXPECT_EQ(FieldIds(ferry_file), spark_ids);
    // The same rows, compared by DuckDB column by column (nested values included).
    std::string spark = "read_parquet([" + Lit(spark_files[0]) + ", " + Lit(spark_files[1]) + "])";
    std::string ferry = "read_parquet(" + Lit(ferry_file) + ")";
    auto rows = Duck({"SELECT (SELECT count(*) FROM " + ferry +
                      ") AS n, (SELECT count(*) FROM (SELECT * FROM " + ferry +
                      " EXCEPT ALL SELECT * FROM " + spark +
                      ")) AS extra, (SELECT count(*) FROM (SELECT * FROM " + spark +
                      " EXCEPT ALL SELECT * FROM " + ferry + ")) AS missing"});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["n"], "6");
    EXPECT_EQ(rows[0]["extra"], "0");
    EXPECT_EQ(rows[0]["missing"], "0");
  }

  std::string dir_;
};

TEST_F(ColumnMappingDuckDbTest, SparkNameModeTableAppendedByFerry) {
  AppendToSparkTable("table-with-columnmapping-mode-name");
}

TEST_F(ColumnMappingDuckDbTest, SparkIdModeTableAppendedByFerry) {
  AppendToSparkTable("table-with-columnmapping-mode-id");
}

TEST_F(ColumnMappingDuckDbTest, FerryCreatedIdModeTable) {
  const std::string dir = dir_ + "/t";
  std::filesystem::create_directories(dir);
  auto table = Open(dir);
  auto schema = columnar::ParseDdlSchema("id BIGINT, loc STRUCT<city: STRING>, p STRING");
  ASSERT_TRUE(schema.ok());
  auto snap = table->Create({.schema = std::make_shared<const columnar::Schema>(*schema),
                             .partition_columns = {"p"},
                             .configuration = {{"delta.columnMapping.mode", "id"}}});
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  columnar::RecordBatch batch = columnar::RecordBatch::MakeEmpty(snap->schema());
  for (int64_t i = 0; i < 3; ++i) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(i);
    auto* loc = batch.mutable_column(1)->As<columnar::StructColumn>();
    loc->mutable_child(0)->As<columnar::BinaryColumn>()->Append("city " + std::to_string(i));
    loc->FinishRow();
    batch.mutable_column(2)->As<columnar::BinaryColumn>()->Append("x");
  }
  auto writer = delta::TableWriter::Create(*table, *snap);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Write(batch).ok());
  auto adds = (*writer)->Finish();
  ASSERT_TRUE(adds.ok());
  delta::Transaction txn(*table, *snap);
  txn.AddFiles(std::move(*adds));
  ASSERT_TRUE(txn.Commit().ok());

  // What the log says, read with nlohmann.
  Json schema_json;
  std::string file;
  Json partition_values;
  for (const Json& a : LogActions(dir)) {
    if (a.contains("metaData")) {
      schema_json = Json::parse(a["metaData"]["schemaString"].get<std::string>());
      EXPECT_EQ(a["metaData"]["configuration"]["delta.columnMapping.maxColumnId"], "4");
    }
    if (a.contains("protocol")) {
      EXPECT_EQ(a["protocol"]["minReaderVersion"], 2);
      EXPECT_EQ(a["protocol"]["minWriterVersion"], 5);
    }
    if (a.contains("add")) {
      file = PercentDecode(a["add"]["path"]);
      partition_values = a["add"]["partitionValues"];
    }
  }
  auto physical = [](const Json& field) {
    return field["metadata"]["delta.columnMapping.physicalName"].get<std::string>();
  };
  auto id = [](const Json& field) {
    return std::to_string(field["metadata"]["delta.columnMapping.id"].get<int64_t>());
  };
  const Json& f_id = schema_json["fields"][0];
  const Json& f_loc = schema_json["fields"][1];
  const Json& f_city = f_loc["type"]["fields"][0];
  const Json& f_p = schema_json["fields"][2];
  EXPECT_EQ(file.rfind(physical(f_p) + "=x/", 0), 0u) << file;
  EXPECT_EQ(partition_values, Json({{physical(f_p), "x"}}));
  std::vector<std::string> expected = {physical(f_id) + "#" + id(f_id),
                                       physical(f_loc) + "#" + id(f_loc),
                                       physical(f_city) + "#" + id(f_city)};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(FieldIds(dir + "/" + file), expected);
  auto rows = Duck({"SELECT " + Quoted(physical(f_id)) + " AS id, " + Quoted(physical(f_loc)) +
                    "." + Quoted(physical(f_city)) + " AS city FROM read_parquet(" +
                    Lit(dir + "/" + file) + ", hive_partitioning = false) ORDER BY 1"});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2]["id"], "2");
  EXPECT_EQ(rows[2]["city"], "city 2");
}

}  // namespace
}  // namespace ferry

// `ferry verify` as a user runs it: tables written on disk with TableWriter + Transaction, the
// real binary run against them, its exit code and JSON checked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kafka_child_process.h"
#include <nlohmann/json.hpp>

#include "ferry/columnar/column.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/local_store.h"

namespace ferry {
namespace {

using columnar::DataType;
using columnar::Field;

using source::kafka::testing::CommandResult;

class VerifyCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = std::filesystem::temp_directory_path() / "ferry-verify-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    std::filesystem::create_directory(dir_ + "/table");
    auto store = storage::LocalStore::Create(dir_ + "/table");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    table_ = *delta::Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)), "");
    schema_ = std::make_shared<const columnar::Schema>(std::vector<Field>{
        {"id", DataType::Int64(), true, {}},
        {"_partition", DataType::Int32(), true, {}},
        {"_offset", DataType::Int64(), true, {}},
    });
    delta::TableSpec spec;
    spec.schema = schema_;
    spec.partition_columns = {"_partition"};
    auto snap = table_->Create(spec);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    snapshot_ = *snap;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Ids begin..end-1 in partition `partition` at offsets equal to the ids; commits the txn
  // `p/kafka/t/<partition>` = end - 1 unless `commit_position` is false.
  void Append(int32_t partition, int64_t begin, int64_t end, bool commit_position = true) {
    auto batch = columnar::RecordBatch::MakeEmpty(schema_);
    for (int64_t id = begin; id < end; ++id) {
      batch.mutable_column(0)->As<columnar::Int64Column>()->Append(id);
      batch.mutable_column(1)->As<columnar::Int32Column>()->Append(partition);
      batch.mutable_column(2)->As<columnar::Int64Column>()->Append(id);
    }
    auto writer = delta::TableWriter::Create(*table_, snapshot_);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->Write(batch).ok());
    auto adds = (*writer)->Finish();
    ASSERT_TRUE(adds.ok()) << adds.status().ToString();
    delta::Transaction txn(*table_, snapshot_);
    txn.AddFiles(std::move(*adds));
    if (commit_position) {
      txn.SetPosition("p/kafka/t/" + std::to_string(partition), end - 1);
    }
    auto result = txn.Commit();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    snapshot_ = result->snapshot;
  }

  CommandResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), FERRY_BINARY_DIR "/src/ferry/app/ferry");
    return source::kafka::testing::RunCommand(args);
  }

  std::string table_path() const { return dir_ + "/table"; }

  std::string dir_;
  std::unique_ptr<delta::Table> table_;
  columnar::SchemaPtr schema_;
  delta::Snapshot snapshot_;
};

TEST_F(VerifyCliTest, CleanTableExitsZero) {
  Append(0, 0, 50);
  Append(1, 50, 100);
  Append(0, 100, 120);
  CommandResult run =
      Run({"verify", table_path(), "--id", "id", "--expect", "120", "--range", "0..119", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["rows"], 120);
  EXPECT_EQ(json["distinct"], 120);
  EXPECT_EQ(json["duplicates"], 0);
  EXPECT_EQ(json["missing"], 0);
  ASSERT_EQ(json["positions"].size(), 2u);
  EXPECT_EQ(json["positions"][0]["app_id"], "p/kafka/t/0");
  EXPECT_EQ(json["positions"][0]["txn"], 119);
  EXPECT_EQ(json["positions"][0]["data_max"], 119);
  EXPECT_EQ(json["ok"], true);

  run = Run({"verify", table_path(), "--id", "id", "--expect", "120"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("result:      CLEAN"), std::string::npos) << run.out;
}

TEST_F(VerifyCliTest, DuplicatesAndMissingExitOne) {
  Append(0, 0, 50);
  Append(0, 40, 45, /*commit_position=*/false);  // a replayed batch without its txn
  CommandResult run = Run({"verify", table_path(), "--id", "id", "--range", "0..51", "--json"});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["rows"], 55);
  EXPECT_EQ(json["distinct"], 50);
  EXPECT_EQ(json["duplicates"], 5);
  EXPECT_EQ(json["duplicates_listed"][0]["id"], "40");
  EXPECT_EQ(json["duplicates_listed"][0]["files"].size(), 2u);
  EXPECT_EQ(json["missing"], 2);
  EXPECT_EQ(json["missing_ids"], nlohmann::json({50, 51}));
  EXPECT_EQ(json["ok"], false);

  run = Run({"verify", table_path(), "--id", "id"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("id 40: 2 rows in _partition=0/"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("NOT CLEAN"), std::string::npos) << run.out;
}

TEST_F(VerifyCliTest, WrongTxnExitsOne) {
  Append(0, 0, 10);
  Append(0, 10, 20);
  // A third commit that only moves the position forward, with no data behind it.
  delta::Transaction txn(*table_, snapshot_);
  txn.SetPosition("p/kafka/t/0", 25);
  ASSERT_TRUE(txn.Commit().ok());
  CommandResult run = Run({"verify", table_path(), "--id", "id", "--json"});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["duplicates"], 0);
  EXPECT_EQ(json["positions"][0]["txn"], 25);
  EXPECT_EQ(json["positions"][0]["data_max"], 19);
  EXPECT_EQ(json["positions"][0]["ok"], false);
}

TEST_F(VerifyCliTest, MissingFileAndUsageErrorsExitTwo) {
  Append(0, 0, 10);
  const std::string path = snapshot_.files().begin()->second.path;
  std::filesystem::remove(table_path() + "/" + path);
  CommandResult run = Run({"verify", table_path(), "--id", "id"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(path), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(table_path()), std::string::npos) << run.err;

  EXPECT_EQ(Run({"verify", table_path()}).exit_code, 2);
  EXPECT_EQ(Run({"verify", table_path(), "--id", "id", "--range", "5"}).exit_code, 2);
  EXPECT_EQ(Run({"verify", table_path(), "--id", "id", "--expect", "x"}).exit_code, 2);
  EXPECT_EQ(Run({"verify", table_path(), "--id", "nope"}).exit_code, 2);
  EXPECT_EQ(Run({"verify", dir_ + "/absent", "--id", "id"}).exit_code, 2);
}

// --routing: the tables a routed pipeline's positions table records (txns "<id>/table/<table>").
TEST_F(VerifyCliTest, RoutingFindsTheTablesAPositionsTableRecords) {
  Append(0, 0, 30);
  std::filesystem::create_directory(dir_ + "/_routing");
  auto store = storage::LocalStore::Create(dir_ + "/_routing");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto positions =
      *delta::Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)), "");
  delta::TableSpec spec;
  spec.schema = std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"table", DataType::String(), true, {}}});
  auto created = positions->Create(spec);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string routing = dir_ + "/_routing";
  EXPECT_EQ(Run({"verify", "--routing", routing, "--id", "id"}).exit_code, 2)
      << "records no table yet";
  delta::Transaction txn(*positions, *created);
  txn.SetPosition("p/table/" + table_path(), 1);
  txn.SetPosition("q/table/" + dir_ + "/absent", 2);
  ASSERT_TRUE(txn.Commit().ok());

  // Two pipelines recorded: which one must be said.
  CommandResult run = Run({"verify", "--routing", routing, "--id", "id"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("several pipelines (p, q)"), std::string::npos) << run.err;
  run = Run({"verify", "--routing", routing, "--pipeline", "p", "--id", "id", "--expect", "30",
             "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["tables"].size(), 1u);
  EXPECT_EQ(json["tables"][0]["table"], table_path());
  EXPECT_EQ(json["tables"][0]["rows"], 30);
  EXPECT_EQ(json["in_several_tables"], 0);
  EXPECT_EQ(json["expect_ok"], true);
  EXPECT_EQ(json["ok"], true);
  // q's table is not there: an error naming it.
  run = Run({"verify", "--routing", routing, "--pipeline", "q", "--id", "id"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(dir_ + "/absent"), std::string::npos) << run.err;
  // One way of naming the tables at a time; --config needs --pipeline.
  EXPECT_EQ(Run({"verify", table_path(), "--routing", routing, "--id", "id"}).exit_code, 2);
  EXPECT_EQ(Run({"verify", "--config", dir_ + "/ferry.toml", "--id", "id"}).exit_code, 2);
  EXPECT_EQ(Run({"verify", table_path(), "--pipeline", "p", "--id", "id"}).exit_code, 2);
}

// `ferry optimize` and `ferry vacuum` on the same kind of table; verify stays clean throughout.
TEST_F(VerifyCliTest, OptimizeThenVacuumKeepTheTableClean) {
  for (int64_t begin = 0; begin < 60; begin += 10) {
    Append(static_cast<int32_t>(begin / 10 % 2), begin, begin + 10);
  }
  CommandResult run = Run({"optimize", table_path(), "--where", "_partition = 0", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["files_removed"], 3);
  EXPECT_EQ(json["files_added"], 1);
  EXPECT_EQ(json["rows"], 30);
  run = Run({"optimize", table_path(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["files_removed"], 3);
  run = Run({"verify", table_path(), "--id", "id", "--expect", "60", "--range", "0..59"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;

  // An orphan ten days old (a fenced batch's file) goes; the files optimize removed just now
  // stay (their removes are within the retention), and so does every live file.
  const std::string orphan = table_path() + "/_partition=1/part-00000-orphan-c000.zstd.parquet";
  std::ofstream(orphan) << "not parquet";
  std::filesystem::last_write_time(
      orphan, std::filesystem::file_time_type::clock::now() - std::chrono::hours(240));
  run = Run({"vacuum", table_path(), "--dry-run", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["files_deleted"], 1);
  EXPECT_TRUE(std::filesystem::exists(orphan));
  run = Run({"vacuum", table_path(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["deleted"], nlohmann::json({"_partition=1/part-00000-orphan-c000.zstd.parquet"}));
  EXPECT_EQ(json["files_kept"], 8);  // 2 live + 6 recently removed
  EXPECT_FALSE(std::filesystem::exists(orphan));
  run = Run({"verify", table_path(), "--id", "id", "--expect", "60", "--range", "0..59"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;

  EXPECT_EQ(Run({"vacuum", table_path(), "--retain", "1h"}).exit_code, 2);
  EXPECT_EQ(Run({"optimize", table_path(), "--where", "id = 1"}).exit_code, 2);
  EXPECT_EQ(Run({"optimize", table_path(), "--target-size", "big"}).exit_code, 2);
}

// For the figure in docs/verify.md: 1,000,000 ids in 100 commits over 2 partitions, then one
// `ferry verify` run. Disabled in normal runs; run with --gtest_also_run_disabled_tests.
TEST_F(VerifyCliTest, DISABLED_MillionIds) {
  for (int64_t begin = 0; begin < 1'000'000; begin += 10'000) {
    Append(static_cast<int32_t>(begin / 10'000 % 2), begin, begin + 10'000);
  }
  const auto start = std::chrono::steady_clock::now();
  CommandResult run = Run({"verify", table_path(), "--id", "id", "--expect", "1000000", "--range",
                           "0..999999", "--json"});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::printf("verify of 1,000,000 ids in 100 files: %lld ms\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()));
}

}  // namespace
}  // namespace ferry

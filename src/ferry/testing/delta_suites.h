// The storage-agnostic Delta suites, written once and run on every store (test_store.h): the
// golden tables Spark and delta-kernel-rs wrote (delta/golden_tables_test.cc: snapshots, errors,
// details, read through the store's `testdata`) and the table writing, commit and conflict tests
// (delta/table_test.cc: each on a fresh store). Those two files form the object library
// ferry_delta_store_suites; a test binary links it and instantiates the suites for its stores:
//
//   FERRY_INSTANTIATE_GOLDEN_SUITES(Local, ::testing::Values(LocalDiskStoreFactory()));
//
// (the golden suites need StoreFactory::testdata; TableTest only `fresh`). delta_test does it
// for the local stores, tests/integration/s3_delta_test for S3 on radosgw, azure_delta_test for
// Azure Blob on Azurite.
// (The suites are in namespace ferry::testing; instantiate them there.)
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ferry/columnar/record_batch.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/object_store.h"
#include "ferry/testing/test_store.h"

namespace ferry::testing {

// A golden table and what the Delta projects' own tests expect of it.
struct GoldenExpected {
  std::string table;  // directory under testdata/delta-golden
  int64_t version;
  int32_t reader;
  int32_t writer;
  std::vector<std::string> columns;  // top-level schema, in order; empty = no schema
  std::vector<std::string> partition_columns;
  int64_t num_files;            // kAnyFiles when the source does not pin it
  std::optional<int64_t> rows;  // nullopt: the log names files that do not exist
  std::map<std::string, int64_t> txns;
  std::string source;
};
inline constexpr int64_t kAnyFiles = -1;

// A golden table that must fail to load, and how.
struct GoldenExpectedError {
  std::string table;
  StatusCode code;
  std::string message;  // a part of the message
  std::string source;
};

const std::vector<GoldenExpected>& GoldenTables();
const std::vector<GoldenExpectedError>& GoldenErrors();

// The store's testdata, opened once per test.
class GoldenTest {
 protected:
  // REQUIRES: factory.testdata. Fails the test when the store cannot be had.
  void OpenTestdata(const StoreFactory& factory);
  // The table under testdata's "delta-golden/" or "delta-kernel/" (`dir` includes that part).
  std::unique_ptr<delta::Table> OpenTable(const std::string& dir);
  Result<delta::Snapshot> Load(const std::string& dir, std::optional<int64_t> version = {});
  // Rows of the live files, read from their Parquet footers through the store, minus each
  // file's deletion-vector cardinality.
  Result<int64_t> CountRows(const std::string& dir, const delta::Snapshot& snapshot);

  std::shared_ptr<storage::ObjectStore> testdata_;
};

class GoldenSnapshotTest
    : public GoldenTest,
      public ::testing::TestWithParam<std::tuple<StoreFactory, GoldenExpected>> {
 protected:
  void SetUp() override { OpenTestdata(std::get<0>(GetParam())); }
};

class GoldenErrorTest
    : public GoldenTest,
      public ::testing::TestWithParam<std::tuple<StoreFactory, GoldenExpectedError>> {
 protected:
  void SetUp() override { OpenTestdata(std::get<0>(GetParam())); }
};

class GoldenDetailsTest : public GoldenTest, public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override { OpenTestdata(GetParam()); }
};

// Test names: "<store>_<table>" with every character but letters and digits as '_'.
std::string GoldenTestName(const std::string& store, const std::string& table);

// Writing tables on a fresh store: the table "db/events" (delta/table_test.cc).
class TableTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  delta::Snapshot CreateWide(delta::StringMap configuration = {});
  // Writes `batch` and commits it with the given positions.
  Result<delta::CommitResult> Append(const delta::Snapshot& snapshot,
                                     const columnar::RecordBatch& batch,
                                     std::map<std::string, int64_t> positions = {},
                                     delta::CommitOptions options = {});
  // Rows sorted; an empty partition string reads back as null (Spark writes "" as the
  // default partition).
  std::vector<std::string> Sorted(std::vector<std::string> rows);

  TestStore fixture_;
  std::shared_ptr<storage::ObjectStore> store_;
  std::unique_ptr<delta::Table> table_;
};

// TableTest's commits racing a writer that commits back to back (delta/table_test.cc), through a
// store whose request latency the test sets. Instantiated on the memory and local stores only
// (delta_test): on a remote store the outcome depends on what its reads cost against its puts
// (on radosgw reading a commit costs more than the test leader's tiny put, and a leader whose
// whole cycle is shorter than one read and one put cannot be beaten by any loser without
// coordination).
class ContentionTest : public TableTest {};

}  // namespace ferry::testing

// Instantiates the three golden-table suites with the prefix `prefix` for the StoreFactory
// generator `factories` (each with a testdata store). TableTest is instantiated on its own:
//   INSTANTIATE_TEST_SUITE_P(prefix, TableTest, factories,
//                            [](const auto& p) { return StoreFactoryName(p.param); });
#define FERRY_INSTANTIATE_GOLDEN_SUITES(prefix, factories)                                  \
  INSTANTIATE_TEST_SUITE_P(                                                                 \
      prefix, GoldenSnapshotTest,                                                           \
      ::testing::Combine(factories, ::testing::ValuesIn(::ferry::testing::GoldenTables())), \
      [](const auto& p) {                                                                   \
        return ::ferry::testing::GoldenTestName(std::get<0>(p.param).name,                  \
                                                std::get<1>(p.param).table);                \
      });                                                                                   \
  INSTANTIATE_TEST_SUITE_P(                                                                 \
      prefix, GoldenErrorTest,                                                              \
      ::testing::Combine(factories, ::testing::ValuesIn(::ferry::testing::GoldenErrors())), \
      [](const auto& p) {                                                                   \
        return ::ferry::testing::GoldenTestName(std::get<0>(p.param).name,                  \
                                                std::get<1>(p.param).table);                \
      });                                                                                   \
  INSTANTIATE_TEST_SUITE_P(prefix, GoldenDetailsTest, factories,                            \
                           [](const auto& p) { return p.param.name; })

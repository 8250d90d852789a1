// ferry's snapshot reader against the golden tables Spark wrote (../shared/testdata/delta-golden,
// delta-io/delta @ bb1057f4367f) and the app-txn tables of delta-kernel-rs (delta-kernel), read
// through an ObjectStore: one suite for every store (testing/delta_suites.h), the tables on
// local disk in delta_test and uploaded to S3 (radosgw) in s3_delta_test, with the same
// expectations.
//
// Expected values are taken from the Delta projects' own tests and generators, never from
// ferry's output. Sources, abbreviated in the table below:
//   LRS  kernel/kernel-defaults/src/test/scala/io/delta/kernel/defaults/LogReplaySuite.scala
//   DTRS kernel/kernel-defaults/src/test/scala/io/delta/kernel/defaults/DeltaTableReadsSuite.scala
//   GEN  connectors/golden-tables/src/test/scala/io/delta/golden/GoldenTables.scala (what the
//        generator wrote: one version per write/DML statement, rows per DataFrame)
//   SGT  spark/v2/src/test/java/io/delta/spark/internal/v2/read/SparkGoldenTableTest.java
//   KRS  delta-io/delta-kernel-rs kernel/src/actions/set_transaction.rs (test_txn,
//        test_get_all_returns_every_txn_unfiltered)
//   PROTOCOL  PROTOCOL.md of delta-io/delta (feature support rules)
// Rows are counted with ferry's Parquet reader from the footers of the live files (minus each
// file's deletion-vector cardinality), read through the store, not from the log's stats.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ferry/delta/history.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_features.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/testing/delta_suites.h"

namespace ferry::testing {

using delta::AppendPartitionValue;
using delta::CheckWriteSupported;
using delta::DecodeUriPath;
using delta::EscapePartitionPathName;
using delta::ReadHistory;

namespace {

// Key prefixes of the testdata store, and the directory they were uploaded from (for the
// expectations that come from the files themselves).
const std::string kGolden = "delta-golden/";
const std::string kKernelRs = "delta-kernel/";
const std::string kGoldenDir = std::string(FERRY_TESTDATA_DIR) + "/delta-golden/";

// clang-format off
const std::vector<GoldenExpected> kTables = {
  {"basic-with-inserts-deletes-checkpoint", 13, 1, 2, {"id"}, {}, 7, 41, {},
   "LRS 'simple end to end with inserts and deletes and checkpoint' (version 13, ids); GEN "
   "(7 files: five rewritten, 50-60, 60-66)"},
  {"basic-with-inserts-updates", 1, 1, 2, {"id", "str"}, {}, kAnyFiles, 100, {},
   "LRS 'simple end to end with inserts and updates'; GEN (write + UPDATE)"},
  {"basic-with-inserts-merge", 1, 1, 2, {"id", "str"}, {}, kAnyFiles, 140, {},
   "LRS 'simple end to end with inserts and merge'; GEN (write + MERGE)"},
  {"basic-with-inserts-overwrite-restore", 3, 1, 2, {"id"}, {}, kAnyFiles, 200, {},
   "LRS 'simple end to end with restore'"},
  {"basic-with-vacuum-protocol-check-feature", 1, 3, 7, {"id", "str"}, {}, kAnyFiles, 100, {},
   "DTRS 'simple end to end with vacuum protocol check feature'; GEN (write + ALTER)"},
  {"only-checkpoint-files", 2, 1, 2, {"id"}, {}, kAnyFiles, 25, {},
   "LRS 'end to end only checkpoint files'; GEN (write, DELETE, append)"},
  {"checkpoint", 14, 1, 2, {"intCol"}, {}, 1, std::nullopt, {},
   "LRS \"standalone DeltaLogSuite: 'checkpoint'\" (version 14, 1 file)"},
  {"log-replay-latest-metadata-protocol", 2, 3, 7, {"col1", "col2"}, {}, kAnyFiles, 40, {},
   "LRS 'fetches the latest protocol and metadata'; GEN (2 writes of 20 rows + upgrade)"},
  {"log-replay-dv-key-cases", 3, 3, 7, {"id"}, {}, 1, 47, {},
   "LRS 'DV cases with same path different DV keys' (1 file, cardinality 3); GEN (50 rows, "
   "3 DELETEs)"},
  {"log-replay-special-characters-a", 1, 1, 2, {"intCol"}, {}, 0, 0, {},
   "LRS 'special characters in path'"},
  {"log-replay-special-characters", 1, 1, 2, {"intCol"}, {}, 0, 0, {},
   "LRS 'special characters in path' (the same add-then-remove log as -a)"},
  {"log-replay-special-characters-b", 0, 1, 2, {"intCol"}, {}, 1, std::nullopt, {},
   "LRS 'special characters in path' (file 'special p@#h')"},
  {"delete-re-add-same-file-different-transactions", 3, 1, 2, {"intCol"}, {}, 2, std::nullopt,
   {}, "LRS 'delete and re-add same file in different transactions'"},
  {"deltalog-getChanges", 2, 1, 2, {"part", "id"}, {}, 0, 0, {{"fakeAppId", 3}},
   "LRS 'get the last transaction version for appID'; GEN (add then remove fake/path/1)"},
  {"multi-part-checkpoint", 1, 1, 2, {"id"}, {}, kAnyFiles, 31, {},
   "DTRS 'end to end: multi-part checkpoint'"},
  {"corrupted-last-checkpoint-kernel", 11, 1, 2, {"id"}, {}, kAnyFiles, 100, {},
   "DTRS \"handle corrupted '_last_checkpoint' file\"; GEN (11 appends + overwrite)"},
  {"corrupted-last-checkpoint", 10, 1, 2, {}, {}, 11, std::nullopt, {},
   "GEN 'corrupted-last-checkpoint' (versions 0..10, one AddFile each; written without a "
   "schemaString)"},
  {"update-deleted-directory", 0, 1, 2, {}, {}, 10, std::nullopt, {},
   "GEN 'update-deleted-directory' (10 AddFiles + checkpoint; no schemaString)"},
  {"canonicalized-paths-normal-a", 1, 1, 2, {}, {}, 0, std::nullopt, {},
   "LRS 'path should be canonicalized - normal characters' (version 1, no files)"},
  {"canonicalized-paths-normal-b", 1, 1, 2, {}, {}, 0, std::nullopt, {},
   "LRS 'path should be canonicalized - normal characters'"},
  {"canonicalized-paths-special-a", 1, 1, 2, {}, {}, 0, std::nullopt, {},
   "LRS 'path should be canonicalized - special characters'"},
  {"canonicalized-paths-special-b", 1, 1, 2, {}, {}, 0, std::nullopt, {},
   "LRS 'path should be canonicalized - special characters'"},
  {"deltalog-commit-info", 0, 1, 2, {}, {}, 1, std::nullopt, {},
   "GEN 'deltalog-commit-info' (Metadata() without schema, one AddFile 'abc')"},
  {"data-reader-primitives", 0, 1, 2,
   {"as_int", "as_long", "as_byte", "as_short", "as_boolean", "as_float", "as_double",
    "as_string", "as_binary", "as_big_decimal"}, {}, kAnyFiles, 11, {},
   "DTRS 'table primitives'"},
  {"data-reader-partition-values", 0, 1, 2,
   {"as_int", "as_long", "as_byte", "as_short", "as_boolean", "as_float", "as_double",
    "as_string", "as_string_lit_null", "as_date", "as_timestamp", "as_big_decimal",
    "as_list_of_records", "as_nested_struct", "value"},
   {"as_int", "as_long", "as_byte", "as_short", "as_boolean", "as_float", "as_double",
    "as_string", "as_string_lit_null", "as_date", "as_timestamp", "as_big_decimal"},
   3, 3, {}, "DTRS 'read partitioned table'; GEN (3 rows, one per partition)"},
  {"data-reader-array-primitives", 0, 1, 2,
   {"as_array_int", "as_array_long", "as_array_byte", "as_array_short", "as_array_boolean",
    "as_array_float", "as_array_double", "as_array_string", "as_array_binary",
    "as_array_big_decimal"}, {}, kAnyFiles, 10, {}, "DTRS 'table with array of primitives'"},
  {"data-reader-array-complex-objects", 0, 1, 2,
   {"i", "3d_int_list", "4d_int_list", "list_of_maps", "list_of_records"}, {}, kAnyFiles, 10, {},
   "DTRS 'table with complex array types'"},
  {"data-reader-map", 0, 1, 2, {"i", "a", "b", "c", "d", "e", "f"}, {}, kAnyFiles, 10, {},
   "DTRS 'table with complex map types'"},
  {"data-reader-nested-struct", 0, 1, 2, {"a", "b"}, {}, kAnyFiles, 10, {},
   "DTRS 'table with nested struct'"},
  {"data-reader-nullable-field-invalid-schema-key", 0, 1, 2, {"array_can_contain_null"}, {},
   kAnyFiles, 1, {}, "GEN 'data-reader-nullable-field-invalid-schema-key' (one row)"},
  {"data-reader-escaped-chars", 2, 1, 2, {"_1", "_2"}, {"_2"}, 3, 3, {},
   "LRS 'escaped chars sequences in path'; GEN (3 appends)"},
  {"data-reader-date-types-UTC", 0, 1, 2, {"timestamp", "date"}, {}, kAnyFiles, 1, {},
   "GEN 'data-reader-date-types-*' (one row)"},
  {"data-reader-date-types-JST", 0, 1, 2, {"timestamp", "date"}, {}, kAnyFiles, 1, {},
   "GEN 'data-reader-date-types-*'"},
  {"data-reader-date-types-PST", 0, 1, 2, {"timestamp", "date"}, {}, kAnyFiles, 1, {},
   "GEN 'data-reader-date-types-*'"},
  {"data-reader-date-types-Iceland", 0, 1, 2, {"timestamp", "date"}, {}, kAnyFiles, 1, {},
   "GEN 'data-reader-date-types-*'"},
  {"data-reader-date-types-America/Los_Angeles", 0, 1, 2, {"timestamp", "date"}, {}, kAnyFiles, 1,
   {}, "GEN 'data-reader-date-types-*'"},
  {"data-reader-date-types-Asia/Beirut", 0, 1, 2, {"timestamp", "date"}, {}, kAnyFiles, 1, {},
   "GEN 'data-reader-date-types-*'"},
  {"data-reader-date-types-Etc/GMT+9", 0, 1, 2, {"timestamp", "date"}, {}, kAnyFiles, 1, {},
   "GEN 'data-reader-date-types-*'"},
  {"data-reader-timestamp_ntz", 1, 3, 7, {"id", "tsNtz", "tsNtzPartition"}, {"tsNtzPartition"},
   kAnyFiles, 9, {}, "DTRS 'read table with timestamp_ntz columns' (9 rows)"},
  {"data-reader-timestamp_ntz-id-mode", 1, 3, 7, {"id", "tsNtz", "tsNtzPartition"},
   {"tsNtzPartition"}, kAnyFiles, 9, {}, "DTRS 'read table with timestamp_ntz columns'"},
  {"data-reader-timestamp_ntz-name-mode", 1, 3, 7, {"id", "tsNtz", "tsNtzPartition"},
   {"tsNtzPartition"}, kAnyFiles, 9, {}, "DTRS 'read table with timestamp_ntz columns'"},
  {"kernel-timestamp-INT96", 0, 1, 2, {"id", "part", "time"}, {"part"}, kAnyFiles, 5, {},
   "DTRS 'timestamp table parquet timestamp format' (5 rows)"},
  {"kernel-timestamp-TIMESTAMP_MICROS", 0, 1, 2, {"id", "part", "time"}, {"part"}, kAnyFiles, 5, {},
   "DTRS 'timestamp table parquet timestamp format'"},
  {"kernel-timestamp-TIMESTAMP_MILLIS", 0, 1, 2, {"id", "part", "time"}, {"part"}, kAnyFiles, 5, {},
   "DTRS 'timestamp table parquet timestamp format'"},
  {"kernel-timestamp-PST", 0, 1, 2, {"id", "part", "time"}, {"part"}, kAnyFiles, 5, {},
   "DTRS 'timestamp in written in PST'"},
  {"kernel-timestamp-partition-col-ISO8601", 0, 1, 2, {"str", "ts"}, {"ts"}, 2, 2, {},
   "DTRS 'table with partition column in ISO8601 timestamp format'"},
  {"basic-decimal-table", 0, 1, 2, {"part", "col1", "col2", "col3"}, {"part"}, 4, 4, {},
   "DTRS 'end to end: reading basic-decimal-table' (4 rows, partitioned by part)"},
  {"basic-decimal-table-legacy", 0, 1, 2, {"part", "col1", "col2", "col3"}, {"part"}, 4, 4, {},
   "DTRS 'end to end: reading basic-decimal-table-legacy'"},
  {"decimal-various-scale-precision", 0, 1, 2, {}, {}, 1, 3, {},
   "GEN 'decimal-various-scale-precision' (3 rows, repartition(1))"},
  {"124-decimal-decode-bug", 0, 1, 2, {"large_decimal"}, {}, kAnyFiles, 1, {},
   "GEN '124-decimal-decode-bug' (one row)"},
  {"125-iterator-bug", 11, 1, 2, {"col1"}, {}, kAnyFiles, 5, {},
   "DTRS 'table with empty parquet files' (rows 1..5); GEN (12 appends)"},
  {"parquet-decimal-dictionaries", 0, 1, 2, {"id", "col1", "col2", "col3"}, {}, 1, 1000000, {},
   "GEN 'parquet-decimal-dictionaries-*' (1,000,000 rows, repartition(1))"},
  {"parquet-decimal-dictionaries-v2", 0, 1, 2, {"id", "col1", "col2", "col3"}, {}, 1, 1000000,
   {}, "GEN 'parquet-decimal-dictionaries-v2'"},
  {"parquet-decimal-type", 0, 1, 2, {"id", "col1", "col2", "col3"}, {}, kAnyFiles, 99998, {},
   "GEN 'parquet-decimal-type' (99,998 rows)"},
  {"parquet-all-types", 0, 3, 7, {}, {}, kAnyFiles, 200, {}, "GEN 'generateAllTypesTable' (200 rows)"},
  {"parquet-all-types-legacy-format", 0, 3, 7, {}, {}, kAnyFiles, 200, {},
   "GEN 'generateAllTypesTable'"},
  {"table-with-columnmapping-mode-name", 0, 2, 5, {}, {}, kAnyFiles, 6, {},
   "DTRS 'table with `name` column mapping mode' (5 rows + all-null row)"},
  {"table-with-columnmapping-mode-id", 0, 2, 5, {}, {}, kAnyFiles, 6, {},
   "DTRS 'table with `id` column mapping mode'"},
  {"table-with-icebegCompatV2Enabled", 0, 2, 7, {}, {}, kAnyFiles, 6, {},
   "GEN 'generateCMIcebegCompatTableHelper' (same rows as the column-mapping tables)"},
  {"type-widening", 2, 3, 7, {}, {}, kAnyFiles, 2, {}, "DTRS 'table with type widening on basic types'"},
  {"type-widening-nested", 2, 3, 7, {}, {}, kAnyFiles, 2, {},
   "DTRS 'table with type widening to nested types'"},
  {"dv-partitioned-with-checkpoint", 15, 3, 7, {"part", "col1", "col2"}, {"part"}, kAnyFiles, 35, {},
   "GEN 'dv-partitioned-with-checkpoint' (50 rows, 15 single-row DELETEs)"},
  {"dv-with-columnmapping", 15, 3, 7, {"part", "col1", "col2"}, {"part"}, kAnyFiles, 35, {},
   "GEN 'dv-with-columnmapping'"},
  {"v2-checkpoint-json", 2, 3, 7, {"id"}, {}, kAnyFiles, 10, {},
   "GEN 'v2-checkpoint-json' (CREATE, ALTER, insert of range(10))"},
  {"v2-checkpoint-parquet", 2, 3, 7, {"id"}, {}, kAnyFiles, 10, {}, "GEN 'v2-checkpoint-parquet'"},
  {"data-skipping-basic-stats-all-types", 0, 1, 2, {}, {}, 1, 1, {},
   "GEN 'writeBasicStatsAllTypesTable' (one row)"},
  {"data-skipping-basic-stats-all-types-checkpoint", 0, 1, 2, {}, {}, 1, 1, {},
   "GEN 'data-skipping-basic-stats-all-types-checkpoint'"},
  {"data-skipping-basic-stats-all-types-columnmapping-name", 0, 2, 5, {}, {}, 1, 1, {},
   "GEN 'data-skipping-basic-stats-all-types-columnmapping-*'"},
  {"data-skipping-basic-stats-all-types-columnmapping-id", 0, 2, 5, {}, {}, 1, 1, {},
   "GEN 'data-skipping-basic-stats-all-types-columnmapping-*'"},
  {"data-skipping-change-stats-collected-across-versions", 4, 1, 2, {"col1", "col2"}, {}, 3, 3,
   {}, "GEN (3 one-row writes and 2 ALTERs)"},
  {"data-skipping-partition-and-data-column", 3, 1, 2, {"part", "id"}, {}, 4, 4, {},
   "GEN (4 one-row writes)"},
  {"commit-info-containing-arbitrary-operationParams-types", 2, 1, 7, {"id", "month"},
   {"month"}, kAnyFiles, 2, {}, "GEN (CTAS, INSERT, OPTIMIZE)"},
  {"time-travel-start", 0, 1, 2, {"id"}, {}, kAnyFiles, 10, {}, "GEN 'generateCommits' (10 rows)"},
  {"time-travel-start-start20", 1, 1, 2, {"id"}, {}, kAnyFiles, 20, {}, "GEN 'generateCommits'"},
  {"time-travel-start-start20-start40", 2, 1, 2, {"id"}, {}, kAnyFiles, 30, {},
   "GEN 'generateCommits'"},
  {"time-travel-schema-changes-a", 0, 1, 2, {"id"}, {}, kAnyFiles, 10, {},
   "GEN 'time-travel-schema-changes-a' (range(10))"},
  {"time-travel-partition-changes-a", 0, 1, 2, {"id", "part5"}, {"part5"}, kAnyFiles, 10, {},
   "GEN 'time-travel-partition-changes-a' (range(10) partitioned by id % 5)"},
  {"time-travel-schema-changes-b", 1, 1, 2, {"id", "part"}, {}, kAnyFiles, 20, {},
   "GEN 'time-travel-schema-changes-b' (mergeSchema adds part)"},
  {"time-travel-partition-changes-b", 1, 1, 2, {"id", "part2"}, {"part2"}, kAnyFiles, 10, {},
   "GEN 'time-travel-partition-changes-b' (overwrite partitioned by part2)"},
  {"snapshot-data0", 0, 1, 2, {"col1", "col2"}, {}, kAnyFiles, 10, {}, "LRS 'snapshot'; GEN"},
  {"snapshot-data1", 1, 1, 2, {"col1", "col2"}, {}, kAnyFiles, 20, {}, "LRS 'snapshot'; GEN"},
  {"snapshot-data2", 2, 1, 2, {"col1", "col2"}, {}, kAnyFiles, 10, {}, "LRS 'snapshot'; GEN"},
  {"snapshot-data3", 3, 1, 2, {"col1", "col2"}, {}, kAnyFiles, 30, {}, "LRS 'snapshot'; GEN"},
  {"snapshot-data2-deleted", 4, 1, 2, {"col1", "col2"}, {}, kAnyFiles, 20, {}, "LRS 'snapshot'; GEN"},
  {"snapshot-repartitioned", 5, 1, 2, {"col1", "col2"}, {}, 2, 20, {}, "LRS 'snapshot'; GEN"},
  {"snapshot-vacuumed", 5, 1, 2, {"col1", "col2"}, {}, kAnyFiles, 20, {}, "LRS 'snapshot'; GEN"},
  {"collations-table", 0, 1, 7, {"id", "utf8_binary_col", "utf8_lcase_col", "unicode_col"}, {},
   0, 0, {}, "the table's own log (a CREATE TABLE without rows)"},
  {"collations-preview-table", 0, 1, 7,
   {"id", "utf8_binary_col", "utf8_lcase_col", "unicode_col"}, {}, 0, 0, {},
   "the table's own log (a CREATE TABLE without rows)"},
  {"hive/deltatbl-not-allow-write", 0, 1, 2, {"a", "b"}, {}, kAnyFiles, 10, {}, "GEN (10 rows)"},
  {"hive/deltatbl-schema-match", 0, 1, 2, {"a", "b", "c"}, {"b"}, kAnyFiles, 10, {}, "GEN"},
  {"hive/deltatbl-non-partitioned", 0, 1, 2, {"c1", "c2"}, {}, kAnyFiles, 10, {}, "GEN"},
  {"hive/deltatbl-partitioned", 0, 1, 2, {"c1", "c2"}, {"c2"}, kAnyFiles, 10, {}, "GEN"},
  {"hive/deltatbl-partition-prune", 0, 1, 2, {"city", "date", "name", "cnt"}, {"date", "city"},
   kAnyFiles, 5, {}, "GEN (5 rows); SGT testDsv2Internal (partitioning date, city)"},
  {"hive/deltatbl-touch-files-needed-for-partitioned", 0, 1, 2, {"c1", "c2"}, {"c2"}, kAnyFiles, 10,
   {}, "GEN"},
  {"hive/deltatbl-special-chars-in-partition-column", 0, 1, 2, {"c1", "c2"}, {"c2"}, kAnyFiles, 10, {},
   "GEN (values '+ =%0' and '+ =%1')"},
  {"hive/deltatbl-map-types-correctly", 0, 1, 2, {}, {}, kAnyFiles, 1, {}, "GEN (one TestClass row)"},
  {"hive/deltatbl-column-names-case-insensitive", 0, 1, 2, {"FooBar", "BarFoo"}, {"BarFoo"},
   kAnyFiles, 10, {}, "GEN"},
  {"hive/deltatbl-incorrect-format-config", 0, 1, 2, {"a", "b"}, {}, kAnyFiles, 10, {}, "GEN"},
  {"hive/deltatbl-deleted-path", 0, 1, 2, {"c1", "c2"}, {}, kAnyFiles, 10, {}, "GEN"},
};
// clang-format on

// clang-format off
const std::vector<GoldenExpectedError> kErrors = {
  {"versions-not-contiguous", StatusCode::kDataLoss, "version 1 is missing",
   "DTRS 'error - version not contiguous' (versions [0, 2])"},
  {"deltalog-invalid-protocol-version", StatusCode::kNotSupported, "reader version 99",
   "DTRS 'table protocol version greater than reader protocol version'"},
  {"deltalog-state-reconstruction-without-protocol", StatusCode::kDataLoss, "no protocol",
   "LRS 'missing protocol should fail'"},
  {"deltalog-state-reconstruction-without-metadata", StatusCode::kDataLoss, "no metaData",
   "LRS 'missing metadata should fail'"},
  {"deltalog-state-reconstruction-from-checkpoint-missing-metadata", StatusCode::kDataLoss,
   "no metaData", "LRS 'missing metadata should fail missing from checkpoint'"},
  {"deltalog-state-reconstruction-from-checkpoint-missing-protocol", StatusCode::kDataLoss,
   "no protocol", "GEN (checkpoint rewritten without its protocol row); SGT lists it as failing"},
  {"no-delta-log-folder", StatusCode::kNotFound, "no Delta table",
   "DTRS 'non-empty folder not a delta table'"},
  {"log-store-read", StatusCode::kNotFound, "no Delta table",
   "GEN 'log-store-read' (a LogStore fixture, not a table)"},
  {"log-store-listFrom", StatusCode::kNotFound, "no Delta table",
   "GEN 'log-store-listFrom' (a LogStore fixture, not a table)"},
  {"data-reader-absolute-paths-escaped-chars", StatusCode::kDataLoss, "no metaData",
   "SGT testAllGoldenTables lists it as unreadable (its log has no metaData)"},
  {"spark-variant-checkpoint", StatusCode::kNotSupported, "reader feature 'variantType-preview'",
   "PROTOCOL 'Variant Data Type' (readers must support the variant type; ferry has none)"},
};
// clang-format on

}  // namespace

const std::vector<GoldenExpected>& GoldenTables() {
  return kTables;
}

const std::vector<GoldenExpectedError>& GoldenErrors() {
  return kErrors;
}

std::string GoldenTestName(const std::string& store, const std::string& table) {
  std::string name = store + "_";
  for (char c : table) {
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return name;
}

void GoldenTest::OpenTestdata(const StoreFactory& factory) {
  ASSERT_TRUE(factory.testdata) << factory.name << " has no testdata store";
  auto store = factory.testdata();
  ASSERT_TRUE(store.ok()) << factory.name << ": " << store.status().ToString();
  testdata_ = std::move(*store);
}

std::unique_ptr<delta::Table> GoldenTest::OpenTable(const std::string& dir) {
  auto table = delta::Table::Open(testdata_, dir);
  EXPECT_TRUE(table.ok()) << dir << ": " << table.status().ToString();
  return table.ok() ? std::move(*table) : nullptr;
}

Result<delta::Snapshot> GoldenTest::Load(const std::string& dir, std::optional<int64_t> version) {
  auto table = OpenTable(dir);
  if (table == nullptr) {
    return Internal("cannot open {}", dir);
  }
  return table->LoadSnapshot(version);
}

Result<int64_t> GoldenTest::CountRows(const std::string& dir, const delta::Snapshot& snapshot) {
  auto table = OpenTable(dir);
  if (table == nullptr) {
    return Internal("cannot open {}", dir);
  }
  int64_t rows = 0;
  for (const auto& [key, add] : snapshot.files()) {
    FERRY_ASSIGN_OR_RETURN(std::string path, DecodeUriPath(add.path));
    FERRY_ASSIGN_OR_RETURN(auto file, testdata_->OpenForRead(table->Key(path)));
    FERRY_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(std::move(file)));
    rows += reader->num_rows();
    if (add.deletion_vector) {
      rows -= add.deletion_vector->cardinality;
    }
  }
  return rows;
}

namespace {

std::vector<std::string> ColumnNames(const delta::Snapshot& snap) {
  std::vector<std::string> names;
  for (const auto& field : snap.schema()->fields()) {
    names.push_back(field.name);
  }
  return names;
}

TEST_P(GoldenSnapshotTest, MatchesTheDeltaTestSuites) {
  const GoldenExpected& e = std::get<1>(GetParam());
  SCOPED_TRACE(e.table + " -- expected values from " + e.source);
  std::string dir = kGolden + e.table;
  auto snap = Load(dir);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->version(), e.version);
  EXPECT_EQ(snap->protocol().min_reader_version, e.reader);
  EXPECT_EQ(snap->protocol().min_writer_version, e.writer);
  if (!e.columns.empty() || snap->schema()->num_fields() == 0) {
    EXPECT_EQ(ColumnNames(*snap), e.columns);
  }
  EXPECT_EQ(snap->partition_columns(), e.partition_columns);
  if (e.num_files != kAnyFiles) {
    EXPECT_EQ(snap->num_files(), e.num_files);
  }
  if (e.rows.has_value()) {
    auto rows = CountRows(dir, *snap);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(*rows, *e.rows);
  }
  std::map<std::string, int64_t> txns;
  for (const auto& [app_id, txn] : snap->txns()) {
    txns[app_id] = txn.version;
  }
  EXPECT_EQ(txns, e.txns);
}

TEST_P(GoldenErrorTest, FailsWithTheNamedError) {
  const GoldenExpectedError& e = std::get<1>(GetParam());
  SCOPED_TRACE(e.table + " -- expected from " + e.source);
  auto snap = Load(kGolden + e.table);
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.status().code(), e.code) << snap.status().ToString();
  EXPECT_NE(snap.status().message().find(e.message), std::string::npos) << snap.status().ToString();
}

// LRS 'snapshot': the live files are exactly the data files the test expects from the
// directory listing at each step.
TEST_P(GoldenDetailsTest, SnapshotFilesMatchDirectoryListing) {
  auto names = [](const delta::Snapshot& snap) {
    std::set<std::string> out;
    for (const auto& [key, add] : snap.files()) {
      out.insert(add.path);
    }
    return out;
  };
  auto dir_files = [](const std::string& table) {
    std::set<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(kGoldenDir + table)) {
      std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && name.size() > 14 &&
          name.substr(name.size() - 14) == "snappy.parquet") {
        out.insert(name);
      }
    }
    return out;
  };
  auto data0 = dir_files("snapshot-data0");
  auto data01 = dir_files("snapshot-data1");
  EXPECT_EQ(names(*Load(kGolden + "snapshot-data0")), data0);
  EXPECT_EQ(names(*Load(kGolden + "snapshot-data1")), data01);
  std::set<std::string> data2;
  for (const auto& f : dir_files("snapshot-data2")) {
    if (data01.count(f) == 0) {
      data2.insert(f);
    }
  }
  EXPECT_EQ(names(*Load(kGolden + "snapshot-data2")), data2);
  std::set<std::string> data3;
  for (const auto& f : dir_files("snapshot-data2-deleted")) {
    if (data01.count(f) == 0 && data2.count(f) == 0) {
      data3.insert(f);
    }
  }
  EXPECT_EQ(names(*Load(kGolden + "snapshot-data2-deleted")), data3);
  EXPECT_EQ(names(*Load(kGolden + "snapshot-vacuumed")), dir_files("snapshot-vacuumed"));
}

// LRS 'special characters in path', 'delete and re-add same file', 'DV cases'.
TEST_P(GoldenDetailsTest, PathsModificationTimesAndDeletionVectors) {
  auto special = Load(kGolden + "log-replay-special-characters-b");
  ASSERT_TRUE(special.ok());
  ASSERT_EQ(special->files().size(), 1u);
  EXPECT_EQ(*DecodeUriPath(special->files().begin()->second.path), "special p@#h");

  auto readd = Load(kGolden + "delete-re-add-same-file-different-transactions");
  ASSERT_TRUE(readd.ok());
  std::map<std::string, int64_t> mtimes;
  for (const auto& [key, add] : readd->files()) {
    mtimes[add.path] = add.modification_time;
  }
  ASSERT_EQ(mtimes.size(), 2u);
  EXPECT_EQ(mtimes.count("bar"), 1u);
  EXPECT_EQ(mtimes["foo"], 1700000000000);

  auto dv = Load(kGolden + "log-replay-dv-key-cases");
  ASSERT_TRUE(dv.ok());
  ASSERT_EQ(dv->files().size(), 1u);
  ASSERT_TRUE(dv->files().begin()->second.deletion_vector.has_value());
  EXPECT_EQ(dv->files().begin()->second.deletion_vector->cardinality, 3);
}

// LRS 'escaped chars sequences in path': partition values bar+%21.. round-trip the escaping.
TEST_P(GoldenDetailsTest, EscapedPartitionValues) {
  auto snap = Load(kGolden + "data-reader-escaped-chars");
  ASSERT_TRUE(snap.ok());
  std::set<std::string> values;
  for (const auto& [key, add] : snap->files()) {
    values.insert(add.partition_values.at("_2").value_or("null"));
    // The log path is the URI-encoded, Hive-escaped directory of the value.
    std::string dir = "_2=" + EscapePartitionPathName(*add.partition_values.at("_2"));
    EXPECT_EQ(*DecodeUriPath(add.path.substr(0, add.path.find('/'))), dir);
  }
  EXPECT_EQ(values, (std::set<std::string>{"bar+%21", "bar+%22", "bar+%23"}));
}

// DTRS 'table with partition column in ISO8601 timestamp format': ts values 1704103200000000
// and 1704198600000000 micros.
TEST_P(GoldenDetailsTest, Iso8601TimestampPartitionValues) {
  auto snap = Load(kGolden + "kernel-timestamp-partition-col-ISO8601");
  ASSERT_TRUE(snap.ok());
  auto column = columnar::MakeColumn(columnar::DataType::Timestamp());
  for (const auto& [key, add] : snap->files()) {
    ASSERT_TRUE(AppendPartitionValue(add.partition_values.at("ts"), column.get()).ok());
  }
  std::set<int64_t> micros;
  for (int64_t i = 0; i < column->length(); ++i) {
    micros.insert(column->As<columnar::TimestampColumn>()->Value(i));
  }
  EXPECT_EQ(micros, (std::set<int64_t>{1704103200000000, 1704198600000000}));
}

// Time travel: GEN 'time-travel-*' (version 0 holds the first write only) and DTRS 'time
// travel with schema change' / 'with partition change' (expectedVersion 0).
TEST_P(GoldenDetailsTest, TimeTravel) {
  auto v0 = Load(kGolden + "time-travel-start-start20-start40", 0);
  ASSERT_TRUE(v0.ok());
  EXPECT_EQ(v0->version(), 0);
  EXPECT_EQ(*CountRows(kGolden + "time-travel-start-start20-start40", *v0), 10);
  auto v1 = Load(kGolden + "time-travel-start-start20-start40", 1);
  EXPECT_EQ(*CountRows(kGolden + "time-travel-start-start20-start40", *v1), 20);
  auto schema_v0 = Load(kGolden + "time-travel-schema-changes-b", 0);
  ASSERT_TRUE(schema_v0.ok());
  EXPECT_EQ(ColumnNames(*schema_v0), std::vector<std::string>{"id"});
  auto part_v0 = Load(kGolden + "time-travel-partition-changes-b", 0);
  ASSERT_TRUE(part_v0.ok());
  EXPECT_EQ(part_v0->partition_columns(), std::vector<std::string>{"part5"});
  EXPECT_EQ(*CountRows(kGolden + "time-travel-partition-changes-b", *part_v0), 10);
  auto missing = Load(kGolden + "time-travel-start", 5);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  // Time travel below a checkpoint whose older commits exist (checkpoint at 10, version 3).
  auto before_checkpoint = Load(kGolden + "basic-with-inserts-deletes-checkpoint", 3);
  ASSERT_TRUE(before_checkpoint.ok()) << before_checkpoint.status().ToString();
  EXPECT_EQ(*CountRows(kGolden + "basic-with-inserts-deletes-checkpoint", *before_checkpoint), 40);
}

// KRS test_txn and test_get_all_returns_every_txn_unfiltered.
TEST_P(GoldenDetailsTest, AppTransactionsOfKernelRs) {
  for (const char* table : {"app-txn-no-checkpoint", "app-txn-checkpoint"}) {
    SCOPED_TRACE(table);
    auto snap = Load(kKernelRs + table);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    EXPECT_EQ(snap->txns().size(), 2u);
    EXPECT_TRUE(snap->position("my-app").has_value());
    EXPECT_EQ(snap->position("my-app2"), 2);
    EXPECT_FALSE(snap->txns().at("my-app2").last_updated.has_value());
    EXPECT_FALSE(snap->position("nonExistentAppId").has_value());
  }
  // The checkpoint and no-checkpoint tables hold the same positions.
  EXPECT_EQ(Load(kKernelRs + "app-txn-no-checkpoint")->position("my-app"),
            Load(kKernelRs + "app-txn-checkpoint")->position("my-app"));
  auto last_updated = Load(kKernelRs + "app-txn-with-last-updated");
  ASSERT_TRUE(last_updated.ok());
  EXPECT_EQ(last_updated->txns().size(), 4u);
}

// LRS 'get the last transaction version for appID'.
TEST_P(GoldenDetailsTest, LatestTransactionVersion) {
  auto snap = Load(kGolden + "deltalog-getChanges");
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->position("fakeAppId"), 3);
  EXPECT_FALSE(snap->position("nonExistentAppId").has_value());
}

// GEN 'deltalog-commit-info' (the standalone test 'get commit info').
TEST_P(GoldenDetailsTest, CommitInfo) {
  auto table = OpenTable(kGolden + "deltalog-commit-info");
  auto history = ReadHistory(*table);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].operation, "WRITE");
  EXPECT_EQ((*history)[0].timestamp_ms, 1540415658000);
  EXPECT_EQ((*history)[0].files_added, 1);
}

// Which golden tables ferry may append to (PROTOCOL.md "Table Features", "Column Mapping",
// "Writer Version Requirements"): only those whose every writer feature ferry implements.
TEST_P(GoldenDetailsTest, WriteSupport) {
  struct Case {
    const char* table;
    bool writable;
    const char* named;
  };
  const Case cases[] = {
      {"basic-with-inserts-updates", true, ""},
      {"basic-with-vacuum-protocol-check-feature", true, ""},
      {"data-reader-timestamp_ntz", true, ""},
      {"dv-partitioned-with-checkpoint", true, ""},
      {"v2-checkpoint-parquet", true, ""},
      {"type-widening", true, ""},
      {"commit-info-containing-arbitrary-operationParams-types", true, ""},
      {"collations-table", false, "'collations'"},
      {"collations-preview-table", false, "'collations-preview'"},
      {"table-with-columnmapping-mode-name", true, ""},
      {"table-with-columnmapping-mode-id", true, ""},
      {"dv-with-columnmapping", true, ""},
      {"data-reader-timestamp_ntz-id-mode", true, ""},
      {"table-with-icebegCompatV2Enabled", false, "'icebergCompatV2'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.table);
    auto snap = Load(kGolden + c.table);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    Status st = CheckWriteSupported(snap->protocol(), snap->metadata(), *snap->schema());
    EXPECT_EQ(st.ok(), c.writable) << st.ToString();
    if (!c.writable) {
      EXPECT_EQ(st.code(), StatusCode::kNotSupported);
      EXPECT_NE(st.message().find(c.named), std::string::npos) << st.ToString();
    }
  }
}

}  // namespace
}  // namespace ferry::testing

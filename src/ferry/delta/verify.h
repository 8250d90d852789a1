// Verify: proves from a table alone that an ingestion delivered every message exactly once
// (`ferry verify`, docs/verify.md). It reads the live files of a snapshot with ferry's own
// readers and checks:
//   1. ids: rows, distinct ids, duplicates (with the files holding them), null ids, and the ids
//      of an inclusive integer range that no row holds;
//   2. positions: for every txn appId `<pipeline>/kafka/<topic>/<partition>`, the largest
//      offset the data holds for that partition (and topic, when the table has a topic column)
//      equals the txn version; for `<pipeline>/jetstream/<stream>/<filter>`, the largest
//      sequence among rows whose subject matches the filter (NATS wildcards `*` and `>`) does.
//      Kafka partitions present in the data but without a txn are reported too. Checked only
//      when the table has the position columns;
//   3. optionally, that rows and distinct ids both equal an expected count;
//   4. that every file holds as many rows as its add's stats.numRecords says (when present;
//      live rows plus those its deletion vector deletes).
// With key columns instead of an id column (an upsert table, docs/cdc.md): the "id" of a row is
// its key (one column or several), so check 1 finds every key with more than one live row
// (deletion vectors applied), naming the key and the files; and since a delete or a replaced
// row leaves no row for a change's offset, a position is right when the data's largest offset
// is at most the txn version (a partition whose rows were all deleted passes).
// The report is clean (ok()) only when there is no duplicate, no null id, nothing missing, the
// expectation holds, every position agrees and every file's row count matches its stats.
//
// A pipeline whose filter drops the last messages of a partition commits a position beyond the
// data's largest offset: that shows up as a mismatch (verify knows nothing of filters).
//
// Errors (the table could not be checked, as opposed to an unclean table): InvalidArgument for
// an id column the table lacks or of another type than integer or string (a key column: also
// boolean, date, timestamp or decimal), or for both an id and key columns; DataLoss naming the
// table and file for a live file that is missing or unreadable; the errors of LoadSnapshot.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/snapshot.h"

namespace ferry::delta {

class Table;

struct VerifyOptions {
  std::string id_column;
  // Key columns (instead of id_column): one live row per key. A key of several columns is
  // rendered "(v1, v2)", strings quoted; a single column as its value.
  std::vector<std::string> key_columns;
  // Rows and distinct ids must both equal this.
  std::optional<int64_t> expect;
  // Inclusive range [first, last] of integer ids that must all be present. String ids count
  // when they are decimal integers.
  std::optional<std::pair<int64_t, int64_t>> range;
  // Position columns.
  std::string partition_column = "_partition";
  std::string offset_column = "_offset";
  std::string topic_column = "_topic";
  std::string sequence_column = "_sequence";
  std::string subject_column = "_subject";
  // How many duplicate and missing ids the report lists.
  int max_listed = 10;
  // Fill VerifyReport::ids with every distinct id (VerifyRoutedTables does).
  bool keep_ids = false;
};

struct DuplicateId {
  std::string id;
  int64_t count = 0;               // rows holding it
  std::vector<std::string> files;  // add.path of each row's file, in scan order (repeats kept)
};

struct PositionCheck {
  std::string app_id;  // empty for data of a Kafka partition without a txn
  std::string source;  // "kafka/<topic>/<partition>" or "jetstream/<stream>/<filter>"
  std::optional<int64_t> txn_version;  // nullopt: no txn
  std::optional<int64_t> data_max;     // nullopt: no row of this partition
  // Key mode: the data may end before the txn (deletes and replaced rows leave no row).
  bool at_most = false;
  bool ok() const {
    if (!txn_version) {
      return false;
    }
    return at_most ? (!data_max || *data_max <= *txn_version) : txn_version == data_max;
  }
};

struct VerifyReport {
  int64_t version = -1;
  int64_t files = 0;
  int64_t rows = 0;
  int64_t distinct = 0;
  int64_t null_ids = 0;
  // Rows beyond the first of each id (non-null rows - distinct), and the ids held more than once.
  int64_t duplicates = 0;
  int64_t duplicate_ids = 0;
  std::vector<DuplicateId> duplicates_listed;  // the first max_listed, in scan order
  // With a range: ids of the range no row holds; distinct ids outside it (reported, not a
  // failure; string ids that are not integers are not counted).
  int64_t missing = 0;
  std::vector<int64_t> missing_listed;  // the smallest max_listed
  int64_t out_of_range = 0;
  // Whether position columns were found, and the checks made.
  bool positions_checked = false;
  std::vector<PositionCheck> positions;
  std::optional<bool> expect_ok;
  // "<add.path>: stats.numRecords N but the file has M rows", one per disagreeing file.
  std::vector<std::string> stats_mismatches;

  // With VerifyOptions::keep_ids: every distinct non-null id, rendered (integers in decimal).
  std::vector<std::string> ids;

  int64_t position_mismatches() const;
  bool ok() const;
};

// The tables of one routed pipeline (docs/decisions/routing.md), checked together: each table
// as VerifyTable checks it (its own duplicates, positions and stats), and the ids of all of them
// as one set: an id in more than one table is a duplicate too; `expect` and `range` apply to the
// union.
struct RoutedVerifyReport {
  std::vector<std::pair<std::string, VerifyReport>> tables;  // Table::Describe() -> its report
  int64_t rows = 0;
  int64_t distinct = 0;  // over all the tables
  // Ids held by more than one table, and the first max_listed of them with their tables.
  int64_t in_several_tables = 0;
  std::vector<std::pair<std::string, std::vector<std::string>>> several_listed;
  int64_t missing = 0;
  std::vector<int64_t> missing_listed;
  std::optional<bool> expect_ok;

  bool ok() const;
};
struct TableToVerify {
  const Table* table = nullptr;
  const Snapshot* snapshot = nullptr;
};
Result<RoutedVerifyReport> VerifyRoutedTables(const std::vector<TableToVerify>& tables,
                                              const VerifyOptions& options);

// Checks `snapshot` of `table` as described above.
Result<VerifyReport> VerifyTable(const Table& table, const Snapshot& snapshot,
                                 const VerifyOptions& options);

// True when the NATS subject `subject` matches `filter` (`*` one token, `>` the rest).
bool SubjectMatches(std::string_view filter, std::string_view subject);

// Splits a ferry txn appId "<pipeline>/<kind>/<a>/<b>" (kind "kafka" or "jetstream") from the
// right; nullopt for any other appId.
struct SourceAppId {
  std::string pipeline;
  std::string kind;
  std::string name;  // topic or stream
  std::string part;  // partition number or filter subject
};
std::optional<SourceAppId> ParseSourceAppId(std::string_view app_id);

}  // namespace ferry::delta

// Optimize: bin-packs the small files of each partition into files of about a target size
// (`ferry optimize`), safely while ingestion appends to the table.
//
// Optimizing, numbered:
//   1. Load the latest snapshot. Refuse (NotSupported, saying why) a table with row tracking
//      enabled (stable row ids would need materialized row id columns, not written yet) and a
//      clustered table (bin-packing would undo its clustering). Keep the live files whose partition
//      values satisfy the predicate (PartitionPredicate below) and that are smaller than the target
//      size (files with absolute paths are left alone).
//   2. Per partition, in path order, pack them greedily into bins: a bin closes once its files
//      sum to the target size. Only bins of two files or more are rewritten (a lone small file
//      stays as it is), and a lone file with a deletion vector (rewriting purges the DV).
//   3. For each bin, read every file's live rows (file_scan.h: rows its deletion vector deletes
//      are skipped) and write them through a TableWriter (target_file_size = the target), so the
//      new files carry fresh stats and no deletion vector (as Spark's OPTIMIZE purges them); the
//      remove of a file with a DV carries the DV, naming the logical file. A table with column
//      mapping keeps its physical names and field ids: the scan gives the table's names, the
//      writer maps them back (column_mapping.h); the predicate names columns as the table shows
//      them.
//   4. Commit one transaction: a `remove` (dataChange=false, deletionTimestamp now) for every
//      packed file and the new `add`s (dataChange=false), operation "OPTIMIZE". No txn is
//      written, so no source position changes, and rows are only moved between files.
//      Concurrent appends are resolved by the Transaction's retry (they never conflict); a
//      concurrent commit that removes one of the packed files aborts the optimize with Aborted
//      (ConcurrentDeleteDelete): nothing was changed, the new files are orphans for vacuum,
//      and running optimize again is safe.
//
// Thread-safety: stateless; several processes may run it, one wins per file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/transaction.h"

namespace ferry::delta {

class Table;

// A conjunction of partition-column comparisons, parsed from
//   col = 'value' [AND col2 = 42 AND col3 IS NULL ...]
// (AND and IS NULL case-insensitive; values quoted with '...' -- '' for a quote -- or bare
// numbers/words). A value is compared with the log's partitionValues text exactly as Delta
// spells it (dates 'YYYY-MM-DD', integers in decimal). An empty predicate matches every file.
class PartitionPredicate {
 public:
  // InvalidArgument with the position of the error.
  static Result<PartitionPredicate> Parse(std::string_view text);
  // InvalidArgument when a column is not a partition column of the table.
  Status CheckColumns(const std::vector<std::string>& partition_columns) const;
  bool Matches(const PartitionValues& values) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  // (column, value); nullopt value = IS NULL.
  std::vector<std::pair<std::string, std::optional<std::string>>> terms_;
};

struct OptimizeOptions {
  PartitionPredicate where;
  int64_t target_size = int64_t{256} << 20;
  // When true, plan only: report the bins, write and commit nothing.
  bool dry_run = false;
  CommitOptions commit;
};

struct OptimizeResult {
  std::optional<int64_t> version;  // the commit, when one was made
  int64_t bins = 0;
  int64_t files_removed = 0;
  int64_t files_added = 0;
  int64_t bytes_removed = 0;
  int64_t bytes_added = 0;
  int64_t rows = 0;  // rows moved
};

// Step 1-4. Errors: those of reading a file (DataLoss naming it), writing, and committing
// (Aborted for a conflicting concurrent remove).
Result<OptimizeResult> Optimize(const Table& table, const OptimizeOptions& options);

}  // namespace ferry::delta

// Optimize: bin-packs the small files of each partition into files of about a target size
// (`ferry optimize`), or clusters the files of a clustered table, safely while ingestion
// appends to the table.
//
// Optimizing, numbered:
//   1. Load the latest snapshot. Pick the files:
//        - a clustered table (the `clustering` feature with clustering columns in the
//          delta.clustering domain; clustering_order.h): every live file not clustered yet (no
//          clusteringProvider), whatever its size; with `full`, also the files ferry's (and
//          Spark's) provider "liquid" clustered before. Files of another provider are never
//          touched (PROTOCOL.md: an implementation reclusters only its own files). They form
//          groups, in path order, of up to `max_cluster_bytes` of files each;
//        - otherwise the live files whose partition values satisfy the predicate
//          (PartitionPredicate below) and that are smaller than the target size, per
//          partition, in path order, packed greedily into bins: a bin closes once its files sum
//          to the target size. Only bins of two files or more are rewritten (a lone small file
//          stays as it is), and a lone file with a deletion vector (rewriting purges the DV).
//      Files with absolute paths are left alone.
//   2. For each bin, read every file's live rows (file_scan.h: rows its deletion vector deletes
//      are skipped) and write them through a TableWriter (target_file_size = the target), so the
//      new files carry fresh stats and no deletion vector (as Spark's OPTIMIZE purges them); the
//      remove of a file with a DV carries the DV, naming the logical file. A clustering group is
//      read into memory, sorted in clustering order (clustering_order.h) and written in that
//      order, so the files cut from it cover consecutive ranges; its adds say
//      clusteringProvider "liquid" and the delta.clustering domain stays as it is. Memory is
//      bounded by the decoded rows, not by the files' compressed size (zstd Parquet decodes to
//      several times its size): once the rows read hold `max_cluster_memory` bytes, they are
//      sorted and written as one part (its last file closed), and the group goes on with a new
//      part. Each part covers its own ranges; parts of one group may overlap each other, as
//      Spark's ZCubes do. A table with
//      column mapping keeps its physical names and field ids: the scan gives the table's names,
//      the writer maps them back (column_mapping.h); the predicate names columns as the table
//      shows them.
//   3. Row tracking enabled (delta.enableRowTracking, table_features.h): every copied row keeps
//      its stable row id and row commit version (PROTOCOL.md "Row Tracking"). The scan yields
//      them (the source file's materialized value, else baseRowId + the row's physical position
//      / defaultRowCommitVersion: ScanLiveFileWithRowTracking) and the new files hold them in
//      the materialized columns the table's configuration names, hidden from the schema. The
//      new adds get fresh baseRowId / defaultRowCommitVersion and the high-water mark rises, as
//      for any commit (transaction.h); commitInfo tags delta.rowTracking.preserved "true".
//      Supported but not enabled: the new adds only get fresh ids (nothing to preserve).
//   4. Commit one transaction: a `remove` (dataChange=false, deletionTimestamp now) for every
//      rewritten file and the new `add`s (dataChange=false), operation "OPTIMIZE". No txn is
//      written, so no source position changes, and rows are only moved between files.
//      Concurrent appends are resolved by the Transaction's retry (they never conflict; the
//      new adds' row ids are reassigned above the winner's); a concurrent commit that removes
//      one of the rewritten files aborts the optimize with Aborted (ConcurrentDeleteDelete):
//      nothing was changed, the new files are orphans for vacuum, and running optimize again is
//      safe.
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
  // Clustered tables: also recluster the files clustered before (Spark's OPTIMIZE ... FULL).
  bool full = false;
  // Clustered tables: the most bytes of files clustered together in one group.
  int64_t max_cluster_bytes = int64_t{1} << 30;
  // Clustered tables: the most bytes of decoded rows sorted at once (step 2); a group whose rows
  // exceed it is sorted and written in parts. Peak memory is about this plus the writer's open
  // file and the sort's keys (about 24 bytes a row).
  int64_t max_cluster_memory = int64_t{256} << 20;
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
  // A clustered table: its clustering columns (as the domain names them), by which the new
  // files are ordered.
  std::vector<std::string> clustering_columns;
  // A clustered table: the parts sorted and written (one per group unless a group's rows
  // exceeded max_cluster_memory).
  int64_t cluster_parts = 0;
  // Row tracking was enabled: the moved rows kept their row ids and commit versions.
  bool row_ids_preserved = false;
};

// The clusteringProvider of the files ferry's optimize clusters (the name Spark's liquid
// clustering writes).
inline constexpr const char* kClusteringProvider = "liquid";

// Step 1-4. Errors: those of reading a file (DataLoss naming it), writing, and committing
// (Aborted for a conflicting concurrent remove); NotSupported for a clustering column ferry
// cannot order or a row-tracking table that names no materialized columns (nothing changed).
Result<OptimizeResult> Optimize(const Table& table, const OptimizeOptions& options);

}  // namespace ferry::delta

// UpsertCommit: the commit strategy of an upsert pipeline (mode = "upsert", docs/cdc.md;
// commit_strategy.h): what one batch of changes adds to and removes from the table, for
// BatchCommitter to commit in one Delta commit with the batch's positions.
//
//   FERRY_ASSIGN_OR_RETURN(auto upsert, UpsertCommit::Create(*snapshot.schema(), spec));
//   FERRY_RETURN_IF_ERROR(upsert->Load(table, snapshot));               // at start, after fencing
//   FERRY_ASSIGN_OR_RETURN(UpsertActions actions,
//                          upsert->PlanChanges(table, snapshot, rows, ops, writer_options));
//   txn.AddFiles(actions.adds); for (auto& r : actions.removes) txn.Remove(r); ... commit ...
//   upsert->Committed(table, new_snapshot, version);
//
// As a CommitStrategy, Plan() is PlanChanges() on the batch's rows and change kinds; a commit
// aborted because another writer removed a file the plan marks (kDeleteRead, kDeleteDelete)
// is planned again (Replans), as is one aborted by another writer's metaData.
//
// PlanChanges(), numbered:
//   1. Every row's key (change_keys.h); the changes to one key collapse to the one that wins
//      (the highest `sequence`, else the last in source order).
//   2. The key index (key_index.h) catches up with the commits since the last batch (and, when
//      the key determines the partition, reads the files of the partitions the batch's keys live
//      in that it has not read yet: partition pruning), then says where each key's live row is.
//      The key determines the partition when every partition column is a key column or derived
//      from key columns alone (UpsertSpec::key_partitions: the index keys by those too).
//      With a sequence, a change older than the key's row in the table (or than its delete,
//      remembered by this process) is dropped (`stale`).
//   3. The rows they replace and the rows deleted are removed from their files:
//        - the table has the deletionVectors writer feature: the file's `add` is removed and
//          added again with a deletion vector holding its old one plus these rows (PROTOCOL.md
//          "Deletion Vectors"), all of the batch's vectors in one new DV file
//          (deletion_vector.h), stats marked tightBounds = false;
//        - otherwise copy-on-write: the file is read (its own deletion vector applied), its rows
//          whose key the batch changes are left out, the rest is written as new files, and the
//          file is removed. The copied rows take the schema of this commit (a column the batch
//          adds is null in them, a widened one widened), as the batch's own rows do.
//   4. The new row versions (upserts) are written as new files (with the copies of step 3).
//   Row tracking (PROTOCOL.md "Row Tracking"; when the table enables it and names the
//   materialized columns, as ferry and Spark do): the new files carry the materialized row id
//   and row commit version columns (TableWriterOptions::hidden_columns), as `ferry optimize`
//   writes them. A copied row keeps both; a new version of a live key keeps the row id of the
//   row it replaces (read from the rewritten file, or, under a deletion vector, from the file's
//   key columns) with a null commit version (the new file's, this commit's), as Spark's MERGE
//   and UPDATE do; a new key gets neither (a fresh id from the add's baseRowId). A file
//   re-added with a deletion vector keeps its baseRowId and defaultRowCommitVersion.
//      Every remove carries dataChange = true and the removed add's deletion vector, so the
//      commit aborts (ConcurrentDeleteRead / ConcurrentDeleteDelete, transaction.h) when another
//      writer removed the file first (OPTIMIZE, DELETE, MERGE): the caller brings the snapshot
//      forward and plans again, and the index then points at the new files. Nothing is ever
//      resurrected or lost: a plan is only valid for the snapshot it was made against.
// Committed(): the index reads the commit (and any before it) from the log; the deletes of the
// batch are remembered with their sequence; every UpsertSpec::persist_every commits the index is
// written beside the table, off the writer thread (key_index.h; a failed write is logged, never
// an error).
// Load(): the persisted index caught up from the log, or a rebuild from the table.
//
// Errors: InvalidArgument for a null key or a key column missing from the rows (fatal); the
// table's errors otherwise (reading files, writing files).
//
// Thread-safety: one thread (the writer thread).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/pipeline/commit_strategy.h"
#include "ferry/pipeline/key_index.h"
#include "ferry/pipeline/transform_stage.h"
#include "ferry/transform/change_op.h"

namespace ferry::pipeline {

struct UpsertSpec {
  std::vector<std::string> key;  // the table's key columns
  std::string sequence;          // empty: source order
  std::string origin = "key";    // where the key was configured ("ferry.toml:12: ...key")
  // The key index's file beside the table (key_index.h), named by the pipeline id; empty: not
  // persisted, every Load() rebuilds from the table.
  std::string index_name;
  // Commits between two writes of that file (key_index_persist_every: the index is encoded on the
  // writer thread after a commit and written by a thread of its own); a start reads about this
  // many commits from the log on top of it.
  int64_t persist_every = 100;
  // Deleted keys kept for their sequence (key_index.h): dropped when more than this below the
  // highest sequence (tombstone_retention; nullopt: by count only), and past max_tombstones.
  std::optional<int64_t> tombstone_retention;
  int64_t max_tombstones = 1'000'000;
  KeyIndexMetrics metrics;  // the index's series (null: none)
  // Partition columns derived from the key columns alone (KeyDerivedPartitions): the key index
  // compares rows by `key` plus these, which the key determines, so that every partition column
  // is an index key column and the index prunes by partition (key_index.h).
  std::vector<std::string> key_partitions;
  // How each of key_partitions is derived (KeyPartitionDefinitions: its expression and time
  // zone), recorded with the persisted key index: a start under another definition than the
  // file's is refused (InvalidArgument: the table's rows lie in the old definition's partitions;
  // key_index.h). Create() refuses a key partition without one.
  std::map<std::string, std::string> key_partition_definitions;
};

struct UpsertActions {
  std::vector<delta::AddFile> adds;
  std::vector<delta::RemoveFile> removes;
  int64_t upserts = 0;          // rows written as new versions
  int64_t deletes = 0;          // keys deleted (whether or not the table held them)
  int64_t replaced = 0;         // rows marked removed in the table's files
  int64_t collapsed = 0;        // changes superseded by a later one of the same batch
  int64_t stale = 0;            // changes older (by sequence) than the table's row
  int64_t rewritten_files = 0;  // copy-on-write
  int64_t dv_files = 0;         // files given a deletion vector
  int64_t bytes = 0;            // of the new data files
  // The new files carry row tracking's materialized columns: the rows copied and updated keep
  // their row ids (the commit says delta.rowTracking.preserved).
  bool preserves_row_ids = false;
};

class UpsertCommit : public CommitStrategy {
 public:
  // InvalidArgument when the key or sequence do not fit `table_schema` (change_keys.h).
  static Result<std::unique_ptr<UpsertCommit>> Create(const columnar::Schema& table_schema,
                                                      const UpsertSpec& spec);

  // The key index as of `snapshot` (at start and after fencing): persisted and caught up, or
  // rebuilt (key_index.h).
  Status Load(const delta::Table& table, const delta::Snapshot& snapshot) override;
  // Steps 1-4 against `snapshot`. `rows` has the table's schema; `ops` one entry per row.
  Result<UpsertActions> PlanChanges(const delta::Table& table, const delta::Snapshot& snapshot,
                                    const columnar::RecordBatch& rows,
                                    const std::vector<transform::ChangeOp>& ops,
                                    const delta::TableWriterOptions& writer_options);
  // After the plan's commit `version` is durable; `snapshot` includes it.
  Status Committed(const delta::Table& table, const delta::Snapshot& snapshot,
                   int64_t version) override;

  // ---- CommitStrategy ----
  // PlanChanges() on the rows and their change kinds; Internal when `where` dropped rows
  // (Pipeline refuses `where` in upsert mode).
  Result<CommitFiles> Plan(const delta::Table& table, const delta::Snapshot& snapshot,
                           const RowsToCommit& rows,
                           const delta::TableWriterOptions& writer_options) override;
  void DescribeCommit(delta::StringMap* parameters) const override;
  bool Replans(delta::Conflict conflict) const override;
  Status Recovered(const delta::Table& table, const delta::Snapshot& snapshot) override;

  const KeyIndex& index() const { return index_; }

 private:
  UpsertCommit(ChangeKeys keys, UpsertSpec spec)
      : index_(std::move(keys), KeyIndexOptions{.name = spec.index_name,
                                                .persist_every = spec.persist_every,
                                                .tombstone_retention = spec.tombstone_retention,
                                                .max_tombstones = spec.max_tombstones,
                                                .metrics = spec.metrics,
                                                .derived = spec.key_partition_definitions}),
        spec_(std::move(spec)) {}

  KeyIndex index_;
  const UpsertSpec spec_;
  std::vector<std::pair<std::string, int64_t>> pending_deletes_;  // of the last plan
};

// The table's `deletionVectors` writer feature (upserts mark rows with deletion vectors).
bool UsesDeletionVectors(const delta::Snapshot& snapshot);

// The partition columns that are derived columns (`derived`, [[pipeline.columns]]) whose
// expression reads key columns only and no clock (current_timestamp(), now(), current_date(),
// unix_timestamp()): the key determines their values. Empty unless every partition column is a
// key column or such a derived column (only then can the index prune). `schema` is the table's;
// `time_zone` the expressions' (TransformSpec::time_zone).
std::vector<std::string> KeyDerivedPartitions(const columnar::Schema& schema,
                                              const std::vector<std::string>& partition_columns,
                                              const std::vector<std::string>& key,
                                              const std::vector<DerivedColumnSpec>& derived,
                                              const std::string& time_zone);

// UpsertSpec::key_partition_definitions for `key_partitions` (KeyDerivedPartitions' answer):
// each column's expression in `derived` and `time_zone` ("id % 16 (time zone UTC)"), which is
// all its value depends on besides the key. The text as configured: a change of spelling alone
// counts as another definition (the start is refused until the file is deleted).
std::map<std::string, std::string> KeyPartitionDefinitions(
    const std::vector<std::string>& key_partitions, const std::vector<DerivedColumnSpec>& derived,
    const std::string& time_zone);

}  // namespace ferry::pipeline

// BatchCommitter: the writer-thread half of a pipeline (pipeline.h). The pipeline thread seals a
// batch (SealedBatch) and submits a CommitQueue job that calls Commit(); the committer makes the
// batch durable in the table and fills in its results. It never acknowledges anything to the
// source: the pipeline thread does that once it has taken the outcome back.
//
//   BatchCommitter committer(committer_options, std::move(table), snapshot, std::move(stage),
//                            std::move(strategy), committer_metrics);
//   queue.Submit([&committer, batch, stop] { return committer.Commit(batch, stop); });
//
// Commit(), numbered as it runs (failpoints in brackets):
//   1. A stop that abandons gives up between attempts (Cancelled, nothing of the batch counted).
//   2. [pipeline.before_write] The batch's dead letters, if any, go to the dead-letter table
//      first, with a txn per partition expecting the position of the batch before, unless the
//      dead-letter log shows that an earlier attempt landed them already; once per batch.
//      [pipeline.after_dead_letter_commit]
//   3. The rows to commit (PrepareRows, shared by every strategy): the derived columns and
//      `where` (TransformStage); identity columns (table_rules.h) get their values from the
//      snapshot's high-water marks, and the commit of step 5 carries the metaData with the
//      raised marks, so a retry after a conflict (another writer's metaData: step 5) assigns them
//      again.
//   4. The commit strategy chosen when the pipeline was built (commit_strategy.h) turns the rows
//      into the files to add and remove: AppendCommit (append_commit.h) drops the keys its dedup
//      index has seen and writes the rest as Parquet files; UpsertCommit (upsert_commit.h)
//      collapses the changes per key, finds the rows they replace or delete through its key
//      index, and gives the new row versions, the rewritten files or the files re-added with a
//      deletion vector, and the files to remove. [pipeline.before_commit]
//   3a. Schema (schema_evolver.h, delta/schema_evolution.h): when the batch's schema is not the
//      table's input schema (the pipeline thread evolved it, or the table changed), it is merged
//      into the table's: the batch's columns are conformed to the result (columns the batch lacks
//      are null) and, when the result is not the table's schema, the commit of step 5 carries the
//      metaData (and protocol) of the change. A batch whose values the table's schema cannot take
//      (another writer gave a column this batch added a type its values do not fit) is given back
//      as Aborted with `schema_rewind`: the pipeline reads it again from the table's positions
//      and decodes it against the table's schema, where such values are bad records. So is a
//      batch whose rows were checked against other column rules (constraints, generation
//      expressions, defaults) than the table holds now (SealedBatch::rules_key).
//   5. One Delta commit adds the files and, for every partition in the batch, sets the txn
//      position to the batch's last one, expecting the position of the batch sealed before it
//      (SealedPartition::expected); skipped ranges go in commitInfo. If another writer's commit
//      changed the table's metaData first (Conflict::kMetadataChanged), the snapshot is brought
//      forward and the batch goes back to step 3a (at most kMaxReplans times); so does a batch
//      whose strategy replans on the conflict (CommitStrategy::Replans: an upsert when another
//      writer removed a file it marks). Then the strategy learns the commit
//      (CommitStrategy::Committed: the dedup index remembers the batch's keys, the key index
//      reads the commit). When a checkpoint of the table is due, it is
//      written on a thread of its own (delta/checkpointer.h), never on this path; the next
//      commit reports it. [pipeline.after_commit]
//   6. A failed step: Aborted (another writer's txn for one of our partitions) goes back at once,
//      the pipeline thread fences; a fatal code (InvalidArgument, NotSupported, DataLoss,
//      Internal) goes back naming the table. Anything else (I/O, store unavailable, an unknown
//      outcome): back off (doubling up to max_backoff), reload the snapshot and ask whether the
//      commit landed: the batch's positions are in it (OK, the commit was ours), the expected
//      ones are (go to 1 and write the batch again), or neither (Aborted).
//
// Ownership: the committer owns the table handle, its snapshot, the dead-letter table and its
// snapshot, the transform stage and the commit strategy (with its index). While a SealedBatch is in
// flight only the writer thread touches them; the methods under "Pipeline thread" below may be
// called only when the CommitQueue is idle (CommitQueue invariant 5), which orders them with the
// jobs.
//
// Thread-safety: not thread-safe; see Ownership.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/checkpointer.h"
#include "ferry/delta/schema_evolution.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/commit_strategy.h"
#include "ferry/pipeline/stop_signal.h"
#include "ferry/pipeline/transform_stage.h"
#include "ferry/source/source.h"

namespace ferry::pipeline {

// A partition of a sealed batch: what its commit needs, so the writer thread never reads the
// pipeline thread's partition state.
struct SealedPartition {
  std::string key;
  std::string app_id;
  std::string dead_app_id;  // the dead-letter table's appId (PipelineOptions::dead_letter_id)
  int64_t first = 0;
  int64_t last = 0;
  std::optional<int64_t> expected;  // the table's position before this batch
  bool has_dead = false;            // dead letters of it are in the batch
  std::optional<int64_t> dead_expected;
  int64_t last_timestamp_us = 0;
};

// A batch handed to the writer thread. Built by the pipeline thread (OpenBatch::Seal, then
// PartitionBook::Seal), then owned by the writer thread until the outcome is taken back; the
// pipeline thread then reads the results.
struct SealedBatch {
  columnar::RecordBatch rows;  // the input schema
  // Upsert pipelines (UpsertCommit): what each row does to its key; empty when appending.
  std::vector<transform::ChangeOp> ops;
  columnar::RecordBatch dead;  // dead letters (kDeadLetterSchema)
  std::map<int32_t, SealedPartition> partitions;
  std::vector<source::Gap> gaps;
  std::chrono::steady_clock::time_point opened;
  // More positions for the main commit (appId -> position), set without an expectation: facts
  // the commit makes true about other tables' progress (a routed pipeline's resume positions,
  // router.h). PipelineOptions::seal_hook fills them.
  std::map<std::string, int64_t> extra_txns;
  // The column rules (table_rules.h) the rows were checked against (Intake::batch_rules_key);
  // empty: not checked (then the table must have none). A batch checked against other rules than
  // the table's at commit time is read again (schema_rewind).
  std::string rules_key;
  // Results, written by the writer thread.
  bool dead_committed = false;  // the dead letters are in their table
  int64_t rows_written = 0;     // after `where` and dedup
  int64_t filtered = 0;
  int64_t dedup_hits = 0;
  int64_t upsert_deletes = 0;   // upsert: keys deleted
  int64_t upsert_replaced = 0;  // upsert: rows of the table marked removed
  int64_t files = 0;
  int64_t bytes = 0;
  int64_t version = -1;
  double commit_seconds = 0;  // the attempt that committed: files written, commit made
  // Schema (step 3a): the table's schema after the commit, whether the table turns type
  // widening off, what the commit changed ("add column x BIGINT"), how often the batch was
  // merged again after another writer's metaData, and whether it must be read again.
  columnar::SchemaPtr table_schema;
  bool widening_off = false;
  std::vector<std::string> schema_changes;
  int replans = 0;
  bool schema_rewind = false;
  // The table's protocol and configuration after the commit (its column rules: Intake).
  delta::Protocol table_protocol;
  delta::StringMap table_configuration;
};

// The parts of PipelineOptions the writer thread uses.
struct BatchCommitterOptions {
  std::string id;  // the pipeline's: txn appIds, commitInfo queryId, log lines
  delta::TableWriterOptions writer;
  delta::CommitOptions commit;
  std::chrono::milliseconds initial_backoff{};
  std::chrono::milliseconds max_backoff{};
  // Schema evolution (step 3a): the derived columns and `where` (to build the stage of a batch
  // whose schema is not the table's), the mode and the limits. The dead-letter table evolves by
  // the same mode.
  TransformSpec transform;
  delta::SchemaEvolution schema_evolution = delta::SchemaEvolution::kNone;
  delta::SchemaEvolutionLimits evolution_limits;
};

class BatchCommitter {
 public:
  // The writer thread's metrics, registered by the pipeline with the rest of its own.
  struct Metrics {
    metrics::Counter* failed = nullptr;  // ferry_commits_total{outcome="failed"}
    metrics::Counter* dead_rows = nullptr;
    metrics::Histogram* commit_seconds = nullptr;
    metrics::Histogram* checkpoint_seconds = nullptr;
    metrics::Counter* schema_changes = nullptr;  // commits that changed the table's schema
    metrics::Counter* schema_replans = nullptr;  // merged again after another writer's metaData
    // A failed attempt sets kRetrying with its error; each commit publishes the table's figures
    // (TableRecord; the small-file count is recounted at most every kTableScanInterval).
    metrics::Journal* journal = nullptr;
    metrics::JournalKey journal_key;  // the pipeline's record (and table's, when routed)
  };
  static constexpr std::chrono::seconds kTableScanInterval{10};
  // Merges of one batch into a table whose metaData other writers keep changing (step 5).
  static constexpr int kMaxReplans = 20;

  // `stage` maps the input schema to the table's; `strategy` (not null) makes the files of
  // step 4.
  BatchCommitter(BatchCommitterOptions options, std::unique_ptr<delta::Table> table,
                 delta::Snapshot snapshot, std::unique_ptr<TransformStage> stage,
                 std::unique_ptr<CommitStrategy> strategy, Metrics metrics);
  // Waits for a running checkpoint (a stop after an error or an abandon leaves the one due at the
  // last commit to the next start).
  ~BatchCommitter();
  BatchCommitter(const BatchCommitter&) = delete;
  BatchCommitter& operator=(const BatchCommitter&) = delete;

  // REQUIRES: before the first Commit(); `snapshot` has kDeadLetterSchema (Pipeline checks).
  void SetDeadLetterTable(std::unique_ptr<delta::Table> table, delta::Snapshot snapshot);

  // ---- Writer thread (a CommitQueue job) ----

  // Steps 1-6 for one sealed batch, retrying until it is committed (OK, the batch's results
  // filled in), fenced (Aborted), abandoned on `stop` (Cancelled) or failed for good (a fatal
  // code).
  Status Commit(SealedBatch* batch, StopSignal* stop);

  // ---- Pipeline thread, only while the CommitQueue is idle ----

  // Loads the strategy's index (dedup index, upsert key index), if any, as of the snapshot.
  Status LoadIndex();
  // At a clean end (every batch committed): waits for the running checkpoint, then writes the
  // one due at the last commit, if any, on this thread.
  void FinishCheckpoints();
  // Reloads the snapshot from the log, then the strategy's index (fencing starts over from the
  // table).
  Status Reload();
  // `app_id`'s position in the table after reading the commits the snapshot has not seen
  // (`refresh`; without it, as of the snapshot).
  Result<std::optional<int64_t>> ReadPosition(const std::string& app_id, bool refresh = true);
  // The same in the dead-letter table. REQUIRES: has_dead_letter_table().
  Result<std::optional<int64_t>> ReadDeadLetterPosition(const std::string& app_id,
                                                        bool refresh = true);

  const delta::Snapshot& snapshot() const { return snapshot_; }

  // ---- Either thread: fixed once the pipeline runs ----

  bool has_dead_letter_table() const { return dead_table_ != nullptr; }

 private:
  // Step 3a's result for one attempt.
  struct Aligned {
    const TransformStage* stage = nullptr;  // the rows' stage (input schema -> table schema)
    columnar::SchemaPtr schema;             // the schema the files are written with
    std::optional<delta::SchemaChangeCommit> change;
    std::vector<std::string> changes;
  };
  // Steps 2-5, once.
  Status WriteAndCommit(SealedBatch* batch);
  // Steps 3-5 against the current snapshot; Aborted with *replan set when step 5 must be run
  // again after the snapshot moved: another writer's metaData (kMetadataChanged), or, for an
  // upsert, another writer removed a file this commit marks (kDeleteRead, kDeleteDelete).
  Status TransformWriteCommit(SealedBatch* batch, bool* replan);
  // Step 3's result for one attempt: the rows to commit (`rows` points into the batch or into
  // one of the copies here).
  struct PreparedRows {
    PreparedRows() = default;
    PreparedRows(const PreparedRows&) = delete;  // nor movable: `rows` may point into it
    PreparedRows& operator=(const PreparedRows&) = delete;
    Aligned aligned;
    const columnar::RecordBatch* rows = nullptr;
    columnar::RecordBatch transformed;
    columnar::RecordBatch with_identity;
    columnar::SchemaPtr identity_schema;  // the table's with raised high-water marks, if any
  };
  // Step 3 (with 3a) into `prepared` (which must not move afterwards: `rows` points into it).
  Status PrepareRows(SealedBatch* batch, PreparedRows* prepared);
  // Step 5's txn positions, commitInfo and schema change.
  void AddPositionsAndMetadata(const SealedBatch& batch, const PreparedRows& prepared,
                               delta::Transaction* txn) const;
  // Step 3a.
  Result<Aligned> Align(SealedBatch* batch);
  // The stage of the table's own input schema, rebuilt when the table's schema changed.
  Status RefreshStage();
  // The table's schema (and whether it turns type widening off) into the batch's results.
  void NoteTableSchema(SealedBatch* batch) const;
  // Step 2.
  Status CommitDeadLetters(SealedBatch* batch);
  // Step 2's files and commit, once.
  Status WriteDeadLetters(SealedBatch* batch, bool* metadata_changed);
  // The table's figures to the journal (if any). `checkpoint`: the newest checkpoint written
  // since the last call, if any. `small_added`: small files the last commit added (the count
  // between two full recounts).
  void PublishTable(const delta::CheckpointOutcome* checkpoint, int64_t small_added = 0);
  // The checkpoints finished since the last call into the metrics (or a warning); the newest
  // that worked, if any (valid until the next call).
  const delta::CheckpointOutcome* ReportCheckpoints();

  const BatchCommitterOptions options_;
  const Metrics metrics_;
  std::unique_ptr<delta::Table> table_;
  delta::CommitOptions main_commit_;  // options_.commit, checkpoints left to checkpointer_
  // Writes the main table's checkpoints when options_.commit.checkpoint (after table_: it
  // refers to it, and is destroyed first).
  std::unique_ptr<delta::BackgroundCheckpointer> checkpointer_;
  std::vector<delta::CheckpointOutcome> finished_checkpoints_;
  delta::Snapshot snapshot_;
  std::unique_ptr<TransformStage> stage_;  // for the table's schema (stage_schema_)
  columnar::SchemaPtr stage_schema_;
  // Top-level columns another writer added (seen on a MetadataChanged conflict) that a batch
  // decoded before may lack: such a batch is read again (Align). Cleared by that rewind.
  std::vector<std::string> foreign_columns_;
  std::unique_ptr<TransformStage> evolved_stage_;  // for the last batch that changed the schema
  std::unique_ptr<CommitStrategy> strategy_;
  std::unique_ptr<delta::Table> dead_table_;
  delta::Snapshot dead_snapshot_;
  int64_t epoch_ = 0;        // batches committed by this pipeline (commitInfo epochId)
  int64_t small_files_ = 0;  // PublishTable's last count
  std::chrono::steady_clock::time_point small_files_counted_{};
};

}  // namespace ferry::pipeline

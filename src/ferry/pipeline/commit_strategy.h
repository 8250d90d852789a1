// CommitStrategy: what a pipeline's commit does with a batch's rows, chosen once when the
// pipeline is built (Pipeline::Create) and owned by its BatchCommitter (batch_committer.h):
//   - AppendCommit (append_commit.h): the rows are appended as new files, after the optional
//     dedup index drops the keys committed already (mode = "append", the default);
//   - UpsertCommit (upsert_commit.h): the rows are keyed changes; the new row versions go in new
//     files and the rows they replace or delete are marked removed (mode = "upsert").
// The steps both need stay in BatchCommitter, in one walk: dead letters, schema merge and
// conforming, the derived columns, identity values, then the strategy's files, then the txn
// positions, the metaData and the commit itself, and the retries. A strategy sees the rows in
// the table's schema and answers with the actions to commit; it never commits.
//
// The calls, in order, on the writer thread (Load on the pipeline thread while the CommitQueue
// is idle):
//   Load(table, snapshot)                 at start and after fencing: its index as of snapshot
//   Plan(table, snapshot, rows, ...)      per attempt: the files to add and remove
//   (BatchCommitter commits; on a conflict for which Replans() is true, it plans again against
//    the newer snapshot)
//   Committed(table, snapshot, version)   after our commit `version` is durable
//   Recovered(table, snapshot)            after a commit whose outcome was unknown was found in
//                                         the log (the batch landed; Plan's state may be gone)
//
// Thread-safety: one thread at a time (see the calls above).
#pragma once

#include <cstdint>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/transform/change_op.h"

namespace ferry::pipeline {

// A batch's rows as BatchCommitter hands them to the strategy: after schema merge, the derived
// columns, `where` and identity values, in the table's schema (of this attempt).
struct RowsToCommit {
  const columnar::RecordBatch& rows;
  // What each row does to its key (upsert pipelines); empty when appending.
  const std::vector<transform::ChangeOp>& ops;
  int64_t filtered = 0;  // rows `where` dropped before `rows`
};

// What the strategy gives the commit, and the counts of SealedBatch's results.
struct CommitFiles {
  std::vector<delta::AddFile> adds;
  std::vector<delta::RemoveFile> removes;
  int64_t rows_written = 0;  // rows in the new files that are the batch's own
  int64_t skipped = 0;       // dedup hits; upsert: changes collapsed or stale
  int64_t deletes = 0;       // upsert: keys deleted
  int64_t replaced = 0;      // upsert: rows of the table marked removed
  int64_t bytes = 0;         // of the new data files
  // The rows the removes copy into the adds keep their row ids in materialized columns
  // (delta::Transaction::PreserveRowTracking).
  bool preserves_row_ids = false;
};

class CommitStrategy {
 public:
  virtual ~CommitStrategy() = default;

  // The strategy's index (if any) as of `snapshot`.
  virtual Status Load(const delta::Table& table, const delta::Snapshot& snapshot) = 0;
  // The files (written, not yet named by any commit) and removes of one attempt.
  virtual Result<CommitFiles> Plan(const delta::Table& table, const delta::Snapshot& snapshot,
                                   const RowsToCommit& rows,
                                   const delta::TableWriterOptions& writer_options) = 0;
  // commitInfo.operationParameters of the strategy (outputMode, ...).
  virtual void DescribeCommit(delta::StringMap* parameters) const = 0;
  // Whether a commit aborted by `conflict` is planned again against the newer snapshot (the
  // metaData conflict always is, by BatchCommitter).
  virtual bool Replans(delta::Conflict conflict) const = 0;
  // After the commit `version` of the last Plan() is durable; `snapshot` includes it.
  virtual Status Committed(const delta::Table& table, const delta::Snapshot& snapshot,
                           int64_t version) = 0;
  // After the batch was found committed in `snapshot` (its reply was lost).
  virtual Status Recovered(const delta::Table& table, const delta::Snapshot& snapshot) = 0;
};

}  // namespace ferry::pipeline

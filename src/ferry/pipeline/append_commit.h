// AppendCommit: the commit strategy of an append pipeline (mode = "append", the default;
// commit_strategy.h). A batch's rows become new files; nothing of the table is removed.
//
// Plan(), numbered:
//   1. With a dedup index (dedup_index.h): it catches up on other writers' commits since the
//      last batch (the batch before this one was remembered after its commit), then drops the
//      rows whose key is committed already or repeats an earlier row of the batch (`skipped`).
//   2. The rows left are written as Parquet files (delta/table_writer.h), fsync'd, named by no
//      commit yet.
// Committed(): the dedup index reads the other writers' commits that landed before ours, then
// remembers the batch's keys and persists them as that version's segment (a failed Persist is
// logged: a restart reads that version from the log instead).
// Replans(): never beyond the metaData conflict (an append removes nothing, so no file another
// writer removed can invalidate it).
//
// Thread-safety: one thread at a time (commit_strategy.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/pipeline/commit_strategy.h"
#include "ferry/pipeline/dedup_index.h"

namespace ferry::pipeline {

class AppendCommit : public CommitStrategy {
 public:
  // `dedup` may be null (no dedup). `pipeline_id` names the pipeline in log lines.
  AppendCommit(std::string pipeline_id, std::unique_ptr<DedupIndex> dedup)
      : id_(std::move(pipeline_id)), dedup_(std::move(dedup)) {}

  Status Load(const delta::Table& table, const delta::Snapshot& snapshot) override;
  Result<CommitFiles> Plan(const delta::Table& table, const delta::Snapshot& snapshot,
                           const RowsToCommit& rows,
                           const delta::TableWriterOptions& writer_options) override;
  void DescribeCommit(delta::StringMap* parameters) const override;
  bool Replans(delta::Conflict conflict) const override;
  Status Committed(const delta::Table& table, const delta::Snapshot& snapshot,
                   int64_t version) override;
  Status Recovered(const delta::Table& table, const delta::Snapshot& snapshot) override;

  const DedupIndex* dedup() const { return dedup_.get(); }

 private:
  const std::string id_;
  std::unique_ptr<DedupIndex> dedup_;
  std::vector<std::string> keys_;  // the last plan's dedup keys, remembered once committed
};

}  // namespace ferry::pipeline

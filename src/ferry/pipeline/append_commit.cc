#include "ferry/pipeline/append_commit.h"

#include "ferry/base/clock.h"
#include "ferry/base/log.h"

namespace ferry::pipeline {

Status AppendCommit::Load(const delta::Table& table, const delta::Snapshot& snapshot) {
  keys_.clear();
  if (dedup_ == nullptr) {
    return Status::OK();
  }
  return dedup_->Load(table, snapshot, WallMillis());
}

Result<CommitFiles> AppendCommit::Plan(const delta::Table& table, const delta::Snapshot& snapshot,
                                       const RowsToCommit& in,
                                       const delta::TableWriterOptions& writer_options) {
  CommitFiles out;
  keys_.clear();
  const columnar::RecordBatch* rows = &in.rows;
  columnar::RecordBatch unique;
  // 1.
  if (dedup_ != nullptr) {
    FERRY_RETURN_IF_ERROR(dedup_->CatchUp(table, snapshot));
    FERRY_RETURN_IF_ERROR(dedup_->UseSchema(rows->schema_ptr()));
    std::vector<int64_t> keep = dedup_->Filter(*rows, &keys_);
    out.skipped = rows->num_rows() - static_cast<int64_t>(keep.size());
    if (out.skipped > 0) {
      unique = rows->Take(keep);
      rows = &unique;
    }
  }
  // 2.
  out.rows_written = rows->num_rows();
  FERRY_ASSIGN_OR_RETURN(auto writer, delta::TableWriter::Create(table, snapshot, writer_options));
  if (rows->num_rows() > 0) {
    FERRY_RETURN_IF_ERROR(writer->Write(*rows));
  }
  FERRY_ASSIGN_OR_RETURN(out.adds, writer->Finish());
  for (const delta::AddFile& add : out.adds) {
    out.bytes += add.size;
  }
  return out;
}

void AppendCommit::DescribeCommit(delta::StringMap* parameters) const {
  (*parameters)["outputMode"] = "Append";
}

bool AppendCommit::Replans(delta::Conflict /*conflict*/) const {
  return false;
}

Status AppendCommit::Committed(const delta::Table& table, const delta::Snapshot& snapshot,
                               int64_t version) {
  if (dedup_ == nullptr) {
    return Status::OK();
  }
  // Commits of other writers that landed before ours, then our own keys.
  FERRY_RETURN_IF_ERROR(dedup_->CatchUp(table, snapshot, version - 1));
  int64_t now = WallMillis();
  dedup_->Remember(keys_, version, now);
  Status persisted = dedup_->Persist(table, snapshot, version, keys_, now);
  if (!persisted.ok()) {
    FERRY_LOG_WARN(
        "pipeline {}: could not write the dedup index segment of version {} (a "
        "restart reads that version from the log instead): {}",
        id_, version, persisted.ToString());
  }
  keys_.clear();
  return Status::OK();
}

Status AppendCommit::Recovered(const delta::Table& table, const delta::Snapshot& snapshot) {
  keys_.clear();
  if (dedup_ == nullptr) {
    return Status::OK();
  }
  return dedup_->CatchUp(table, snapshot);
}

}  // namespace ferry::pipeline

#include "ferry/pipeline/batch_committer.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "ferry/base/clock.h"
#include "ferry/base/failpoint.h"
#include "ferry/base/log.h"

namespace ferry::pipeline {

using Clock = std::chrono::steady_clock;

namespace {

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Errors no retry can fix: the pipeline stops with them.
bool IsFatal(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotSupported:
    case StatusCode::kDataLoss:
    case StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

std::string FormatDuration(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? fmt::format("{}s", d.count() / 1000)
                               : fmt::format("{}ms", d.count());
}

}  // namespace

BatchCommitter::BatchCommitter(BatchCommitterOptions options, std::unique_ptr<delta::Table> table,
                               delta::Snapshot snapshot, std::unique_ptr<TransformStage> stage,
                               std::unique_ptr<DedupIndex> dedup, Metrics metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      table_(std::move(table)),
      snapshot_(std::move(snapshot)),
      stage_(std::move(stage)),
      dedup_(std::move(dedup)) {
  PublishTable(false);
}

void BatchCommitter::PublishTable(bool checkpoint_written, int64_t small_added) {
  if (metrics_.journal == nullptr) {
    return;
  }
  Clock::time_point now = Clock::now();
  if (small_files_counted_ == Clock::time_point{} ||
      now - small_files_counted_ >= kTableScanInterval) {
    // O(files): at most every kTableScanInterval, on the writer thread after a commit.
    small_files_ = 0;
    for (const auto& [key, add] : snapshot_.files()) {
      small_files_ += add.size < metrics::Journal::kSmallFileBytes ? 1 : 0;
    }
    small_files_counted_ = now;
  } else {
    small_files_ += small_added;  // files another writer removed are seen at the next recount
  }
  metrics::TableRecord table{.version = snapshot_.version(),
                             .num_files = snapshot_.num_files(),
                             .size_bytes = snapshot_.size_bytes(),
                             .small_files = small_files_,
                             .checkpoint_version = snapshot_.newest_checkpoint_version(),
                             .time_ms = WallMillis()};
  if (checkpoint_written) {
    table.checkpoint_version = snapshot_.version();
    table.checkpoint_ms = table.time_ms;
  }
  metrics_.journal->SetTable(options_.id, table);
}

void BatchCommitter::SetDeadLetterTable(std::unique_ptr<delta::Table> table,
                                        delta::Snapshot snapshot) {
  dead_table_ = std::move(table);
  dead_snapshot_ = std::move(snapshot);
}

// ---- Pipeline thread (the queue idle) ----

Status BatchCommitter::LoadDedupIndex() {
  if (dedup_ == nullptr) {
    return Status::OK();
  }
  return dedup_->Load(*table_, snapshot_, WallMillis());
}

Status BatchCommitter::Reload() {
  FERRY_ASSIGN_OR_RETURN(snapshot_, table_->LoadSnapshot());
  return LoadDedupIndex();
}

Result<std::optional<int64_t>> BatchCommitter::ReadPosition(const std::string& app_id,
                                                            bool refresh) {
  if (refresh) {
    FERRY_ASSIGN_OR_RETURN(snapshot_, table_->Update(snapshot_));
  }
  return snapshot_.position(app_id);
}

Result<std::optional<int64_t>> BatchCommitter::ReadDeadLetterPosition(const std::string& app_id,
                                                                      bool refresh) {
  if (refresh) {
    FERRY_ASSIGN_OR_RETURN(dead_snapshot_, dead_table_->Update(dead_snapshot_));
  }
  return dead_snapshot_.position(app_id);
}

// ---- Writer thread ----

Status BatchCommitter::CommitDeadLetters(SealedBatch* batch) {
  if (batch->dead_committed || batch->dead.num_rows() == 0) {
    return Status::OK();
  }
  // A previous attempt may have landed with its reply lost.
  FERRY_ASSIGN_OR_RETURN(dead_snapshot_, dead_table_->Update(dead_snapshot_));
  bool landed = true;
  for (const auto& [p, part] : batch->partitions) {
    landed = landed && (!part.has_dead || dead_snapshot_.position(part.app_id) == part.last);
  }
  if (!landed) {
    FERRY_ASSIGN_OR_RETURN(
        auto writer, delta::TableWriter::Create(*dead_table_, dead_snapshot_, options_.writer));
    FERRY_RETURN_IF_ERROR(writer->Write(batch->dead));
    FERRY_ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds, writer->Finish());
    delta::Transaction txn(*dead_table_, dead_snapshot_, options_.commit);
    txn.AddFiles(std::move(adds));
    for (const auto& [p, part] : batch->partitions) {
      if (part.has_dead) {
        txn.SetPosition(part.app_id, part.last);
        txn.ExpectPosition(part.app_id, part.dead_expected);
      }
    }
    txn.SetOperation("STREAMING UPDATE", {{"outputMode", "Append"},
                                          {"queryId", options_.id + "/dead_letter"},
                                          {"epochId", std::to_string(epoch_)}});
    FERRY_ASSIGN_OR_RETURN(delta::CommitResult result, txn.Commit());
    dead_snapshot_ = std::move(result.snapshot);
    metrics_.dead_rows->Increment(static_cast<double>(batch->dead.num_rows()));
    FERRY_LOG_INFO("pipeline {}: {} bad records committed to the dead-letter table {} (version {})",
                   options_.id, batch->dead.num_rows(), dead_table_->Describe(),
                   dead_snapshot_.version());
  }
  batch->dead_committed = true;
  // Between the two commits: a crash here must leave the counts unchanged after a restart.
  return FERRY_FAILPOINT("pipeline.after_dead_letter_commit");
}

Status BatchCommitter::WriteAndCommit(SealedBatch* batch) {
  Clock::time_point start = Clock::now();
  FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("pipeline.before_write"));
  // Dead letters first: once they are committed with their positions, the main commit may fail
  // or crash without losing or repeating them.
  FERRY_RETURN_IF_ERROR(CommitDeadLetters(batch));
  columnar::RecordBatch transformed;
  const columnar::RecordBatch* rows = &batch->rows;
  batch->filtered = 0;
  if (!stage_->empty()) {
    transformed = stage_->Apply(batch->rows, &batch->filtered);
    rows = &transformed;
  }
  batch->dedup_hits = 0;
  std::vector<std::string> keys;
  columnar::RecordBatch unique;
  if (dedup_ != nullptr) {
    // The batch before this one was remembered after its commit: its keys are seen here.
    FERRY_RETURN_IF_ERROR(dedup_->CatchUp(*table_, snapshot_));
    std::vector<int64_t> keep = dedup_->Filter(*rows, &keys);
    batch->dedup_hits = rows->num_rows() - static_cast<int64_t>(keep.size());
    if (batch->dedup_hits > 0) {
      unique = rows->Take(keep);
      rows = &unique;
    }
  }
  batch->rows_written = rows->num_rows();
  FERRY_ASSIGN_OR_RETURN(auto writer,
                         delta::TableWriter::Create(*table_, snapshot_, options_.writer));
  if (rows->num_rows() > 0) {
    FERRY_RETURN_IF_ERROR(writer->Write(*rows));
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds, writer->Finish());
  batch->files = static_cast<int64_t>(adds.size());
  batch->bytes = 0;
  int64_t small_added = 0;
  for (const delta::AddFile& add : adds) {
    batch->bytes += add.size;
    small_added += add.size < metrics::Journal::kSmallFileBytes ? 1 : 0;
  }
  FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("pipeline.before_commit"));

  delta::Transaction txn(*table_, snapshot_, options_.commit);
  txn.AddFiles(std::move(adds));
  for (const auto& [p, part] : batch->partitions) {
    txn.SetPosition(part.app_id, part.last);
    txn.ExpectPosition(part.app_id, part.expected);
  }
  delta::StringMap parameters = {
      {"outputMode", "Append"}, {"queryId", options_.id}, {"epochId", std::to_string(epoch_)}};
  if (!batch->gaps.empty()) {
    nlohmann::json gaps = nlohmann::json::array();
    for (const source::Gap& gap : batch->gaps) {
      gaps.push_back({{"partition", gap.key},
                      {"first", gap.first_position},
                      {"last", gap.last_position},
                      {"reason", gap.reason}});
    }
    parameters["gaps"] = gaps.dump();
  }
  txn.SetOperation("STREAMING UPDATE", std::move(parameters));
  FERRY_ASSIGN_OR_RETURN(delta::CommitResult result, txn.Commit());
  snapshot_ = std::move(result.snapshot);
  batch->version = result.version;
  if (dedup_ != nullptr) {
    // Commits of other writers that landed before ours, then our own keys.
    FERRY_RETURN_IF_ERROR(dedup_->CatchUp(*table_, snapshot_, result.version - 1));
    int64_t now = WallMillis();
    dedup_->Remember(keys, result.version, now);
    Status persisted = dedup_->Persist(*table_, snapshot_, result.version, keys, now);
    if (!persisted.ok()) {
      FERRY_LOG_WARN(
          "pipeline {}: could not write the dedup index segment of version {} (a "
          "restart reads that version from the log instead): {}",
          options_.id, result.version, persisted.ToString());
    }
  }
  batch->commit_seconds = Seconds(Clock::now() - start);
  metrics_.commit_seconds->Observe(batch->commit_seconds);
  bool checkpointed = result.checkpoint_version && result.checkpoint_status.ok();
  if (checkpointed) {
    metrics_.checkpoint_seconds->Observe(static_cast<double>(result.checkpoint_micros) / 1e6);
  }
  PublishTable(checkpointed && *result.checkpoint_version == snapshot_.version(), small_added);
  if (!result.checkpoint_status.ok()) {
    FERRY_LOG_WARN("pipeline {}: checkpoint at version {} failed (the next commit retries it): {}",
                   options_.id, result.checkpoint_version.value_or(-1),
                   result.checkpoint_status.ToString());
  }
  // An error here leaves a durable commit behind an error: Commit finds it in the log.
  return FERRY_FAILPOINT("pipeline.after_commit");
}

Status BatchCommitter::Commit(SealedBatch* batch, StopSignal* stop) {
  std::chrono::milliseconds backoff = options_.initial_backoff;
  while (true) {
    if (stop->abandon()) {
      return Cancelled(
          "pipeline {}: stopped with {} rows not committed (they are read again "
          "at the next start)",
          options_.id, batch->rows.num_rows());
    }
    Status st = WriteAndCommit(batch);
    if (st.ok()) {
      ++epoch_;
      return Status::OK();
    }
    if (st.code() == StatusCode::kAborted) {
      return st;  // the pipeline thread fences
    }
    if (IsFatal(st)) {
      return st.WithContext("pipeline {}: committing to {}", options_.id, table_->Describe());
    }
    metrics_.failed->Increment();
    if (metrics_.journal != nullptr) {
      metrics_.journal->SetState(
          options_.id, metrics::PipelineState::kRetrying,
          fmt::format("batch of {} rows not committed to {}: {}", batch->rows.num_rows(),
                      table_->Describe(), st.ToString()));
    }
    FERRY_LOG_WARN("pipeline {}: batch of {} rows not committed: {}; retrying in {}", options_.id,
                   batch->rows.num_rows(), st.ToString(), FormatDuration(backoff));
    stop->WaitFor(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);

    // Learn from the log what happened: ours, untouched, or another writer's.
    Result<delta::Snapshot> updated = table_->LoadSnapshot();
    if (!updated.ok()) {
      FERRY_LOG_WARN("pipeline {}: reading {}: {}", options_.id, table_->Describe(),
                     updated.status().ToString());
      continue;
    }
    snapshot_ = std::move(*updated);
    bool ours = true;
    bool untouched = true;
    for (const auto& [p, part] : batch->partitions) {
      std::optional<int64_t> now = snapshot_.position(part.app_id);
      ours = ours && now == part.last;
      untouched = untouched && now == part.expected;
    }
    if (ours) {
      FERRY_LOG_INFO("pipeline {}: the batch was committed after all (version {})", options_.id,
                     snapshot_.version());
      batch->version = snapshot_.version();
      if (dedup_ != nullptr) {
        FERRY_RETURN_IF_ERROR(dedup_->CatchUp(*table_, snapshot_));
      }
      ++epoch_;
      return Status::OK();
    }
    if (!untouched) {
      return Aborted("positions moved while the commit was failing");
    }
  }
}

}  // namespace ferry::pipeline

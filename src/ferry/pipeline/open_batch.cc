#include "ferry/pipeline/open_batch.h"

#include <algorithm>
#include <utility>

#include "ferry/base/clock.h"
#include "ferry/pipeline/schema_evolver.h"

namespace ferry::pipeline {

namespace {

// The rows (indices of `partition_of`) that belong to another partition than `partition`.
std::vector<int64_t> RowsNotOf(const std::vector<int32_t>& partition_of, int32_t partition) {
  std::vector<int64_t> keep;
  keep.reserve(partition_of.size());
  for (size_t row = 0; row < partition_of.size(); ++row) {
    if (partition_of[row] != partition) {
      keep.push_back(static_cast<int64_t>(row));
    }
  }
  return keep;
}

}  // namespace

void OpenBatch::KeepDeadLetters(columnar::SchemaPtr dead_schema) {
  keep_dead_ = true;
  dead_ = columnar::RecordBatch::MakeEmpty(std::move(dead_schema));
  dead_partition_.clear();
}

void OpenBatch::DropUntaken() {
  for (int c = 0; c < rows_.num_columns(); ++c) {
    rows_.mutable_column(c)->Truncate(taken_rows());
  }
}

void OpenBatch::TakeRow(const source::Message& m) {
  row_partition_.push_back(m.partition);
  Consume(m);
}

void OpenBatch::TakeRow(const source::Message& m, transform::ChangeOp op) {
  row_op_.push_back(op);
  TakeRow(m);
}

void OpenBatch::Consume(const source::Message& m) {
  if (last_.empty()) {
    opened_ = Clock::now();
  }
  first_.try_emplace(m.partition, m.position);
  last_[m.partition] = m.position;
  last_timestamp_[m.partition] = m.timestamp_us;
}

void OpenBatch::AddDeadLetter(std::string_view pipeline_id, std::string_view partition_key,
                              const source::Message& m, std::string_view error) {
  dead_.mutable_column(0)->As<columnar::BinaryColumn>()->Append(pipeline_id);
  dead_.mutable_column(1)->As<columnar::BinaryColumn>()->Append(partition_key);
  dead_.mutable_column(2)->As<columnar::Int64Column>()->Append(m.position);
  if (m.key.empty()) {
    dead_.mutable_column(3)->AppendNull();
  } else {
    dead_.mutable_column(3)->As<columnar::BinaryColumn>()->Append(m.key);
  }
  dead_.mutable_column(4)->As<columnar::BinaryColumn>()->Append(m.payload);
  dead_.mutable_column(5)->As<columnar::BinaryColumn>()->Append(error);
  dead_.mutable_column(6)->As<columnar::Int64Column>()->Append(WallMicros());
  dead_partition_.push_back(m.partition);
  Consume(m);
}

int64_t OpenBatch::DropPartition(int32_t p) {
  if (last_.count(p) == 0) {
    return 0;
  }
  if (!dead_partition_.empty()) {
    dead_ = dead_.Take(RowsNotOf(dead_partition_, p));
    std::erase(dead_partition_, p);
  }
  std::vector<int64_t> keep = RowsNotOf(row_partition_, p);
  int64_t dropped = rows_.num_rows() - static_cast<int64_t>(keep.size());
  rows_ = rows_.Take(keep);
  if (!row_op_.empty()) {
    std::vector<transform::ChangeOp> ops;
    ops.reserve(keep.size());
    for (int64_t row : keep) {
      ops.push_back(row_op_[static_cast<size_t>(row)]);
    }
    row_op_ = std::move(ops);
  }
  std::erase(row_partition_, p);
  first_.erase(p);
  last_.erase(p);
  last_timestamp_.erase(p);
  return dropped;
}

bool OpenBatch::TriggerFired(const BatchLimits& limits) const {
  if (last_.empty()) {
    return false;
  }
  return rows_.num_rows() >= limits.max_rows || rows_.ByteSize() >= limits.max_bytes ||
         Clock::now() - opened_ >= limits.max_latency;
}

Status OpenBatch::ConformTo(const columnar::SchemaPtr& input, columnar::ConformOptions conform) {
  FERRY_RETURN_IF_ERROR(ConformBatch(&rows_, input, conform));
  spare_ = columnar::RecordBatch();  // its columns are of the old schema
  return Status::OK();
}

std::unique_ptr<SealedBatch> OpenBatch::Seal() {
  auto sealed = std::make_unique<SealedBatch>();
  columnar::SchemaPtr schema = rows_.schema_ptr();
  sealed->rows = std::move(rows_);
  sealed->ops = std::move(row_op_);
  row_op_.clear();
  if (spare_.num_columns() > 0 && spare_.schema_ptr() == schema) {
    rows_ = std::move(spare_);
    spare_ = columnar::RecordBatch();
  } else {
    rows_ = columnar::RecordBatch::MakeEmpty(schema);
  }
  for (const auto& [p, last] : last_) {
    SealedPartition& part = sealed->partitions[p];
    part.first = first_.at(p);
    part.last = last;
    if (auto ts = last_timestamp_.find(p); ts != last_timestamp_.end()) {
      part.last_timestamp_us = ts->second;
    }
  }
  if (keep_dead_) {
    columnar::SchemaPtr dead_schema = dead_.schema_ptr();
    sealed->dead = std::move(dead_);
    dead_ = columnar::RecordBatch::MakeEmpty(dead_schema);
    for (int32_t p : dead_partition_) {
      sealed->partitions.at(p).has_dead = true;
    }
  }
  sealed->gaps = std::move(gaps_);
  sealed->opened = opened_;
  Clear();
  return sealed;
}

void OpenBatch::Recycle(columnar::RecordBatch rows) {
  rows.Clear();
  spare_ = std::move(rows);
}

void OpenBatch::Clear() {
  rows_.Clear();
  row_partition_.clear();
  row_op_.clear();
  first_.clear();
  last_.clear();
  last_timestamp_.clear();
  gaps_.clear();
  if (keep_dead_) {
    dead_.Clear();
  }
  dead_partition_.clear();
}

}  // namespace ferry::pipeline

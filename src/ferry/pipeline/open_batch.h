// OpenBatch: the batch the pipeline thread decodes into (DESIGN.md "A batch", steps 2-3): the
// rows, the source partition of each, the first and last position each partition consumed
// (with or without a row), its dead letters and the ranges the broker skipped. Seal() moves it
// into a SealedBatch for the writer thread and leaves an empty batch of the same schema.
//
//   open.rows()               the decoder appends a row here (maybe part of one, on an error)
//   open.TakeRow(message)     the row is whole: it belongs to the message's partition
//   open.TakeRow(message, op) the same in an upsert pipeline: what the row does to its key
//   open.Consume(message)     the message's position is taken (TakeRow does it too)
//   open.DropUntaken()        a partial row is dropped (the columns back to the taken rows)
//
// Thread-safety: pipeline thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/columnar/column_conform.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/pipeline/batch_committer.h"
#include "ferry/source/source.h"
#include "ferry/transform/change_op.h"

namespace ferry::pipeline {

// The batch triggers (PipelineOptions).
struct BatchLimits {
  int64_t max_rows = 0;
  int64_t max_bytes = 0;
  std::chrono::milliseconds max_latency{0};
};

class OpenBatch {
 public:
  using Clock = std::chrono::steady_clock;

  explicit OpenBatch(columnar::SchemaPtr input)
      : rows_(columnar::RecordBatch::MakeEmpty(std::move(input))) {}

  // Dead letters are kept (kDeadLetterSchema) from now on.
  void KeepDeadLetters(columnar::SchemaPtr dead_schema);
  bool keeps_dead_letters() const { return keep_dead_; }

  columnar::RecordBatch* rows() { return &rows_; }
  const columnar::RecordBatch& rows() const { return rows_; }
  int64_t num_rows() const { return rows_.num_rows(); }
  int64_t byte_size() const { return rows_.ByteSize(); }
  // No message consumed since the batch opened (so no trigger can fire).
  bool empty() const { return last_.empty(); }
  // Rows TakeRow accepted; the columns may hold part of one more.
  int64_t taken_rows() const { return static_cast<int64_t>(row_partition_.size()); }
  void DropUntaken();

  void TakeRow(const source::Message& message);
  // Upsert pipelines: every row is taken with its ChangeOp (SealedBatch::ops).
  void TakeRow(const source::Message& message, transform::ChangeOp op);
  void Consume(const source::Message& message);
  // A bad record for the dead-letter table (KeepDeadLetters), with its error; it consumes the
  // message's position (Consume).
  void AddDeadLetter(std::string_view pipeline_id, std::string_view partition_key,
                     const source::Message& message, std::string_view error);
  void AddGap(source::Gap gap) { gaps_.push_back(std::move(gap)); }

  // A revoked partition's rows and dead letters leave the batch; returns the rows dropped.
  int64_t DropPartition(int32_t partition);
  bool TriggerFired(const BatchLimits& limits) const;
  Clock::time_point opened() const { return opened_; }

  // The rows converted to `input` (earlier rows read added fields as null).
  Status ConformTo(const columnar::SchemaPtr& input, columnar::ConformOptions conform);
  // Moves the batch into a SealedBatch (rows, dead letters, gaps; per partition the first and
  // last positions and whether it has dead letters) and opens a new one on the same schema.
  std::unique_ptr<SealedBatch> Seal();
  // The emptied columns of a batch that came back: the next Seal() opens its batch on them when
  // the schema is still the same (their memory is allocated and touched already, so decoding
  // into them neither moves growing buffers nor faults in fresh pages).
  void Recycle(columnar::RecordBatch rows);
  // Everything dropped (fencing).
  void Clear();

 private:
  columnar::RecordBatch rows_;
  std::vector<int32_t> row_partition_;         // source partition of each row
  std::vector<transform::ChangeOp> row_op_;    // upsert pipelines: each row's change
  std::map<int32_t, int64_t> first_;           // partition -> first position in the batch
  std::map<int32_t, int64_t> last_;            // partition -> last position in the batch
  std::map<int32_t, int64_t> last_timestamp_;  // partition -> timestamp of its last message
  std::vector<source::Gap> gaps_;
  bool keep_dead_ = false;
  columnar::RecordBatch dead_;           // dead letters of the batch
  std::vector<int32_t> dead_partition_;  // source partition of each dead letter
  Clock::time_point opened_;
  columnar::RecordBatch spare_;
};

}  // namespace ferry::pipeline

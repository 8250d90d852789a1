// PartitionBook: what the pipeline thread knows of each source partition it holds: the table's
// position, the newest sealed and delivered positions, the dead-letter table's, and the broker's
// head (lag, and `--until-caught-up`'s goal). Pipeline (pipeline.h) owns one; the positions move
// at the steps its header numbers:
//
//   Add       step 1, an assignment: the positions read from the table;
//   delivered step 2, a message taken into the open batch (Intake sets it);
//   Seal      step 3, a batch sealed: its txns expect the positions the batch before it set;
//   Committed step 3's end, its commit durable: the positions to acknowledge;
//   Remove    step 5, a revocation; Clear, step 4 (fencing: every partition starts over).
//
// Thread-safety: pipeline thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/pipeline/batch_committer.h"
#include "ferry/pipeline/pipeline_metrics.h"
#include "ferry/source/source.h"

namespace ferry::pipeline {

struct PartitionState {
  std::string key;
  std::string app_id;
  std::string dead_app_id;                // the dead-letter table's appId
  std::optional<int64_t> committed;       // the table's position as this pipeline knows it
  std::optional<int64_t> sealed;          // the position of the newest sealed batch (or committed)
  std::optional<int64_t> delivered;       // the highest position taken into a batch
  std::optional<int64_t> caught_up_at;    // until_caught_up: the head when first seen
  std::optional<int64_t> dead_committed;  // the dead-letter table's position
  std::optional<int64_t> dead_sealed;     // ... of the newest sealed batch (or dead_committed)
  int64_t committed_timestamp_us = 0;     // broker timestamp of the last committed message
  int64_t rate_limit_pauses = 0;          // the source's RateLimitPauses() already counted
  // The source read through here with nothing more to deliver (PartitionHead::read_through:
  // Kafka transaction markers, aborted transactions).
  std::optional<int64_t> read_through;
};

class PartitionBook {
 public:
  using Clock = std::chrono::steady_clock;

  PartitionBook(std::string pipeline_id, PipelineMetrics* metrics)
      : id_(std::move(pipeline_id)), metrics_(metrics) {}

  // A partition assigned, with its positions read from the table (sealed and dead_sealed are
  // set from them). The broker's heads are asked for again.
  void Add(int32_t index, PartitionState state);
  void Remove(int32_t index);
  void Clear() { partitions_.clear(); }
  PartitionState* Find(int32_t index);
  bool empty() const { return partitions_.empty(); }
  size_t size() const { return partitions_.size(); }

  // Stamps a sealed batch's partitions with their keys, appIds and the positions their txns
  // expect, and makes the batch's positions the ones the next batch expects.
  void Seal(SealedBatch* batch);
  // A batch's commit is durable: the positions to acknowledge to the source (partitions revoked
  // since are left to their new owner), with the committed-position and lag metrics.
  std::vector<source::CommittedPosition> Committed(const SealedBatch& batch);

  // Asks the source for the broker's heads: lag metrics, the caught-up goal, contact. The
  // source's error (Unavailable: the broker is unreachable) is returned for the caller to report.
  Status UpdateHeads(source::Source* source);
  // With until_caught_up, short of the goal: every 500 ms, as the source's read_through (Kafka
  // transaction markers) may be all that is missing.
  bool HeadsDue(bool until_caught_up, std::chrono::milliseconds interval) const {
    const auto since = Clock::now() - last_heads_;
    return (!heads_known_ && until_caught_up) || since >= interval ||
           (until_caught_up && since >= std::chrono::milliseconds(500) && !CaughtUp());
  }
  // Every partition has been delivered up to the head the broker reported when first seen.
  bool CaughtUp() const;
  // With until_caught_up: how many positions are left to deliver up to those heads, summed over
  // the partitions (an upper bound of the messages left: positions may hold nothing); nullopt
  // while a partition's head is not known yet.
  std::optional<int64_t> Remaining() const;

  // The broker was heard from (an assignment, a message).
  void NoteContact() { last_contact_ = Clock::now(); }
  // Unavailable once `max_wait` (> 0) passed without contact; `last_error` is the last the
  // source reported.
  Status CheckMaxWait(std::chrono::milliseconds max_wait, const std::string& last_error) const;

 private:
  // ferry_lag_messages and ferry_lag_seconds of a partition.
  void SetLag(const PartitionState& state, double messages);

  std::string id_;
  PipelineMetrics* metrics_;
  std::map<int32_t, PartitionState> partitions_;  // by source partition index
  Clock::time_point last_heads_;
  bool heads_known_ = false;
  // The last contact with the broker (an assignment, a head, a message): what max_wait measures.
  Clock::time_point last_contact_ = Clock::now();
};

}  // namespace ferry::pipeline

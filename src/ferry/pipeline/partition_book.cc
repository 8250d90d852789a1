#include "ferry/pipeline/partition_book.h"

#include <algorithm>
#include <utility>

#include "ferry/base/clock.h"

namespace ferry::pipeline {

namespace {

constexpr char kCommittedPosition[] = "ferry_committed_position";
constexpr char kCommittedPositionHelp[] = "Position committed in the table";
constexpr char kHeadPosition[] = "ferry_broker_head_position";
constexpr char kHeadPositionHelp[] = "Last position the broker holds";

}  // namespace

void PartitionBook::Add(int32_t index, PartitionState state) {
  state.sealed = state.committed;
  state.dead_sealed = state.dead_committed;
  if (state.committed) {
    metrics_->Position(kCommittedPosition, kCommittedPositionHelp, state.key)
        ->Set(static_cast<double>(*state.committed));
  }
  partitions_[index] = std::move(state);
  heads_known_ = false;
}

void PartitionBook::Remove(int32_t index) {
  partitions_.erase(index);
}

PartitionState* PartitionBook::Find(int32_t index) {
  auto it = partitions_.find(index);
  return it == partitions_.end() ? nullptr : &it->second;
}

void PartitionBook::Seal(SealedBatch* batch) {
  for (auto& [p, part] : batch->partitions) {
    PartitionState& state = partitions_.at(p);
    part.key = state.key;
    part.app_id = state.app_id;
    part.dead_app_id = state.dead_app_id;
    part.expected = state.sealed;
    state.sealed = part.last;
    if (part.has_dead) {
      part.dead_expected = state.dead_sealed;
      state.dead_sealed = part.last;
    }
  }
}

std::vector<source::CommittedPosition> PartitionBook::Committed(const SealedBatch& batch) {
  std::vector<source::CommittedPosition> positions;
  for (const auto& [p, part] : batch.partitions) {
    metrics_->Position(kCommittedPosition, kCommittedPositionHelp, part.key)
        ->Set(static_cast<double>(part.last));
    auto it = partitions_.find(p);
    if (it == partitions_.end() || it->second.key != part.key) {
      continue;  // revoked since: the new owner reports it
    }
    PartitionState& state = it->second;
    state.committed = part.last;
    if (part.has_dead) {
      state.dead_committed = part.last;
    }
    state.committed_timestamp_us = part.last_timestamp_us;
    positions.push_back({.partition = p, .position = part.last});
    if (state.caught_up_at) {
      // Lag against the last head seen, so it falls with each commit, not only at head refresh;
      // what the source read through past the last delivered message counts once that is in.
      int64_t last = part.last;
      if (state.read_through && state.delivered == state.committed) {
        last = std::max(last, *state.read_through);
      }
      double head = metrics_->Position(kHeadPosition, kHeadPositionHelp, state.key)->value();
      SetLag(state, std::max(0.0, head - static_cast<double>(last)));
    }
  }
  return positions;
}

void PartitionBook::SetLag(const PartitionState& state, double messages) {
  metrics_->Position("ferry_lag_messages", "Head minus committed position", state.key)
      ->Set(messages);
  // In seconds: the age of the last committed message while messages wait behind it (burrow's
  // time lag); 0 when caught up or when the broker gives no timestamps.
  double seconds = 0;
  if (messages > 0 && state.committed_timestamp_us > 0) {
    seconds = std::max(0.0, static_cast<double>(WallMicros() - state.committed_timestamp_us) / 1e6);
  }
  metrics_
      ->Position("ferry_lag_seconds", "Age of the last committed message while lagging", state.key)
      ->Set(seconds);
}

Status PartitionBook::UpdateHeads(source::Source* source) {
  Result<std::vector<source::PartitionHead>> heads = source->Heads();
  last_heads_ = Clock::now();
  if (!heads.ok()) {
    return heads.status();
  }
  bool all_known = true;
  for (auto& [p, state] : partitions_) {
    if (int64_t pauses = source->RateLimitPauses(p); pauses > state.rate_limit_pauses) {
      metrics_
          ->PartitionCounter("ferry_rate_limit_pauses_total",
                             "Times max_rate_per_partition held the partition back", state.key)
          ->Increment(static_cast<double>(pauses - state.rate_limit_pauses));
      state.rate_limit_pauses = pauses;
    }
    const std::string& key = state.key;  // clang 14 cannot capture a structured binding
    auto head = std::find_if(heads->begin(), heads->end(),
                             [&](const source::PartitionHead& h) { return h.key == key; });
    if (head == heads->end()) {
      all_known = all_known && state.caught_up_at.has_value();
      continue;
    }
    if (!head->last_position) {
      if (!head->answered()) {
        // Not answered (a Kafka ListOffsets that timed out, a leader not known yet right after
        // the assignment): unknown, not empty. The next refresh asks again; until then the
        // partition is not caught up (it once counted as empty, and --until-caught-up ended
        // with the partition's last messages unread).
        all_known = all_known && state.caught_up_at.has_value();
        continue;
      }
      // The broker answered and holds nothing for the partition.
      last_contact_ = last_heads_;
      if (!state.caught_up_at) {
        state.caught_up_at = -1;
      }
      continue;
    }
    last_contact_ = last_heads_;
    int64_t last = *head->last_position;
    if (!state.caught_up_at) {
      state.caught_up_at = last;
    }
    metrics_->Position(kHeadPosition, kHeadPositionHelp, state.key)->Set(static_cast<double>(last));
    int64_t committed = state.committed.value_or(head->first_position.value_or(0) - 1);
    if (head->read_through) {
      // Read through positions that hold nothing to deliver (Kafka transaction markers, aborted
      // transactions): they count as delivered, and as committed once everything delivered is.
      state.read_through = std::max(state.read_through.value_or(-1), *head->read_through);
      if (state.committed == state.delivered) {
        committed = std::max(committed, *head->read_through);
      }
    }
    SetLag(state, static_cast<double>(std::max<int64_t>(0, last - committed)));
  }
  heads_known_ = all_known;
  return Status::OK();
}

bool PartitionBook::CaughtUp() const {
  if (partitions_.empty()) {
    return false;
  }
  for (const auto& [p, state] : partitions_) {
    if (!state.caught_up_at || std::max(state.delivered.value_or(-1),
                                        state.read_through.value_or(-1)) < *state.caught_up_at) {
      return false;
    }
  }
  return true;
}

std::optional<int64_t> PartitionBook::Remaining() const {
  if (partitions_.empty()) {
    return std::nullopt;
  }
  int64_t left = 0;
  for (const auto& [p, state] : partitions_) {
    if (!state.caught_up_at) {
      return std::nullopt;
    }
    const int64_t reached = std::max(state.delivered.value_or(-1), state.read_through.value_or(-1));
    // Before its first message a partition new to the table counts from 0: too high, never
    // too low.
    left += std::max<int64_t>(0, *state.caught_up_at - std::max<int64_t>(reached, 0));
  }
  return left;
}

Status PartitionBook::CheckMaxWait(std::chrono::milliseconds max_wait,
                                   const std::string& last_error) const {
  if (max_wait.count() <= 0 || Clock::now() - last_contact_ < max_wait) {
    return Status::OK();
  }
  const auto waited =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - last_contact_).count();
  return Unavailable(
      "pipeline {}: no contact with the broker for {} s (max wait {} ms): {} partition(s) "
      "assigned, broker heads {}; last source error: {}. The run stops without being caught up; "
      "what was read is committed",
      id_, waited, max_wait.count(), partitions_.size(), heads_known_ ? "known" : "not known",
      last_error.empty() ? "none" : last_error);
}

}  // namespace ferry::pipeline

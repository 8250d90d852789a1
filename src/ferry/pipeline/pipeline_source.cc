// The pipeline thread's source side of Pipeline (pipeline.h, steps 1, 2 and 5): starting and
// closing the source, partition assignment and revocation (PartitionListener), the poll, the
// messages waiting for the decoder, the broker's heads and max_wait, and what the journal is told
// of the broker. The batch loop, sealing, outcomes and fencing are in pipeline.cc.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ferry/base/log.h"
#include "ferry/base/retry_unavailable.h"
#include "ferry/pipeline/pipeline.h"

namespace ferry::pipeline {

// ---- Start, close, assignment ----

Status Pipeline::StartSource() {
  // Unreachable (the broker, or the table's store while positions are read): try again, as a
  // poll would, until a stop (the loop then ends with nothing read) or max_wait.
  RetryStop retry{.stopping = [this] { return stop_->stopping() || stop_->abandon(); },
                  .wait = [this](std::chrono::milliseconds backoff) { stop_->WaitFor(backoff); },
                  .on_retry =
                      [this](const Status& st, std::chrono::milliseconds backoff) {
                        if (Status waited = CheckMaxWait(); !waited.ok()) {
                          return st.WithContext("{}", waited.message());
                        }
                        metrics_->unavailable->Increment();
                        last_source_error_ = st.message();
                        SetBrokerReachable(false, st);
                        FERRY_LOG_WARN(
                            "pipeline {}: starting the source: {}; trying again in {} ms",
                            options_.id, st.message(), backoff.count());
                        return Status::OK();
                      }};
  Status st = RetryWhileUnavailable(
      {.initial_backoff = options_.initial_backoff, .max_backoff = options_.max_backoff}, retry,
      [this]() -> Status {
        rate_limited_us_ = 0;
        positions_fresh_ = false;
        book_.Clear();  // an attempt that failed half-way may have assigned some
        FERRY_ASSIGN_OR_RETURN(source_, source_factory_());
        Status started = source_->Start(this);
        if (!started.ok()) {
          source_.reset();
        }
        return started;
      });
  if (st.code() == StatusCode::kUnavailable && source_ == nullptr &&
      (stop_->stopping() || stop_->abandon())) {
    return Status::OK();
  }
  return st;
}

void Pipeline::CloseSource() {
  if (source_ == nullptr) {
    return;
  }
  Status st = source_->Close();
  if (!st.ok()) {
    FERRY_LOG_WARN("pipeline {}: closing the source: {}", options_.id, st.ToString());
  }
  source_.reset();
}

Result<std::optional<int64_t>> Pipeline::OnAssigned(const source::PartitionInfo& partition) {
  book_.NoteContact();
  // The batch in flight may hold the partition: its commit comes first, then the position is
  // read, and the table handle is ours again.
  queue_->WaitIdle();
  PartitionState state{
      .key = partition.key,
      .app_id = options_.id + "/" + partition.key,
      .dead_app_id = (options_.dead_letter_id.empty() ? options_.id : options_.dead_letter_id) +
                     "/" + partition.key};
  // Another writer may have moved the partition since our snapshot: read the log first (once
  // for all the partitions of one assignment).
  const bool refresh = !positions_fresh_;
  Result<std::optional<int64_t>> committed = committer_->ReadPosition(state.app_id, refresh);
  if (!committed.ok()) {
    return committed.status().WithContext("pipeline {}: reading positions for {}", options_.id,
                                          partition.key);
  }
  metrics_->version->Set(static_cast<double>(committer_->snapshot().version()));
  state.committed = *committed;
  state.delivered = state.committed;
  if (committer_->has_dead_letter_table()) {
    Result<std::optional<int64_t>> dead =
        committer_->ReadDeadLetterPosition(state.dead_app_id, refresh);
    if (!dead.ok()) {
      return dead.status().WithContext("pipeline {}: reading the dead-letter position of {}",
                                       options_.id, partition.key);
    }
    state.dead_committed = *dead;
  }
  positions_fresh_ = true;
  FERRY_LOG_INFO("pipeline {}: {} assigned, {}", options_.id, partition.key,
                 state.committed ? fmt::format("resuming after position {}", *state.committed)
                                 : std::string("new to the table (start policy applies)"));
  std::optional<int64_t> position = state.committed;
  book_.Add(partition.index, std::move(state));
  return position;
}

void Pipeline::OnRevoked(const source::PartitionInfo& partition) {
  // A partition given up may move on in another writer's hands before it comes back, even
  // within one poll: the next assignment reads the log again.
  positions_fresh_ = false;
  // A sealed batch holding the partition's rows is committed before the partition is given up
  // (as the serial loop committed it before polling again).
  queue_->WaitIdle();
  if (book_.Find(partition.index) == nullptr) {
    return;
  }
  // Messages of it waiting for the decoder are the new owner's.
  polled_.erase(
      std::remove_if(polled_.begin() + static_cast<std::ptrdiff_t>(next_polled_), polled_.end(),
                     [&](const source::Message& m) { return m.partition == partition.index; }),
      polled_.end());
  if (!open_.empty()) {
    int64_t dropped = open_.DropPartition(partition.index);
    FERRY_LOG_INFO("pipeline {}: {} revoked; {} uncommitted rows of it dropped", options_.id,
                   partition.key, dropped);
  } else {
    FERRY_LOG_INFO("pipeline {}: {} revoked", options_.id, partition.key);
  }
  book_.Remove(partition.index);
}

// ---- The broker: heads, max_wait, reachability ----

void Pipeline::UpdateHeads() {
  Status st = book_.UpdateHeads(source_.get());
  if (!st.ok()) {
    FERRY_LOG_DEBUG("pipeline {}: broker heads: {}", options_.id, st.ToString());
    if (st.code() == StatusCode::kUnavailable) {
      SetBrokerReachable(false, st);
    }
    return;
  }
  SetBrokerReachable(true, Status::OK());
}

Status Pipeline::CheckMaxWait() const {
  if (!options_.until_caught_up || options_.max_wait.count() <= 0) {
    return Status::OK();
  }
  if (decode_backoff_.count() == 0) {
    return book_.CheckMaxWait(options_.max_wait, last_source_error_);
  }
  // The broker is not asked while messages wait for the decoder: the registry is what waits.
  if (Clock::now() - decode_waiting_since_ < options_.max_wait) {
    return Status::OK();
  }
  return Unavailable(
      "pipeline {}: the schema registry did not answer for {} s (max wait {} ms). The run stops "
      "without being caught up; what was read is committed",
      options_.id,
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - decode_waiting_since_)
          .count(),
      options_.max_wait.count());
}

void Pipeline::SetBrokerReachable(bool reachable, const Status& why) {
  if (reachable != broker_unreachable_) {
    return;  // no change: the journal is told only of transitions
  }
  broker_unreachable_ = !reachable;
  metrics_->journal->SetState(
      metrics_->journal_key,
      reachable ? metrics::PipelineState::kRunning : metrics::PipelineState::kWaitingForBroker,
      reachable ? std::string_view() : why.message());
}

// ---- The poll, and messages waiting for the decoder ----

std::chrono::milliseconds Pipeline::PollTimeout() const {
  std::chrono::milliseconds timeout = options_.poll_timeout;
  if (!open_.empty()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        limits_.max_latency - (Clock::now() - open_.opened()));
    timeout = std::clamp(left, std::chrono::milliseconds(0), timeout);
  }
  return timeout;
}

Status Pipeline::PollSource() {
  size_t room = static_cast<size_t>(std::max<int64_t>(1, options_.max_rows - open_.num_rows()));
  positions_fresh_ = false;
  polled_.clear();
  next_polled_ = 0;
  Status st = source_->Poll(room, PollTimeout(), &polled_);
  if (!st.ok() && st.code() != StatusCode::kUnavailable) {
    return st.WithContext("pipeline {}", options_.id);
  }
  if (int64_t limited = source_->RateLimitedMicros(); limited > rate_limited_us_) {
    metrics_->rate_limited->Increment(static_cast<double>(limited - rate_limited_us_) / 1e6);
    rate_limited_us_ = limited;
  }
  if (!st.ok()) {
    metrics_->unavailable->Increment();
    FERRY_LOG_DEBUG("pipeline {}: {}", options_.id, st.ToString());
    last_source_error_ = st.message();
    SetBrokerReachable(false, st);
  }
  if (!polled_.empty()) {
    book_.NoteContact();
    SetBrokerReachable(true, st);
  }
  return Status::OK();
}

Status Pipeline::TakePolled() {
  if (next_polled_ < polled_.size() && Clock::now() < retry_decode_at_) {
    return Status::OK();  // still backing off
  }
  for (; next_polled_ < polled_.size(); ++next_polled_) {
    const source::Message& m = polled_[next_polled_];
    Status st = intake_.Take(m, book_.Find(m.partition));
    if (st.code() == StatusCode::kResourceExhausted) {
      // The batch holds its limit of new columns: commit it, and the message opens the next.
      int64_t fences = fences_;
      st = SubmitBatch();
      if (st.ok() && fences != fences_) {
        return Status::OK();  // fenced: the partitions start over from the table, polled_ too
      }
      if (st.ok()) {
        st = intake_.Take(m, book_.Find(m.partition));
      }
    }
    if (st.code() == StatusCode::kUnavailable) {
      WaitForDecoder(st);
      return Status::OK();
    }
    FERRY_RETURN_IF_ERROR(st);
  }
  if (decode_backoff_.count() > 0) {
    FERRY_LOG_INFO("pipeline {}: the schema registry answers again; decoding resumed", options_.id);
    decode_backoff_ = std::chrono::milliseconds(0);
    metrics_->journal->SetState(metrics_->journal_key, metrics::PipelineState::kRunning);
  }
  return Status::OK();
}

void Pipeline::WaitForDecoder(const Status& why) {
  metrics_->decode_unavailable->Increment();
  if (decode_backoff_.count() == 0) {
    decode_waiting_since_ = Clock::now();
    decode_backoff_ = options_.initial_backoff;
    metrics_->journal->SetState(metrics_->journal_key, metrics::PipelineState::kWaitingForRegistry,
                                why.message());
  } else {
    decode_backoff_ = std::min(decode_backoff_ * 2, options_.max_backoff);
  }
  retry_decode_at_ = Clock::now() + decode_backoff_;
  // `why` names the pipeline and the message (Intake::Take).
  FERRY_LOG_WARN(
      "{}; {} message(s) of the last poll wait, tried again in {} ms (nothing is skipped)",
      why.message(), polled_.size() - next_polled_, decode_backoff_.count());
}

}  // namespace ferry::pipeline

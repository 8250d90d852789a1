#include "ferry/metrics/journal.h"

#include <utility>

#include "ferry/base/clock.h"

namespace ferry::metrics {
namespace {

template <typename T>
void PushBounded(std::deque<T>* list, T value, size_t limit) {
  list->push_back(std::move(value));
  while (list->size() > limit) {
    list->pop_front();
  }
}

// Cut at `limit` bytes, on a UTF-8 character boundary.
std::string Truncated(std::string_view text, size_t limit) {
  if (text.size() <= limit) {
    return std::string(text);
  }
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  return std::string(text.substr(0, end)) + "...";
}

}  // namespace

std::string_view PipelineStateName(PipelineState state) {
  switch (state) {
    case PipelineState::kStarting:
      return "starting";
    case PipelineState::kRunning:
      return "running";
    case PipelineState::kWaitingForBroker:
      return "waiting_for_broker";
    case PipelineState::kWaitingForRegistry:
      return "waiting_for_registry";
    case PipelineState::kRetrying:
      return "retrying";
    case PipelineState::kFailed:
      return "failed";
    case PipelineState::kStopped:
      return "stopped";
  }
  return "unknown";
}

Journal::Journal(std::function<int64_t()> now_ms)
    : now_ms_(now_ms ? std::move(now_ms) : std::function<int64_t()>(WallMillis)) {}

void Journal::set_redactor(std::function<std::string(std::string)> redact) {
  std::lock_guard lock(mu_);
  redact_ = std::move(redact);
}

std::string Journal::Clean(std::string_view text, size_t limit) const {
  return Truncated(redact_ ? redact_(std::string(text)) : text, limit);
}

PipelineRecord& Journal::At(const JournalKey& key) {
  auto it = records_.find(key);
  if (it == records_.end()) {
    it = records_.emplace(key, PipelineRecord{}).first;
    it->second.state_since_ms = now_ms_();
  }
  return it->second;
}

void Journal::SetState(const JournalKey& key, PipelineState state, std::string_view error) {
  int64_t now = now_ms_();
  std::lock_guard lock(mu_);
  PipelineRecord& r = At(key);
  if (r.state == PipelineState::kFailed && state != PipelineState::kFailed) {
    return;  // the failure stays what the page shows
  }
  if (r.state != state) {
    r.state = state;
    r.state_since_ms = now;
  }
  if (!error.empty()) {
    r.error = Clean(error, kMaxErrorBytes);
    r.error_ms = now;
  }
}

void Journal::RecordCommit(const JournalKey& key, CommitRecord commit) {
  std::lock_guard lock(mu_);
  PipelineRecord& r = At(key);
  if (r.state == PipelineState::kRetrying) {
    r.state = PipelineState::kRunning;
    r.state_since_ms = commit.time_ms;
  }
  PushBounded(&r.commits, std::move(commit), kMaxCommits);
}

void Journal::RecordBadRecord(const JournalKey& key, BadRecordSample sample,
                              std::string_view payload) {
  std::lock_guard lock(mu_);
  if (keep_payloads()) {
    sample.payload = Clean(payload, kMaxPayloadBytes);
  } else {
    sample.payload.reset();
  }
  sample.error = Clean(sample.error, kMaxErrorBytes);
  PushBounded(&At(key).bad_records, std::move(sample), kMaxBadRecords);
}

void Journal::RecordFence(const JournalKey& key, FenceRecord fence) {
  std::lock_guard lock(mu_);
  fence.reason = Clean(fence.reason, kMaxErrorBytes);
  PushBounded(&At(key).fences, std::move(fence), kMaxFences);
}

void Journal::RecordMaintenance(const JournalKey& key, MaintenanceRecord run) {
  std::lock_guard lock(mu_);
  run.detail = Clean(run.detail, kMaxErrorBytes);
  PushBounded(&At(key).maintenance, std::move(run), kMaxMaintenance);
}

void Journal::RecordDroppedField(const JournalKey& key, DroppedFieldRecord dropped) {
  std::lock_guard lock(mu_);
  dropped.writer = Clean(dropped.writer, kMaxErrorBytes);
  dropped.field = Clean(dropped.field, kMaxErrorBytes);
  PushBounded(&At(key).dropped_fields, std::move(dropped), kMaxDroppedFields);
}

void Journal::SetTable(const JournalKey& key, const TableRecord& table) {
  std::lock_guard lock(mu_);
  PipelineRecord& r = At(key);
  TableRecord next = table;
  if (r.table && r.table->checkpoint_version) {
    // A snapshot may not know of the checkpoint written after its commit: keep the newest, and
    // the time this process wrote it.
    const std::optional<int64_t>& old = r.table->checkpoint_version;
    if (!next.checkpoint_version || *next.checkpoint_version < *old) {
      next.checkpoint_version = old;
      next.checkpoint_ms = r.table->checkpoint_ms;
    } else if (*next.checkpoint_version == *old && !next.checkpoint_ms) {
      next.checkpoint_ms = r.table->checkpoint_ms;
    }
  }
  r.table = next;
}

void Journal::SetLeases(const JournalKey& key, std::vector<LeaseRecord> leases) {
  int64_t now = now_ms_();
  std::lock_guard lock(mu_);
  PipelineRecord& r = At(key);
  r.leases = std::move(leases);
  r.leases_ms = now;
}

std::map<JournalKey, PipelineRecord> Journal::Read() const {
  std::lock_guard lock(mu_);
  return records_;
}

}  // namespace ferry::metrics

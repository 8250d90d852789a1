#include "ferry/testing/fake_source.h"

#include <fmt/format.h>

#include <thread>

#include "ferry/base/clock.h"

namespace ferry::testing {

FakeSource::FakeSource(Options options) : options_(std::move(options)) {
  size_t slash = options_.prefix.rfind('/');
  topic_ = slash == std::string::npos ? options_.prefix : options_.prefix.substr(slash + 1);
  for (int i = 0; i < options_.partitions; i++) {
    Partition p;
    p.info.index = i;
    p.info.key = fmt::format("{}/{}", options_.prefix, i);
    partitions_.push_back(std::move(p));
  }
}

void FakeSource::Produce(int partition, std::string payload, std::string key) {
  std::lock_guard lock(mu_);
  partitions_[static_cast<size_t>(partition)].messages.push_back(
      StoredMessage{std::move(payload), std::move(key), WallMicros()});
}

void FakeSource::Revoke(int partition) {
  std::lock_guard lock(mu_);
  events_.push_back(Event{EventKind::kRevoke, partition, 0});
}

void FakeSource::Assign(int partition) {
  std::lock_guard lock(mu_);
  events_.push_back(Event{EventKind::kAssign, partition, 0});
}

void FakeSource::Redeliver(int partition, int64_t position) {
  std::lock_guard lock(mu_);
  events_.push_back(Event{EventKind::kRedeliver, partition, position});
}

void FakeSource::FailNextPoll(Status status) {
  std::lock_guard lock(mu_);
  fail_next_ = std::move(status);
}

std::vector<source::CommittedPosition> FakeSource::acknowledged() const {
  std::lock_guard lock(mu_);
  return acknowledged_;
}

bool FakeSource::events_pending() const {
  std::lock_guard lock(mu_);
  return !events_.empty();
}

int64_t FakeSource::produced(int partition) const {
  std::lock_guard lock(mu_);
  return static_cast<int64_t>(partitions_[static_cast<size_t>(partition)].messages.size());
}

bool FakeSource::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

Status FakeSource::Start(source::PartitionListener* listener) {
  std::lock_guard lock(mu_);
  listener_ = listener;
  if (options_.assign_all_at_start) {
    for (int i = 0; i < options_.partitions; i++) {
      events_.insert(events_.begin() + i, Event{EventKind::kAssign, i, 0});
    }
  }
  return Status::OK();
}

Status FakeSource::ApplyEventsLocked() {
  std::vector<Event> events;
  events.swap(events_);
  for (const Event& e : events) {
    Partition& p = partitions_[static_cast<size_t>(e.partition)];
    switch (e.kind) {
      case EventKind::kAssign: {
        Result<std::optional<int64_t>> pos = listener_->OnAssigned(p.info);
        if (!pos.ok()) {
          return pos.status();
        }
        p.assigned = true;
        p.next = pos->has_value() ? **pos + 1 : options_.first_position;
        break;
      }
      case EventKind::kRevoke:
        if (p.assigned) {
          listener_->OnRevoked(p.info);
          p.assigned = false;
        }
        break;
      case EventKind::kRedeliver:
        p.next = e.position;
        break;
    }
  }
  return Status::OK();
}

Status FakeSource::Poll(size_t max_messages, std::chrono::milliseconds timeout,
                        std::vector<source::Message>* out) {
  out->clear();
  delivered_.clear();
  int64_t deadline = MonotonicMicros() + timeout.count() * 1000;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (closed_) {
        return Internal("FakeSource: Poll after Close");
      }
      if (fail_next_) {
        Status st = *fail_next_;
        fail_next_.reset();
        return st;
      }
      FERRY_RETURN_IF_ERROR(ApplyEventsLocked());
      // Round-robin over assigned partitions, one message at a time, so batches interleave.
      std::vector<std::pair<int, int64_t>> picks;
      bool progress = true;
      std::map<int, int64_t> next;
      for (const Partition& p : partitions_) {
        next[p.info.index] = p.next;
      }
      while (picks.size() < max_messages && progress) {
        progress = false;
        for (size_t k = 0; k < partitions_.size() && picks.size() < max_messages; k++) {
          const Partition& p = partitions_[(round_robin_ + k) % partitions_.size()];
          int64_t& n = next[p.info.index];
          int64_t index = n - options_.first_position;
          if (p.assigned && index >= 0 && index < static_cast<int64_t>(p.messages.size())) {
            picks.emplace_back(p.info.index, n);
            n++;
            progress = true;
          }
        }
      }
      round_robin_++;
      delivered_.reserve(picks.size());
      for (const auto& [partition, position] : picks) {
        Partition& p = partitions_[static_cast<size_t>(partition)];
        delivered_.push_back(p.messages[static_cast<size_t>(position - options_.first_position)]);
        p.next = position + 1;
      }
      for (size_t i = 0; i < picks.size(); i++) {
        const Partition& p = partitions_[static_cast<size_t>(picks[i].first)];
        source::Message m;
        m.partition = p.info.index;
        m.position = picks[i].second;
        m.payload = delivered_[i].payload;
        m.key = delivered_[i].key;
        m.topic = topic_;
        m.kafka_partition = p.info.index;
        m.timestamp_us = delivered_[i].timestamp_us;
        out->push_back(m);
      }
      if (!out->empty()) {
        return Status::OK();
      }
    }
    if (MonotonicMicros() >= deadline) {
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void FakeSource::Acknowledge(std::span<const source::CommittedPosition> positions) {
  std::lock_guard lock(mu_);
  acknowledged_.insert(acknowledged_.end(), positions.begin(), positions.end());
}

Result<std::vector<source::PartitionHead>> FakeSource::Heads() {
  std::lock_guard lock(mu_);
  std::vector<source::PartitionHead> heads;
  for (const Partition& p : partitions_) {
    if (!p.assigned) {
      continue;
    }
    source::PartitionHead h;
    h.key = p.info.key;
    h.first_position = options_.first_position;
    if (!p.messages.empty()) {
      h.last_position = options_.first_position + static_cast<int64_t>(p.messages.size()) - 1;
    }
    heads.push_back(std::move(h));
  }
  return heads;
}

Status FakeSource::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  return Status::OK();
}

}  // namespace ferry::testing

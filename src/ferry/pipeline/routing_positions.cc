#include "ferry/pipeline/routing_positions.h"

#include <fmt/format.h>

#include <algorithm>

#include "ferry/base/check.h"

namespace ferry::pipeline {

void RoutingPositions::Reset(int32_t partition, std::optional<int64_t> floor) {
  Forget(partition);
  std::lock_guard lock(mu_);
  partitions_[partition].highest = floor;
}

void RoutingPositions::Forget(int32_t partition) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) {
    return;
  }
  it->second.log.ForEachWhile([this](const Entry& e) {
    if (!e.done) {
      --ByRoute(&per_route_, e.route);
    }
    return true;
  });
  partitions_.erase(it);
  NotifyLocked();
}

void RoutingPositions::Done(Partition* p, uint64_t index) {
  Entry& e = p->log[index - p->base];
  if (!e.done) {
    e.done = true;
    --p->count;
    --ByRoute(&per_route_, e.route);
  }
}

void RoutingPositions::Trim(Partition* p) {
  while (!p->log.empty() && p->log.front().done) {
    p->low_timestamp_us = p->log.front().timestamp_us;
    p->log.pop_front();
    ++p->base;
  }
}

void RoutingPositions::Take(int32_t partition, int64_t position, int route, int64_t timestamp_us) {
  std::lock_guard lock(mu_);
  TakeLocked(&partitions_[partition], partition, position, route, timestamp_us);
}

void RoutingPositions::Take(std::span<const Taken> taken) {
  std::lock_guard lock(mu_);
  Partition* p = nullptr;
  int32_t at = -1;
  for (const Taken& t : taken) {
    if (p == nullptr || t.partition != at) {  // a poll holds runs of one partition
      p = &partitions_[t.partition];
      at = t.partition;
    }
    TakeLocked(p, t.partition, t.position, t.route, t.timestamp_us);
  }
}

void RoutingPositions::TakeLocked(Partition* p, int32_t partition, int64_t position, int route,
                                  int64_t timestamp_us) {
  // The router takes a partition's messages in position order, once each (it drops what it
  // polled already); a message out of order would break the log's order, so it is refused
  // loudly rather than lost from the book.
  FERRY_CHECK_MSG(p->log.empty() || position > p->log.back().position,
                  fmt::format("routing positions: partition {} took {} after {}", partition,
                              position, p->log.back().position));
  p->log.push_back(
      {.position = position, .timestamp_us = timestamp_us, .route = route, .done = false});
  ByRoute(&p->owned, route).push_back(p->base + p->log.size() - 1);
  ++p->count;
  ++ByRoute(&per_route_, route);
  p->highest = std::max(p->highest.value_or(position), position);
}

std::optional<int64_t> RoutingPositions::Seal(int32_t partition, int route, int64_t sealed) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) {
    return std::nullopt;  // revoked since: the batch will not be acknowledged to us
  }
  Partition& p = it->second;
  std::optional<int64_t> low;
  p.log.ForEachWhile([&](const Entry& e) {
    if (e.done || (e.route == route && e.position <= sealed)) {
      return true;  // durable, or in this batch or in an earlier one of the same table
    }
    low = e.position - 1;
    return false;
  });
  if (!p.highest) {
    return std::nullopt;  // nothing polled since the assignment, and no floor
  }
  int64_t l = std::min(low ? std::min(*low, sealed) : sealed, *p.highest);
  if (l < 0) {
    return std::nullopt;
  }
  ByRoute(&p.seals, route).push_back({.sealed = sealed, .low = l});
  return l;
}

void RoutingPositions::Committed(int32_t partition, int route, int64_t position) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) {
    return;
  }
  Partition& p = it->second;
  Ring<uint64_t>& owned = ByRoute(&p.owned, route);
  while (!owned.empty()) {
    const uint64_t index = owned.front();
    if (index >= p.base && p.log[index - p.base].position > position) {
      break;
    }
    if (index >= p.base) {
      Done(&p, index);
    }
    owned.pop_front();
  }
  Trim(&p);
  NotifyLocked();
  Ring<PendingSeal>& seals = ByRoute(&p.seals, route);
  while (!seals.empty() && seals.front().sealed <= position) {
    p.durable = std::max(p.durable.value_or(seals.front().low), seals.front().low);
    seals.pop_front();
  }
}

void RoutingPositions::Skipped(int32_t partition, int route, int64_t position) {
  std::lock_guard lock(mu_);
  ++skipped_;
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) {
    return;
  }
  Partition& p = it->second;
  Ring<uint64_t>& owned = ByRoute(&p.owned, route);
  // Skips come in order: the message is at the front of its route's queue, after any done.
  for (size_t i = 0; i < owned.size(); ++i) {
    const uint64_t index = owned[i];
    if (index < p.base || p.log[index - p.base].done) {
      continue;
    }
    const int64_t at = p.log[index - p.base].position;
    if (at == position) {
      Done(&p, index);
    }
    if (at >= position) {
      break;
    }
  }
  while (!owned.empty() && (owned.front() < p.base || p.log[owned.front() - p.base].done)) {
    owned.pop_front();
  }
  Trim(&p);
  NotifyLocked();
}

std::optional<int64_t> RoutingPositions::Durable(int32_t partition) const {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  return it == partitions_.end() ? std::nullopt : it->second.durable;
}

std::map<int32_t, int64_t> RoutingPositions::LowTimestamps() const {
  std::lock_guard lock(mu_);
  std::map<int32_t, int64_t> out;
  for (const auto& [index, p] : partitions_) {
    if (p.low_timestamp_us) {
      out[index] = *p.low_timestamp_us;
    }
  }
  return out;
}

std::map<int32_t, int64_t> RoutingPositions::DurableAll() const {
  std::lock_guard lock(mu_);
  std::map<int32_t, int64_t> out;
  for (const auto& [index, p] : partitions_) {
    if (p.durable) {
      out[index] = *p.durable;
    }
  }
  return out;
}

std::map<int32_t, int64_t> RoutingPositions::LowNow() const {
  std::lock_guard lock(mu_);
  std::map<int32_t, int64_t> out;
  for (const auto& [index, p] : partitions_) {
    std::optional<int64_t> low = p.highest;
    p.log.ForEachWhile([&low](const Entry& e) {
      if (!e.done) {
        low = e.position - 1;
      }
      return e.done;
    });
    if (p.durable && (!low || *p.durable > *low)) {
      low = p.durable;
    }
    if (low && *low >= 0) {
      out[index] = *low;
    }
  }
  return out;
}

int64_t RoutingPositions::Outstanding(int route) const {
  std::lock_guard lock(mu_);
  return route >= 0 && static_cast<size_t>(route) < per_route_.size()
             ? per_route_[static_cast<size_t>(route)]
             : 0;
}

int64_t RoutingPositions::Outstanding() const {
  std::lock_guard lock(mu_);
  return OutstandingLocked();
}

void RoutingPositions::WaitWhileOutstanding(int64_t outstanding,
                                            std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  ++waiters_;
  changed_.wait_for(lock, timeout, [&] { return OutstandingLocked() != outstanding; });
  --waiters_;
}

int64_t RoutingPositions::OutstandingLocked() const {
  int64_t n = 0;
  for (const auto& [index, p] : partitions_) {
    n += p.count;
  }
  return n;
}

std::map<int32_t, int64_t> RoutingPositions::HighestWhenIdle() const {
  std::lock_guard lock(mu_);
  std::map<int32_t, int64_t> out;
  for (const auto& [index, p] : partitions_) {
    if (p.count > 0) {
      return {};
    }
    if (p.highest) {
      out[index] = *p.highest;
    }
  }
  return out;
}

}  // namespace ferry::pipeline

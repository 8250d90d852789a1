#include "ferry/pipeline/routing_positions.h"

#include <algorithm>

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
  for (const auto& [position, route] : it->second.outstanding) {
    --per_route_[route];
  }
  partitions_.erase(it);
}

void RoutingPositions::Take(int32_t partition, int64_t position, int route) {
  std::lock_guard lock(mu_);
  Partition& p = partitions_[partition];
  if (p.outstanding.emplace(position, route).second) {
    ++per_route_[route];
  }
  p.highest = std::max(p.highest.value_or(position), position);
}

std::optional<int64_t> RoutingPositions::Seal(int32_t partition, int route, int64_t sealed) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) {
    return std::nullopt;  // revoked since: the batch will not be acknowledged to us
  }
  Partition& p = it->second;
  std::optional<int64_t> low;
  for (const auto& [position, owner] : p.outstanding) {
    if (owner == route && position <= sealed) {
      continue;  // in this batch or in an earlier one of the same table, committed before it
    }
    low = position - 1;
    break;
  }
  if (!p.highest) {
    return std::nullopt;  // nothing polled since the assignment, and no floor
  }
  int64_t l = std::min(low ? std::min(*low, sealed) : sealed, *p.highest);
  if (l < 0) {
    return std::nullopt;
  }
  p.seals[route].push_back({.sealed = sealed, .low = l});
  return l;
}

void RoutingPositions::Committed(int32_t partition, int route, int64_t position) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) {
    return;
  }
  Partition& p = it->second;
  for (auto o = p.outstanding.begin(); o != p.outstanding.end() && o->first <= position;) {
    if (o->second == route) {
      --per_route_[route];
      o = p.outstanding.erase(o);
    } else {
      ++o;
    }
  }
  std::deque<PendingSeal>& seals = p.seals[route];
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
  auto o = it->second.outstanding.find(position);
  if (o != it->second.outstanding.end() && o->second == route) {
    --per_route_[route];
    it->second.outstanding.erase(o);
  }
}

std::optional<int64_t> RoutingPositions::Durable(int32_t partition) const {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  return it == partitions_.end() ? std::nullopt : it->second.durable;
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
    std::optional<int64_t> low = p.outstanding.empty()
                                     ? p.highest
                                     : std::optional<int64_t>(p.outstanding.begin()->first - 1);
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
  auto it = per_route_.find(route);
  return it == per_route_.end() ? 0 : it->second;
}

int64_t RoutingPositions::Outstanding() const {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  for (const auto& [index, p] : partitions_) {
    n += static_cast<int64_t>(p.outstanding.size());
  }
  return n;
}

std::map<int32_t, int64_t> RoutingPositions::HighestWhenIdle() const {
  std::lock_guard lock(mu_);
  std::map<int32_t, int64_t> out;
  for (const auto& [index, p] : partitions_) {
    if (!p.outstanding.empty()) {
      return {};
    }
    if (p.highest) {
      out[index] = *p.highest;
    }
  }
  return out;
}

}  // namespace ferry::pipeline

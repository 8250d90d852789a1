#include "ferry/pipeline/routed_tables.h"

#include "ferry/base/log.h"

namespace ferry::pipeline {

RoutedTables::RoutedTables(Options options, PipelineMaker make_pipeline, RouterMetrics* metrics)
    : options_(std::move(options)), make_pipeline_(std::move(make_pipeline)), metrics_(metrics) {}

RoutedTables::~RoutedTables() {
  Stop(/*drain=*/false);
}

int RoutedTables::RouteId(const std::string& table) {
  auto [it, added] = route_ids_.emplace(table, static_cast<int>(route_ids_.size()));
  return it->second;
}

Result<RoutedTables::Inner*> RoutedTables::Open(
    const std::string& table, const std::map<int32_t, source::PartitionInfo>& assigned,
    bool* opened) {
  *opened = false;
  auto it = inners_.find(table);
  if (it != inners_.end()) {
    it->second->last_used = ++use_clock_;
    return it->second.get();
  }
  if (route_ids_.count(table) == 0 && route_ids_.size() >= options_.max_tables) {
    return ResourceExhausted(
        "pipeline {}: routing to table {} would make {} tables, more than routing.max_tables = "
        "{}",
        options_.id, table, route_ids_.size() + 1, options_.max_tables);
  }
  auto inner = std::make_unique<Inner>();
  inner->table = table;
  inner->route = RouteId(table);
  inner->queue = std::make_shared<RouteQueue>(options_.queue_messages);
  inner->last_used = ++use_clock_;
  Result<std::unique_ptr<Pipeline>> pipeline = make_pipeline_(table, inner->route, inner->queue);
  if (!pipeline.ok()) {
    return pipeline.status().WithContext("pipeline {}: opening routed table {}", options_.id,
                                         table);
  }
  inner->pipeline = std::move(*pipeline);
  if (metrics_ != nullptr) {
    inner->queued = metrics_->QueueGauge(table);
  }
  for (const auto& [index, info] : assigned) {
    inner->queue->PushEvent({.kind = RouteItem::Kind::kAssign, .partition = info});
  }
  Inner* raw = inner.get();
  raw->thread = std::thread([raw] {
    raw->result = raw->pipeline->Run(&raw->stop);
    raw->done = true;
  });
  FERRY_LOG_INFO("pipeline {}: routing to table {} ({} open)", options_.id, table,
                 inners_.size() + 1);
  inners_.emplace(table, std::move(inner));
  *opened = true;
  return raw;
}

Status RoutedTables::Failure() const {
  for (const auto& [table, inner] : inners_) {
    if (inner->done) {
      Status st = inner->result;
      if (st.ok()) {
        st = Internal("the inner pipeline of table {} stopped on its own", table);
      }
      return st.WithContext("pipeline {}: routed table {}", options_.id, table);
    }
  }
  return Status::OK();
}

std::vector<std::pair<std::string, Status>> RoutedTables::Stop(bool drain) {
  for (auto& [table, inner] : inners_) {
    if (drain) {
      inner->stop.RequestDrain(options_.drain_timeout);
    } else {
      inner->stop.RequestAbort();
    }
    inner->queue->Wake();  // a pipeline waiting for messages sees the stop now
  }
  std::vector<std::pair<std::string, Status>> results;
  for (auto& [table, inner] : inners_) {
    if (inner->thread.joinable()) {
      inner->thread.join();
    }
    results.emplace_back(table, inner->result);
    if (inner->queued != nullptr) {
      inner->queued->Set(0);
    }
  }
  inners_.clear();
  if (metrics_ != nullptr) {
    metrics_->SetTablesOpen(0);
  }
  return results;
}

void RoutedTables::EvictIdle(const std::function<bool(const Inner&)>& busy) {
  while (inners_.size() > options_.max_open_tables) {
    Inner* oldest = nullptr;
    for (auto& [table, inner] : inners_) {
      if (inner->queue->messages() == 0 && !busy(*inner) &&
          (oldest == nullptr || inner->last_used < oldest->last_used)) {
        oldest = inner.get();
      }
    }
    if (oldest == nullptr) {
      return;  // every open table has messages on the way: the limit waits for their commits
    }
    oldest->stop.RequestDrain(options_.drain_timeout);
    oldest->thread.join();
    if (!oldest->result.ok()) {
      FERRY_LOG_WARN("pipeline {}: closing idle table {}: {}", options_.id, oldest->table,
                     oldest->result.ToString());
    }
    FERRY_LOG_INFO("pipeline {}: closed idle table {} (routing.max_open_tables = {})", options_.id,
                   oldest->table, options_.max_open_tables);
    if (oldest->queued != nullptr) {
      oldest->queued->Set(0);
    }
    inners_.erase(oldest->table);
  }
}

void RoutedTables::UpdateQueueGauges() {
  for (auto& [table, inner] : inners_) {
    if (inner->queued != nullptr) {
      inner->queued->Set(static_cast<double>(inner->queue->messages()));
    }
  }
}

}  // namespace ferry::pipeline

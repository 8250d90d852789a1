#include "ferry/pipeline/router_metrics.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "ferry/base/clock.h"

namespace ferry::pipeline {

RouterMetrics::RouterMetrics(metrics::Registry* registry, std::string pipeline,
                             std::chrono::milliseconds heads_interval)
    : registry_(registry), pipeline_(std::move(pipeline)), heads_interval_(heads_interval) {
  const metrics::Labels l = {{"pipeline", pipeline_}};
  up_ = registry_->GetGauge("ferry_pipeline_up", "1 while the pipeline runs", l);
  tables_open_ = registry_->GetGauge("ferry_routing_tables_open",
                                     "Routed tables with an inner pipeline open now", l);
  tables_known_ = registry_->GetGauge(
      "ferry_routing_tables_known",
      "Tables the routed pipeline knows: static routes, fallback, and every table routed to", l);
  rereads_ = registry_->GetCounter("ferry_routing_rereads_total",
                                   "Messages read again after a restart that their table held "
                                   "already (dropped by the table)",
                                   l);
  restarts_ = registry_->GetCounter("ferry_routing_restarts_total",
                                    "Restarts of every routed table after one was fenced", l);
}

metrics::Gauge* RouterMetrics::QueueGauge(const std::string& table) {
  return registry_->GetGauge("ferry_routing_queue_messages",
                             "Messages waiting in a routed table's queue",
                             {{"pipeline", pipeline_}, {"table", table}});
}

const RouterMetrics::PartitionGauges& RouterMetrics::Partition(const std::string& key) {
  auto it = partitions_.find(key);
  if (it == partitions_.end()) {
    const metrics::Labels l = {{"pipeline", pipeline_}, {"partition", key}};
    PartitionGauges gauges{
        .resume = registry_->GetGauge("ferry_routing_resume_position",
                                      "The routed pipeline's low-water mark L: every message of "
                                      "the partition at or below it is durable in its table",
                                      l),
        .head =
            registry_->GetGauge("ferry_broker_head_position", "Last position the broker holds", l),
        .lag = registry_->GetGauge("ferry_lag_messages", "Head minus committed position", l),
        .lag_seconds = registry_->GetGauge("ferry_lag_seconds",
                                           "Age of the last committed message while lagging", l)};
    it = partitions_.emplace(key, gauges).first;
  }
  return it->second;
}

void RouterMetrics::Update(const Counts& counts, source::Source* source,
                           const std::map<int32_t, source::PartitionInfo>& assigned,
                           const std::map<int32_t, int64_t>& lows,
                           const std::map<int32_t, int64_t>& low_timestamps) {
  tables_open_->Set(static_cast<double>(counts.tables_open));
  tables_known_->Set(static_cast<double>(counts.tables_known));
  if (counts.rereads > rereads_counted_) {
    rereads_->Increment(static_cast<double>(counts.rereads - rereads_counted_));
    rereads_counted_ = counts.rereads;
  }
  if (counts.restarts > restarts_counted_) {
    restarts_->Increment(static_cast<double>(counts.restarts - restarts_counted_));
    restarts_counted_ = counts.restarts;
  }
  // Step 5b: the heads, at most every heads_interval (a broker round trip).
  const auto now = std::chrono::steady_clock::now();
  if (source != nullptr && !assigned.empty() &&
      (!heads_asked_ || now - heads_at_ >= heads_interval_)) {
    heads_at_ = now;
    heads_asked_ = true;
    if (Result<std::vector<source::PartitionHead>> heads = source->Heads(); heads.ok()) {
      for (const source::PartitionHead& h : *heads) {
        heads_[h.key] = h;
      }
    }
  }
  for (const auto& [index, info] : assigned) {
    const PartitionGauges& g = Partition(info.key);
    auto low = lows.find(index);
    if (low != lows.end()) {
      g.resume->Set(static_cast<double>(low->second));
    }
    auto head = heads_.find(info.key);
    if (head == heads_.end()) {
      continue;
    }
    const double last = static_cast<double>(head->second.last_position.value_or(-1));
    g.head->Set(last);
    // Without an L (nothing polled, nothing durable), every message the broker holds may wait.
    double below = static_cast<double>(head->second.first_position.value_or(0) - 1);
    if (low != lows.end()) {
      below = static_cast<double>(low->second);
    }
    const double lag = std::max(0.0, last - below);
    g.lag->Set(lag);
    double seconds = 0;
    if (auto ts = low_timestamps.find(index);
        lag > 0 && low != lows.end() && ts != low_timestamps.end() && ts->second > 0) {
      seconds = std::max(0.0, static_cast<double>(WallMicros() - ts->second) / 1e6);
    }
    g.lag_seconds->Set(seconds);
  }
}

}  // namespace ferry::pipeline

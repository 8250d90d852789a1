#include "ferry/app/status_page/status_history.h"

#include <utility>

#include "ferry/base/clock.h"

namespace ferry::app {
namespace {

std::string LabelValue(const metrics::Labels& labels, std::string_view name) {
  for (const auto& [k, v] : labels) {
    if (k == name) {
      return v;
    }
  }
  return "";
}

// A partition's row: its key, or "<key> @ <table>" for a routed pipeline's table.
std::string PartitionRowKey(const metrics::Labels& labels) {
  std::string key = LabelValue(labels, "partition");
  std::string table = LabelValue(labels, "table");
  return table.empty() ? key : key + " @ " + table;
}

}  // namespace

StatusHistory::StatusHistory(metrics::Registry* registry, std::vector<StatusPipelineInfo> pipelines,
                             std::unique_ptr<TableProbe> probe)
    : registry_(registry), probe_(std::move(probe)) {
  state_.started_ms = WallMillis();
  for (StatusPipelineInfo& info : pipelines) {
    auto p = std::make_unique<PipelineState>();
    p->info = std::move(info);
    by_id_[p->info.id] = p.get();
    state_.pipelines.push_back(std::move(p));
  }
}

StatusHistory::~StatusHistory() {
  Stop();
}

void StatusHistory::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void StatusHistory::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void StatusHistory::Loop() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point next = Clock::now();
  Clock::time_point next_probe = next;
  std::unique_lock lock(stop_mu_);
  while (!stop_) {
    lock.unlock();
    if (Clock::now() >= next_probe) {
      Probe();
      next_probe = Clock::now() + kProbeInterval;
    }
    Sample(WallMillis());
    lock.lock();
    // Steps on a fixed schedule (not "a second after the last sample"), so samples do not drift.
    next += kStep;
    if (next < Clock::now()) {
      next = Clock::now() + kStep;
    }
    stop_cv_.wait_until(lock, next, [this] { return stop_; });
  }
}

void StatusHistory::Probe() {
  if (probe_ == nullptr) {
    return;
  }
  // The journal's table figures say which versions to read; the reads happen without mu_.
  std::map<metrics::JournalKey, metrics::PipelineRecord> journal = registry_->journal()->Read();
  std::vector<std::pair<std::string, TableProbe::Times>> results;
  for (const auto& p : state_.pipelines) {  // the list itself never changes after construction
    std::optional<int64_t> version;
    std::optional<int64_t> checkpoint;
    if (auto it = journal.find({p->info.id, ""}); it != journal.end() && it->second.table) {
      version = it->second.table->version;
      checkpoint = it->second.table->checkpoint_version;
    }
    results.emplace_back(p->info.id, probe_->Update(p->info.table, version, checkpoint));
  }
  std::lock_guard lock(mu_);
  for (auto& [id, times] : results) {
    by_id_.at(id)->probe = std::move(times);
  }
}

void StatusHistory::Sample(int64_t now_ms) {
  // Read the registry first (its own lock), then update the rings under ours.
  const metrics::Registry& r = *registry_;
  auto by_pipeline = [](std::vector<std::pair<metrics::Labels, double>> values) {
    std::map<std::string, double> out;
    for (const auto& [labels, value] : values) {
      out[LabelValue(labels, "pipeline")] += value;
    }
    return out;
  };
  // A routed pipeline's up is the router's (its tables' series carry a `table` label).
  std::map<std::string, double> up;
  for (const auto& [labels, value] : r.Values("ferry_pipeline_up")) {
    if (LabelValue(labels, "table").empty()) {
      up[LabelValue(labels, "pipeline")] += value;
    }
  }
  std::map<std::string, double> rows = by_pipeline(r.Values("ferry_rows_written_total"));
  std::map<std::string, double> bytes = by_pipeline(r.Values("ferry_bytes_written_total"));
  std::map<std::string, double> messages = by_pipeline(r.Values("ferry_messages_received_total"));
  std::map<std::string, double> bad = by_pipeline(r.Values("ferry_bad_records_total"));
  std::map<std::string, double> dead =
      by_pipeline(r.Values("ferry_dead_letter_rows_written_total"));
  std::map<std::string, double> limited = by_pipeline(r.Values("ferry_rate_limited_seconds_total"));
  std::map<std::string, double> commits, failed, lost;
  for (const auto& [labels, value] : r.Values("ferry_commits_total")) {
    std::string outcome = LabelValue(labels, "outcome");
    auto& target = outcome == "succeeded" ? commits : outcome == "failed" ? failed : lost;
    target[LabelValue(labels, "pipeline")] += value;
  }
  std::map<std::string, metrics::Registry::HistogramTotals> batch_hist, commit_hist;
  for (auto& h : r.Histograms("ferry_batch_duration_seconds")) {
    batch_hist[LabelValue(h.labels, "pipeline")] = h;
  }
  for (auto& h : r.Histograms("ferry_commit_duration_seconds")) {
    commit_hist[LabelValue(h.labels, "pipeline")] = h;
  }
  // pipeline -> partition -> gauge values, in the order of the PartitionState fields.
  struct Gauges {
    double v[5] = {NAN, NAN, NAN, NAN, 0};
  };
  std::map<std::string, std::map<std::string, Gauges>> partitions;
  const char* kPartitionFamilies[] = {"ferry_committed_position", "ferry_broker_head_position",
                                      "ferry_lag_messages", "ferry_lag_seconds",
                                      "ferry_rate_limit_pauses_total"};
  for (size_t f = 0; f < 5; ++f) {
    for (const auto& [labels, value] : r.Values(kPartitionFamilies[f])) {
      partitions[LabelValue(labels, "pipeline")][PartitionRowKey(labels)].v[f] = value;
    }
  }
  // A routed pipeline's partition rows: the router's resume position L stands for the committed
  // position (its tables' rows, "<partition> @ <table>", have their own).
  for (const auto& [labels, value] : r.Values("ferry_routing_resume_position")) {
    Gauges& g = partitions[LabelValue(labels, "pipeline")][PartitionRowKey(labels)];
    if (std::isnan(g.v[0])) {
      g.v[0] = value;
    }
  }

  auto get = [](const std::map<std::string, double>& m, const std::string& id) {
    auto it = m.find(id);
    return it == m.end() ? 0.0 : it->second;
  };
  std::lock_guard lock(mu_);
  int64_t tick = state_.next_tick;
  double dt = last_sample_ms_ > 0 && now_ms > last_sample_ms_
                  ? static_cast<double>(now_ms - last_sample_ms_) / 1000.0
                  : 0;
  for (auto& p : state_.pipelines) {
    const std::string& id = p->info.id;
    auto rate = [&](double now, double before) {
      return dt > 0 && now >= before ? (now - before) / dt : NAN;
    };
    double now_rows = get(rows, id);
    double now_bytes = get(bytes, id);
    double now_messages = get(messages, id);
    p->rows_per_s.Set(tick, rate(now_rows, p->rows));
    p->mb_per_s.Set(tick, rate(now_bytes, p->bytes) / 1e6);
    p->messages_per_s.Set(tick, rate(now_messages, p->messages));
    auto mean = [&](const std::map<std::string, metrics::Registry::HistogramTotals>& h,
                    uint64_t* count, double* sum) {
      auto it = h.find(id);
      if (it == h.end()) {
        return static_cast<double>(NAN);
      }
      double out = it->second.count > *count && tick > 0
                       ? (it->second.sum - *sum) / static_cast<double>(it->second.count - *count)
                       : NAN;
      *count = it->second.count;
      *sum = it->second.sum;
      return out;
    };
    p->batch_seconds.Set(tick, mean(batch_hist, &p->batches, &p->batch_seconds_sum));
    p->commit_seconds.Set(tick, mean(commit_hist, &p->commit_count, &p->commit_seconds_sum));
    p->rows = now_rows;
    p->bytes = now_bytes;
    p->messages = now_messages;
    p->up = get(up, id) == 1;
    p->commits = get(commits, id);
    p->commits_failed = get(failed, id);
    p->commits_lost = get(lost, id);
    p->bad_records = get(bad, id);
    p->dead_letters = get(dead, id);
    p->rate_limited_seconds = get(limited, id);
    for (const auto& [key, gauges] : partitions[id]) {
      const double* values = gauges.v;
      std::unique_ptr<PartitionState>& part = p->partitions[key];
      if (part == nullptr) {
        part = std::make_unique<PartitionState>();  // once per partition, for its lifetime
      }
      part->committed = values[0];
      part->head = values[1];
      part->lag_messages = values[2];
      part->lag_seconds = values[3];
      part->rate_limit_pauses = values[4];
      part->lag_messages_series.Set(tick, values[2]);
      part->lag_seconds_series.Set(tick, values[3]);
    }
  }
  state_.tick_ms[static_cast<size_t>(tick) % kPoints] = now_ms;
  state_.next_tick = tick + 1;
  last_sample_ms_ = now_ms;
}

void StatusHistory::Read(const std::function<void(const State&)>& reader) const {
  std::lock_guard lock(mu_);
  reader(state_);
}

}  // namespace ferry::app

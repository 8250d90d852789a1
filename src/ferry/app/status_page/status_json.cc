#include "ferry/app/status_page/status_json.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <nlohmann/json.hpp>

#include "ferry/metrics/journal.h"

#ifndef FERRY_VERSION
#define FERRY_VERSION "0"
#endif

namespace ferry::app {
namespace {

using nlohmann::json;

// Four significant digits: the charts need no more, and the JSON stays short.
json Number(double v) {
  if (!std::isfinite(v)) {
    return nullptr;
  }
  if (v == std::floor(v) && std::fabs(v) < 9e15) {
    return static_cast<int64_t>(v);
  }
  double scale = std::pow(10.0, 3 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

json Optional(const std::optional<int64_t>& v) {
  return v ? json(*v) : json(nullptr);
}

json Series(const SeriesRing& ring, int64_t from, int64_t to) {
  json out = json::array();
  for (int64_t t = from; t < to; ++t) {
    out.push_back(Number(ring.At(t)));
  }
  return out;
}

// Mean of the last kNowSamples sampled points (NaN: none).
double Recent(const SeriesRing& ring, int64_t first, int64_t next) {
  double sum = 0;
  int n = 0;
  for (int64_t t = next - 1; t >= std::max(first, next - StatusHistory::kNowSamples); --t) {
    float v = ring.At(t);
    if (!std::isnan(v)) {
      sum += v;
      ++n;
    }
  }
  return n > 0 ? sum / n : NAN;
}

json Commits(const metrics::PipelineRecord* r) {
  json out = json::array();
  if (r == nullptr) {
    return out;
  }
  for (auto it = r->commits.rbegin(); it != r->commits.rend(); ++it) {
    json positions = json::array();
    for (const metrics::PositionRange& p : it->positions) {
      positions.push_back({{"partition", p.partition}, {"first", p.first}, {"last", p.last}});
    }
    out.push_back({{"version", it->version},
                   {"time_ms", it->time_ms},
                   {"rows", it->rows},
                   {"files", it->files},
                   {"bytes", it->bytes},
                   {"commit_seconds", Number(it->commit_seconds)},
                   {"batch_seconds", Number(it->batch_seconds)},
                   {"positions", std::move(positions)}});
  }
  return out;
}

// `table`: only that table's counts (a routed pipeline's table); empty: the pipeline's, all tables.
json BadRecords(const metrics::Registry& registry, const metrics::JournalKey& key,
                const metrics::PipelineRecord* r) {
  json by_reason = json::array();
  for (const auto& [labels, value] : registry.Values("ferry_bad_records_total")) {
    std::map<std::string, std::string> l(labels.begin(), labels.end());
    if (l["pipeline"] == key.pipeline && (key.table.empty() || l["table"] == key.table)) {
      by_reason.push_back(
          {{"action", l["action"]}, {"reason", l["reason"]}, {"count", Number(value)}});
    }
  }
  json samples = json::array();
  if (r != nullptr) {
    for (auto it = r->bad_records.rbegin(); it != r->bad_records.rend(); ++it) {
      json s = {{"time_ms", it->time_ms}, {"partition", it->partition}, {"position", it->position},
                {"action", it->action},   {"reason", it->reason},       {"error", it->error}};
      if (it->payload) {
        s["payload"] = *it->payload;  // bytes: invalid UTF-8 is replaced when dumped
      }
      samples.push_back(std::move(s));
    }
  }
  return {{"by_reason", std::move(by_reason)}, {"samples", std::move(samples)}};
}

// The writer fields the pipeline drops, newest first, with the messages counted for each.
json DroppedFieldsJson(const metrics::Registry& registry, const metrics::JournalKey& key,
                       const metrics::PipelineRecord* r) {
  json out = json::array();
  if (r == nullptr) {
    return out;
  }
  for (auto it = r->dropped_fields.rbegin(); it != r->dropped_fields.rend(); ++it) {
    metrics::Labels labels = {{"pipeline", key.pipeline}};
    if (!key.table.empty()) {
      labels.emplace_back("table", key.table);  // PipelineMetrics::With's order
    }
    labels.emplace_back("field", it->field);
    double messages = registry.Value("ferry_dropped_fields_total", labels);
    out.push_back({{"time_ms", it->time_ms},
                   {"writer", it->writer},
                   {"field", it->field},
                   {"messages", Number(messages)}});
  }
  return out;
}

json Events(const metrics::PipelineRecord* r) {
  json fences = json::array();
  json maintenance = json::array();
  if (r != nullptr) {
    for (auto it = r->fences.rbegin(); it != r->fences.rend(); ++it) {
      fences.push_back(
          {{"time_ms", it->time_ms}, {"reason", it->reason}, {"rows_dropped", it->rows_dropped}});
    }
    for (auto it = r->maintenance.rbegin(); it != r->maintenance.rend(); ++it) {
      maintenance.push_back({{"time_ms", it->time_ms},
                             {"operation", it->operation},
                             {"outcome", it->ok ? "ok" : "failed"},
                             {"seconds", Number(it->seconds)},
                             {"detail", it->detail},
                             {"version", Optional(it->version)}});
    }
  }
  return {{"fences", std::move(fences)}, {"maintenance", std::move(maintenance)}};
}

json Table(const metrics::PipelineRecord* r, const TableProbe::Times& probe) {
  json t = {{"version", nullptr},
            {"size_bytes", nullptr},
            {"files", nullptr},
            {"small_files", nullptr},
            {"small_file_bytes", metrics::Journal::kSmallFileBytes},
            {"checkpoint_version", Optional(probe.checkpoint_version)},
            {"checkpoint_ms", Optional(probe.checkpoint_ms)},
            {"optimize_version", Optional(probe.optimize_version)},
            {"optimize_ms", Optional(probe.optimize_ms)},
            {"error", probe.error.empty() ? json(nullptr) : json(probe.error)}};
  if (r != nullptr && r->table) {
    const metrics::TableRecord& tr = *r->table;
    t["version"] = tr.version;
    t["size_bytes"] = tr.size_bytes;
    t["files"] = tr.num_files;
    t["small_files"] = tr.small_files;
    if (tr.checkpoint_version) {
      t["checkpoint_version"] = *tr.checkpoint_version;
      if (tr.checkpoint_ms) {
        t["checkpoint_ms"] = *tr.checkpoint_ms;
      } else if (probe.checkpoint_version != tr.checkpoint_version) {
        t["checkpoint_ms"] = nullptr;  // not probed yet
      }
    }
  }
  return t;
}

// The more urgent of a routed pipeline's tables' states names the pipeline's while it has no
// record of its own: failed, retrying, waiting, running, starting, stopped.
int Urgency(metrics::PipelineState state) {
  using S = metrics::PipelineState;
  constexpr S kLeastUrgentFirst[] = {
      S::kStopped,  S::kStarting, S::kRunning, S::kWaitingForBroker, S::kWaitingForRegistry,
      S::kRetrying, S::kFailed};
  return static_cast<int>(
      std::find(std::begin(kLeastUrgentFirst), std::end(kLeastUrgentFirst), state) -
      std::begin(kLeastUrgentFirst));
}

// A routed pipeline's tables, one record each (metrics/journal.h JournalKey), in table order: what
// each table's inner pipeline told the journal (its state, commits, bad records, fences,
// maintenance runs and figures), and its bad-record and dropped-field counts.
json Tables(const metrics::Registry& registry,
            const std::map<metrics::JournalKey, metrics::PipelineRecord>& journal,
            const std::string& id) {
  json out = json::array();
  for (auto it = journal.upper_bound({id, ""}); it != journal.end() && it->first.pipeline == id;
       ++it) {
    const metrics::PipelineRecord& r = it->second;
    json events = Events(&r);
    out.push_back({{"table_uri", it->first.table},
                   {"state", metrics::PipelineStateName(r.state)},
                   {"state_since_ms", r.state_since_ms},
                   {"error", r.error.empty() ? json(nullptr) : json(r.error)},
                   {"error_ms", r.error.empty() ? json(nullptr) : json(r.error_ms)},
                   {"commits", Commits(&r)},
                   {"bad_records", BadRecords(registry, it->first, &r)},
                   {"dropped_fields", DroppedFieldsJson(registry, it->first, &r)},
                   {"fences", std::move(events["fences"])},
                   {"maintenance", std::move(events["maintenance"])},
                   {"table", Table(&r, TableProbe::Times{})}});
  }
  return out;
}

// Elastic JetStream: every partition's lease as this process's keeper last listed the bucket,
// with the lag this process measures for the partitions it holds (null for the others: their
// owner's page has it). Empty for any other pipeline.
json Leases(const metrics::PipelineRecord* r, const std::map<std::string, double>& lag,
            int64_t now_ms) {
  json out = json::array();
  if (r == nullptr) {
    return out;
  }
  for (const metrics::LeaseRecord& l : r->leases) {
    bool held = !l.owner.empty();
    auto it = lag.find(l.partition);
    out.push_back(
        {{"partition", l.partition},
         {"owner", held ? json(l.owner) : json(nullptr)},
         {"mine", l.mine},
         {"lease_age_ms",
          held ? json(std::max<int64_t>(0, now_ms - l.taken_unix_ms)) : json(nullptr)},
         {"renewed_ms", held ? json(l.renewed_unix_ms) : json(nullptr)},
         {"listed_ms", r->leases_ms},
         {"lag_messages", l.mine && it != lag.end() ? Number(it->second) : json(nullptr)}});
  }
  return out;
}

}  // namespace

std::string RenderStatusJson(const StatusHistory& history, const StatusQuery& query,
                             int64_t now_ms) {
  std::map<metrics::JournalKey, metrics::PipelineRecord> journal =
      history.registry()->journal()->Read();
  json out;
  history.Read([&](const StatusHistory::State& s) {
    int64_t first = s.first_tick();
    if (query.since) {
      first = std::clamp(*query.since, first, s.next_tick);
    }
    if (query.points) {
      first = std::max(first, s.next_tick - std::max<int64_t>(0, *query.points));
    }
    int64_t next = s.next_tick;
    json times = json::array();
    for (int64_t t = first; t < next; ++t) {
      times.push_back(s.TickMillis(t));
    }
    out = {{"version", 1},
           {"ferry_version", FERRY_VERSION},
           {"now_ms", now_ms},
           {"started_ms", s.started_ms},
           {"history",
            {{"step_ms", StatusHistory::kStep.count()},
             {"capacity", StatusHistory::kPoints},
             {"first_tick", first},
             {"next_tick", next},
             {"times_ms", std::move(times)}}},
           {"pipelines", json::array()}};
    for (const auto& p : s.pipelines) {
      const metrics::JournalKey own{p->info.id, ""};
      auto it = journal.find(own);
      const metrics::PipelineRecord* r = it == journal.end() ? nullptr : &it->second;
      json tables = Tables(*history.registry(), journal, p->info.id);
      // A routed pipeline (records per table; one of its own only for an elastic source's
      // leases): its state, and that state's error, are its most urgent table's.
      auto first_table = journal.upper_bound(own);
      const bool routed =
          first_table != journal.end() && first_table->first.pipeline == own.pipeline;
      const metrics::PipelineRecord* state_of = routed ? nullptr : r;
      if (state_of == nullptr) {
        for (auto t = first_table; t != journal.end() && t->first.pipeline == own.pipeline; ++t) {
          if (state_of == nullptr || Urgency(t->second.state) > Urgency(state_of->state)) {
            state_of = &t->second;
          }
        }
      }
      json partitions = json::array();
      double max_lag = 0;
      std::map<std::string, double> lag_of;
      for (const auto& [key, part] : p->partitions) {
        if (std::isfinite(part->lag_messages)) {
          max_lag = std::max(max_lag, part->lag_messages);
        }
        lag_of[key] = part->lag_messages;
        // A routed pipeline's rows are "<partition> @ <table>": its lease view shows each
        // partition's largest lag over the tables.
        if (size_t at = key.find(" @ ");
            at != std::string::npos && std::isfinite(part->lag_messages)) {
          auto [of, fresh] = lag_of.try_emplace(key.substr(0, at), part->lag_messages);
          if (!fresh) {
            of->second = std::max(of->second, part->lag_messages);
          }
        }
        partitions.push_back({{"key", key},
                              {"committed", Number(part->committed)},
                              {"head", Number(part->head)},
                              {"lag_messages", Number(part->lag_messages)},
                              {"lag_seconds", Number(part->lag_seconds)},
                              {"rate_limit_pauses", Number(part->rate_limit_pauses)},
                              {"series",
                               {{"lag_messages", Series(part->lag_messages_series, first, next)},
                                {"lag_seconds", Series(part->lag_seconds_series, first, next)}}}});
      }
      std::string state(metrics::PipelineStateName(state_of ? state_of->state
                                                            : metrics::PipelineState::kStarting));
      if (state == "running" && max_lag > 0) {
        state = "catching_up";
      }
      bool has_error = state_of != nullptr && !state_of->error.empty();
      json events = Events(r);
      out["pipelines"].push_back(
          {{"id", p->info.id},
           {"source", p->info.source},
           {"table_uri", p->info.table},
           {"state", state},
           {"state_since_ms", state_of ? json(state_of->state_since_ms) : json(nullptr)},
           {"up", p->up},
           {"error", has_error ? json(state_of->error) : json(nullptr)},
           {"error_ms", has_error ? json(state_of->error_ms) : json(nullptr)},
           {"now",
            {{"rows_per_s", Number(Recent(p->rows_per_s, s.first_tick(), next))},
             {"mb_per_s", Number(Recent(p->mb_per_s, s.first_tick(), next))},
             {"messages_per_s", Number(Recent(p->messages_per_s, s.first_tick(), next))}}},
           {"totals",
            {{"rows", Number(p->rows)},
             {"bytes", Number(p->bytes)},
             {"messages", Number(p->messages)},
             {"commits", Number(p->commits)},
             {"commits_failed", Number(p->commits_failed)},
             {"commits_lost", Number(p->commits_lost)},
             {"bad_records", Number(p->bad_records)},
             {"dead_letters", Number(p->dead_letters)},
             {"rate_limited_seconds", Number(p->rate_limited_seconds)}}},
           {"series",
            {{"rows_per_s", Series(p->rows_per_s, first, next)},
             {"mb_per_s", Series(p->mb_per_s, first, next)},
             {"messages_per_s", Series(p->messages_per_s, first, next)},
             {"batch_seconds", Series(p->batch_seconds, first, next)},
             {"commit_seconds", Series(p->commit_seconds, first, next)}}},
           {"partitions", std::move(partitions)},
           {"commits", Commits(r)},
           {"bad_records", BadRecords(*history.registry(), own, r)},
           {"dropped_fields", DroppedFieldsJson(*history.registry(), own, r)},
           {"fences", std::move(events["fences"])},
           {"maintenance", std::move(events["maintenance"])},
           {"table", Table(r, p->probe)},
           {"tables", std::move(tables)},
           {"leases", Leases(r, lag_of, now_ms)}});
    }
  });
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace ferry::app

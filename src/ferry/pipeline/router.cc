#include "ferry/pipeline/router.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "ferry/base/check.h"
#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/delta/transaction.h"

namespace ferry::pipeline {

using RouterClock = std::chrono::steady_clock;

struct Router::Inner {
  std::string table;
  int route = -1;
  std::shared_ptr<RouteQueue> queue;
  std::unique_ptr<Pipeline> pipeline;
  StopSignal stop;
  Status result;
  std::atomic<bool> done{false};
  std::thread thread;
  uint64_t last_used = 0;
  metrics::Gauge* queued = nullptr;  // ferry_routing_queue_messages{table}; null without metrics
};

// The router's series (router.h, "Metrics"). Router thread only, but for the atomics inside.
struct Router::Metrics {
  Metrics(metrics::Registry* r, const std::string& id) : registry(r), pipeline(id) {
    const metrics::Labels l = {{"pipeline", id}};
    up = r->GetGauge("ferry_pipeline_up", "1 while the pipeline runs", l);
    tables_open = r->GetGauge("ferry_routing_tables_open",
                              "Routed tables with an inner pipeline open now", l);
    tables_known = r->GetGauge(
        "ferry_routing_tables_known",
        "Tables the routed pipeline knows: static routes, fallback, and every table routed to", l);
    rereads = r->GetCounter("ferry_routing_rereads_total",
                            "Messages read again after a restart that their table held already "
                            "(dropped by the table)",
                            l);
    restarts = r->GetCounter("ferry_routing_restarts_total",
                             "Restarts of every routed table after one was fenced", l);
  }
  // A partition's three gauges, looked up in the registry once per partition key (UpdateMetrics
  // runs after every poll).
  struct PartitionGauges {
    metrics::Gauge* resume;
    metrics::Gauge* head;
    metrics::Gauge* lag;
  };
  const PartitionGauges& Partition(const std::string& key) {
    auto it = partitions.find(key);
    if (it == partitions.end()) {
      const metrics::Labels l = {{"pipeline", pipeline}, {"partition", key}};
      it = partitions
               .emplace(key,
                        PartitionGauges{
                            .resume = registry->GetGauge(
                                "ferry_routing_resume_position",
                                "The routed pipeline's low-water mark L: every message of the "
                                "partition at or below it is durable in its table",
                                l),
                            .head = registry->GetGauge("ferry_broker_head_position",
                                                       "Last position the broker holds", l),
                            .lag = registry->GetGauge("ferry_lag_messages",
                                                      "Head minus committed position", l)})
               .first;
    }
    return it->second;
  }

  metrics::Registry* registry;
  std::string pipeline;
  metrics::Gauge* up;
  metrics::Gauge* tables_open;
  metrics::Gauge* tables_known;
  metrics::Counter* rereads;
  metrics::Counter* restarts;
  int64_t rereads_counted = 0;
  int64_t restarts_counted = 0;
  std::map<std::string, PartitionGauges> partitions;   // by key
  std::map<std::string, source::PartitionHead> heads;  // by key, the last the broker reported
  RouterClock::time_point heads_at;
  bool heads_asked = false;
};

Result<std::unique_ptr<Router>> Router::Create(RouterOptions options, SourceFactory source_factory,
                                               std::unique_ptr<RouteSelector> selector,
                                               InnerFactory inner_factory, TableReader reader,
                                               std::unique_ptr<delta::Table> positions_table,
                                               delta::Snapshot positions_snapshot) {
  if (options.id.empty()) {
    return InvalidArgument("a routed pipeline needs an id");
  }
  if (options.max_open_tables < 1 || options.max_tables < 1 || options.queue_messages < 1) {
    return InvalidArgument("pipeline {}: routing limits must be at least 1", options.id);
  }
  return std::unique_ptr<Router>(new Router(
      std::move(options), std::move(source_factory), std::move(selector), std::move(inner_factory),
      std::move(reader), std::move(positions_table), std::move(positions_snapshot)));
}

Router::Router(RouterOptions options, SourceFactory source_factory,
               std::unique_ptr<RouteSelector> selector, InnerFactory inner_factory,
               TableReader reader, std::unique_ptr<delta::Table> positions_table,
               delta::Snapshot positions_snapshot)
    : options_(std::move(options)),
      source_factory_(std::move(source_factory)),
      selector_(std::move(selector)),
      inner_factory_(std::move(inner_factory)),
      reader_(std::move(reader)),
      positions_table_(std::move(positions_table)),
      positions_snapshot_(std::move(positions_snapshot)) {
  for (const std::string& table : selector_->StaticTables()) {
    RouteId(table);
  }
  for (const std::string& table : RecordedTables(positions_snapshot_, options_.id)) {
    RouteId(table);
    recorded_.insert(table);
  }
  if (options_.registry != nullptr) {
    metrics_ = std::make_unique<Metrics>(options_.registry, options_.id);
  }
}

std::vector<std::string> Router::RecordedTables(const delta::Snapshot& positions,
                                                const std::string& id) {
  const std::string prefix = TableAppId(id, "");
  std::vector<std::string> out;
  for (const auto& [app_id, txn] : positions.txns()) {
    if (app_id.starts_with(prefix) && app_id.size() > prefix.size()) {
      out.push_back(app_id.substr(prefix.size()));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Router::RecordTables() {
  std::vector<std::string> tables;
  for (const std::string& table : to_record_) {
    if (recorded_.count(table) == 0) {
      tables.push_back(table);
    }
  }
  to_record_.clear();
  if (tables.empty()) {
    return;
  }
  Status st = [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(positions_snapshot_, positions_table_->Update(positions_snapshot_));
    delta::Transaction txn(*positions_table_, positions_snapshot_);
    const int64_t now = WallMillis();
    for (const std::string& table : tables) {
      txn.SetPosition(TableAppId(options_.id, table), now);
    }
    txn.SetOperation("ROUTING TABLE", {{"queryId", options_.id}});
    FERRY_ASSIGN_OR_RETURN(delta::CommitResult committed, txn.Commit());
    (void)committed;
    return Status::OK();
  }();
  if (!st.ok()) {
    FERRY_LOG_WARN("pipeline {}: recording table(s) {} in {}: {}", options_.id,
                   fmt::join(tables, ", "), positions_table_->Describe(), st.ToString());
    return;
  }
  recorded_.insert(tables.begin(), tables.end());
}

Router::~Router() {
  StopInners(/*drain=*/false);
  CloseSource();
}

std::vector<std::string> Router::tables() const {
  std::vector<std::string> out;
  for (const auto& [table, id] : route_ids_) {
    out.push_back(table);
  }
  return out;
}

int Router::RouteId(const std::string& table) {
  auto [it, added] = route_ids_.emplace(table, static_cast<int>(route_ids_.size()));
  return it->second;
}

// ---- Router thread: the real source ----

Status Router::StartSource() {
  std::chrono::milliseconds backoff = options_.initial_backoff;
  while (true) {
    assigned_.clear();
    polled_high_.clear();
    goals_.clear();
    goals_known_ = false;
    FERRY_ASSIGN_OR_RETURN(source_, source_factory_());
    Status st = source_->Start(this);
    if (st.ok()) {
      return st;
    }
    source_.reset();
    if (st.code() != StatusCode::kUnavailable || stop_->stopping()) {
      return st;
    }
    last_source_error_ = st.message();
    if (Status waited = CheckMaxWait(last_contact_, "no contact with the broker"); !waited.ok()) {
      return st.WithContext("{}", waited.message());
    }
    FERRY_LOG_WARN("pipeline {}: starting the source: {}; trying again in {} ms", options_.id,
                   st.message(), backoff.count());
    stop_->WaitFor(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

void Router::CloseSource() {
  if (source_ == nullptr) {
    return;
  }
  if (Status st = source_->Close(); !st.ok()) {
    FERRY_LOG_WARN("pipeline {}: closing the source: {}", options_.id, st.ToString());
  }
  source_.reset();
}

Result<std::optional<int64_t>> Router::OnAssigned(const source::PartitionInfo& partition) {
  // Step 1: the largest L any table the router knows holds for the partition.
  const std::string app_id = ResumeAppId(options_.id, partition.key);
  std::optional<int64_t> resume;
  if (!positions_fresh_) {  // once per assignment round, as the tables' snapshots (fresh_)
    FERRY_ASSIGN_OR_RETURN(positions_snapshot_, positions_table_->Update(positions_snapshot_));
    positions_fresh_ = true;
  }
  resume = positions_snapshot_.position(app_id);
  for (const auto& [table, id] : route_ids_) {
    auto cached = fresh_.find(table);
    if (cached == fresh_.end()) {
      Result<std::optional<delta::Snapshot>> snap = reader_(table);
      if (!snap.ok()) {
        return snap.status().WithContext("pipeline {}: reading the positions of {} in {}",
                                         options_.id, partition.key, table);
      }
      cached = fresh_.emplace(table, std::move(*snap)).first;
    }
    if (cached->second) {
      std::optional<int64_t> low = cached->second->position(app_id);
      if (low && (!resume || *low > *resume)) {
        resume = low;
      }
    }
  }
  positions_.Reset(partition.index, resume);
  last_contact_ = RouterClock::now();
  assigned_[partition.index] = partition;
  polled_high_.erase(partition.index);
  if (resume) {
    polled_high_[partition.index] = *resume;
  }
  acked_.erase(partition.index);
  goals_known_ = false;
  for (auto& [table, inner] : inners_) {
    inner->queue->PushEvent({.kind = RouteItem::Kind::kAssign, .partition = partition});
  }
  FERRY_LOG_INFO("pipeline {}: {} assigned, {}", options_.id, partition.key,
                 resume ? fmt::format("resuming after position {} (the largest of {} tables)",
                                      *resume, route_ids_.size() + 1)
                        : std::string("new to every table (start policy applies)"));
  return resume;
}

void Router::OnRevoked(const source::PartitionInfo& partition) {
  positions_.Forget(partition.index);
  assigned_.erase(partition.index);
  polled_high_.erase(partition.index);
  goals_.erase(partition.index);
  acked_.erase(partition.index);
  published_.erase(partition.index);
  size_t dropped = 0;
  for (auto& [table, inner] : inners_) {
    dropped += inner->queue->DropPartition(partition.index);
    inner->queue->PushEvent({.kind = RouteItem::Kind::kRevoke, .partition = partition});
  }
  FERRY_LOG_INFO("pipeline {}: {} revoked; {} queued messages of it dropped", options_.id,
                 partition.key, dropped);
}

// ---- Router thread: inner pipelines ----

Result<Router::Inner*> Router::OpenInner(const std::string& table) {
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
  const int route = inner->route;
  std::shared_ptr<RouteQueue> queue = inner->queue;
  auto made = std::make_shared<bool>(false);
  InnerSpec spec{
      .table = table,
      // The first source is the queue's; a second one means the pipeline fenced (step 8).
      .source = [this, queue, route, made]() -> Result<std::unique_ptr<source::Source>> {
        bool inert = *made;
        *made = true;
        if (inert) {
          restart_requested_ = true;
        }
        return std::unique_ptr<source::Source>(
            std::make_unique<RoutedSource>(queue, &positions_, route, inert));
      },
      .seal_hook =
          [this, route](SealedBatch* batch) {
            for (const auto& [index, part] : batch->partitions) {
              std::optional<int64_t> low = positions_.Seal(index, route, part.last);
              if (low) {
                batch->extra_txns[ResumeAppId(options_.id, part.key)] = *low;
              }
            }
          },
      .dead_letter_id = fmt::format("{}@{}", options_.id, table),
      .seal_now = [this] { return polled_to_goals_.load(std::memory_order_relaxed); }};
  Result<std::unique_ptr<Pipeline>> pipeline = inner_factory_(spec);
  if (!pipeline.ok()) {
    return pipeline.status().WithContext("pipeline {}: opening routed table {}", options_.id,
                                         table);
  }
  inner->pipeline = std::move(*pipeline);
  if (metrics_ != nullptr) {
    inner->queued = options_.registry->GetGauge("ferry_routing_queue_messages",
                                                "Messages waiting in a routed table's queue",
                                                {{"pipeline", options_.id}, {"table", table}});
  }
  to_record_.push_back(table);  // after this poll's messages are queued (RecordTables)
  for (const auto& [index, info] : assigned_) {
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
  return raw;
}

Status Router::InnerFailure() {
  for (auto& [table, inner] : inners_) {
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

std::vector<std::pair<std::string, Status>> Router::StopInners(bool drain) {
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
    metrics_->tables_open->Set(0);
  }
  return results;
}

void Router::EvictIdle() {
  while (inners_.size() > options_.max_open_tables) {
    Inner* oldest = nullptr;
    for (auto& [table, inner] : inners_) {
      if (inner->queue->messages() == 0 && positions_.Outstanding(inner->route) == 0 &&
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

Status Router::Restart() {
  polled_to_goals_ = false;
  ++restarts_;
  FERRY_LOG_WARN(
      "pipeline {}: a routed table was fenced (another writer owns one of its partitions); "
      "restarting every table of the pipeline from the tables' positions",
      options_.id);
  StopInners(/*drain=*/false);
  CloseSource();
  for (const auto& [index, info] : assigned_) {
    positions_.Forget(index);
  }
  restart_requested_ = false;
  fresh_.clear();
  positions_fresh_ = false;
  return StartSource();
}

// ---- Router thread: the loop ----

void Router::PublishPositions(bool force) {
  std::map<int32_t, int64_t> lows = positions_.LowNow();
  UpdateMetrics(lows);
  std::vector<source::CommittedPosition> acks;
  for (const auto& [index, low] : lows) {
    auto it = acked_.find(index);
    if (it == acked_.end() || it->second < low) {
      acks.push_back({.partition = index, .position = low});
      acked_[index] = low;
    }
  }
  if (!acks.empty() && source_ != nullptr) {
    source_->Acknowledge(acks);
  }
  bool moved = false;
  for (const auto& [index, low] : lows) {
    auto it = published_.find(index);
    moved = moved || it == published_.end() || it->second < low;
  }
  if (!moved ||
      (!force && RouterClock::now() - last_publish_ < options_.position_commit_interval)) {
    return;
  }
  if (Status st = CommitPositions(lows); !st.ok()) {
    FERRY_LOG_WARN("pipeline {}: committing the routing positions to {}: {}", options_.id,
                   positions_table_->Describe(), st.ToString());
  }
  last_publish_ = RouterClock::now();
}

void Router::UpdateMetrics(const std::map<int32_t, int64_t>& lows) {
  if (metrics_ == nullptr) {
    return;
  }
  Metrics& m = *metrics_;
  m.tables_open->Set(static_cast<double>(inners_.size()));
  m.tables_known->Set(static_cast<double>(route_ids_.size()));
  if (int64_t skipped = positions_.skipped(); skipped > m.rereads_counted) {
    m.rereads->Increment(static_cast<double>(skipped - m.rereads_counted));
    m.rereads_counted = skipped;
  }
  if (restarts_ > m.restarts_counted) {
    m.restarts->Increment(static_cast<double>(restarts_ - m.restarts_counted));
    m.restarts_counted = restarts_;
  }
  for (auto& [table, inner] : inners_) {
    if (inner->queued != nullptr) {
      inner->queued->Set(static_cast<double>(inner->queue->messages()));
    }
  }
  // Step 5b: the heads, at most every heads_interval (a broker round trip).
  if (source_ != nullptr && !assigned_.empty() &&
      (!m.heads_asked || RouterClock::now() - m.heads_at >= options_.heads_interval)) {
    m.heads_at = RouterClock::now();
    m.heads_asked = true;
    if (Result<std::vector<source::PartitionHead>> heads = source_->Heads(); heads.ok()) {
      for (const source::PartitionHead& h : *heads) {
        m.heads[h.key] = h;
      }
    }
  }
  for (const auto& [index, info] : assigned_) {
    const Metrics::PartitionGauges& g = m.Partition(info.key);
    auto low = lows.find(index);
    if (low != lows.end()) {
      g.resume->Set(static_cast<double>(low->second));
    }
    auto head = m.heads.find(info.key);
    if (head == m.heads.end()) {
      continue;
    }
    const double last = static_cast<double>(head->second.last_position.value_or(-1));
    g.head->Set(last);
    // Without an L (nothing polled, nothing durable), every message the broker holds may wait.
    double below = static_cast<double>(head->second.first_position.value_or(0) - 1);
    if (low != lows.end()) {
      below = static_cast<double>(low->second);
    }
    g.lag->Set(std::max(0.0, last - below));
  }
}

Status Router::CommitPositions(const std::map<int32_t, int64_t>& lows) {
  FERRY_ASSIGN_OR_RETURN(positions_snapshot_, positions_table_->Update(positions_snapshot_));
  delta::Transaction txn(*positions_table_, positions_snapshot_);
  int count = 0;
  for (const auto& [index, low] : lows) {
    auto info = assigned_.find(index);
    if (info == assigned_.end()) {
      continue;
    }
    const std::string app_id = ResumeAppId(options_.id, info->second.key);
    if (positions_snapshot_.position(app_id).value_or(-1) >= low) {
      continue;
    }
    txn.SetPosition(app_id, low);
    ++count;
  }
  if (count > 0) {
    txn.SetOperation("ROUTING POSITIONS", {{"queryId", options_.id}});
    FERRY_ASSIGN_OR_RETURN(delta::CommitResult committed, txn.Commit());
    (void)committed;
    FERRY_ASSIGN_OR_RETURN(positions_snapshot_, positions_table_->Update(positions_snapshot_));
  }
  for (const auto& [index, low] : lows) {
    published_[index] = low;
  }
  return Status::OK();
}

void Router::UpdateGoals() {
  Result<std::vector<source::PartitionHead>> heads = source_->Heads();
  if (!heads.ok()) {
    last_source_error_ = heads.status().message();
    return;
  }
  last_contact_ = RouterClock::now();
  for (const source::PartitionHead& h : *heads) {
    for (const auto& [index, info] : assigned_) {
      if (info.key == h.key && goals_.count(index) == 0) {
        goals_[index] = h.last_position.value_or(-1);
      }
    }
  }
  goals_known_ = true;
}

bool Router::CaughtUp() {
  if (assigned_.empty()) {
    return false;
  }
  if (!goals_known_) {
    UpdateGoals();
  }
  for (const auto& [index, info] : assigned_) {
    auto goal = goals_.find(index);
    if (goal == goals_.end()) {
      return false;
    }
    auto high = polled_high_.find(index);
    if ((high == polled_high_.end() ? -1 : high->second) < goal->second) {
      return false;
    }
  }
  return true;
}

Status Router::CheckMaxWait(RouterClock::time_point since, std::string_view what) const {
  if (!options_.until_caught_up || options_.max_wait.count() <= 0 ||
      RouterClock::now() - since < options_.max_wait) {
    return Status::OK();
  }
  return Unavailable(
      "pipeline {}: {} for {} s (max wait {} ms): {} partition(s) assigned; last "
      "source error: {}. The run stops without being caught up; what was routed is committed",
      options_.id, what,
      std::chrono::duration_cast<std::chrono::seconds>(RouterClock::now() - since).count(),
      options_.max_wait.count(), assigned_.size(),
      last_source_error_.empty() ? "none" : last_source_error_);
}

Status Router::Dispatch(std::vector<source::Message>& polled) {
  // Redeliveries of what this assignment polled already are not routed again.
  std::vector<source::Message> fresh;
  fresh.reserve(polled.size());
  for (const source::Message& m : polled) {
    auto high = polled_high_.find(m.partition);
    if (assigned_.count(m.partition) == 0 ||
        (high != polled_high_.end() && m.position <= high->second)) {
      continue;
    }
    polled_high_[m.partition] = m.position;
    fresh.push_back(m);
  }
  Status selected = selector_->Select(fresh, &choices_);
  const RouterClock::time_point waiting_since = RouterClock::now();
  std::chrono::milliseconds backoff = options_.initial_backoff;
  while (selected.code() == StatusCode::kUnavailable) {
    // The routing decoder's schema registry does not answer (step 2): the messages wait, none
    // taken (L stays below them), until it does, a stop, or max_wait.
    if (stop_->stopping() || stop_->abandon() || restart_requested_) {
      return Status::OK();
    }
    FERRY_RETURN_IF_ERROR(InnerFailure());
    FERRY_RETURN_IF_ERROR(CheckMaxWait(waiting_since, "no answer from the schema registry")
                              .WithContext("{}", selected.message()));
    FERRY_LOG_WARN("pipeline {}: routing: {}; {} message(s) wait, tried again in {} ms",
                   options_.id, selected.message(), fresh.size(), backoff.count());
    stop_->WaitFor(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
    selected = selector_->Select(fresh, &choices_);
  }
  FERRY_RETURN_IF_ERROR(selected);
  // Every message is outstanding before any is queued (routing_positions.h, step 2). The copies
  // are grouped by table, in order, and each group goes to its queue as one chunk.
  struct Group {
    Inner* inner;
    std::vector<uint32_t> rows;  // into fresh and choices_
    MessageChunk chunk;
  };
  std::vector<Group> groups;
  taken_.clear();
  bad_reasons_.resize(fresh.size());
  for (size_t i = 0; i < fresh.size(); ++i) {
    const RouteChoice& choice = choices_[i];
    if (choice.table_id >= group_of_id_.size()) {
      group_of_id_.resize(choice.table_id + 1, -1);
    }
    int& g = group_of_id_[choice.table_id];
    if (g < 0) {
      Result<Inner*> inner = OpenInner(std::string(choice.table));
      if (!inner.ok()) {
        group_of_id_.assign(group_of_id_.size(), -1);
        return inner.status();
      }
      g = static_cast<int>(groups.size());
      groups.push_back(Group{.inner = *inner});
    }
    Group& group = groups[static_cast<size_t>(g)];
    FERRY_CHECK_MSG(group.inner->table == choice.table,
                    fmt::format("routing: table id {} chosen for both {} and {}", choice.table_id,
                                group.inner->table, choice.table));
    taken_.push_back({.partition = fresh[i].partition,
                      .position = fresh[i].position,
                      .route = group.inner->route});
    group.rows.push_back(static_cast<uint32_t>(i));
    bad_reasons_[i] = std::move(choices_[i].bad_reason);
  }
  for (size_t i = 0; i < fresh.size(); ++i) {
    group_of_id_[choices_[i].table_id] = -1;
  }
  positions_.Take(taken_);
  for (Group& g : groups) {
    g.chunk = MessageChunk::Copy(fresh, g.rows, bad_reasons_);
  }
  for (Group& g : groups) {
    Inner* inner = g.inner;
    // A full queue waits for its table's pipeline, at most max_wait (it may itself wait, e.g.
    // for the schema registry): what is not queued stays outstanding, below no L.
    const RouterClock::time_point push_since = RouterClock::now();
    bool waited_too_long = false;
    bool queued = inner->queue->PushMessages(&g.chunk, [&, inner = inner] {
      waited_too_long = !CheckMaxWait(push_since, "").ok();
      return stop_->abandon() || restart_requested_.load() || inner->done.load() || waited_too_long;
    });
    if (!queued && waited_too_long) {
      return CheckMaxWait(push_since, fmt::format("table {} taking no message (its pipeline "
                                                  "waits, e.g. for the schema registry)",
                                                  inner->table));
    }
    if (!queued) {
      return Status::OK();  // the loop sees why
    }
  }
  RecordTables();
  return Status::OK();
}

Status Router::RunLoop() {
  last_contact_ = RouterClock::now();
  FERRY_RETURN_IF_ERROR(StartSource());
  Status waited;  // max_wait: the reason the run stops after its drain
  if (metrics_ != nullptr) {
    metrics_->up->Set(1);
  }
  while (true) {
    if (stop_->abandon()) {
      StopInners(/*drain=*/false);
      return Cancelled("pipeline {}: stopped; the open batches are read again at the next start",
                       options_.id);
    }
    if (restart_requested_) {
      FERRY_RETURN_IF_ERROR(Restart());
      continue;
    }
    FERRY_RETURN_IF_ERROR(InnerFailure());
    if (stop_->stopping()) {
      break;  // what waits in the queues is read again at the next start
    }
    if (options_.until_caught_up && CaughtUp()) {
      if (positions_.Outstanding() == 0) {
        break;
      }
      // Everything is polled: the tables commit what they hold once their queues are empty, at
      // most max_wait without a commit.
      if (!polled_to_goals_.exchange(true)) {
        for (auto& [table, inner] : inners_) {
          inner->queue->SetSealHint();
        }
      }
      if (const int64_t left = positions_.Outstanding(); left != last_outstanding_) {
        last_outstanding_ = left;
        last_commit_ = RouterClock::now();
      }
      if (waited = CheckMaxWait(std::max(last_commit_, last_contact_),
                                "no commit in any table with messages outstanding");
          !waited.ok()) {
        break;
      }
      PublishPositions(/*force=*/false);
      // Back as soon as a table commits (a stop is seen within the short wait).
      positions_.WaitWhileOutstanding(
          last_outstanding_, std::min(options_.poll_timeout, std::chrono::milliseconds(50)));
      continue;
    }
    fresh_.clear();
    positions_fresh_ = false;
    polled_.clear();
    Status st = source_->Poll(options_.max_poll, options_.poll_timeout, &polled_);
    if (!st.ok() && st.code() != StatusCode::kUnavailable) {
      return st.WithContext("pipeline {}", options_.id);
    }
    if (!st.ok()) {
      last_source_error_ = st.message();
    }
    if (!polled_.empty()) {
      last_contact_ = RouterClock::now();
    }
    Status dispatched = Dispatch(polled_);
    if (dispatched.code() == StatusCode::kUnavailable && options_.until_caught_up) {
      waited = dispatched;  // max_wait: the registry, or a table's full queue
      break;
    }
    FERRY_RETURN_IF_ERROR(dispatched);
    if (waited = CheckMaxWait(last_contact_, "no contact with the broker"); !waited.ok()) {
      break;
    }
    PublishPositions(/*force=*/false);
    EvictIdle();
  }
  // A drain (step 9): every inner pipeline commits what it holds.
  Status result;
  for (auto& [table, st] : StopInners(/*drain=*/true)) {
    if (!st.ok() && result.ok()) {
      result = st.WithContext("pipeline {}: routed table {}", options_.id, table);
    }
  }
  if (result.ok()) {
    // What is durable now (everything polled, after a complete drain) is a true L.
    PublishPositions(/*force=*/true);
  }
  return result.ok() ? waited : result;
}

Status Router::Run(StopSignal* stop) {
  stop_ = stop;
  Status result = RunLoop();
  if (metrics_ != nullptr) {
    UpdateMetrics(positions_.LowNow());
    metrics_->up->Set(0);
  }
  if (!result.ok()) {
    StopInners(/*drain=*/false);
  }
  CloseSource();
  FERRY_LOG_INFO(
      "pipeline {}: stopped; {} messages were read again that their table held already, "
      "{} restarts after fencing",
      options_.id, positions_.skipped(), restarts_);
  return result;
}

}  // namespace ferry::pipeline

#include "ferry/pipeline/router.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ferry/base/check.h"
#include "ferry/base/log.h"
#include "ferry/base/retry_unavailable.h"

namespace ferry::pipeline {

using RouterClock = std::chrono::steady_clock;

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
      ledger_(options_.id, std::move(positions_table), std::move(positions_snapshot),
              options_.position_commit_interval),
      metrics_(options_.registry == nullptr
                   ? nullptr
                   : std::make_unique<RouterMetrics>(options_.registry, options_.id,
                                                     options_.heads_interval)),
      tables_(
          {.id = options_.id,
           .queue_messages = options_.queue_messages,
           .max_tables = options_.max_tables,
           .max_open_tables = options_.max_open_tables,
           .drain_timeout = options_.drain_timeout},
          [this](const std::string& table, int route, std::shared_ptr<RouteQueue> queue) {
            return MakeInner(table, route, std::move(queue));
          },
          metrics_.get()) {
  for (const std::string& table : selector_->StaticTables()) {
    tables_.RouteId(table);
  }
  for (const std::string& table : ledger_.recorded()) {
    tables_.RouteId(table);
  }
}

Router::~Router() {
  tables_.Stop(/*drain=*/false);
  CloseSource();
}

std::vector<std::string> Router::tables() const {
  std::vector<std::string> out;
  for (const auto& [table, id] : tables_.known()) {
    out.push_back(table);
  }
  return out;
}

// ---- Router thread: the real source ----

Status Router::StartSource() {
  RetryStop retry{
      .stopping = [this] { return stop_->stopping(); },
      .wait = [this](std::chrono::milliseconds backoff) { stop_->WaitFor(backoff); },
      .on_retry =
          [this](const Status& st, std::chrono::milliseconds backoff) {
            last_source_error_ = st.message();
            if (Status waited = CheckMaxWait(last_contact_, "no contact with the broker");
                !waited.ok()) {
              return st.WithContext("{}", waited.message());
            }
            FERRY_LOG_WARN("pipeline {}: starting the source: {}; trying again in {} ms",
                           options_.id, st.message(), backoff.count());
            return Status::OK();
          }};
  return RetryWhileUnavailable(
      {.initial_backoff = options_.initial_backoff, .max_backoff = options_.max_backoff}, retry,
      [this]() -> Status {
        assigned_.clear();
        polled_high_.clear();
        goals_.clear();
        read_through_.clear();
        goals_known_ = false;
        FERRY_ASSIGN_OR_RETURN(source_, source_factory_());
        Status started = source_->Start(this);
        if (!started.ok()) {
          source_.reset();
        }
        return started;
      });
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
  const std::string app_id = RoutingLedger::ResumeAppId(options_.id, partition.key);
  FERRY_ASSIGN_OR_RETURN(std::optional<int64_t> resume, ledger_.Resume(partition.key));
  for (const auto& [table, id] : tables_.known()) {
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
  read_through_.erase(partition.index);
  if (resume) {
    polled_high_[partition.index] = *resume;
  }
  acked_.erase(partition.index);
  goals_known_ = false;
  for (const auto& [table, inner] : tables_.open()) {
    inner->queue->PushEvent({.kind = RouteItem::Kind::kAssign, .partition = partition});
  }
  FERRY_LOG_INFO("pipeline {}: {} assigned, {}", options_.id, partition.key,
                 resume ? fmt::format("resuming after position {} (the largest of {} tables)",
                                      *resume, tables_.known().size() + 1)
                        : std::string("new to every table (start policy applies)"));
  return resume;
}

void Router::OnRevoked(const source::PartitionInfo& partition) {
  positions_.Forget(partition.index);
  assigned_.erase(partition.index);
  polled_high_.erase(partition.index);
  goals_.erase(partition.index);
  read_through_.erase(partition.index);
  acked_.erase(partition.index);
  ledger_.Forget(partition.index);
  size_t dropped = 0;
  for (const auto& [table, inner] : tables_.open()) {
    dropped += inner->queue->DropPartition(partition.index);
    inner->queue->PushEvent({.kind = RouteItem::Kind::kRevoke, .partition = partition});
  }
  FERRY_LOG_INFO("pipeline {}: {} revoked; {} queued messages of it dropped", options_.id,
                 partition.key, dropped);
}

// ---- Router thread: inner pipelines ----

Result<Router::Inner*> Router::OpenInner(const std::string& table) {
  bool opened = false;
  FERRY_ASSIGN_OR_RETURN(Inner * inner, tables_.Open(table, assigned_, &opened));
  if (opened) {
    ledger_.Note(table);  // recorded after this poll's messages are queued (step 3)
  }
  return inner;
}

Result<std::unique_ptr<Pipeline>> Router::MakeInner(const std::string& table, int route,
                                                    std::shared_ptr<RouteQueue> queue) {
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
                batch->extra_txns[RoutingLedger::ResumeAppId(options_.id, part.key)] = *low;
              }
            }
          },
      .dead_letter_id = fmt::format("{}@{}", options_.id, table),
      .seal_now = [this] { return polled_to_goals_.load(std::memory_order_relaxed); }};
  return inner_factory_(spec);
}

Status Router::Restart() {
  polled_to_goals_ = false;
  ++restarts_;
  FERRY_LOG_WARN(
      "pipeline {}: a routed table was fenced (another writer owns one of its partitions); "
      "restarting every table of the pipeline from the tables' positions",
      options_.id);
  tables_.Stop(/*drain=*/false);
  CloseSource();
  for (const auto& [index, info] : assigned_) {
    positions_.Forget(index);
  }
  restart_requested_ = false;
  fresh_.clear();
  ledger_.NewRound();
  return StartSource();
}

// ---- Router thread: the loop ----

void Router::PublishPositions(bool force) {
  last_publish_ = RouterClock::now();
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
  ledger_.Publish(lows, assigned_, force);
}

void Router::UpdateMetrics(const std::map<int32_t, int64_t>& lows) {
  if (metrics_ == nullptr) {
    return;
  }
  tables_.UpdateQueueGauges();
  metrics_->Update({.tables_open = tables_.open().size(),
                    .tables_known = tables_.known().size(),
                    .rereads = positions_.skipped(),
                    .restarts = restarts_},
                   source_.get(), assigned_, lows, positions_.LowTimestamps());
}

void Router::UpdateGoals() {
  last_goals_ = RouterClock::now();
  Result<std::vector<source::PartitionHead>> heads = source_->Heads();
  if (!heads.ok()) {
    last_source_error_ = heads.status().message();
    return;
  }
  last_contact_ = RouterClock::now();
  for (const source::PartitionHead& h : *heads) {
    for (const auto& [index, info] : assigned_) {
      // A head not answered is unknown, not empty (source.h): no goal yet, asked again.
      if (info.key == h.key && h.answered() && goals_.count(index) == 0) {
        goals_[index] = h.last_position.value_or(-1);
      }
      if (info.key == h.key && h.read_through) {
        read_through_[index] = std::max(read_through_[index], *h.read_through);
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
  bool short_of_goal = false;
  for (const auto& [index, info] : assigned_) {
    auto goal = goals_.find(index);
    if (goal == goals_.end()) {
      short_of_goal = true;  // its head was not answered yet
      continue;
    }
    auto high = polled_high_.find(index);
    auto through = read_through_.find(index);
    if (std::max(high == polled_high_.end() ? -1 : high->second,
                 through == read_through_.end() ? -1 : through->second) < goal->second) {
      short_of_goal = true;
    }
  }
  if (short_of_goal && RouterClock::now() - last_goals_ >= kGoalsEvery) {
    UpdateGoals();  // the source may have read through markers since
  }
  return !short_of_goal;
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
  // Redeliveries of what this assignment polled already are not routed again; they are
  // dropped from `polled` in place. A poll holds runs of one partition: the maps are read once
  // per run.
  size_t kept = 0;
  int32_t run_partition = -1;
  bool run_assigned = false;
  int64_t* run_high = nullptr;  // null: nothing polled since the assignment
  for (size_t i = 0; i < polled.size(); ++i) {
    const source::Message& m = polled[i];
    if (i == 0 || m.partition != run_partition) {
      run_partition = m.partition;
      run_assigned = assigned_.count(m.partition) != 0;
      auto high = polled_high_.find(m.partition);
      run_high = high == polled_high_.end() ? nullptr : &high->second;
    }
    if (!run_assigned || (run_high != nullptr && m.position <= *run_high)) {
      continue;
    }
    if (run_high == nullptr) {
      run_high = &polled_high_[m.partition];
    }
    *run_high = m.position;
    if (kept != i) {
      polled[kept] = m;
    }
    ++kept;
  }
  polled.resize(kept);
  std::vector<source::Message>& fresh = polled;
  Status selected = selector_->Select(fresh, &choices_);
  const RouterClock::time_point waiting_since = RouterClock::now();
  std::chrono::milliseconds backoff = options_.initial_backoff;
  while (selected.code() == StatusCode::kUnavailable) {
    // The routing decoder's schema registry does not answer (step 2): the messages wait, none
    // taken (L stays below them), until it does, a stop, or max_wait.
    if (stop_->stopping() || stop_->abandon() || restart_requested_) {
      return Status::OK();
    }
    FERRY_RETURN_IF_ERROR(tables_.Failure());
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
    std::string_view name;       // as the selector first gave it (interned: the same pointer)
    std::vector<uint32_t> rows;  // into fresh and choices_
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
      groups.push_back(Group{.inner = *inner, .name = choice.table});
    }
    Group& group = groups[static_cast<size_t>(g)];
    // A selector gives one id to one table: the name is the same view, or at least equal.
    FERRY_CHECK_MSG(
        (choice.table.data() == group.name.data() && choice.table.size() == group.name.size()) ||
            choice.table == group.name,
        fmt::format("routing: table id {} chosen for both {} and {}", choice.table_id, group.name,
                    choice.table));
    taken_.push_back({.partition = fresh[i].partition,
                      .position = fresh[i].position,
                      .route = group.inner->route,
                      .timestamp_us = fresh[i].timestamp_us});
    group.rows.push_back(static_cast<uint32_t>(i));
    bad_reasons_[i] = std::move(choices_[i].bad_reason);
  }
  for (size_t i = 0; i < fresh.size(); ++i) {
    group_of_id_[choices_[i].table_id] = -1;
  }
  positions_.Take(taken_);
  for (Group& g : groups) {
    g.inner->chunk.Fill(fresh, g.rows, bad_reasons_);
  }
  for (Group& g : groups) {
    Inner* inner = g.inner;
    // A full queue waits for its table's pipeline, at most max_wait (it may itself wait, e.g.
    // for the schema registry): what is not queued stays outstanding, below no L.
    const RouterClock::time_point push_since = RouterClock::now();
    bool waited_too_long = false;
    bool queued = inner->queue->PushMessages(&inner->chunk, [&, inner = inner] {
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
  ledger_.RecordNoted();
  return Status::OK();
}

Status Router::RunLoop() {
  last_contact_ = RouterClock::now();
  FERRY_RETURN_IF_ERROR(StartSource());
  Status waited;  // max_wait: the reason the run stops after its drain
  if (metrics_ != nullptr) {
    metrics_->SetUp(true);
  }
  while (true) {
    if (stop_->abandon()) {
      tables_.Stop(/*drain=*/false);
      return Cancelled("pipeline {}: stopped; the open batches are read again at the next start",
                       options_.id);
    }
    if (restart_requested_) {
      FERRY_RETURN_IF_ERROR(Restart());
      continue;
    }
    FERRY_RETURN_IF_ERROR(tables_.Failure());
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
        for (const auto& [table, inner] : tables_.open()) {
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
    ledger_.NewRound();
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
    if (polled_.empty() || RouterClock::now() - last_publish_ >= kPublishEvery) {
      PublishPositions(/*force=*/false);
    }
    tables_.EvictIdle(
        [this](const Inner& inner) { return positions_.Outstanding(inner.route) != 0; });
  }
  // A drain (step 9): every inner pipeline commits what it holds.
  Status result;
  for (auto& [table, st] : tables_.Stop(/*drain=*/true)) {
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
    metrics_->SetUp(false);
  }
  if (!result.ok()) {
    tables_.Stop(/*drain=*/false);
  }
  CloseSource();
  FERRY_LOG_INFO(
      "pipeline {}: stopped; {} messages were read again that their table held already, "
      "{} restarts after fencing",
      options_.id, positions_.skipped(), restarts_);
  return result;
}

}  // namespace ferry::pipeline

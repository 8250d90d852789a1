#include "ferry/source/kafka/kafka_source.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/source/kafka/access_refusal.h"
#include "ferry/source/kafka/gap_report.h"
#include "ferry/source/kafka/kafka_conf.h"

namespace ferry::source::kafka {
namespace {

PartitionListPtr NewList(size_t capacity) {
  return PartitionListPtr(rd_kafka_topic_partition_list_new(static_cast<int>(capacity)));
}

rd_kafka_topic_partition_t* AddTo(rd_kafka_topic_partition_list_t* list, const PartitionState& s) {
  return rd_kafka_topic_partition_list_add(list, s.topic.c_str(), s.partition);
}

std::string OffsetName(int64_t offset) {
  if (offset == RD_KAFKA_OFFSET_BEGINNING) {
    return "the log start";
  }
  if (offset == RD_KAFKA_OFFSET_END) {
    return "the log end";
  }
  return std::to_string(offset);
}

}  // namespace

KafkaSource::KafkaSource(const KafkaSourceOptions& options)
    : options_(options), resolver_(options), table_(options.max_rate_per_partition) {}

KafkaSource::~KafkaSource() {
  if (!closed_) {
    Close().IgnoreError();
  }
}

Result<std::unique_ptr<KafkaSource>> KafkaSource::Create(const KafkaSourceOptions& options) {
  FERRY_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<KafkaSource> source(new KafkaSource(options));
  FERRY_RETURN_IF_ERROR(source->Init());
  return source;
}

Status KafkaSource::Init() {
  FERRY_ASSIGN_OR_RETURN(ConfPtr conf, NewConf(ConsumerProperties(options_)));
  rd_kafka_conf_set_opaque(conf.get(), this);
  rd_kafka_conf_set_rebalance_cb(conf.get(), &KafkaSource::RebalanceCallback);
  rd_kafka_conf_set_offset_commit_cb(conf.get(), &KafkaSource::CommitCallback);
  rd_kafka_conf_set_error_cb(conf.get(), &KafkaSource::ErrorCallback);
  const int64_t queue_kbytes = ConfInteger(conf.get(), "queued.max.messages.kbytes");
  const int64_t queue_messages = ConfInteger(conf.get(), "queued.min.messages");
  FERRY_ASSIGN_OR_RETURN(rk_, NewClient(RD_KAFKA_CONSUMER, std::move(conf)));
  // Serve errors, commit results and rebalances from rd_kafka_consumer_poll() (our thread).
  rd_kafka_poll_set_consumer(rk_.get());
  if (options_.fetch_wakeup) {
    wake_policy_ = FetchWakePolicy(queue_kbytes * 1024, queue_messages);
    // The request's answer is not used (fetch_waker.h): its timeout only bounds how long the
    // waker, and so Close (which joins it), waits for one. Enqueuing it is what wakes the
    // broker threads; a reply after 100 ms is dropped by librdkafka. (With a 5 s bound, the
    // close of a routed benchmark run waited 0.14-0.4 s for the last request's answer.)
    waker_ = std::make_unique<FetchWaker>(
        rk_.get(), static_cast<int>(std::min<int64_t>(options_.request_timeout.count(), 100)));
  }
  return Status::OK();
}

Status KafkaSource::Start(PartitionListener* listener) {
  if (started_ || closed_) {
    return Internal("kafka: Start called twice or after Close");
  }
  listener_ = listener;
  if (options_.assignment == Assignment::kManual) {
    FERRY_ASSIGN_OR_RETURN(TopicMatcher matcher, TopicMatcher::Create(options_.topics));
    topic_matcher_ = std::move(matcher);
    started_ = true;
    FERRY_LOG_INFO(
        "kafka: reading every partition of {} (manual assignment; offsets committed to "
        "group '{}' for lag tools)",
        fmt::join(options_.topics, ", "), options_.group_id);
    DiscoverPartitions();
    return Status::OK();
  }
  PartitionListPtr topics = NewList(options_.topics.size());
  for (const std::string& t : options_.topics) {
    rd_kafka_topic_partition_list_add(topics.get(), t.c_str(), RD_KAFKA_PARTITION_UA);
  }
  rd_kafka_resp_err_t err = rd_kafka_subscribe(rk_.get(), topics.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(
        err, fmt::format("kafka: subscribing to {}", fmt::join(options_.topics, ", ")));
  }
  started_ = true;
  FERRY_LOG_INFO("kafka: group '{}' subscribed to {}", options_.group_id,
                 fmt::join(options_.topics, ", "));
  return Status::OK();
}

// ---- Rebalance (steps 2 and 3) ----

void KafkaSource::RebalanceCallback(rd_kafka_t* /*rk*/, rd_kafka_resp_err_t err,
                                    rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  static_cast<KafkaSource*>(opaque)->OnRebalance(err, partitions);
}

void KafkaSource::OnRebalance(rd_kafka_resp_err_t err,
                              rd_kafka_topic_partition_list_t* partitions) {
  cooperative_ = std::strcmp(rd_kafka_rebalance_protocol(rk_.get()), "COOPERATIVE") == 0;
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    OnAssign(partitions);
    return;
  }
  if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
    OnRevoke(partitions);
    return;
  }
  // Anything else: give everything up, as librdkafka's documentation prescribes.
  FERRY_LOG_ERROR("kafka: rebalance failed: {}; dropping the assignment", rd_kafka_err2str(err));
  for (size_t i = 0; i < table_.size(); ++i) {
    Revoke(&table_.at(static_cast<int32_t>(i)));
  }
  if (cooperative_) {
    PartitionListPtr all;
    rd_kafka_topic_partition_list_t* raw = nullptr;
    if (rd_kafka_assignment(rk_.get(), &raw) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      all.reset(raw);
      ErrorPtr(rd_kafka_incremental_unassign(rk_.get(), all.get())).reset();
    }
  } else {
    rd_kafka_assign(rk_.get(), nullptr);
  }
}

void KafkaSource::OnAssign(const rd_kafka_topic_partition_list_t* partitions) {
  ++stats_.assignments;
  std::vector<PartitionState*> states;
  states.reserve(static_cast<size_t>(partitions->cnt));
  for (int i = 0; i < partitions->cnt; ++i) {
    PartitionState& s = table_.GetOrAdd(partitions->elems[i].topic, partitions->elems[i].partition);
    s.pending = true;
    s.assigned = false;
    states.push_back(&s);
  }
  FERRY_LOG_INFO("kafka: {} partition(s) assigned ({} protocol)", states.size(),
                 cooperative_ ? "cooperative" : "eager");
  StartPartitions(states, /*from_callback=*/true);
}

void KafkaSource::StartPartitions(const std::vector<PartitionState*>& states, bool from_callback) {
  std::vector<PartitionState*> started;
  std::vector<PartitionState*> by_policy;
  Status first_error;
  for (PartitionState* s : states) {
    if (!s->announced) {
      Result<std::optional<int64_t>> position = listener_->OnAssigned(s->info);
      if (!position.ok()) {
        if (first_error.ok()) {
          first_error =
              position.status().WithContext("{}: reading the table position", s->info.key);
        }
        continue;
      }
      s->announced = true;
      s->table_position = *position;
    }
    if (s->table_position.has_value()) {
      s->start_offset = *s->table_position + 1;
      started.push_back(s);
    } else {
      by_policy.push_back(s);
    }
  }
  if (!by_policy.empty()) {
    PartitionListPtr list = NewList(by_policy.size());
    for (PartitionState* s : by_policy) {
      AddTo(list.get(), *s);
    }
    Status resolved = resolver_.Resolve(rk_.get(), list.get());
    if (resolved.ok()) {
      for (size_t i = 0; i < by_policy.size(); ++i) {
        by_policy[i]->start_offset = list->elems[i].offset;
        started.push_back(by_policy[i]);
      }
    } else if (first_error.ok()) {
      first_error = resolved.WithContext("kafka: start policy {}", StartPolicyName(options_.start));
    }
  }
  // Inside the callback librdkafka waits for the assign call even when it carries no partition
  // (a cooperative rebalance often does); without one the group never settles and the consumer
  // cannot even close.
  Status assigned = from_callback || !started.empty() ? Assign(started) : Status::OK();
  if (first_error.ok()) {
    first_error = assigned;
  }
  if (!first_error.ok() && deferred_error_.ok()) {
    deferred_error_ = first_error;
  }
}

Status KafkaSource::Assign(const std::vector<PartitionState*>& started) {
  for (PartitionState* s : started) {
    s->pending = false;
    s->assigned = true;
    s->last_taken = -1;
    FERRY_LOG_INFO("kafka: {} starts at {} ({})", s->info.key, OffsetName(s->start_offset),
                   s->table_position ? "table position + 1" : StartPolicyName(options_.start));
  }
  if (cooperative_) {
    PartitionListPtr list = NewList(started.size());
    for (PartitionState* s : started) {
      AddTo(list.get(), *s)->offset = s->start_offset;
    }
    ErrorPtr error(rd_kafka_incremental_assign(rk_.get(), list.get()));
    if (error != nullptr) {
      return Internal("kafka: incremental assign failed: {}", rd_kafka_error_string(error.get()));
    }
    return Status::OK();
  }
  // Eager: the assignment is replaced as a whole, so it lists every partition being consumed;
  // those already running continue after the last offset taken.
  PartitionListPtr list = NewList(table_.size());
  for (size_t i = 0; i < table_.size(); ++i) {
    PartitionState& s = table_.at(static_cast<int32_t>(i));
    if (s.assigned) {
      AddTo(list.get(), s)->offset = s.NextOffset();
    }
  }
  rd_kafka_resp_err_t err = rd_kafka_assign(rk_.get(), list.get());
  return err == RD_KAFKA_RESP_ERR_NO_ERROR ? Status::OK()
                                           : KafkaErrorStatus(err, "kafka: assign failed");
}

void KafkaSource::OnRevoke(const rd_kafka_topic_partition_list_t* partitions) {
  ++stats_.revocations;
  const bool lost = rd_kafka_assignment_lost(rk_.get()) != 0;
  for (int i = 0; i < partitions->cnt; ++i) {
    PartitionState* s = table_.Find(partitions->elems[i].topic, partitions->elems[i].partition);
    if (s != nullptr) {
      Revoke(s);
    }
  }
  if (lost) {
    FERRY_LOG_WARN(
        "kafka: {} partition(s) lost (session timed out); another consumer may own them now, "
        "and the table's commit fencing keeps that exact",
        partitions->cnt);
  } else {
    FERRY_LOG_INFO("kafka: {} partition(s) revoked", partitions->cnt);
  }
  if (cooperative_) {
    ErrorPtr error(rd_kafka_incremental_unassign(rk_.get(), partitions));
    if (error != nullptr) {
      FERRY_LOG_ERROR("kafka: incremental unassign failed: {}", rd_kafka_error_string(error.get()));
    }
  } else {
    rd_kafka_assign(rk_.get(), nullptr);
  }
}

void KafkaSource::Revoke(PartitionState* s) {
  if (s->announced) {
    listener_->OnRevoked(s->info);
  }
  std::erase_if(taken_, [s](const Taken& t) { return t.state == s; });
  if (s->paused) {
    SetPaused(s, false);  // librdkafka keeps an application pause across re-assignment
  }
  s->held.clear();
  s->announced = false;
  s->table_position.reset();
  s->assigned = false;
  s->pending = false;
  s->last_taken = -1;
}

void KafkaSource::DiscoverPartitions() {
  const std::chrono::milliseconds refresh = MetadataRefresh(options_);
  const int64_t refresh_us = refresh.count() * 1000;
  // Poll blocks for this request: 1 s while the cluster answers, longer after failures (a slow
  // cluster), never above request_timeout.
  const int timeout_ms = static_cast<int>(std::clamp<int64_t>(
      discovery_retry_us_ / 500, 1000, std::max<int64_t>(1000, options_.request_timeout.count())));
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk_.get(), /*all_topics=*/1, nullptr, &raw, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    discovery_retry_us_ = std::clamp<int64_t>(discovery_retry_us_ * 2, 500'000, refresh_us);
    next_discovery_us_ = MonotonicMicros() + discovery_retry_us_;
    NoteBrokerError(
        fmt::format("cluster metadata for the topics' partitions: {}", rd_kafka_err2str(err)));
    return;
  }
  MetadataPtr md(raw);
  discovery_retry_us_ = 0;
  next_discovery_us_ = MonotonicMicros() + refresh_us;
  std::vector<PartitionState*> added;
  std::set<std::string> found;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& topic = md->topics[i];
    if (topic.err != RD_KAFKA_RESP_ERR_NO_ERROR || !topic_matcher_->Matches(topic.topic)) {
      continue;
    }
    found.insert(topic.topic);
    for (int p = 0; p < topic.partition_cnt; ++p) {
      const int32_t partition = topic.partitions[p].id;
      PartitionState* s = table_.Find(topic.topic, partition);
      if (s != nullptr && (s->assigned || s->pending)) {
        continue;
      }
      s = &table_.GetOrAdd(topic.topic, partition);
      s->pending = true;
      added.push_back(s);
    }
  }
  for (const std::string& name : topic_matcher_->names()) {
    if (found.count(name) != 0) {
      missing_topics_.erase(name);
      continue;
    }
    // Metadata for all topics leaves out the topics the principal may not DESCRIBE; asked by
    // name, the broker answers TOPIC_AUTHORIZATION_FAILED instead (access_refusal.h).
    if (Status refused = RefusedTopic(name, timeout_ms); !refused.ok()) {
      if (deferred_error_.ok()) {
        deferred_error_ = refused;
      }
      return;
    }
    if (missing_topics_.insert(name).second) {
      FERRY_LOG_WARN("kafka: topic '{}' does not exist (yet); looking again every {} ms", name,
                     refresh.count());
    }
  }
  if (!added.empty()) {
    ++stats_.assignments;
    FERRY_LOG_INFO("kafka: {} partition(s) assigned (manual)", added.size());
    StartPartitions(added, /*from_callback=*/false);
  }
}

Status KafkaSource::RefusedTopic(const std::string& name, int timeout_ms) {
  TopicPtr topic(rd_kafka_topic_new(rk_.get(), name.c_str(), nullptr));
  const rd_kafka_metadata_t* raw = nullptr;
  if (topic == nullptr ||
      rd_kafka_metadata(rk_.get(), /*all_topics=*/0, topic.get(), &raw, timeout_ms) !=
          RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::OK();  // unknown: asked again at the next look
  }
  MetadataPtr md(raw);
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_resp_err_t err = md->topics[i].err;
    if (name == md->topics[i].topic && IsAccessRefusal(err)) {
      return AccessRefusal(err, "metadata for the topic refused", name, options_);
    }
  }
  return Status::OK();
}

Status KafkaSource::RetryPending() {
  std::vector<PartitionState*> pending;
  for (size_t i = 0; i < table_.size(); ++i) {
    PartitionState& s = table_.at(static_cast<int32_t>(i));
    if (s.pending) {
      pending.push_back(&s);
    }
  }
  if (!pending.empty()) {
    StartPartitions(pending, /*from_callback=*/false);
  }
  Status error = deferred_error_;
  deferred_error_ = Status::OK();
  return error;
}

// ---- Poll (steps 4 and 5) ----

Status KafkaSource::Poll(size_t max_messages, std::chrono::milliseconds timeout,
                         std::vector<Message>* out) {
  out->clear();
  taken_.clear();
  if (!started_ || closed_) {
    return Internal("kafka: Poll before Start or after Close");
  }
  if (topic_matcher_.has_value() && MonotonicMicros() >= next_discovery_us_) {
    DiscoverPartitions();
  }
  FERRY_RETURN_IF_ERROR(RetryPending());
  const int64_t deadline_us = MonotonicMicros() + timeout.count() * 1000;
  ReleaseHeld(max_messages, MonotonicMicros());
  while (taken_.size() < max_messages && deferred_error_.ok()) {
    int wait_ms = 0;
    const int64_t now_us = MonotonicMicros();
    if (taken_.empty()) {
      int64_t wait_us = std::max<int64_t>(0, deadline_us - now_us);
      if (!held_partitions_.empty()) {
        wait_us = std::min(wait_us, MicrosUntilHeldToken(now_us));
      }
      wait_ms = static_cast<int>((wait_us + 999) / 1000);
    }
    rd_kafka_message_t* raw = rd_kafka_consumer_poll(rk_.get(), wait_ms);
    if (raw == nullptr && waker_ != nullptr && wake_policy_.QueueEmpty()) {
      waker_->Wake();
    }
    if (raw == nullptr) {
      ReleaseHeld(max_messages, MonotonicMicros());
      if (!taken_.empty() || MonotonicMicros() >= deadline_us) {
        break;
      }
      continue;
    }
    if (raw->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      MessagePtr error(raw);
      Status st = HandleConsumerError(*error);
      if (!st.ok() && deferred_error_.ok()) {
        deferred_error_ = st;
      }
      continue;
    }
    Take(raw, now_us);
  }
  if (taken_.empty() && !deferred_error_.ok()) {
    Status error = deferred_error_;
    deferred_error_ = Status::OK();
    return error;
  }
  Emit(out);
  return Status::OK();
}

void KafkaSource::Take(rd_kafka_message_t* raw, int64_t now_us) {
  MessagePtr message(raw);
  PartitionState* s = table_.FindForMessage(*raw);
  if (s == nullptr || !s->assigned) {
    return;  // a late message of a partition given away; librdkafka normally filters these
  }
  if (broker_log_.active()) {
    FERRY_LOG_INFO("kafka: receiving messages again");
    broker_log_.Reset();
  }
  if ((s->start_offset >= 0 && raw->offset < s->start_offset) || raw->offset <= s->last_taken) {
    ++stats_.redeliveries_dropped;
    return;
  }
  s->last_taken = raw->offset;
  wake_policy_.Took(static_cast<int64_t>(raw->len));
  if (!s->held.empty() || !s->bucket.TryTake(now_us)) {
    if (s->held.empty()) {
      held_partitions_.push_back(s->info.index);
    }
    s->held.push_back(std::move(message));
    if (!s->paused) {
      SetPaused(s, true);
    }
    return;
  }
  taken_.push_back(Taken{std::move(message), s});
}

void KafkaSource::ReleaseHeld(size_t max_messages, int64_t now_us) {
  std::erase_if(held_partitions_, [&](int32_t index) {
    PartitionState& s = table_.at(index);
    while (!s.held.empty() && taken_.size() < max_messages && s.bucket.TryTake(now_us)) {
      taken_.push_back(Taken{std::move(s.held.front()), &s});
      s.held.pop_front();
    }
    if (s.held.empty() && s.paused) {
      SetPaused(&s, false);
    }
    return s.held.empty();
  });
}

int64_t KafkaSource::MicrosUntilHeldToken(int64_t now_us) {
  int64_t soonest = INT64_MAX;
  for (int32_t index : held_partitions_) {
    soonest = std::min(soonest, table_.at(index).bucket.MicrosUntilToken(now_us));
  }
  return soonest;
}

void KafkaSource::SetPaused(PartitionState* s, bool paused) {
  PartitionListPtr list = NewList(1);
  AddTo(list.get(), *s);
  rd_kafka_resp_err_t err = paused ? rd_kafka_pause_partitions(rk_.get(), list.get())
                                   : rd_kafka_resume_partitions(rk_.get(), list.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR || list->elems[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    FERRY_LOG_WARN("kafka: {} {} failed: {}", paused ? "pausing" : "resuming", s->info.key,
                   rd_kafka_err2str(err != RD_KAFKA_RESP_ERR_NO_ERROR ? err : list->elems[0].err));
  }
  s->paused = paused;
  if (paused) {
    ++stats_.rate_limit_pauses;
    ++s->pauses;
    s->paused_since_us = MonotonicMicros();
  } else if (s->paused_since_us != 0) {
    stats_.rate_limited_us += MonotonicMicros() - s->paused_since_us;
    s->paused_since_us = 0;
  }
}

int64_t KafkaSource::RateLimitedMicros() const {
  int64_t total = stats_.rate_limited_us;
  int64_t now_us = MonotonicMicros();
  for (int32_t index : held_partitions_) {
    const PartitionState& s = table_.at(index);
    if (s.paused && s.paused_since_us != 0) {
      total += now_us - s.paused_since_us;
    }
  }
  return total;
}

int64_t KafkaSource::RateLimitPauses(int32_t partition) const {
  return partition >= 0 && static_cast<size_t>(partition) < table_.size()
             ? table_.at(partition).pauses
             : 0;
}

Status KafkaSource::HandleConsumerError(const rd_kafka_message_t& message) {
  switch (message.err) {
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET: {
      RefusedOffset refused = InspectRefusal(rk_.get(), message, options_.request_timeout);
      PartitionState* s =
          refused.topic.empty() ? nullptr : table_.Find(refused.topic, refused.partition);
      if (options_.on_gap == OnGap::kContinue && refused.BelowLogStart() && s != nullptr &&
          s->assigned && message.rkt != nullptr) {
        return SkipGap(s, refused);
      }
      Status lost = RefusalStatus(refused);
      FERRY_LOG_ERROR("{}", lost.message());
      return lost;
    }
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
      return Status::OK();
    case RD_KAFKA_RESP_ERR__FATAL: {
      char reason[512] = {};
      rd_kafka_resp_err_t cause = rd_kafka_fatal_error(rk_.get(), reason, sizeof(reason));
      return Internal("kafka: fatal consumer error {}: {}", rd_kafka_err2name(cause), reason);
    }
    default: {
      if (IsAccessRefusal(message.err)) {
        return AccessRefusal(message.err, rd_kafka_message_errstr(&message),
                             message.rkt != nullptr ? rd_kafka_topic_name(message.rkt) : "",
                             options_);
      }
      std::string where =
          message.rkt != nullptr
              ? KafkaPartitionKey(rd_kafka_topic_name(message.rkt), message.partition) + ": "
              : std::string();
      NoteBrokerError(where + rd_kafka_message_errstr(&message));
      return Status::OK();
    }
  }
}

Status KafkaSource::SkipGap(PartitionState* s, const RefusedOffset& refused) {
  FERRY_LOG_WARN(
      "{}: skipping offsets {}..{}: retention removed them before they were ingested "
      "(log start is now {}; on_gap = \"continue\")",
      s->info.key, refused.wanted, refused.low - 1, refused.low);
  gaps_.push_back(Gap{.partition = s->info.index,
                      .key = s->info.key,
                      .first_position = refused.wanted,
                      .last_position = refused.low - 1,
                      .reason = "removed by the topic's retention (or DeleteRecords) before "
                                "ingestion"});
  ++stats_.gaps;
  stats_.lost_offsets += refused.low - refused.wanted;
  // After the refusal librdkafka has stopped fetching the partition, and rd_kafka_seek does not
  // start it again (2.0.2: the partition stays silent). Assigning it again at the log start does;
  // nothing at or below last_taken is delivered twice.
  s->start_offset = refused.low;
  s->last_taken = refused.low - 1;
  if (!cooperative_) {
    return Assign({});  // eager or manual: the whole list again, each at its NextOffset()
  }
  PartitionListPtr list = NewList(1);
  AddTo(list.get(), *s)->offset = refused.low;
  ErrorPtr error(rd_kafka_incremental_unassign(rk_.get(), list.get()));
  if (error == nullptr) {
    error.reset(rd_kafka_incremental_assign(rk_.get(), list.get()));
  }
  if (error != nullptr) {
    return Internal("{}: assigning again at the log start {} past a gap: {}", s->info.key,
                    refused.low, rd_kafka_error_string(error.get()));
  }
  return Status::OK();
}

std::vector<Gap> KafkaSource::TakeGaps() {
  return std::exchange(gaps_, {});
}

void KafkaSource::ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  auto* self = static_cast<KafkaSource*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__FATAL) {
    char cause[512] = {};
    rd_kafka_fatal_error(rk, cause, sizeof(cause));
    FERRY_LOG_ERROR("kafka: fatal error: {} ({})", reason, cause);
    if (self->deferred_error_.ok()) {
      self->deferred_error_ = Internal("kafka: fatal error: {} ({})", reason, cause);
    }
    return;
  }
  // A refused login, certificate or ACL: stop instead of letting librdkafka retry forever
  // (access_refusal.h).
  if (const auto code = static_cast<rd_kafka_resp_err_t>(err); IsAccessRefusal(code)) {
    if (self->deferred_error_.ok()) {
      self->deferred_error_ = AccessRefusal(code, reason, "", self->options_);
    }
    return;
  }
  self->NoteBrokerError(reason);
}

void KafkaSource::NoteBrokerError(std::string_view what) {
  ++stats_.broker_errors;
  int64_t suppressed = 0;
  if (broker_log_.Allow(MonotonicMicros(), &suppressed)) {
    FERRY_LOG_WARN("kafka: {} (librdkafka retries; {} similar errors not logged)", what,
                   suppressed);
  }
}

void KafkaSource::Emit(std::vector<Message>* out) {
  headers_.clear();
  for (Taken& t : taken_) {
    rd_kafka_headers_t* headers = nullptr;
    t.header_begin = headers_.size();
    if (options_.read_headers &&
        rd_kafka_message_headers(t.message.get(), &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const char* name = nullptr;
      const void* value = nullptr;
      size_t size = 0;
      for (size_t i = 0;
           rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
           ++i) {
        headers_.push_back(Header{name, std::string_view(static_cast<const char*>(value), size)});
      }
    }
    t.header_count = headers_.size() - t.header_begin;
  }
  out->reserve(taken_.size());
  for (const Taken& t : taken_) {
    const rd_kafka_message_t& m = *t.message;
    Message msg;
    msg.partition = t.state->info.index;
    msg.position = m.offset;
    msg.payload = std::string_view(static_cast<const char*>(m.payload), m.len);
    msg.key = std::string_view(static_cast<const char*>(m.key), m.key_len);
    msg.topic = t.state->topic;
    msg.kafka_partition = m.partition;
    rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    int64_t ms = rd_kafka_message_timestamp(&m, &type);
    msg.timestamp_us = ms >= 0 ? ms * 1000 : 0;
    msg.headers = std::span<const Header>(headers_.data() + t.header_begin, t.header_count);
    out->push_back(msg);
  }
  stats_.messages += static_cast<int64_t>(taken_.size());
}

// ---- Acknowledge, Heads, Close (steps 6 and 7) ----

void KafkaSource::Acknowledge(std::span<const CommittedPosition> positions) {
  if (closed_ || !started_) {
    return;
  }
  PartitionListPtr list = NewList(positions.size());
  for (const CommittedPosition& p : positions) {
    if (p.partition < 0 || static_cast<size_t>(p.partition) >= table_.size()) {
      continue;
    }
    const PartitionState& s = table_.at(p.partition);
    if (s.assigned) {  // the new owner commits the others
      AddTo(list.get(), s)->offset = p.position + 1;
    }
  }
  if (list->cnt == 0) {
    return;
  }
  rd_kafka_resp_err_t err = rd_kafka_commit(rk_.get(), list.get(), /*async=*/1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    CommitCallback(rk_.get(), err, list.get(), this);
  }
}

void KafkaSource::CommitCallback(rd_kafka_t* /*rk*/, rd_kafka_resp_err_t err,
                                 rd_kafka_topic_partition_list_t* offsets, void* opaque) {
  auto* self = static_cast<KafkaSource*>(opaque);
  rd_kafka_resp_err_t first = err;
  for (int i = 0; first == RD_KAFKA_RESP_ERR_NO_ERROR && offsets != nullptr && i < offsets->cnt;
       ++i) {
    first = offsets->elems[i].err;
  }
  if (first == RD_KAFKA_RESP_ERR_NO_ERROR || first == RD_KAFKA_RESP_ERR__NO_OFFSET) {
    ++self->stats_.offset_commits;
    self->commit_log_.Reset();
    return;
  }
  ++self->stats_.offset_commit_failures;
  int64_t suppressed = 0;
  if (self->commit_log_.Allow(MonotonicMicros(), &suppressed)) {
    FERRY_LOG_WARN(
        "kafka: committing group offsets failed: {} (advisory only; {} similar failures not "
        "logged)",
        rd_kafka_err2str(first), suppressed);
  }
}

Result<std::vector<PartitionHead>> KafkaSource::Heads() {
  if (closed_) {
    return Internal("kafka: Heads after Close");
  }
  // The log start librdkafka keeps from fetch responses, and the end: the cached high watermark
  // for a partition read through it, else asked of the brokers for those partitions together,
  // one ListOffsets request per broker (rd_kafka_offsets_for_times with the special timestamps;
  // asking each partition in turn took 0.1-0.7 s for 128 partitions). Under read_committed
  // ListOffsets answers the last stable offset, the first offset of the oldest open transaction,
  // beyond which the consumer cannot read (the high watermark would hold --until-caught-up
  // forever behind an open transaction, tests/integration/kafka_txn_test.cc). Partitions without
  // a cached log start (before their first fetch) ask for it the same way.
  struct Mark {
    const PartitionState* state;
    int64_t low = -1;
    int64_t high = -1;
    int64_t cached_high = -1;  // the high watermark of the last fetch: if ListOffsets fails
    int64_t read_through = -1;
  };
  std::vector<Mark> marks;
  std::vector<size_t> no_end;  // into marks
  std::vector<size_t> no_low;  // into marks
  for (size_t i = 0; i < table_.size(); ++i) {
    const PartitionState& s = table_.at(static_cast<int32_t>(i));
    if (!s.assigned) {
      continue;
    }
    Mark m{.state = &s};
    rd_kafka_resp_err_t err = rd_kafka_get_watermark_offsets(rk_.get(), s.topic.c_str(),
                                                             s.partition, &m.low, &m.cached_high);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR || m.low < 0) {
      m.low = -1;
      no_low.push_back(marks.size());
    }
    marks.push_back(m);
  }
  if (!marks.empty()) {
    // How far Poll has read each partition: librdkafka's application position is the offset
    // after the last message or control record (commit/abort marker) the consumer returned,
    // aborted records being skipped below a marker. With nothing held back by the rate limit,
    // everything below it was delivered.
    PartitionListPtr positions = NewList(marks.size());
    for (const Mark& m : marks) {
      AddTo(positions.get(), *m.state);
    }
    if (rd_kafka_position(rk_.get(), positions.get()) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      for (size_t j = 0; j < marks.size(); ++j) {
        const rd_kafka_topic_partition_t& e = positions->elems[j];
        if (e.err == RD_KAFKA_RESP_ERR_NO_ERROR && e.offset >= 0 && marks[j].state->held.empty()) {
          marks[j].read_through = e.offset - 1;
        }
      }
    }
  }
  bool all_cached = true;
  for (size_t j = 0; j < marks.size(); ++j) {
    Mark& m = marks[j];
    if (m.cached_high >= 0 && m.low >= 0 && m.read_through >= m.cached_high - 1) {
      m.high = m.cached_high;  // read through the high watermark: no open transaction holds it
    } else {
      all_cached = all_cached && m.cached_high >= 0;
      no_end.push_back(j);
    }
  }
  const int64_t deadline_us = MonotonicMicros() + options_.request_timeout.count() * 1000;
  for (int64_t which : {int64_t{RD_KAFKA_OFFSET_END}, int64_t{RD_KAFKA_OFFSET_BEGINNING}}) {
    const std::vector<size_t>& ask = which == RD_KAFKA_OFFSET_END ? no_end : no_low;
    int64_t left_ms = (deadline_us - MonotonicMicros()) / 1000;
    if (which == RD_KAFKA_OFFSET_END && all_cached) {
      // A broker that does not answer soon leaves the cached high watermarks (a pipeline thread
      // must not wait request_timeout at each heads refresh of an outage).
      left_ms = std::min<int64_t>(left_ms, 1000);
    }
    if (ask.empty() || left_ms <= 0) {
      continue;
    }
    PartitionListPtr list = NewList(ask.size());
    for (size_t k : ask) {
      AddTo(list.get(), *marks[k].state)->offset = which;  // the timestamp asked for
    }
    if (rd_kafka_offsets_for_times(rk_.get(), list.get(), static_cast<int>(left_ms)) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      continue;  // unknown: the cached high watermark, or no positions
    }
    for (size_t j = 0; j < ask.size(); ++j) {
      const rd_kafka_topic_partition_t& e = list->elems[j];
      if (e.err == RD_KAFKA_RESP_ERR_NO_ERROR && e.offset >= 0) {
        (which == RD_KAFKA_OFFSET_END ? marks[ask[j]].high : marks[ask[j]].low) = e.offset;
      }
    }
  }
  std::vector<PartitionHead> heads;
  heads.reserve(marks.size());
  for (Mark& m : marks) {
    if (m.high < 0 && m.cached_high >= 0 && m.low >= 0) {
      m.high = m.cached_high;
    }
    PartitionHead head;
    head.key = m.state->info.key;
    if (m.low >= 0 && m.high >= 0) {
      head.first_position = m.low;
      head.last_position = m.high - 1;
    }
    if (m.read_through >= 0) {
      head.read_through = m.read_through;
    }
    heads.push_back(std::move(head));
  }
  return heads;
}

std::vector<PartitionInfo> KafkaSource::Assignment() const {
  std::vector<PartitionInfo> out;
  for (size_t i = 0; i < table_.size(); ++i) {
    const PartitionState& s = table_.at(static_cast<int32_t>(i));
    if (s.assigned) {
      out.push_back(s.info);
    }
  }
  return out;
}

Status KafkaSource::Close() {
  if (closed_) {
    return Status::OK();
  }
  closed_ = true;
  taken_.clear();
  if (waker_ != nullptr) {
    fetch_wakeups_ = waker_->wakes();
    waker_.reset();  // its requests use the handle
  }
  Status result;
  if (started_ && rk_ != nullptr && topic_matcher_.has_value()) {
    // Manual assignment: no group to leave; the partitions are given up here.
    for (size_t i = 0; i < table_.size(); ++i) {
      PartitionState& s = table_.at(static_cast<int32_t>(i));
      if (s.assigned || s.pending) {
        Revoke(&s);
      }
    }
    rd_kafka_assign(rk_.get(), nullptr);
  }
  if (started_ && rk_ != nullptr) {
    QueuePtr queue(rd_kafka_queue_new(rk_.get()));
    ErrorPtr error(rd_kafka_consumer_close_queue(rk_.get(), queue.get()));
    const int64_t deadline_us = MonotonicMicros() + options_.close_timeout.count() * 1000;
    while (error == nullptr && !rd_kafka_consumer_closed(rk_.get()) &&
           MonotonicMicros() < deadline_us) {
      EventPtr event(rd_kafka_queue_poll(queue.get(), 100));
      if (event == nullptr) {
        continue;
      }
      if (rd_kafka_event_type(event.get()) == RD_KAFKA_EVENT_REBALANCE) {
        OnRebalance(rd_kafka_event_error(event.get()),
                    rd_kafka_event_topic_partition_list(event.get()));
      } else if (rd_kafka_event_type(event.get()) == RD_KAFKA_EVENT_OFFSET_COMMIT) {
        CommitCallback(rk_.get(), rd_kafka_event_error(event.get()),
                       const_cast<rd_kafka_topic_partition_list_t*>(
                           rd_kafka_event_topic_partition_list(event.get())),
                       this);
      }
    }
    if (error != nullptr) {
      result = Internal("kafka: closing the consumer: {}", rd_kafka_error_string(error.get()));
    } else if (!rd_kafka_consumer_closed(rk_.get())) {
      result = Unavailable("kafka: leaving group '{}' took longer than {} ms", options_.group_id,
                           options_.close_timeout.count());
    }
  }
  for (size_t i = 0; i < table_.size(); ++i) {
    table_.at(static_cast<int32_t>(i)).held.clear();
  }
  if (rk_ != nullptr && !DestroyWithin(rk_.release(), options_.close_timeout)) {
    FERRY_LOG_WARN(
        "kafka: destroying the consumer of group '{}' did not finish within {} ms (a librdkafka "
        "2.0.x broker thread that never ends, as after a topic was deleted under a group "
        "consumer); its threads are left behind",
        options_.group_id, options_.close_timeout.count());
  }
  FERRY_LOG_INFO("kafka: consumer of group '{}' closed", options_.group_id);
  return result;
}

}  // namespace ferry::source::kafka

#include "ferry/source/kafka/kafka_source.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <utility>

#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/source/kafka/access_refusal.h"
#include "ferry/source/kafka/kafka_conf.h"
#include "ferry/source/kafka/partition_heads.h"

namespace ferry::source::kafka {

KafkaSource::KafkaSource(const KafkaSourceOptions& options)
    : options_(options),
      consumer_(options.group_id, options.close_timeout),
      table_(options.max_rate_per_partition),
      assignment_(&options_, &table_, &stats_, this) {}

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
  FERRY_ASSIGN_OR_RETURN(KafkaPtr rk, NewClient(RD_KAFKA_CONSUMER, std::move(conf)));
  consumer_.Reset(std::move(rk));
  assignment_.Bind(consumer_.get());
  // Serve errors, commit results and rebalances from rd_kafka_consumer_poll() (our thread).
  rd_kafka_poll_set_consumer(consumer_.get());
  if (options_.fetch_wakeup) {
    wake_policy_ = FetchWakePolicy(queue_kbytes * 1024, queue_messages);
    // The request's answer is not used (fetch_waker.h): its timeout only bounds how long the
    // waker, and so Close (which joins it), waits for one. Enqueuing it is what wakes the
    // broker threads; a reply after 100 ms is dropped by librdkafka. (With a 5 s bound, the
    // close of a routed benchmark run waited 0.14-0.4 s for the last request's answer.)
    waker_ = std::make_unique<FetchWaker>(
        consumer_.get(),
        static_cast<int>(std::min<int64_t>(options_.request_timeout.count(), 100)));
  }
  return Status::OK();
}

Status KafkaSource::Start(PartitionListener* listener) {
  if (started_ || closed_) {
    return Internal("kafka: Start called twice or after Close");
  }
  FERRY_RETURN_IF_ERROR(assignment_.Start(listener));
  if (assignment_.manual()) {
    started_ = true;
    return Status::OK();
  }
  PartitionListPtr topics = NewPartitionList(options_.topics.size());
  for (const std::string& t : options_.topics) {
    rd_kafka_topic_partition_list_add(topics.get(), t.c_str(), RD_KAFKA_PARTITION_UA);
  }
  rd_kafka_resp_err_t err = rd_kafka_subscribe(consumer_.get(), topics.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(
        err, fmt::format("kafka: subscribing to {}", fmt::join(options_.topics, ", ")));
  }
  started_ = true;
  FERRY_LOG_INFO("kafka: group '{}' subscribed to {}", options_.group_id,
                 fmt::join(options_.topics, ", "));
  return Status::OK();
}

void KafkaSource::RebalanceCallback(rd_kafka_t* /*rk*/, rd_kafka_resp_err_t err,
                                    rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  static_cast<KafkaSource*>(opaque)->assignment_.OnRebalance(err, partitions);
}

void KafkaSource::Forget(PartitionState* s) {
  std::erase_if(taken_, [s](const Taken& t) { return t.state == s; });
  if (s->paused) {
    SetPaused(s, false);  // librdkafka keeps an application pause across re-assignment
  }
}

void KafkaSource::Defer(Status error) {
  if (deferred_error_.ok()) {
    deferred_error_ = std::move(error);
  }
}

// ---- Poll (steps 4 and 5) ----

Status KafkaSource::Poll(size_t max_messages, std::chrono::milliseconds timeout,
                         std::vector<Message>* out) {
  out->clear();
  taken_.clear();
  if (!started_ || closed_) {
    return Internal("kafka: Poll before Start or after Close");
  }
  assignment_.Refresh();
  FERRY_RETURN_IF_ERROR(TakeDeferred());
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
    rd_kafka_message_t* raw = rd_kafka_consumer_poll(consumer_.get(), wait_ms);
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
      if (Status st = HandleConsumerError(*error); !st.ok()) {
        Defer(std::move(st));
      }
      continue;
    }
    Take(raw, now_us);
  }
  if (taken_.empty() && !deferred_error_.ok()) {
    return TakeDeferred();
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
  PartitionListPtr list = NewPartitionList(1);
  AddToList(list.get(), *s);
  rd_kafka_resp_err_t err = paused ? rd_kafka_pause_partitions(consumer_.get(), list.get())
                                   : rd_kafka_resume_partitions(consumer_.get(), list.get());
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
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
      return assignment_.OnOutOfRange(message);
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
      return Status::OK();
    case RD_KAFKA_RESP_ERR__FATAL: {
      char reason[512] = {};
      rd_kafka_resp_err_t cause = rd_kafka_fatal_error(consumer_.get(), reason, sizeof(reason));
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

void KafkaSource::ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  auto* self = static_cast<KafkaSource*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__FATAL) {
    char cause[512] = {};
    rd_kafka_fatal_error(rk, cause, sizeof(cause));
    FERRY_LOG_ERROR("kafka: fatal error: {} ({})", reason, cause);
    self->Defer(Internal("kafka: fatal error: {} ({})", reason, cause));
    return;
  }
  // A refused login, certificate or ACL: stop instead of letting librdkafka retry forever
  // (access_refusal.h).
  if (const auto code = static_cast<rd_kafka_resp_err_t>(err); IsAccessRefusal(code)) {
    self->Defer(AccessRefusal(code, reason, "", self->options_));
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
  PartitionListPtr list = NewPartitionList(positions.size());
  for (const CommittedPosition& p : positions) {
    if (p.partition < 0 || static_cast<size_t>(p.partition) >= table_.size()) {
      continue;
    }
    const PartitionState& s = table_.at(p.partition);
    if (s.assigned) {  // the new owner commits the others
      AddToList(list.get(), s)->offset = p.position + 1;
    }
  }
  if (list->cnt == 0) {
    return;
  }
  rd_kafka_resp_err_t err = rd_kafka_commit(consumer_.get(), list.get(), /*async=*/1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    CommitCallback(consumer_.get(), err, list.get(), this);
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
  // The group's offsets are advisory, but a refusal (the principal lost READ on the group or a
  // topic while ferry runs) is not going to heal by retrying: stop, as at the start
  // (access_refusal.h). The Delta commit these offsets follow is already durable.
  if (IsAccessRefusal(first)) {
    const char* topic = "";
    for (int i = 0; offsets != nullptr && i < offsets->cnt; ++i) {
      if (offsets->elems[i].err == first) {
        topic = offsets->elems[i].topic;
        break;
      }
    }
    self->Defer(
        AccessRefusal(first, "committing the group's offsets was refused", topic, self->options_));
    return;
  }
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
  return PartitionHeads(consumer_.get(), &table_, options_.request_timeout).Query();
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

void KafkaSource::ServeCloseEvent(rd_kafka_event_t* event) {
  if (rd_kafka_event_type(event) == RD_KAFKA_EVENT_REBALANCE) {
    assignment_.OnRebalance(rd_kafka_event_error(event),
                            rd_kafka_event_topic_partition_list(event));
  } else if (rd_kafka_event_type(event) == RD_KAFKA_EVENT_OFFSET_COMMIT) {
    CommitCallback(
        consumer_.get(), rd_kafka_event_error(event),
        const_cast<rd_kafka_topic_partition_list_t*>(rd_kafka_event_topic_partition_list(event)),
        this);
  }
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
  if (started_ && consumer_.get() != nullptr) {
    if (assignment_.manual()) {
      assignment_.RevokeAll();  // no group to leave; the partitions are given up here
    }
    result = consumer_.Close([this](rd_kafka_event_t* event) { ServeCloseEvent(event); });
  }
  for (size_t i = 0; i < table_.size(); ++i) {
    table_.at(static_cast<int32_t>(i)).held.clear();
  }
  consumer_.Destroy();
  FERRY_LOG_INFO("kafka: consumer of group '{}' closed", options_.group_id);
  return result;
}

}  // namespace ferry::source::kafka

#include "ferry/source/kafka/assignment_controller.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>

#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/source/kafka/access_refusal.h"
#include "ferry/source/kafka/gap_report.h"
#include "ferry/source/kafka/kafka_conf.h"

namespace ferry::source::kafka {
namespace {

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

Status AssignmentController::Start(PartitionListener* listener) {
  listener_ = listener;
  if (options_->assignment != Assignment::kManual) {
    return Status::OK();
  }
  FERRY_ASSIGN_OR_RETURN(TopicMatcher matcher, TopicMatcher::Create(options_->topics));
  topic_matcher_ = std::move(matcher);
  FERRY_LOG_INFO(
      "kafka: reading every partition of {} (manual assignment; offsets committed to "
      "group '{}' for lag tools)",
      fmt::join(options_->topics, ", "), options_->group_id);
  DiscoverPartitions();
  return Status::OK();
}

// ---- Group assignment (steps 2 and 3) ----

void AssignmentController::OnRebalance(rd_kafka_resp_err_t err,
                                       rd_kafka_topic_partition_list_t* partitions) {
  cooperative_ = std::strcmp(rd_kafka_rebalance_protocol(rk_), "COOPERATIVE") == 0;
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
  for (size_t i = 0; i < table_->size(); ++i) {
    Revoke(&table_->at(static_cast<int32_t>(i)));
  }
  if (cooperative_) {
    PartitionListPtr all;
    rd_kafka_topic_partition_list_t* raw = nullptr;
    if (rd_kafka_assignment(rk_, &raw) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      all.reset(raw);
      ErrorPtr(rd_kafka_incremental_unassign(rk_, all.get())).reset();
    }
  } else {
    rd_kafka_assign(rk_, nullptr);
  }
}

void AssignmentController::OnAssign(const rd_kafka_topic_partition_list_t* partitions) {
  ++stats_->assignments;
  std::vector<PartitionState*> states;
  states.reserve(static_cast<size_t>(partitions->cnt));
  for (int i = 0; i < partitions->cnt; ++i) {
    PartitionState& s =
        table_->GetOrAdd(partitions->elems[i].topic, partitions->elems[i].partition);
    s.pending = true;
    s.assigned = false;
    states.push_back(&s);
  }
  FERRY_LOG_INFO("kafka: {} partition(s) assigned ({} protocol)", states.size(),
                 cooperative_ ? "cooperative" : "eager");
  StartPartitions(states, /*from_callback=*/true);
}

void AssignmentController::StartPartitions(const std::vector<PartitionState*>& states,
                                           bool from_callback) {
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
    s->start_at_log_start = false;
    s->start_at_log_end = false;
    if (s->table_position.has_value()) {
      s->start_offset = *s->table_position + 1;
      started.push_back(s);
    } else {
      by_policy.push_back(s);
    }
  }
  if (!by_policy.empty()) {
    PartitionListPtr list = NewPartitionList(by_policy.size());
    for (PartitionState* s : by_policy) {
      AddToList(list.get(), *s);
    }
    Status resolved = resolver_.Resolve(rk_, list.get());
    if (resolved.ok()) {
      std::vector<int64_t> logical(by_policy.size());
      for (size_t i = 0; i < by_policy.size(); ++i) {
        logical[i] = list->elems[i].offset;
      }
      resolver_.Absolutize(rk_, list.get());
      for (size_t i = 0; i < by_policy.size(); ++i) {
        PartitionState* s = by_policy[i];
        s->start_offset = list->elems[i].offset;
        s->start_at_log_start = logical[i] == RD_KAFKA_OFFSET_BEGINNING && s->start_offset >= 0;
        s->start_at_log_end = logical[i] == RD_KAFKA_OFFSET_END && s->start_offset >= 0;
        started.push_back(s);
      }
    } else if (first_error.ok()) {
      first_error =
          resolved.WithContext("kafka: start policy {}", StartPolicyName(options_->start));
    }
  }
  // Inside the callback librdkafka waits for the assign call even when it carries no partition
  // (a cooperative rebalance often does); without one the group never settles and the consumer
  // cannot even close.
  Status assigned = from_callback || !started.empty() ? Assign(started) : Status::OK();
  if (first_error.ok()) {
    first_error = assigned;
  }
  if (!first_error.ok()) {
    host_->Defer(first_error);
  }
}

Status AssignmentController::Assign(const std::vector<PartitionState*>& started) {
  for (PartitionState* s : started) {
    s->pending = false;
    s->assigned = true;
    s->last_taken = -1;
    FERRY_LOG_INFO("kafka: {} starts at {} ({})", s->info.key, OffsetName(s->start_offset),
                   s->table_position ? "table position + 1" : StartPolicyName(options_->start));
  }
  if (cooperative_) {
    PartitionListPtr list = NewPartitionList(started.size());
    for (PartitionState* s : started) {
      AddToList(list.get(), *s)->offset = s->start_offset;
    }
    ErrorPtr error(rd_kafka_incremental_assign(rk_, list.get()));
    if (error != nullptr) {
      return Internal("kafka: incremental assign failed: {}", rd_kafka_error_string(error.get()));
    }
    return Status::OK();
  }
  // Eager: the assignment is replaced as a whole, so it lists every partition being consumed;
  // those already running continue after the last offset taken.
  PartitionListPtr list = NewPartitionList(table_->size());
  for (size_t i = 0; i < table_->size(); ++i) {
    PartitionState& s = table_->at(static_cast<int32_t>(i));
    if (s.assigned) {
      AddToList(list.get(), s)->offset = s.NextOffset();
    }
  }
  rd_kafka_resp_err_t err = rd_kafka_assign(rk_, list.get());
  return err == RD_KAFKA_RESP_ERR_NO_ERROR ? Status::OK()
                                           : KafkaErrorStatus(err, "kafka: assign failed");
}

void AssignmentController::OnRevoke(const rd_kafka_topic_partition_list_t* partitions) {
  ++stats_->revocations;
  const bool lost = rd_kafka_assignment_lost(rk_) != 0;
  for (int i = 0; i < partitions->cnt; ++i) {
    PartitionState* s = table_->Find(partitions->elems[i].topic, partitions->elems[i].partition);
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
    ErrorPtr error(rd_kafka_incremental_unassign(rk_, partitions));
    if (error != nullptr) {
      FERRY_LOG_ERROR("kafka: incremental unassign failed: {}", rd_kafka_error_string(error.get()));
    }
  } else {
    rd_kafka_assign(rk_, nullptr);
  }
}

void AssignmentController::Revoke(PartitionState* s) {
  if (s->announced) {
    listener_->OnRevoked(s->info);
  }
  host_->Forget(s);
  s->held.clear();
  s->announced = false;
  s->table_position.reset();
  s->assigned = false;
  s->pending = false;
  s->last_taken = -1;
}

void AssignmentController::RevokeAll() {
  for (size_t i = 0; i < table_->size(); ++i) {
    PartitionState& s = table_->at(static_cast<int32_t>(i));
    if (s.assigned || s.pending) {
      Revoke(&s);
    }
  }
  rd_kafka_assign(rk_, nullptr);
}

// ---- Manual assignment, pending partitions ----

void AssignmentController::DiscoverPartitions() {
  const std::chrono::milliseconds refresh = MetadataRefresh(*options_);
  const int64_t refresh_us = refresh.count() * 1000;
  // Poll blocks for this request: 1 s while the cluster answers, longer after failures (a slow
  // cluster), never above request_timeout.
  const int timeout_ms = static_cast<int>(std::clamp<int64_t>(
      discovery_retry_us_ / 500, 1000, std::max<int64_t>(1000, options_->request_timeout.count())));
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, /*all_topics=*/1, nullptr, &raw, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    discovery_retry_us_ = std::clamp<int64_t>(discovery_retry_us_ * 2, 500'000, refresh_us);
    next_discovery_us_ = MonotonicMicros() + discovery_retry_us_;
    host_->NoteBrokerError(
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
      PartitionState* s = table_->Find(topic.topic, partition);
      if (s != nullptr && (s->assigned || s->pending)) {
        continue;
      }
      s = &table_->GetOrAdd(topic.topic, partition);
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
      host_->Defer(refused);
      return;
    }
    if (missing_topics_.insert(name).second) {
      FERRY_LOG_WARN("kafka: topic '{}' does not exist (yet); looking again every {} ms", name,
                     refresh.count());
    }
  }
  if (!added.empty()) {
    ++stats_->assignments;
    FERRY_LOG_INFO("kafka: {} partition(s) assigned (manual)", added.size());
    StartPartitions(added, /*from_callback=*/false);
  }
}

Status AssignmentController::RefusedTopic(const std::string& name, int timeout_ms) {
  // Only a client that authenticates (SASL or TLS) can be refused a topic its peers see; a
  // PLAINTEXT client asks nothing more. A per-topic metadata request also creates the topic
  // where the broker ignores AllowAutoTopicCreation = false: librdkafka 2.0.2's mock cluster
  // (Metadata v0-2, used by `ferry mock-kafka` and the tests) and brokers before 0.11.
  std::string protocol = "plaintext";
  for (const auto& [key, value] : options_->properties) {
    if (key == "security.protocol") {
      protocol = value;
    }
  }
  std::transform(protocol.begin(), protocol.end(), protocol.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (protocol == "plaintext") {
    return Status::OK();
  }
  TopicPtr topic(rd_kafka_topic_new(rk_, name.c_str(), nullptr));
  const rd_kafka_metadata_t* raw = nullptr;
  if (topic == nullptr || rd_kafka_metadata(rk_, /*all_topics=*/0, topic.get(), &raw, timeout_ms) !=
                              RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::OK();  // unknown: asked again at the next look
  }
  MetadataPtr md(raw);
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_resp_err_t err = md->topics[i].err;
    if (name == md->topics[i].topic && IsAccessRefusal(err)) {
      return AccessRefusal(err, "metadata for the topic refused", name, *options_);
    }
  }
  return Status::OK();
}

void AssignmentController::Refresh() {
  if (manual() && MonotonicMicros() >= next_discovery_us_) {
    DiscoverPartitions();
  }
  std::vector<PartitionState*> pending;
  for (size_t i = 0; i < table_->size(); ++i) {
    PartitionState& s = table_->at(static_cast<int32_t>(i));
    if (s.pending) {
      pending.push_back(&s);
    }
  }
  if (!pending.empty()) {
    StartPartitions(pending, /*from_callback=*/false);
  }
}

// ---- Out of range (step 5) ----

Status AssignmentController::OnOutOfRange(const rd_kafka_message_t& message) {
  RefusedOffset refused = InspectRefusal(rk_, message, options_->request_timeout);
  PartitionState* s =
      refused.topic.empty() ? nullptr : table_->Find(refused.topic, refused.partition);
  // Started where the policy put it and nothing taken since: the table holds no position for the
  // partition, so no offset of it is expected.
  const bool untouched = s != nullptr && s->assigned && !s->table_position.has_value() &&
                         s->last_taken < 0 && refused.wanted == s->start_offset;
  if (untouched && ((s->start_at_log_start && (refused.BelowLogStart() || refused.PastLogEnd())) ||
                    (s->start_at_log_end && refused.PastLogEnd()))) {
    return StartAgainAtPolicyStart(s, refused);
  }
  // A policy start at the log end that the log start has since passed is a gap, not such a case:
  // the offsets between were written after the start was looked up and removed unread.
  if (options_->on_gap == OnGap::kContinue && refused.BelowLogStart() && s != nullptr &&
      s->assigned && message.rkt != nullptr) {
    return SkipGap(s, refused);
  }
  if (untouched) {
    refused.started_by = StartPolicyName(options_->start);
  }
  Status lost = RefusalStatus(refused);
  FERRY_LOG_ERROR("{}", lost.message());
  return lost;
}

Status AssignmentController::SkipGap(PartitionState* s, const RefusedOffset& refused) {
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
  ++stats_->gaps;
  stats_->lost_offsets += refused.low - refused.wanted;
  return StartAgainAt(s, refused.low);
}

Status AssignmentController::StartAgainAtPolicyStart(PartitionState* s,
                                                     const RefusedOffset& refused) {
  ++stats_->policy_restarts;
  if (s->start_at_log_start && refused.BelowLogStart()) {
    // Retention removed the log start looked up before the first fetch (perhaps once more after
    // an earlier restart here): nothing the table expects is missing.
    FERRY_LOG_INFO("{}: the log start moved from {} to {} before the first fetch; starting there",
                   s->info.key, refused.wanted, refused.low);
    return StartAgainAt(s, refused.low);
  }
  // Past the log end: after the start was looked up the topic was deleted and recreated, or an
  // unclean leader election cut the log. The policy's position in the log as it is now: its
  // start, or its end asked of the broker again (the last stable offset under read_committed,
  // as at the first start; the logical end, which librdkafka looks up, if it does not answer).
  int64_t start = refused.low;
  if (s->start_at_log_end) {
    PartitionListPtr list = NewPartitionList(1);
    AddToList(list.get(), *s)->offset = RD_KAFKA_OFFSET_END;
    resolver_.Absolutize(rk_, list.get());
    start = list->elems[0].offset;
  }
  const std::string_view which = s->start_at_log_end ? "end" : "start";
  FERRY_LOG_WARN(
      "{}: offset {}, the log {} that start = \"{}\" chose, is past the broker's log, which now "
      "holds {}, and nothing was read yet: was the topic deleted and recreated, or did an "
      "unclean leader election cut the log? The table holds no position for the partition: "
      "starting at the new log {} ({})",
      s->info.key, refused.wanted, which, StartPolicyName(options_->start),
      DescribeLogRange(refused.low, refused.high), which,
      start >= 0 ? fmt::format("offset {}", start) : "looked up by librdkafka");
  Status started = StartAgainAt(s, start);
  // A logical end is no offset a later refusal could be compared with.
  s->start_at_log_end = s->start_at_log_end && start >= 0;
  return started;
}

Status AssignmentController::StartAgainAt(PartitionState* s, int64_t low) {
  // After the refusal librdkafka has stopped fetching the partition, and rd_kafka_seek does not
  // start it again (2.0.2: the partition stays silent). Assigning it again at `low` does;
  // nothing below it, nor at or below last_taken, is delivered.
  s->start_offset = low;
  // A partition that has taken nothing still has taken nothing (OnOutOfRange then recognizes a
  // further move of the log under a policy start); one that has continues right at `low`.
  if (s->last_taken >= 0) {
    s->last_taken = low - 1;
  }
  if (!cooperative_) {
    return Assign({});  // eager or manual: the whole list again, each at its NextOffset()
  }
  PartitionListPtr list = NewPartitionList(1);
  AddToList(list.get(), *s)->offset = low;
  ErrorPtr error(rd_kafka_incremental_unassign(rk_, list.get()));
  if (error == nullptr) {
    error.reset(rd_kafka_incremental_assign(rk_, list.get()));
  }
  if (error != nullptr) {
    return Internal("{}: assigning again at {}: {}", s->info.key, OffsetName(low),
                    rd_kafka_error_string(error.get()));
  }
  return Status::OK();
}

std::vector<Gap> AssignmentController::TakeGaps() {
  return std::exchange(gaps_, {});
}

}  // namespace ferry::source::kafka

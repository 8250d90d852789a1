// PartitionTable: the Kafka source's record of every topic-partition it has been given, indexed
// by the stable PartitionInfo::index the pipeline sees in Message::partition. An entry is created
// the first time the group assigns the partition and kept (with its index) for the life of the
// source, so an index never changes meaning; `assigned` says whether it is consumed right now.
//
// Thread-safety: used on the source's thread only.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ferry/source/kafka/kafka_handles.h"
#include "ferry/source/kafka/token_bucket.h"
#include "ferry/source/source.h"

namespace ferry::source::kafka {

struct PartitionState {
  PartitionInfo info;  // index and "kafka/<topic>/<partition>"
  std::string topic;
  int32_t partition = 0;

  // The group gave us this partition and rd_kafka_*assign() started it.
  bool assigned = false;
  // The group gave us this partition but its start is not resolved yet (the table or the broker
  // failed to answer); retried at every Poll.
  bool pending = false;
  // The listener's OnAssigned() answered for the current assignment (so OnRevoked() is owed),
  // with this table position.
  bool announced = false;
  std::optional<int64_t> table_position;
  // The offset (or RD_KAFKA_OFFSET_BEGINNING/END) the current assignment started at. Messages
  // below an absolute start are never delivered.
  int64_t start_offset = RD_KAFKA_OFFSET_INVALID;
  // The start policy asked for the log start (or end) and start_offset is what the broker
  // answered for it (StartResolver::Absolutize). Should the log move under that offset before
  // anything is taken (retention moving the log start past it; a topic deleted and recreated, or
  // an unclean leader election, cutting the log end below it), the partition starts again at the
  // policy's position in the log as it is now, which is no gap: the table holds no position for
  // it and nothing was read (AssignmentController::OnOutOfRange).
  bool start_at_log_start = false;
  bool start_at_log_end = false;
  // The highest offset taken from librdkafka in this assignment (delivered or held); -1 if none.
  // Anything at or below it is a redelivery.
  int64_t last_taken = -1;

  // Rate limit: messages taken beyond the budget wait here (in offset order) while the
  // partition is paused, and are delivered by later Polls.
  TokenBucket bucket;
  bool paused = false;
  int64_t paused_since_us = 0;  // MonotonicMicros() when the rate limit paused it
  int64_t pauses = 0;           // times the rate limit paused it (the status page's "hits")
  std::deque<MessagePtr> held;

  // Where librdkafka must continue if the partition is assigned again without a revocation
  // (eager re-assignment after a pending partition resolved).
  int64_t NextOffset() const { return last_taken >= 0 ? last_taken + 1 : start_offset; }
};

// A partition list with room for `capacity` entries, and an entry for `s` added to one.
inline PartitionListPtr NewPartitionList(size_t capacity) {
  return PartitionListPtr(rd_kafka_topic_partition_list_new(static_cast<int>(capacity)));
}
inline rd_kafka_topic_partition_t* AddToList(rd_kafka_topic_partition_list_t* list,
                                             const PartitionState& s) {
  return rd_kafka_topic_partition_list_add(list, s.topic.c_str(), s.partition);
}

class PartitionTable {
 public:
  explicit PartitionTable(double max_rate_per_partition) : rate_(max_rate_per_partition) {}

  // The entry for topic/partition, created (with the next index) on first use.
  PartitionState& GetOrAdd(std::string_view topic, int32_t partition);
  // nullptr if the partition was never seen.
  PartitionState* Find(std::string_view topic, int32_t partition);
  // The entry a consumed message belongs to; nullptr for a partition never assigned.
  PartitionState* FindForMessage(const rd_kafka_message_t& message);

  // REQUIRES: 0 <= index < size()
  PartitionState& at(int32_t index) { return *states_[static_cast<size_t>(index)]; }
  const PartitionState& at(int32_t index) const { return *states_[static_cast<size_t>(index)]; }
  size_t size() const { return states_.size(); }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Per topic: partition number -> index (-1 when unseen).
  using TopicIndex = std::vector<int32_t>;

  double rate_;
  // unique_ptr keeps each state (and the topic string message views point into) at a fixed
  // address while the vector grows.
  std::vector<std::unique_ptr<PartitionState>> states_;
  std::unordered_map<std::string, TopicIndex, StringHash, std::equal_to<>> by_topic_;
  // One-entry cache for FindForMessage: messages arrive in runs of one topic.
  const rd_kafka_topic_t* last_rkt_ = nullptr;
  const TopicIndex* last_index_ = nullptr;
  std::string last_topic_;
};

}  // namespace ferry::source::kafka

#include "ferry/source/kafka/partition_table.h"

#include <cstring>

#include "ferry/source/kafka/kafka_source_options.h"

namespace ferry::source::kafka {

PartitionState& PartitionTable::GetOrAdd(std::string_view topic, int32_t partition) {
  auto it = by_topic_.find(topic);
  if (it == by_topic_.end()) {
    it = by_topic_.emplace(std::string(topic), TopicIndex{}).first;
  }
  TopicIndex& index = it->second;
  if (static_cast<size_t>(partition) >= index.size()) {
    index.resize(static_cast<size_t>(partition) + 1, -1);
  }
  int32_t& slot = index[static_cast<size_t>(partition)];
  if (slot < 0) {
    auto state = std::make_unique<PartitionState>();
    slot = static_cast<int32_t>(states_.size());
    state->info.index = slot;
    state->info.key = KafkaPartitionKey(topic, partition);
    state->topic = std::string(topic);
    state->partition = partition;
    state->bucket = TokenBucket(rate_);
    states_.push_back(std::move(state));
  }
  return *states_[static_cast<size_t>(slot)];
}

PartitionState* PartitionTable::Find(std::string_view topic, int32_t partition) {
  auto it = by_topic_.find(topic);
  if (it == by_topic_.end() || partition < 0 ||
      static_cast<size_t>(partition) >= it->second.size()) {
    return nullptr;
  }
  int32_t slot = it->second[static_cast<size_t>(partition)];
  return slot < 0 ? nullptr : states_[static_cast<size_t>(slot)].get();
}

PartitionState* PartitionTable::FindForMessage(const rd_kafka_message_t& message) {
  const char* name = rd_kafka_topic_name(message.rkt);
  // The pointer alone could be a recycled topic handle; the name settles it.
  if (message.rkt != last_rkt_ || last_topic_ != name) {
    auto it = by_topic_.find(std::string_view(name));
    if (it == by_topic_.end()) {
      return nullptr;
    }
    last_rkt_ = message.rkt;
    last_index_ = &it->second;
    last_topic_ = name;
  }
  const int32_t p = message.partition;
  if (p < 0 || static_cast<size_t>(p) >= last_index_->size()) {
    return nullptr;
  }
  int32_t slot = (*last_index_)[static_cast<size_t>(p)];
  return slot < 0 ? nullptr : states_[static_cast<size_t>(slot)].get();
}

}  // namespace ferry::source::kafka

#include "ferry/source/kafka/start_resolver.h"

#include <algorithm>
#include <vector>

#include "ferry/base/log.h"
#include "ferry/source/kafka/kafka_conf.h"
#include "ferry/source/kafka/kafka_handles.h"

namespace ferry::source::kafka {
namespace {

int64_t LogicalOffset(StartPolicy policy) {
  return policy == StartPolicy::kLatest ? RD_KAFKA_OFFSET_END : RD_KAFKA_OFFSET_BEGINNING;
}

// The first per-partition error of a broker answer, as a Status naming the partition.
Status FirstPartitionError(const rd_kafka_topic_partition_list_t* list, std::string_view what) {
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& e = list->elems[i];
    if (e.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaErrorStatus(
          e.err, fmt::format("{} for {}", what, KafkaPartitionKey(e.topic, e.partition)));
    }
  }
  return Status::OK();
}

}  // namespace

StartResolver::StartResolver(const KafkaSourceOptions& options)
    : policy_(options.start),
      fallback_(options.start_fallback),
      offsets_(options.start_offsets),
      timestamp_ms_(options.start_timestamp_ms),
      timeout_ms_(static_cast<int>(options.request_timeout.count())) {}

int64_t StartResolver::Fallback() const {
  return LogicalOffset(fallback_);
}

Status StartResolver::Resolve(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions) const {
  switch (policy_) {
    case StartPolicy::kEarliest:
    case StartPolicy::kLatest:
      for (int i = 0; i < partitions->cnt; ++i) {
        partitions->elems[i].offset = LogicalOffset(policy_);
      }
      return Status::OK();
    case StartPolicy::kOffsets:
      for (int i = 0; i < partitions->cnt; ++i) {
        rd_kafka_topic_partition_t& e = partitions->elems[i];
        auto it = offsets_.find(TopicPartition{e.topic, e.partition});
        if (it == offsets_.end()) {
          e.offset = Fallback();
        } else if (it->second == -2) {
          e.offset = RD_KAFKA_OFFSET_BEGINNING;
        } else if (it->second == -1) {
          e.offset = RD_KAFKA_OFFSET_END;
        } else {
          e.offset = it->second;
        }
      }
      return Status::OK();
    case StartPolicy::kGroup:
      return ResolveGroup(rk, partitions);
    case StartPolicy::kTimestamp:
      return ResolveTimestamp(rk, partitions);
  }
  return Internal("unknown start policy");
}

Status StartResolver::ResolveGroup(rd_kafka_t* rk,
                                   rd_kafka_topic_partition_list_t* partitions) const {
  PartitionListPtr query(rd_kafka_topic_partition_list_copy(partitions));
  rd_kafka_resp_err_t err = rd_kafka_committed(rk, query.get(), timeout_ms_);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "kafka: reading the group's committed offsets");
  }
  FERRY_RETURN_IF_ERROR(FirstPartitionError(query.get(), "kafka: committed offset"));
  for (int i = 0; i < partitions->cnt; ++i) {
    int64_t committed = query->elems[i].offset;
    partitions->elems[i].offset = committed >= 0 ? committed : Fallback();
  }
  return Status::OK();
}

Status StartResolver::ResolveTimestamp(rd_kafka_t* rk,
                                       rd_kafka_topic_partition_list_t* partitions) const {
  PartitionListPtr query(rd_kafka_topic_partition_list_copy(partitions));
  for (int i = 0; i < query->cnt; ++i) {
    query->elems[i].offset = timestamp_ms_;
  }
  rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk, query.get(), timeout_ms_);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "kafka: looking up offsets for a timestamp");
  }
  FERRY_RETURN_IF_ERROR(FirstPartitionError(query.get(), "kafka: offset for timestamp"));
  for (int i = 0; i < partitions->cnt; ++i) {
    // -1: no message at or after the timestamp, so the first one after it is still to come.
    int64_t found = query->elems[i].offset;
    partitions->elems[i].offset = found >= 0 ? found : RD_KAFKA_OFFSET_END;
  }
  return Status::OK();
}

void StartResolver::Absolutize(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions) const {
  std::vector<int> logical;  // indices into partitions
  for (int i = 0; i < partitions->cnt; ++i) {
    const int64_t offset = partitions->elems[i].offset;
    if (offset == RD_KAFKA_OFFSET_BEGINNING || offset == RD_KAFKA_OFFSET_END) {
      logical.push_back(i);
    }
  }
  if (logical.empty()) {
    return;
  }
  PartitionListPtr query(rd_kafka_topic_partition_list_new(static_cast<int>(logical.size())));
  for (int i : logical) {
    const rd_kafka_topic_partition_t& e = partitions->elems[i];
    // The special timestamps -2 (earliest) and -1 (latest) are the logical offsets' values.
    rd_kafka_topic_partition_list_add(query.get(), e.topic, e.partition)->offset = e.offset;
  }
  rd_kafka_resp_err_t err =
      rd_kafka_offsets_for_times(rk, query.get(), std::min(timeout_ms_, 1000));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    FERRY_LOG_DEBUG(
        "kafka: looking up the log start/end of {} partition(s): {} (librdkafka "
        "looks them up itself)",
        logical.size(), rd_kafka_err2str(err));
    return;
  }
  for (size_t j = 0; j < logical.size(); ++j) {
    const rd_kafka_topic_partition_t& answer = query->elems[j];
    if (answer.err == RD_KAFKA_RESP_ERR_NO_ERROR && answer.offset >= 0) {
      partitions->elems[logical[j]].offset = answer.offset;
    }
  }
}

}  // namespace ferry::source::kafka

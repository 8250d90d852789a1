// StartResolver: where a Kafka partition starts when the table holds no position for it, per the
// configured StartPolicy (kafka_source_options.h). Runs inside the rebalance callback, before the
// partitions are assigned, so librdkafka starts exactly at the offsets written here.
//
// `group` and `timestamp` ask the broker (OffsetFetch, ListOffsets) with a bounded wait; the
// others are local. librdkafka's own fallback (an entry left at RD_KAFKA_OFFSET_INVALID uses the
// committed offset, then auto.offset.reset) is not used: ferry runs with auto.offset.reset=error
// so that a gap is reported instead of skipped, and so resolves every start itself.
//
// Thread-safety: used on the source's thread only.
#pragma once

#include <librdkafka/rdkafka.h>

#include "ferry/base/status.h"
#include "ferry/source/kafka/kafka_source_options.h"

namespace ferry::source::kafka {

class StartResolver {
 public:
  // REQUIRES: options.Validate() is OK. Copies what it needs.
  explicit StartResolver(const KafkaSourceOptions& options);

  // Sets the offset of every entry of `partitions` to an absolute offset or to
  // RD_KAFKA_OFFSET_BEGINNING / RD_KAFKA_OFFSET_END. On error (broker unreachable, timeout) no
  // entry is trusted: Unavailable, or the code of the broker's answer.
  Status Resolve(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions) const;

 private:
  int64_t Fallback() const;
  Status ResolveGroup(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions) const;
  Status ResolveTimestamp(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions) const;

  StartPolicy policy_;
  StartPolicy fallback_;
  std::map<TopicPartition, int64_t> offsets_;
  int64_t timestamp_ms_;
  int timeout_ms_;
};

}  // namespace ferry::source::kafka

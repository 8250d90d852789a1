// StartResolver: where a Kafka partition starts when the table holds no position for it, per the
// configured StartPolicy (kafka_source_options.h). Runs inside the rebalance callback, before the
// partitions are assigned, so librdkafka starts exactly at the offsets written here.
//
// `group` and `timestamp` ask the broker (OffsetFetch, ListOffsets) with a bounded wait; the
// others are local. Absolutize() then turns the logical starts (the log start or end) into the
// offsets the broker holds now, with one ListOffsets for all the partitions: librdkafka 2.0.2,
// given a logical offset, asks for it per partition, and a partition whose broker thread has not
// yet taken it over when the assignment reaches it (a race between two librdkafka threads, seen
// with manual and group assignment) waits a fixed 500 ms before that request ("no current leader
// for partition: (re)starting offset query timer"). That was a 0.5 s step in half or more of the
// runs of a 1 M-message --until-caught-up on a real broker (docs/BENCHMARKS.md). An absolute
// offset is fetched as soon as the broker thread has the partition.
//
// librdkafka's own fallback (an entry left at RD_KAFKA_OFFSET_INVALID uses the committed offset,
// then auto.offset.reset) is not used: ferry runs with auto.offset.reset=error so that a gap is
// reported instead of skipped, and so resolves every start itself.
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
  // Replaces the RD_KAFKA_OFFSET_BEGINNING / RD_KAFKA_OFFSET_END entries of `partitions` by the
  // broker's log start / end (the last stable offset under read_committed), asked in one request
  // that waits at most 1 s (request_timeout if shorter). An entry the broker did not answer keeps
  // its logical offset, which librdkafka resolves itself as before: this only saves time.
  void Absolutize(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions) const;

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

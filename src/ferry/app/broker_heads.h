// BrokerHeads: the broker's heads of a pipeline's source partitions, asked without taking part
// in the pipeline's consumption (no group join, no consumer created), for `ferry status`.
//   Kafka: metadata of the configured topics (or of every topic matching `topic_pattern`), then
//          the low and high watermarks of each partition.
//   JetStream: stream info, and the last message per subject filter (the stream's last
//          sequence for a filter that covers the whole stream).
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/config/config.h"
#include "ferry/source/source.h"

namespace ferry::app {

// One PartitionHead per source partition, keyed like the source keys it ("kafka/<topic>/<n>",
// "jetstream/<stream>/<filter>"). Unavailable when the broker does not answer.
Result<std::vector<source::PartitionHead>> QueryBrokerHeads(const config::PipelineConfig& config);

// Elastic JetStream (`partitions = {...}`): each partition's lease as the bucket holds it now,
// keyed like the heads. An empty owner: the lease is free (expired or released).
struct PartitionLease {
  std::string owner;
  int64_t taken_unix_ms = 0;    // when the owner took it
  int64_t renewed_unix_ms = 0;  // its last renewal (the server's clock)
};
// Empty for a pipeline that is not elastic; NotFound before any process created the bucket.
Result<std::map<std::string, PartitionLease>> QueryLeases(const config::PipelineConfig& config);

}  // namespace ferry::app

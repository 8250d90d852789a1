// BrokerHeads: the broker's heads of a pipeline's source partitions, asked without taking part
// in the pipeline's consumption (no group join, no consumer created), for `ferry status`.
//   Kafka: metadata of the configured topics (or of every topic matching `topic_pattern`), then
//          the low and high watermarks of each partition.
//   JetStream: stream info, and the last message per subject filter (the stream's last
//          sequence for a filter that covers the whole stream).
//
// Thread-safety: stateless functions.
#pragma once

#include <vector>

#include "ferry/base/result.h"
#include "ferry/config/config.h"
#include "ferry/source/source.h"

namespace ferry::app {

// One PartitionHead per source partition, keyed like the source keys it ("kafka/<topic>/<n>",
// "jetstream/<stream>/<filter>"). Unavailable when the broker does not answer.
Result<std::vector<source::PartitionHead>> QueryBrokerHeads(const config::PipelineConfig& config);

}  // namespace ferry::app

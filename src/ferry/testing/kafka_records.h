// Records for the real-broker Kafka tests, written and measured with librdkafka directly where
// kcat and `ferry produce kafka` cannot: ProduceIds sets each record's CreateTime and size, and
// Watermarks asks a partition's log start and end (ListOffsets earliest and latest), which is
// how a test waits for retention or DeleteRecords to have moved the log start.
//
// The records are the JSON of tests/integration/kafka_e2e_fixture.h (`{"id": N, "dateTime": "-",
// "payload": "..."}`, key "k<N>"), one per id, in id order to one partition, acks=all, in batches
// of at most 4 KiB (a batch larger than a small segment.bytes is refused).
//
// Thread-safety: free functions; each call has its own client.
#pragma once

#include <cstdint>
#include <string>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::testing {

struct ProduceIdsOptions {
  int32_t partition = 0;
  // CreateTime in milliseconds since the epoch; 0: the producer's clock.
  int64_t timestamp_ms = 0;
  // Characters of the "payload" field.
  size_t payload_bytes = 9;
};

// Produces ids first..last to `topic` and waits until every one is acknowledged. Unavailable
// (naming the topic and how many were not delivered) otherwise.
Status ProduceIds(const std::string& brokers, const std::string& topic, int64_t first, int64_t last,
                  const ProduceIdsOptions& options = {});

struct Watermarks {
  int64_t low = -1;   // the log start offset
  int64_t high = -1;  // the log end offset (next to be written)
};

// The partition's log start and end, asked of its leader.
Result<Watermarks> QueryWatermarks(const std::string& brokers, const std::string& topic,
                                   int32_t partition);

}  // namespace ferry::testing

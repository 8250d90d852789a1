// What kafka_broker.cc and kafka_broker_admin.cc share: a librdkafka client for metadata and
// admin requests, and the metadata check that the broker is ready or a topic has its leaders.
//
// Thread-safety: free functions; a client is used by one thread at a time.
#pragma once

#include <librdkafka/rdkafka.h>

#include <memory>
#include <string>

#include "ferry/base/result.h"

namespace ferry::testing::kafka_internal {

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

// A producer handle (never used to produce) for metadata and admin requests, over PLAINTEXT.
Result<RdKafkaPtr> NewClient(const std::string& bootstrap);

// Whether a metadata request answers and names at least one broker; with `topic`, whether that
// topic exists with `partitions` partitions, each with a leader.
bool MetadataAnswers(rd_kafka_t* rk, const char* topic = nullptr, int partitions = 0);

}  // namespace ferry::testing::kafka_internal

// Helpers for the Kafka tests on librdkafka's mock cluster: a synchronous producer, a
// PartitionListener that serves table positions from a map and records every call, and a poll
// loop that copies what a Source delivers.
//
// Thread-safety: none; each test uses these from its own thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/kafka/kafka_handles.h"
#include "ferry/source/source.h"

namespace ferry::source::kafka::testing {

// Produces `count` messages to topic/partition, payload `payload(i)`, key "k<i>", header
// ("seq", "<i>"), and waits until each is acknowledged. Error if any delivery failed.
Status Produce(const std::string& brokers, const std::string& topic, int32_t partition, int count,
               const std::function<std::string(int)>& payload);
// The same with key `key_of(i)` (empty: no key).
Status Produce(const std::string& brokers, const std::string& topic, int32_t partition, int count,
               const std::function<std::string(int)>& payload,
               const std::function<std::string(int)>& key_of);

// Payload of the i-th message of a partition as Produce() is called by most tests.
std::string DefaultPayload(int32_t partition, int i);

// A copy of a delivered message, so it outlives the next Poll.
struct Received {
  int32_t index = -1;
  std::string topic;
  int32_t partition = -1;
  int64_t offset = -1;
  std::string payload;
  std::string key;
  int64_t timestamp_us = 0;
  std::vector<std::pair<std::string, std::string>> headers;
};

class TestListener : public PartitionListener {
 public:
  // Table positions by key ("kafka/<topic>/<partition>"); absent = never seen.
  std::map<std::string, int64_t> positions;
  // Keys whose next OnAssigned fails with this status (once, then removed).
  std::map<std::string, Status> fail_once;

  std::vector<std::string> assigned;       // every OnAssigned answered OK, in order
  std::vector<std::string> revoked;        // every OnRevoked, in order
  std::map<std::string, int32_t> current;  // key -> index, assigned now

  Result<std::optional<int64_t>> OnAssigned(const PartitionInfo& partition) override;
  void OnRevoked(const PartitionInfo& partition) override;
};

// Polls `source` until `done(all received so far)` holds or `limit` passes (then the test fails
// on its own assertions). Acts as a pipeline that commits every Poll at once: when `listener` is
// given, its table positions follow the messages received, so a re-assignment resumes after them.
struct PollResult {
  std::vector<Received> messages;
  std::vector<Status> errors;  // non-OK Poll results, in order
};
PollResult PollUntil(Source* source, TestListener* listener,
                     const std::function<bool(const PollResult&)>& done,
                     std::chrono::milliseconds limit = std::chrono::seconds(60),
                     size_t max_messages = 1000);
// One Poll round of the same, appending to *result; for tests that poll two sources in turn.
void PollOnce(Source* source, TestListener* listener, PollResult* result,
              size_t max_messages = 1000);

// Offsets received per partition number (for one topic).
std::map<int32_t, std::vector<int64_t>> OffsetsByPartition(const std::vector<Received>& messages);
// first, first + 1, ..., last
std::vector<int64_t> Range(int64_t first, int64_t last);

// The group's committed offset of topic/partition, read by a separate consumer (committed()).
Result<int64_t> CommittedOffset(const std::string& brokers, const std::string& group,
                                const std::string& topic, int32_t partition);
// Commits `offset` for topic/partition on behalf of `group` (as an earlier consumer would have).
Status CommitOffset(const std::string& brokers, const std::string& group, const std::string& topic,
                    int32_t partition, int64_t offset);

}  // namespace ferry::source::kafka::testing

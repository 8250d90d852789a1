// Source: an ordered, resumable stream of messages from a broker, split into source partitions
// (a Kafka topic-partition, a JetStream stream + subject filter). The pipeline owns positions;
// a source only starts where it is told and reports what it delivers.
//
// Protocol (DESIGN.md, "The exactly-once protocol"):
//   1. Start(listener) subscribes. Partitions arrive later, inside Poll(): for each newly assigned
//      partition the source calls listener->OnAssigned(key), which returns the position committed
//      in the table (or nullopt: the table has never seen it; the source applies its configured
//      start policy). The source then delivers from position + 1, never below.
//   2. When a partition is taken away (rebalance, shutdown) the source calls
//      listener->OnRevoked(key) inside Poll() before it delivers anything else; the pipeline drops
//      that partition's uncommitted rows.
//   3. Poll() fills a vector of Messages whose views stay valid until the next Poll() or Close().
//      A source may redeliver (positions at or below one already delivered); the pipeline drops
//      those. A gap that cannot be recovered (retention overran the committed position) is a
//      DataLoss status naming the partition and the missing range.
//   4. Acknowledge(positions) runs only after the Delta commit holding them is durable: advisory
//      broker-side state (Kafka group offsets, JetStream acks) for dashboards. Failures there are
//      logged and counted, never fatal, never read back for correctness.
//   5. When the user chose to continue past lost data (a source option), the source does not fail
//      step 3 and instead reports each skipped range once through TakeGaps(). The pipeline calls
//      it after every Poll(), records the gaps in the commitInfo of the batch that holds the
//      first message after them, and counts them in a metric.
//
// Thread-safety: a Source is used from one thread (the pipeline's); listener calls happen on it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::source {

struct Header {
  std::string_view name;
  std::string_view value;
};

// One message, borrowed from the source until the next Poll().
struct Message {
  // Index into the partitions the source has announced (PartitionInfo::index); stable while the
  // partition stays assigned.
  int32_t partition = -1;
  // Kafka offset or JetStream stream sequence.
  int64_t position = 0;
  std::string_view payload;
  std::string_view key;          // Kafka key; empty for JetStream
  std::string_view topic;        // Kafka topic; JetStream stream name
  int32_t kafka_partition = -1;  // Kafka partition number; -1 for JetStream
  std::string_view subject;      // JetStream subject; empty for Kafka
  std::string_view msg_id;       // JetStream Nats-Msg-Id header; empty if absent
  int64_t timestamp_us = 0;      // broker/producer timestamp, microseconds since epoch
  std::span<const Header> headers;
  // Set by a routed pipeline's router (pipeline/router.h), never by a broker: the message is a
  // bad record for this reason ("no route matches"), handled as on_bad_record says.
  std::string_view bad_reason;
};

// A source partition as the source names it to the pipeline.
struct PartitionInfo {
  int32_t index = -1;
  // Stable key: "kafka/<topic>/<partition>" or "jetstream/<stream>/<filter-subject>".
  std::string key;
};

class PartitionListener {
 public:
  virtual ~PartitionListener() = default;
  // Returns the table's committed position for the partition (nullopt when it has none), or an
  // error (the table cannot be read: the source must not start the partition).
  virtual Result<std::optional<int64_t>> OnAssigned(const PartitionInfo& partition) = 0;
  virtual void OnRevoked(const PartitionInfo& partition) = 0;
};

// The broker's view of a partition, for lag metrics and `ferry status`.
struct PartitionHead {
  std::string key;
  // Position of the last message the broker holds for the reader (Kafka: the end offset - 1,
  // where the end is the last stable offset under read_committed, the high watermark otherwise;
  // JetStream: the stream's last sequence matching the filter). nullopt if unknown or if the
  // partition holds nothing.
  std::optional<int64_t> last_position;
  // Position of the first message the broker holds (or would hold next, for an empty
  // partition): set whenever the broker answered for the partition, so that "answered and
  // empty" (first_position alone) is told from "unknown" (neither).
  std::optional<int64_t> first_position;
  // Whether the broker answered for the partition (else its positions are unknown).
  bool answered() const { return first_position.has_value() || last_position.has_value(); }
  // The source has read the partition through this position and delivered every message at or
  // below it: positions between the last delivered message and it held nothing to deliver
  // (Kafka: transaction markers and aborted transactions under read_committed). nullopt if the
  // source does not say.
  std::optional<int64_t> read_through;
};

// Positions the broker no longer holds that were skipped instead of failing (step 5). The range
// is inclusive; `reason` says what removed it ("stream retention limits", ...).
struct Gap {
  int32_t partition = -1;
  std::string key;
  int64_t first_position = 0;
  int64_t last_position = 0;
  std::string reason;
};

struct CommittedPosition {
  int32_t partition = -1;
  int64_t position = 0;
};

class Source {
 public:
  virtual ~Source() = default;

  // Subscribes. REQUIRES: listener outlives the source.
  virtual Status Start(PartitionListener* listener) = 0;
  // Replaces *out with up to `max_messages` messages, waiting at most `timeout` for the first.
  // An empty result is not an error. Unavailable: the broker is unreachable (retry). DataLoss:
  // an unrecoverable gap.
  virtual Status Poll(size_t max_messages, std::chrono::milliseconds timeout,
                      std::vector<Message>* out) = 0;
  // After a durable commit (step 5 of the protocol). Best effort.
  virtual void Acknowledge(std::span<const CommittedPosition> positions) = 0;
  // Broker heads of the assigned partitions.
  virtual Result<std::vector<PartitionHead>> Heads() = 0;
  // Returns the gaps skipped since the last call and forgets them (step 5). Sources that always
  // fail on lost data keep the default.
  virtual std::vector<Gap> TakeGaps() { return {}; }
  // Total time partitions spent held back by the source's rate limit (Kafka's
  // max_rate_per_partition), summed over partitions, in microseconds. 0 without a limit.
  virtual int64_t RateLimitedMicros() const { return 0; }
  // How many times the rate limit held `partition` (a PartitionInfo::index) back, since Start.
  virtual int64_t RateLimitPauses(int32_t /*partition*/) const { return 0; }
  // Leaves the group / unsubscribes. Further calls fail.
  virtual Status Close() = 0;
};

}  // namespace ferry::source

// KafkaSourceOptions: everything a KafkaSource needs to know about brokers, topics, the consumer
// group, where new partitions start, rate limits and memory caps. Plain data; the config layer
// fills it from TOML, tests fill it directly. Validate() reports the first bad field by name.
//
// Thread-safety: a value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::source::kafka {

// Where a partition starts when the table holds no position for it. A partition the table has
// seen always resumes at the table's position + 1, whatever the policy says.
enum class StartPolicy {
  kEarliest,   // the log start offset (everything the broker still holds)
  kLatest,     // the log end: only messages produced after the assignment
  kGroup,      // the group's committed offset (kafka-consumer-groups), else `start_fallback`
  kOffsets,    // `start_offsets` (Spark's startingOffsets), else `start_fallback`
  kTimestamp,  // the first offset at or after `start_timestamp_ms`; the log end if none is
};

// "earliest", "latest", "group", "offsets", "timestamp".
std::string_view StartPolicyName(StartPolicy policy);
Result<StartPolicy> ParseStartPolicy(std::string_view name);

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  bool operator<(const TopicPartition& o) const {
    return topic < o.topic || (topic == o.topic && partition < o.partition);
  }
  bool operator==(const TopicPartition& o) const = default;
};

// How the partitions of the topics come to this consumer.
enum class Assignment {
  // Join group_id and let the group balance the partitions over its members (subscribe). A new
  // group waits group.initial.rebalance.delay.ms (3 s on brokers and the mock) before the first
  // assignment; every member change is a rebalance.
  kGroup,
  // Read every partition of the topics without joining the group (librdkafka's manual
  // assignment, as Spark's Kafka source reads): starts at once; new partitions and topics are
  // found by asking for metadata every metadata_refresh. The table's positions are the only
  // positions that matter either way; group offsets are still committed to group_id for lag
  // tools. Two processes on one table each read everything (the commit fencing keeps the table
  // exact, at twice the reading).
  kManual,
};

// What to do when the broker no longer holds offsets the table has not ingested (retention or
// DeleteRecords moved the log start past the next offset to read): the same choice as
// JetStream's `on_gap` (docs/configuration.md).
enum class OnGap {
  kFail,      // Poll() returns DataLoss naming topic, partition and the missing offsets (default)
  kContinue,  // skip to the log start, log it, report it through TakeGaps() (commitInfo, metrics)
};

struct KafkaSourceOptions {
  // bootstrap.servers, e.g. "host1:9092,host2:9092".
  std::string brokers;
  // Topic names, or regular expressions starting with '^' (librdkafka's subscription syntax);
  // new topics and partitions matching are picked up at the next metadata refresh.
  std::vector<std::string> topics;
  std::string group_id;
  Assignment assignment = Assignment::kGroup;

  StartPolicy start = StartPolicy::kEarliest;
  // Used by kGroup and kOffsets when they have no answer for a partition (no committed offset,
  // partition not listed). Must be kEarliest or kLatest.
  StartPolicy start_fallback = StartPolicy::kEarliest;
  // kOffsets: the first offset to read, per partition; -2 means earliest, -1 latest (Spark).
  std::map<TopicPartition, int64_t> start_offsets;
  // kTimestamp: milliseconds since the epoch (Kafka's offsetsForTimes).
  int64_t start_timestamp_ms = 0;

  // Messages per second per partition; 0 = unlimited (spark.streaming.kafka.maxRatePerPartition).
  double max_rate_per_partition = 0;
  // Wake the broker threads when Poll drains the consumer queue (fetch_waker.h).
  bool fetch_wakeup = true;
  // Fill Message::headers. librdkafka parses a message's headers only when asked
  // (rd_kafka_message_headers), about 5 % of a single-table run's CPU; a pipeline with no
  // `headers` column turns it off (app/pipeline_factory.cc).
  bool read_headers = true;
  // librdkafka's prefetch queue caps: queued.max.messages.kbytes (the whole consumer queue) and
  // queued.min.messages. Together with the pipeline's batch caps they bound memory. librdkafka
  // 2.0.2 stops fetching a partition while either is exceeded and decides again only on its
  // broker thread's next wake-up (up to about a second later). Both are compared with the
  // consumer's single queue, into which every partition is forwarded, so queued.min.messages is
  // in effect a cap on the whole queue too: at 100,000 (librdkafka's default) every pause of the
  // pipeline thread as long as one batch of 100,000 rows stopped all fetching for ~0.8 s. The
  // bytes cap is what bounds memory (128 MiB); the message cap is set above it. Measured with
  // 1 M messages from 128 mock partitions (docs/BENCHMARKS.md, "Kafka ingestion"): 32 MiB /
  // 100,000: 2.8-5.9 s; 128 MiB / 100,000: 2.3-3.2 s; 128 MiB / 1,000,000: 1.6-3.1 s.
  // `ferry run` derives both, and fetch_max_bytes, from the pipeline's share of max_memory
  // (config/memory_budget.h); these defaults are for callers without a budget.
  int64_t queue_max_kbytes = 131072;
  int64_t queue_min_messages = 1000000;
  // fetch.max.bytes: the most one broker's fetch response may bring, on top of the queue (a
  // response is fetched while the queue is under its caps and can pass them). 0: librdkafka's
  // (the queue's size, at least message.max.bytes). Not set when the user sets
  // message.max.bytes, which librdkafka requires it to reach.
  int64_t fetch_max_bytes = 0;
  // topic.metadata.refresh.interval.ms: how soon new partitions and regex-matched topics appear.
  std::chrono::milliseconds metadata_refresh{30000};
  // Bound on blocking broker calls made inside Poll/Heads (committed offsets, offsetsForTimes,
  // watermarks).
  std::chrono::milliseconds request_timeout{10000};
  // Bound on Close() (leaving the group).
  std::chrono::milliseconds close_timeout{10000};
  // Offsets below the log start (retention). An offset past the log end (the topic was deleted
  // and recreated) is always DataLoss: skipping there would re-read or drop the new topic's
  // records against the old positions.
  OnGap on_gap = OnGap::kFail;

  // Passed to librdkafka as is, after ferry's defaults (so they win over them): SASL, SSL,
  // timeouts, partition.assignment.strategy, client.id, ... The properties ferry manages
  // (enable.auto.commit, enable.auto.offset.store, isolation.level, auto.offset.reset,
  // enable.partition.eof, group.id) may appear only with the value ferry sets.
  std::vector<std::pair<std::string, std::string>> properties;

  // InvalidArgument naming the first bad field.
  Status Validate() const;
};

// The librdkafka consumer properties for `options`, in the order they are applied: ferry's
// defaults, then options.properties (so they override the defaults), then the properties the
// exactly-once protocol depends on (Validate() refuses user values that differ from them).
std::vector<std::pair<std::string, std::string>> ConsumerProperties(
    const KafkaSourceOptions& options);

// The metadata refresh interval librdkafka uses for `options`: a topic.metadata.refresh.interval.ms
// in `properties` (which ConsumerProperties puts after ferry's value) wins over
// metadata_refresh. The manual assignment looks for new partitions at this interval too.
std::chrono::milliseconds MetadataRefresh(const KafkaSourceOptions& options);

// The key of a Kafka source partition: "kafka/<topic>/<partition>" (DESIGN.md).
std::string KafkaPartitionKey(std::string_view topic, int32_t partition);

}  // namespace ferry::source::kafka

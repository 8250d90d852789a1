#include "ferry/source/kafka/kafka_source_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "ferry/source/kafka/topic_matcher.h"

namespace ferry::source::kafka {
namespace {

struct ManagedProperty {
  std::string_view key;
  std::string_view value;
};

// Properties the exactly-once protocol depends on (DESIGN.md, "Kafka"): offsets are stored only
// by Acknowledge, a gap is an error rather than a silent reset, aborted transactions are never
// read. group.id comes from KafkaSourceOptions::group_id. One exception: isolation.level may be
// set to "read_uncommitted" (kReadUncommitted), which ingests the records of aborted and open
// transactions too (docs/kafka.md).
constexpr std::array<ManagedProperty, 5> kManaged = {{
    {"enable.auto.commit", "false"},
    {"enable.auto.offset.store", "false"},
    {"isolation.level", "read_committed"},
    {"auto.offset.reset", "error"},
    {"enable.partition.eof", "false"},
}};

constexpr std::string_view kIsolation = "isolation.level";
constexpr std::string_view kReadUncommitted = "read_uncommitted";

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

Status ValidateProperties(const KafkaSourceOptions& o) {
  for (const auto& [key, value] : o.properties) {
    if (key.empty()) {
      return InvalidArgument("kafka properties: empty property name");
    }
    for (const ManagedProperty& m : kManaged) {
      if (key == kIsolation && Lower(value) == kReadUncommitted) {
        continue;  // allowed, at the cost of exactly-once for aborted transactions
      }
      if (key == m.key && Lower(value) != m.value) {
        return InvalidArgument(
            "kafka property '{}' is managed by ferry (it must be '{}' for exactly-once ingestion)",
            key, m.value);
      }
    }
    if (key == "group.id" && value != o.group_id) {
      return InvalidArgument("kafka property 'group.id' conflicts with group_id '{}'", o.group_id);
    }
  }
  return Status::OK();
}

bool HasProperty(const KafkaSourceOptions& o, std::string_view key) {
  return std::any_of(o.properties.begin(), o.properties.end(),
                     [&](const auto& kv) { return kv.first == key; });
}

}  // namespace

std::string_view StartPolicyName(StartPolicy policy) {
  switch (policy) {
    case StartPolicy::kEarliest:
      return "earliest";
    case StartPolicy::kLatest:
      return "latest";
    case StartPolicy::kGroup:
      return "group";
    case StartPolicy::kOffsets:
      return "offsets";
    case StartPolicy::kTimestamp:
      return "timestamp";
  }
  return "?";
}

Result<StartPolicy> ParseStartPolicy(std::string_view name) {
  for (StartPolicy p : {StartPolicy::kEarliest, StartPolicy::kLatest, StartPolicy::kGroup,
                        StartPolicy::kOffsets, StartPolicy::kTimestamp}) {
    if (name == StartPolicyName(p)) {
      return p;
    }
  }
  return InvalidArgument(
      "unknown kafka start policy '{}' (expected earliest, latest, group, offsets or timestamp)",
      name);
}

std::vector<std::pair<std::string, std::string>> ConsumerProperties(const KafkaSourceOptions& o) {
  std::vector<std::pair<std::string, std::string>> p;
  if (!o.brokers.empty()) {
    p.emplace_back("bootstrap.servers", o.brokers);
  }
  p.emplace_back("client.id", "ferry");
  p.emplace_back("queued.max.messages.kbytes", std::to_string(o.queue_max_kbytes));
  p.emplace_back("queued.min.messages", std::to_string(o.queue_min_messages));
  if (o.fetch_max_bytes > 0 && !HasProperty(o, "message.max.bytes")) {
    p.emplace_back("fetch.max.bytes", std::to_string(o.fetch_max_bytes));
  }
  p.emplace_back("topic.metadata.refresh.interval.ms", std::to_string(o.metadata_refresh.count()));
  // A consumer killed with SIGKILL keeps its partitions until its session times out, and a
  // restart waits for that: 10 s (Kafka Connect's default) instead of librdkafka's 45 s.
  p.emplace_back("session.timeout.ms", "10000");
  p.emplace_back("heartbeat.interval.ms", "1000");
  p.insert(p.end(), o.properties.begin(), o.properties.end());
  p.emplace_back("group.id", o.group_id);
  for (const ManagedProperty& m : kManaged) {
    p.emplace_back(m.key, m.value);
  }
  for (const auto& [key, value] : o.properties) {
    if (key == kIsolation && Lower(value) == kReadUncommitted) {
      p.emplace_back(kIsolation, kReadUncommitted);
    }
  }
  return p;
}

std::chrono::milliseconds MetadataRefresh(const KafkaSourceOptions& o) {
  std::chrono::milliseconds refresh = o.metadata_refresh;
  for (const auto& [key, value] : o.properties) {
    int64_t ms = 0;
    const char* end = value.data() + value.size();
    if (key == "topic.metadata.refresh.interval.ms" &&
        std::from_chars(value.data(), end, ms).ptr == end && ms > 0) {
      refresh = std::chrono::milliseconds(ms);
    }
  }
  return refresh;
}

std::string KafkaPartitionKey(std::string_view topic, int32_t partition) {
  return fmt::format("kafka/{}/{}", topic, partition);
}

Status KafkaSourceOptions::Validate() const {
  if (brokers.empty() && !HasProperty(*this, "bootstrap.servers") &&
      !HasProperty(*this, "metadata.broker.list")) {
    return InvalidArgument("kafka: brokers is empty");
  }
  if (topics.empty()) {
    return InvalidArgument("kafka: topics is empty");
  }
  for (const std::string& t : topics) {
    if (t.empty() || t == "^") {
      return InvalidArgument("kafka: empty topic name or pattern in topics");
    }
  }
  if (group_id.empty()) {
    return InvalidArgument("kafka: group_id is empty");
  }
  if (assignment == Assignment::kManual) {
    // ferry matches the patterns itself (librdkafka does it when subscribing).
    FERRY_RETURN_IF_ERROR(TopicMatcher::Create(topics).status());
  }
  if (start_fallback != StartPolicy::kEarliest && start_fallback != StartPolicy::kLatest) {
    return InvalidArgument("kafka: start_fallback must be earliest or latest, not {}",
                           StartPolicyName(start_fallback));
  }
  for (const auto& [tp, offset] : start_offsets) {
    if (tp.topic.empty() || tp.partition < 0 || offset < -2) {
      return InvalidArgument("kafka: bad start offset {} for topic '{}' partition {}", offset,
                             tp.topic, tp.partition);
    }
  }
  if (start == StartPolicy::kTimestamp && start_timestamp_ms < 0) {
    return InvalidArgument("kafka: start_timestamp_ms {} is negative", start_timestamp_ms);
  }
  if (!std::isfinite(max_rate_per_partition) || max_rate_per_partition < 0) {
    return InvalidArgument("kafka: max_rate_per_partition must be >= 0");
  }
  if (queue_max_kbytes < 1 || queue_max_kbytes > 2097151) {
    return InvalidArgument("kafka: queue_max_kbytes {} is outside 1..2097151", queue_max_kbytes);
  }
  if (queue_min_messages < 1 || queue_min_messages > 10000000) {
    return InvalidArgument("kafka: queue_min_messages {} is outside 1..10000000",
                           queue_min_messages);
  }
  if (fetch_max_bytes != 0 && (fetch_max_bytes < 1000000 || fetch_max_bytes > 2147483135)) {
    return InvalidArgument("kafka: fetch_max_bytes {} is outside 1000000..2147483135 (or 0)",
                           fetch_max_bytes);
  }
  if (metadata_refresh.count() < 1 || metadata_refresh.count() > 3600000) {
    return InvalidArgument("kafka: metadata_refresh {} ms is outside 1..3600000",
                           metadata_refresh.count());
  }
  if (request_timeout.count() < 1 || close_timeout.count() < 0) {
    return InvalidArgument("kafka: request_timeout must be positive and close_timeout >= 0");
  }
  return ValidateProperties(*this);
}

}  // namespace ferry::source::kafka

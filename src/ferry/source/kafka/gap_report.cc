#include "ferry/source/kafka/gap_report.h"

#include <fmt/format.h>

#include <string>

#include "ferry/source/kafka/kafka_source_options.h"

namespace ferry::source::kafka {

std::string DescribeLogRange(int64_t low, int64_t high) {
  if (low < 0 || high < 0) {
    return "an unknown range (the watermark query failed)";
  }
  if (high <= low) {
    return fmt::format("no records (log start and end {})", high);
  }
  return fmt::format("offsets {}..{}", low, high - 1);
}

RefusedOffset InspectRefusal(rd_kafka_t* rk, const rd_kafka_message_t& error,
                             std::chrono::milliseconds timeout) {
  RefusedOffset r;
  r.reason = rd_kafka_message_errstr(&error);
  r.wanted = error.offset;
  if (error.rkt == nullptr) {
    return r;
  }
  r.topic = rd_kafka_topic_name(error.rkt);
  r.partition = error.partition;
  r.key = KafkaPartitionKey(r.topic, r.partition);
  int64_t low = -1;
  int64_t high = -1;
  if (rd_kafka_query_watermark_offsets(rk, r.topic.c_str(), r.partition, &low, &high,
                                       static_cast<int>(timeout.count())) ==
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    r.low = low;
    r.high = high;
  }
  return r;
}

Status RefusalStatus(const RefusedOffset& r) {
  if (r.topic.empty()) {
    return DataLoss("kafka: offset reset refused: {}", r.reason);
  }
  if (r.BelowLogStart()) {
    return DataLoss(
        "{}: offsets {}..{} of topic '{}' partition {} are no longer on the broker (log start is "
        "now {}): retention removed them before they were ingested. Set on_gap = \"continue\" to "
        "skip them",
        r.key, r.wanted, r.low - 1, r.topic, r.partition, r.low);
  }
  if (r.PastLogEnd() && !r.started_by.empty()) {
    return DataLoss(
        "{}: topic '{}' partition {} was to start at offset {} (start = \"{}\"; the table holds "
        "no position for it), but the broker's log now holds {}: was the topic deleted and "
        "recreated, or is the start offset wrong? ferry stops rather than guess where to start "
        "(on_gap does not apply here)",
        r.key, r.topic, r.partition, r.wanted, r.started_by, DescribeLogRange(r.low, r.high));
  }
  if (r.PastLogEnd()) {
    return DataLoss(
        "{}: the table's position for topic '{}' partition {} is offset {} (next to read: {}), "
        "but the broker's log now holds {}: was the topic deleted and recreated, or does the "
        "table come from another cluster? ferry stops rather than skip or re-read; offsets "
        "{}..{} are unknown to the broker (on_gap does not apply here)",
        r.key, r.topic, r.partition, r.wanted - 1, r.wanted, DescribeLogRange(r.low, r.high),
        r.high, r.wanted - 1);
  }
  return DataLoss(
      "{}: the broker cannot serve offset {} of topic '{}' partition {} ({}); its log "
      "holds {}",
      r.key, r.wanted, r.topic, r.partition, r.reason, DescribeLogRange(r.low, r.high));
}

}  // namespace ferry::source::kafka

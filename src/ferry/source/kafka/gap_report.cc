#include "ferry/source/kafka/gap_report.h"

#include <string>

#include "ferry/source/kafka/kafka_source_options.h"

namespace ferry::source::kafka {

Status DescribeGap(rd_kafka_t* rk, const rd_kafka_message_t& error,
                   std::chrono::milliseconds timeout) {
  if (error.rkt == nullptr) {
    return DataLoss("kafka: offset reset refused: {}", rd_kafka_message_errstr(&error));
  }
  const char* topic = rd_kafka_topic_name(error.rkt);
  const std::string key = KafkaPartitionKey(topic, error.partition);
  const int64_t wanted = error.offset;  // the offset librdkafka tried to fetch
  int64_t low = -1;
  int64_t high = -1;
  rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      rk, topic, error.partition, &low, &high, static_cast<int>(timeout.count()));
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR && wanted >= 0 && wanted < low) {
    return DataLoss(
        "{}: offsets {}..{} are no longer on the broker (log start is now {}): retention removed "
        "them before they were ingested",
        key, wanted, low - 1, low);
  }
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR && wanted > high) {
    return DataLoss(
        "{}: the next offset to read, {}, lies past the broker's log end {} (was the topic "
        "deleted and recreated?); offsets {}..{} are unknown to the broker",
        key, wanted, high, high, wanted - 1);
  }
  return DataLoss("{}: the broker cannot serve offset {} ({}); log {}..{}", key, wanted,
                  rd_kafka_message_errstr(&error), low, high);
}

}  // namespace ferry::source::kafka

#include "ferry/testing/kafka_records.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>

#include <utility>
#include <vector>

#include "ferry/testing/kafka_broker_internal.h"

namespace ferry::testing {

Status ProduceIds(const std::string& brokers, const std::string& topic, int64_t first, int64_t last,
                  const ProduceIdsOptions& options) {
  char err[512] = {};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [key, value] :
       std::vector<std::pair<const char*, std::string>>{{"bootstrap.servers", brokers},
                                                        {"acks", "all"},
                                                        {"batch.size", "4096"},
                                                        {"log_level", "3"}}) {
    if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Internal("librdkafka {}: {}", key, err);
    }
  }
  rd_kafka_t* raw = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (raw == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Internal("rd_kafka_new: {}", err);
  }
  kafka_internal::RdKafkaPtr rk(raw);
  const std::string payload(options.payload_bytes, 'x');
  for (int64_t id = first; id <= last; ++id) {
    const std::string value =
        fmt::format(R"({{"id": {}, "dateTime": "-", "payload": "{}"}})", id, payload);
    const std::string key = fmt::format("k{}", id);
    rd_kafka_resp_err_t e = rd_kafka_producev(
        rk.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(options.partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_KEY(key.data(), key.size()), RD_KAFKA_V_TIMESTAMP(options.timestamp_ms),
        RD_KAFKA_V_END);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Internal("producing id {} to {}: {}", id, topic, rd_kafka_err2str(e));
    }
  }
  const rd_kafka_resp_err_t flushed = rd_kafka_flush(rk.get(), 60000);
  if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR || rd_kafka_outq_len(rk.get()) != 0) {
    return Unavailable("ids {}..{} to {} on {}: {} not delivered within 60 s ({})", first, last,
                       topic, brokers, rd_kafka_outq_len(rk.get()), rd_kafka_err2str(flushed));
  }
  return Status::OK();
}

Result<Watermarks> QueryWatermarks(const std::string& brokers, const std::string& topic,
                                   int32_t partition) {
  FERRY_ASSIGN_OR_RETURN(kafka_internal::RdKafkaPtr client, kafka_internal::NewClient(brokers));
  Watermarks w;
  rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(client.get(), topic.c_str(), partition,
                                                           &w.low, &w.high, 10000);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable("watermarks of {} partition {} on {}: {}", topic, partition, brokers,
                       rd_kafka_err2str(e));
  }
  return w;
}

}  // namespace ferry::testing

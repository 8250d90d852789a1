#include "ferry/source/kafka/kafka_conf.h"

#include <array>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "ferry/base/log.h"

namespace ferry::source::kafka {
namespace {

void LogLine(const rd_kafka_t* rk, int level, const char* facility, const char* message) {
  const char* name = rk != nullptr ? rd_kafka_name(rk) : "rdkafka";
  // syslog levels: 0-3 error, 4 warning, 5-6 notice/info, 7 debug.
  if (level <= 3) {
    FERRY_LOG_ERROR("librdkafka {} {}: {}", name, facility, message);
  } else if (level == 4) {
    FERRY_LOG_WARN("librdkafka {} {}: {}", name, facility, message);
  } else if (level <= 6) {
    FERRY_LOG_INFO("librdkafka {} {}: {}", name, facility, message);
  } else {
    FERRY_LOG_DEBUG("librdkafka {} {}: {}", name, facility, message);
  }
}

}  // namespace

Status SetProperty(rd_kafka_conf_t* conf, std::string_view key, std::string_view value) {
  std::array<char, 512> errstr{};
  const std::string k(key);
  const std::string v(value);
  if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), errstr.data(), errstr.size()) !=
      RD_KAFKA_CONF_OK) {
    return InvalidArgument("kafka property '{}': {}", key, errstr.data());
  }
  return Status::OK();
}

void RouteLogs(rd_kafka_conf_t* conf) {
  rd_kafka_conf_set_log_cb(conf, &LogLine);
}

Result<ConfPtr> NewConf(const KafkaProperties& properties) {
  ConfPtr conf(rd_kafka_conf_new());
  RouteLogs(conf.get());
  for (const auto& [key, value] : properties) {
    FERRY_RETURN_IF_ERROR(SetProperty(conf.get(), key, value));
  }
  return conf;
}

Result<KafkaPtr> NewClient(rd_kafka_type_t type, ConfPtr conf) {
  std::array<char, 512> errstr{};
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), errstr.data(), errstr.size());
  if (rk == nullptr) {
    return InvalidArgument("kafka: cannot create {}: {}",
                           type == RD_KAFKA_CONSUMER ? "consumer" : "producer", errstr.data());
  }
  static_cast<void>(conf.release());  // owned by rk now
  return KafkaPtr(rk);
}

Status KafkaErrorStatus(rd_kafka_resp_err_t err, std::string_view context) {
  std::string message = fmt::format("{}: {}", context, rd_kafka_err2str(err));
  switch (err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
      return Status::OK();
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR__NODE_UPDATE:
    case RD_KAFKA_RESP_ERR__PREV_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_UNSTABLE_OFFSET_COMMIT:
      return Unavailable(std::move(message));
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_INVALID_GROUP_ID:
      return InvalidArgument(std::move(message));
    default:
      return Internal(std::move(message));
  }
}

int64_t ConfInteger(const rd_kafka_conf_t* conf, const char* name) {
  char value[64];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(conf, name, value, &size) != RD_KAFKA_CONF_OK) {
    return 0;
  }
  char* end = nullptr;
  long long parsed = std::strtoll(value, &end, 10);
  return end != value && *end == '\0' ? static_cast<int64_t>(parsed) : 0;
}

bool DestroyWithin(rd_kafka_t* rk, std::chrono::milliseconds timeout) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([rk, done] {
    rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    done->set_value();
  }).detach();
  return finished.wait_for(timeout) == std::future_status::ready;
}

}  // namespace ferry::source::kafka

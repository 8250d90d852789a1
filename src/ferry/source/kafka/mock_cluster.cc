#include "ferry/source/kafka/mock_cluster.h"

#include <array>
#include <charconv>
#include <string>
#include <vector>

#include "ferry/source/kafka/kafka_conf.h"

namespace ferry::source::kafka {
namespace {

Status MockStatus(rd_kafka_resp_err_t err, std::string_view what) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::OK();
  }
  if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
    return AlreadyExists("mock kafka: {}: {}", what, rd_kafka_err2str(err));
  }
  return InvalidArgument("mock kafka: {}: {}", what, rd_kafka_err2str(err));
}

template <typename T>
bool ParseInt(std::string_view s, T* out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

struct ApiName {
  std::string_view name;
  int16_t key;
};
// Kafka protocol request types (the ApiKey field of every request header).
constexpr std::array<ApiName, 23> kApis = {{
    {"Produce", 0},
    {"Fetch", 1},
    {"ListOffsets", 2},
    {"Metadata", 3},
    {"OffsetCommit", 8},
    {"OffsetFetch", 9},
    {"FindCoordinator", 10},
    {"JoinGroup", 11},
    {"Heartbeat", 12},
    {"LeaveGroup", 13},
    {"SyncGroup", 14},
    {"DescribeGroups", 15},
    {"ListGroups", 16},
    {"SaslHandshake", 17},
    {"ApiVersion", 18},
    {"CreateTopics", 19},
    {"DeleteTopics", 20},
    {"InitProducerId", 22},
    {"AddPartitionsToTxn", 24},
    {"AddOffsetsToTxn", 25},
    {"EndTxn", 26},
    {"TxnOffsetCommit", 28},
    {"CreatePartitions", 37},
}};

}  // namespace

Result<std::unique_ptr<MockCluster>> MockCluster::Create(int brokers, const std::string& debug) {
  if (brokers < 1 || brokers > 64) {
    return InvalidArgument("mock kafka: broker count {} is outside 1..64", brokers);
  }
  std::unique_ptr<MockCluster> mc(new MockCluster());
  // The handle only hosts the cluster; it never connects anywhere.
  KafkaProperties settings = {{"client.id", "ferry-mock-kafka"}, {"log_level", "3"}};
  if (!debug.empty()) {
    settings = {{"client.id", "ferry-mock-kafka"}, {"log_level", "7"}, {"debug", debug}};
  }
  FERRY_ASSIGN_OR_RETURN(ConfPtr conf, NewConf(settings));
  FERRY_ASSIGN_OR_RETURN(mc->rk_, NewClient(RD_KAFKA_PRODUCER, std::move(conf)));
  mc->cluster_.reset(rd_kafka_mock_cluster_new(mc->rk_.get(), brokers));
  if (mc->cluster_ == nullptr) {
    return Internal("mock kafka: cannot create a cluster of {} brokers", brokers);
  }
  mc->bootstraps_ = rd_kafka_mock_cluster_bootstraps(mc->cluster_.get());
  mc->brokers_ = brokers;
  return mc;
}

MockCluster::~MockCluster() = default;

Status MockCluster::CreateTopic(std::string_view topic, int partitions, int replication_factor) {
  if (topic.empty() || partitions < 1 || replication_factor < 1 || replication_factor > brokers_) {
    return InvalidArgument(
        "mock kafka: topic '{}' needs a name, >= 1 partitions and 1..{} replicas", topic, brokers_);
  }
  const std::string name(topic);
  return MockStatus(
      rd_kafka_mock_topic_create(cluster_.get(), name.c_str(), partitions, replication_factor),
      fmt::format("creating topic '{}'", topic));
}

Status MockCluster::SetBrokerDown(int32_t broker) {
  return MockStatus(rd_kafka_mock_broker_set_down(cluster_.get(), broker),
                    fmt::format("broker {} down", broker));
}

Status MockCluster::SetBrokerUp(int32_t broker) {
  return MockStatus(rd_kafka_mock_broker_set_up(cluster_.get(), broker),
                    fmt::format("broker {} up", broker));
}

Status MockCluster::SetBrokerRtt(int32_t broker, int rtt_ms) {
  return MockStatus(rd_kafka_mock_broker_set_rtt(cluster_.get(), broker, rtt_ms),
                    fmt::format("broker {} rtt", broker));
}

Status MockCluster::SetPartitionLeader(std::string_view topic, int32_t partition, int32_t broker) {
  const std::string name(topic);
  return MockStatus(
      rd_kafka_mock_partition_set_leader(cluster_.get(), name.c_str(), partition, broker),
      fmt::format("leader of {}/{}", topic, partition));
}

void MockCluster::PushRequestErrors(int16_t api_key, std::span<const rd_kafka_resp_err_t> errors) {
  rd_kafka_mock_push_request_errors_array(cluster_.get(), api_key, errors.size(), errors.data());
}

void MockCluster::ClearRequestErrors(int16_t api_key) {
  rd_kafka_mock_clear_request_errors(cluster_.get(), api_key);
}

void MockCluster::SetTopicError(std::string_view topic, rd_kafka_resp_err_t err) {
  const std::string name(topic);
  rd_kafka_mock_topic_set_error(cluster_.get(), name.c_str(), err);
}

Status MockCluster::SetGroupCoordinator(std::string_view group, int32_t broker) {
  const std::string name(group);
  return MockStatus(rd_kafka_mock_coordinator_set(cluster_.get(), "group", name.c_str(), broker),
                    fmt::format("coordinator of group '{}'", group));
}

Result<int16_t> ParseApiKey(std::string_view name) {
  int16_t key = 0;
  if (ParseInt(name, &key) && key >= 0) {
    return key;
  }
  for (const ApiName& api : kApis) {
    if (api.name == name) {
      return api.key;
    }
  }
  return InvalidArgument(
      "unknown Kafka API '{}' (a name such as Fetch or OffsetCommit, or a "
      "number)",
      name);
}

Result<rd_kafka_resp_err_t> ParseErrorCode(std::string_view name) {
  int code = 0;
  if (ParseInt(name, &code)) {
    return static_cast<rd_kafka_resp_err_t>(code);
  }
  constexpr std::string_view kPrefix = "RD_KAFKA_RESP_ERR_";
  if (name.starts_with(kPrefix)) {
    name.remove_prefix(kPrefix.size());
  }
  const struct rd_kafka_err_desc* descs = nullptr;
  size_t count = 0;
  rd_kafka_get_err_descs(&descs, &count);
  for (size_t i = 0; i < count; ++i) {
    if (descs[i].name != nullptr && name == descs[i].name) {
      return descs[i].code;
    }
  }
  return InvalidArgument(
      "unknown Kafka error code '{}' (e.g. NOT_LEADER_FOR_PARTITION, "
      "_TRANSPORT, or a number)",
      name);
}

}  // namespace ferry::source::kafka

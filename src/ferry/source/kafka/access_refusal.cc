#include "ferry/source/kafka/access_refusal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

namespace ferry::source::kafka {
namespace {

// The last value of `key` in the user's properties (the one librdkafka uses), or "".
std::string Property(const KafkaSourceOptions& options, std::string_view key) {
  std::string value;
  for (const auto& [k, v] : options.properties) {
    if (k == key) {
      value = v;
    }
  }
  return value;
}

std::string Principal(const KafkaSourceOptions& options) {
  std::string user = Property(options, "sasl.username");
  return user.empty() ? "this client's principal" : fmt::format("user '{}'", user);
}

// librdkafka before 2.6.1 puts the client nonce twice into the SCRAM client-final-message;
// Apache Kafka 4.x checks the nonce strictly (RFC 5802) and refuses every such login
// (confluentinc/librdkafka#4895). Debian 12's librdkafka is 2.0.2.
std::string ScramHint(std::string_view mechanism) {
  if (mechanism.rfind("SCRAM", 0) != 0 || rd_kafka_version() >= 0x020601ff) {
    return "";
  }
  return fmt::format(
      ". Note: librdkafka {} (this ferry's) sends SCRAM logins that Apache Kafka 4.x brokers "
      "refuse as invalid credentials (fixed in librdkafka 2.6.1); with a 4.x broker use PLAIN "
      "over TLS (SASL_SSL) or mutual TLS",
      rd_kafka_version_str());
}

}  // namespace

bool IsAccessRefusal(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
    case RD_KAFKA_RESP_ERR_ILLEGAL_SASL_STATE:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return true;
    default:
      return false;
  }
}

Status AccessRefusal(rd_kafka_resp_err_t err, std::string_view reason, std::string_view topic,
                     const KafkaSourceOptions& options) {
  const std::string name = rd_kafka_err2name(err);
  switch (err) {
    case RD_KAFKA_RESP_ERR__SSL:
      return PermissionDenied(
          "kafka: TLS with the broker failed ({}): {} [{}]; check ssl.ca.location (the CA that "
          "signed the broker's certificate), that the certificate names the host in `brokers`, "
          "and for mutual TLS ssl.certificate.location and ssl.key.location",
          options.brokers, reason, name);
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
      return PermissionDenied(
          "kafka: the broker ({}) refused {} READ on topic '{}': {} [{}]; grant the principal "
          "READ on the topic (an ACL) or take the topic out of `topics`",
          options.brokers, Principal(options),
          topic.empty() ? fmt::format("{}", fmt::join(options.topics, "', '")) : topic, reason,
          name);
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
      return PermissionDenied(
          "kafka: the broker ({}) refused {} READ on consumer group '{}': {} [{}]; grant the "
          "principal READ on the group (an ACL), or set `group_id` to a group it may use",
          options.brokers, Principal(options), options.group_id, reason, name);
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return PermissionDenied("kafka: the broker ({}) refused {} a cluster operation: {} [{}]",
                              options.brokers, Principal(options), reason, name);
    default: {
      std::string mechanism = Property(options, "sasl.mechanisms");
      if (mechanism.empty()) {
        mechanism = Property(options, "sasl.mechanism");
      }
      return PermissionDenied(
          "kafka: the broker ({}) refused the SASL login of {} (mechanism {}): {} [{}]; check "
          "sasl.username, sasl.password and sasl.mechanisms against the broker's listener{}",
          options.brokers, Principal(options), mechanism.empty() ? "GSSAPI" : mechanism, reason,
          name, ScramHint(mechanism));
    }
  }
}

}  // namespace ferry::source::kafka

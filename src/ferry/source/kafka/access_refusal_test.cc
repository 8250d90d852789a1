#include "ferry/source/kafka/access_refusal.h"

#include <gtest/gtest.h>

namespace ferry::source::kafka {
namespace {

KafkaSourceOptions Secured(const std::string& mechanism) {
  KafkaSourceOptions o;
  o.brokers = "broker-1:9094";
  o.topics = {"events"};
  o.group_id = "ingest";
  o.properties = {{"security.protocol", "SASL_SSL"},
                  {"sasl.mechanisms", mechanism},
                  {"sasl.username", "alice"},
                  {"sasl.password", "s3cret-pw"}};
  return o;
}

TEST(AccessRefusalTest, RefusalsAreTheAuthenticationTlsAndAuthorizationErrors) {
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR__AUTHENTICATION, RD_KAFKA_RESP_ERR__SSL,
        RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
        RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED,
        RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED}) {
    EXPECT_TRUE(IsAccessRefusal(err)) << rd_kafka_err2name(err);
  }
  // Outages stay with librdkafka's retries.
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN,
        RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE,
        RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART}) {
    EXPECT_FALSE(IsAccessRefusal(err)) << rd_kafka_err2name(err);
  }
}

TEST(AccessRefusalTest, MessagesNameTheBrokerTheUserAndTheRefusedThingButNoSecret) {
  const KafkaSourceOptions o = Secured("PLAIN");
  Status login =
      AccessRefusal(RD_KAFKA_RESP_ERR__AUTHENTICATION,
                    "sasl_ssl://broker-1:9094/bootstrap: SASL authentication error", "", o);
  EXPECT_EQ(login.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(login.message().find("broker-1:9094"), std::string::npos) << login.message();
  EXPECT_NE(login.message().find("user 'alice' (mechanism PLAIN)"), std::string::npos);
  Status topic = AccessRefusal(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, "denied", "events", o);
  EXPECT_NE(topic.message().find("READ on topic 'events'"), std::string::npos) << topic.message();
  Status group = AccessRefusal(RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, "denied", "", o);
  EXPECT_NE(group.message().find("READ on consumer group 'ingest'"), std::string::npos);
  Status tls = AccessRefusal(RD_KAFKA_RESP_ERR__SSL, "certificate verify failed", "", o);
  EXPECT_NE(tls.message().find("ssl.ca.location"), std::string::npos) << tls.message();
  for (const Status& s : {login, topic, group, tls}) {
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(s.message().find("s3cret-pw"), std::string::npos) << s.message();
  }
}

// librdkafka before 2.6.1 (Debian 12: 2.0.2) cannot log in with SCRAM to Kafka 4.x.
TEST(AccessRefusalTest, ARefusedScramLoginCarriesTheLibrdkafkaNote) {
  Status scram = AccessRefusal(RD_KAFKA_RESP_ERR__AUTHENTICATION, "invalid credentials", "",
                               Secured("SCRAM-SHA-512"));
  Status plain =
      AccessRefusal(RD_KAFKA_RESP_ERR__AUTHENTICATION, "invalid credentials", "", Secured("PLAIN"));
  EXPECT_EQ(plain.message().find("2.6.1"), std::string::npos);
  if (rd_kafka_version() < 0x020601ff) {
    EXPECT_NE(scram.message().find("fixed in librdkafka 2.6.1"), std::string::npos)
        << scram.message();
  }
}

}  // namespace
}  // namespace ferry::source::kafka

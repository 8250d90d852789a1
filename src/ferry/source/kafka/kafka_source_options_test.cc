#include "ferry/source/kafka/kafka_source_options.h"

#include <gtest/gtest.h>

#include "ferry/source/kafka/kafka_conf.h"
#include "ferry/source/kafka/mock_cluster.h"
#include "ferry/source/kafka/topic_matcher.h"

namespace ferry::source::kafka {
namespace {

KafkaSourceOptions Valid() {
  KafkaSourceOptions o;
  o.brokers = "localhost:9092";
  o.topics = {"events"};
  o.group_id = "ferry-events";
  return o;
}

TEST(KafkaSourceOptionsTest, ValidOptionsPass) {
  EXPECT_TRUE(Valid().Validate().ok());
}

TEST(KafkaSourceOptionsTest, MissingFieldsAreNamed) {
  KafkaSourceOptions o = Valid();
  o.brokers.clear();
  EXPECT_NE(o.Validate().message().find("brokers"), std::string::npos);
  o.properties = {{"bootstrap.servers", "b:9092"}};
  EXPECT_TRUE(o.Validate().ok());

  o = Valid();
  o.topics.clear();
  EXPECT_NE(o.Validate().message().find("topics"), std::string::npos);
  o = Valid();
  o.group_id.clear();
  EXPECT_NE(o.Validate().message().find("group_id"), std::string::npos);
}

TEST(KafkaSourceOptionsTest, ManualAssignmentChecksThePatterns) {
  KafkaSourceOptions o = Valid();
  o.assignment = Assignment::kManual;
  o.topics = {"events", "^ev-[a-z]+$"};
  EXPECT_TRUE(o.Validate().ok());
  o.topics = {"^ev-("};
  Status st = o.Validate();
  EXPECT_NE(st.message().find("'^ev-('"), std::string::npos) << st.message();

  Result<TopicMatcher> m = TopicMatcher::Create({"events", "^ev-.*"});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->Matches("events"));
  EXPECT_TRUE(m->Matches("ev-b"));
  EXPECT_FALSE(m->Matches("other"));
  EXPECT_FALSE(m->Matches("eventsx"));
  Result<TopicMatcher> all = TopicMatcher::Create({"^.*"});
  EXPECT_TRUE(all->Matches("anything"));
  EXPECT_FALSE(all->Matches("__consumer_offsets"));  // internal topics only by name
}

TEST(KafkaSourceOptionsTest, ManagedPropertiesMustKeepFerrysValue) {
  KafkaSourceOptions o = Valid();
  o.properties = {{"enable.auto.commit", "true"}};
  Status st = o.Validate();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("enable.auto.commit"), std::string::npos);

  o.properties = {{"enable.auto.commit", "False"}, {"isolation.level", "read_committed"}};
  EXPECT_TRUE(o.Validate().ok());
  o.properties = {{"auto.offset.reset", "earliest"}};
  EXPECT_FALSE(o.Validate().ok());
  o.properties = {{"isolation.level", "read_uncommitted"}};  // allowed: docs/kafka.md
  EXPECT_TRUE(o.Validate().ok());
  EXPECT_EQ(ConsumerProperties(o).back(),
            (std::pair<std::string, std::string>{"isolation.level", "read_uncommitted"}));
  o.properties = {{"isolation.level", "snapshot"}};
  EXPECT_FALSE(o.Validate().ok());
  o.properties = {{"group.id", "other"}};
  EXPECT_FALSE(o.Validate().ok());
  o.properties = {{"security.protocol", "SASL_SSL"}, {"sasl.password", "secret"}};
  EXPECT_TRUE(o.Validate().ok());
}

TEST(KafkaSourceOptionsTest, StartPolicies) {
  for (std::string_view name : {"earliest", "latest", "group", "offsets", "timestamp"}) {
    Result<StartPolicy> p = ParseStartPolicy(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ(StartPolicyName(*p), name);
  }
  EXPECT_FALSE(ParseStartPolicy("beginning").ok());

  KafkaSourceOptions o = Valid();
  o.start = StartPolicy::kGroup;
  o.start_fallback = StartPolicy::kGroup;
  EXPECT_FALSE(o.Validate().ok());
  o.start_fallback = StartPolicy::kLatest;
  EXPECT_TRUE(o.Validate().ok());

  o.start = StartPolicy::kOffsets;
  o.start_offsets[{"events", 0}] = -3;
  EXPECT_FALSE(o.Validate().ok());
  o.start_offsets[{"events", 0}] = -2;
  EXPECT_TRUE(o.Validate().ok());
}

TEST(KafkaSourceOptionsTest, LimitsAreChecked) {
  KafkaSourceOptions o = Valid();
  o.max_rate_per_partition = -1;
  EXPECT_FALSE(o.Validate().ok());
  o = Valid();
  o.queue_max_kbytes = 0;
  EXPECT_FALSE(o.Validate().ok());
  o = Valid();
  o.queue_min_messages = 0;
  EXPECT_FALSE(o.Validate().ok());
  o = Valid();
  o.fetch_max_bytes = 1000;  // below message.max.bytes: librdkafka would refuse it
  EXPECT_FALSE(o.Validate().ok());
}

// The prefetch sizes `ferry run` derives from max_memory (config/memory_budget.h) go to
// librdkafka before the user's properties, which win.
TEST(KafkaSourceOptionsTest, DerivedPrefetchSizesYieldToTheUsersProperties) {
  KafkaSourceOptions o = Valid();
  o.queue_max_kbytes = 16384;
  o.queue_min_messages = 65536;
  o.fetch_max_bytes = 2 << 20;
  auto last = [](const std::vector<std::pair<std::string, std::string>>& p, std::string_view key) {
    std::string value;
    for (const auto& [k, v] : p) {
      if (k == key) {
        value = v;
      }
    }
    return value;
  };
  std::vector<std::pair<std::string, std::string>> p = ConsumerProperties(o);
  EXPECT_EQ(last(p, "queued.max.messages.kbytes"), "16384");
  EXPECT_EQ(last(p, "queued.min.messages"), "65536");
  EXPECT_EQ(last(p, "fetch.max.bytes"), "2097152");
  EXPECT_TRUE(NewConf(p).ok());

  o.properties = {{"queued.max.messages.kbytes", "131072"}, {"fetch.max.bytes", "52428800"}};
  p = ConsumerProperties(o);
  EXPECT_EQ(last(p, "queued.max.messages.kbytes"), "131072");
  EXPECT_EQ(last(p, "fetch.max.bytes"), "52428800");
  EXPECT_TRUE(NewConf(p).ok());

  // librdkafka wants fetch.max.bytes >= message.max.bytes: with the user's message.max.bytes,
  // ferry leaves fetch.max.bytes to librdkafka.
  o.properties = {{"message.max.bytes", "10000000"}};
  p = ConsumerProperties(o);
  EXPECT_EQ(last(p, "fetch.max.bytes"), "");
  EXPECT_TRUE(NewConf(p).ok());
}

TEST(KafkaSourceOptionsTest, ConsumerPropertiesPutFerrysLast) {
  KafkaSourceOptions o = Valid();
  o.properties = {{"queued.min.messages", "5"}, {"security.protocol", "SSL"}};
  std::vector<std::pair<std::string, std::string>> p = ConsumerProperties(o);
  auto last = [&](std::string_view key) {
    std::string value;
    for (const auto& [k, v] : p) {
      if (k == key) {
        value = v;  // librdkafka keeps the last value set
      }
    }
    return value;
  };
  EXPECT_EQ(last("bootstrap.servers"), "localhost:9092");
  EXPECT_EQ(last("group.id"), "ferry-events");
  EXPECT_EQ(last("queued.min.messages"), "5");  // the user's value wins over the default
  EXPECT_EQ(last("queued.max.messages.kbytes"), "131072");
  EXPECT_EQ(last("security.protocol"), "SSL");
  EXPECT_EQ(last("enable.auto.commit"), "false");
  EXPECT_EQ(last("enable.auto.offset.store"), "false");
  EXPECT_EQ(last("isolation.level"), "read_committed");
  EXPECT_EQ(last("auto.offset.reset"), "error");
  // Every property is one librdkafka accepts.
  EXPECT_TRUE(NewConf(p).ok());
}

TEST(KafkaSourceOptionsTest, MetadataRefreshFollowsTheProperty) {
  KafkaSourceOptions o = Valid();
  o.metadata_refresh = std::chrono::milliseconds(30000);
  EXPECT_EQ(MetadataRefresh(o).count(), 30000);
  o.properties = {{"topic.metadata.refresh.interval.ms", "1000"}};
  EXPECT_EQ(MetadataRefresh(o).count(), 1000);
  o.properties = {{"topic.metadata.refresh.interval.ms", "soon"}};  // librdkafka refuses it
  EXPECT_EQ(MetadataRefresh(o).count(), 30000);
}

TEST(KafkaSourceOptionsTest, PartitionKey) {
  EXPECT_EQ(KafkaPartitionKey("events", 7), "kafka/events/7");
}

TEST(KafkaConfTest, RejectedPropertyNamesTheKeyNotTheValue) {
  Result<ConfPtr> conf = NewConf({{"no.such.property", "hunter2"}});
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(conf.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(conf.status().message().find("no.such.property"), std::string::npos);
  EXPECT_EQ(conf.status().message().find("hunter2"), std::string::npos);
}

TEST(KafkaConfTest, ErrorCodesMapToWhatTheCallerMustDo) {
  EXPECT_EQ(KafkaErrorStatus(RD_KAFKA_RESP_ERR__TRANSPORT, "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(KafkaErrorStatus(RD_KAFKA_RESP_ERR__TIMED_OUT, "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(KafkaErrorStatus(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, "x").code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(KafkaErrorStatus(RD_KAFKA_RESP_ERR_NO_ERROR, "x").ok());
}

TEST(MockClusterNamesTest, ApiKeysAndErrorCodes) {
  EXPECT_EQ(*ParseApiKey("Fetch"), 1);
  EXPECT_EQ(*ParseApiKey("OffsetCommit"), 8);
  EXPECT_EQ(*ParseApiKey("3"), 3);
  EXPECT_FALSE(ParseApiKey("Fetchh").ok());
  EXPECT_EQ(*ParseErrorCode("NOT_LEADER_FOR_PARTITION"),
            RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  EXPECT_EQ(*ParseErrorCode("RD_KAFKA_RESP_ERR__TRANSPORT"), RD_KAFKA_RESP_ERR__TRANSPORT);
  EXPECT_EQ(*ParseErrorCode("_TRANSPORT"), RD_KAFKA_RESP_ERR__TRANSPORT);
  EXPECT_EQ(*ParseErrorCode("6"), RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  EXPECT_FALSE(ParseErrorCode("NOPE").ok());
}

}  // namespace
}  // namespace ferry::source::kafka

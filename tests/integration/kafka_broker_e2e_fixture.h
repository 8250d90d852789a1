// KafkaBrokerE2eTest: the `ferry run` end-to-end fixture (kafka_e2e_fixture.h) on the real Apache
// Kafka broker the test binary shares (ferry/testing/kafka_broker.h, started on first use), as
// kafka_debezium_test, kafka_real_group_test and kafka_txn_test use it: a subclass's SetUp calls
// UseSharedBroker() with its directory prefix and topic; TearDown removes the directory.
//
// Header-only, like the fixture it extends. Thread-safety: a gtest fixture, one thread.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "kafka_e2e_fixture.h"
#include "pipeline_e2e_support.h"

#include "ferry/testing/kafka_broker.h"

namespace ferry::e2e {

class KafkaBrokerE2eTest : public KafkaE2eTest {
 protected:
  // broker_ and brokers_ (its bootstrap servers), dir_ (FreshTestDir(dir_prefix)), and topic_ =
  // `topic`, created with `partitions`. A failure is fatal to the test.
  void UseSharedBroker(const std::string& dir_prefix, const std::string& topic, int partitions) {
    Result<testing::KafkaBroker*> broker = testing::KafkaBroker::Shared();
    ASSERT_TRUE(broker.ok()) << broker.status().ToString();
    broker_ = *broker;
    dir_ = FreshTestDir(dir_prefix);
    brokers_ = broker_->bootstrap();
    topic_ = topic;
    Status created = broker_->CreateTopic(topic_, partitions);
    ASSERT_TRUE(created.ok()) << created.ToString();
  }
  void TearDown() override {
    if (!dir_.empty()) {
      std::filesystem::remove_all(dir_);
    }
  }

  testing::KafkaBroker* broker_ = nullptr;
};

}  // namespace ferry::e2e

// `ferry run` against a real Apache Kafka broker (KRaft, ferry/testing/kafka_broker.h), end to
// end with the real binaries: issue 38's first proof on the broker users run. The demo scenario
// (10,000 ids produced to a 4-partition topic while ferry ingests, ferry SIGKILLed once rows are
// committed, then a --until-caught-up run) with group assignment and with manual assignment, and
// two processes in one consumer group, one SIGKILLed and started again. Every test ends by
// reading the table back with ferry's reader and with DuckDB: each id exactly once, each
// partition's txn position at its largest offset.
//
// One broker serves the whole binary (it is one CTest test, WHOLE_BINARY), which CTest runs on
// Kafka 4.4.0 and again on 3.9.2 (kafka_real_broker_test_kafka3); each test has its own topic,
// consumer group and table. Label: integration. Needs `make setup-kafka`.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "kafka_child_process.h"
#include "kafka_e2e_fixture.h"
#include "pipeline_e2e_support.h"

#include "ferry/testing/kafka_broker.h"

namespace ferry {
namespace {

using e2e::kFerry;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::seconds;

constexpr int kPartitions = 4;
constexpr int kMessages = 10000;

class KafkaRealBrokerTest : public e2e::KafkaE2eTest {
 protected:
  void SetUp() override {
    Result<testing::KafkaBroker*> broker = testing::KafkaBroker::Shared();
    ASSERT_TRUE(broker.ok()) << broker.status().ToString();
    broker_ = *broker;
    // CTest runs this binary twice: on the newest 4.x, and on the 3.x line through
    // FERRY_KAFKA_VERSION (kafka_tests.cmake).
    const char* version = getenv("FERRY_KAFKA_VERSION");
    ASSERT_EQ(broker_->version(),
              version != nullptr ? version : testing::KafkaBroker::DefaultVersion());
    dir_ = e2e::FreshTestDir("ferry-kafka-real");
    brokers_ = broker_->bootstrap();
    // Topic and group names from the test's name: each test starts from an empty topic and a
    // group no earlier test's (possibly killed) members belong to.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '-');
    topic_ = "events-" + name;
    group_ = "ferry-" + name;
    Status created = broker_->CreateTopic(topic_, kPartitions);
    ASSERT_TRUE(created.ok()) << created.ToString();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The end of the broker's log, for failure messages.
  std::string BrokerLog() const { return "\nKafka broker log:\n" + broker_->Log(40); }

  testing::KafkaBroker* broker_ = nullptr;
};

// The demo scenario under each assignment: "group" (subscribe with group_id) and "manual"
// (assign every partition, no group membership).
class KafkaRealBrokerKillTest : public KafkaRealBrokerTest,
                                public ::testing::WithParamInterface<std::string> {};

TEST_P(KafkaRealBrokerKillTest, SigkilledMidWayAndCaughtUpHoldsEveryIdOnce) {
  const bool manual = GetParam() == "manual";
  std::string config = WriteConfig({}, "", manual ? R"(assignment = "manual")" : "");
  auto producer = StartProducer(topic_, kMessages, 1, 2500);
  auto ferry = StartFerry(config);
  ASSERT_GE(WaitForRows(2000), 2000u) << ferry->Log() << BrokerLog();
  ASSERT_EQ(kill(ferry->pid(), SIGKILL), 0);
  EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);
  size_t at_kill = e2e::ReadKafkaTable(table()).ids.size();
  EXPECT_LT(at_kill, static_cast<size_t>(kMessages)) << "killed after the end: proves nothing";
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();

  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err << BrokerLog();
  ExpectExactlyOnce(1, kMessages);
  if (HasFailure()) {
    ADD_FAILURE() << "at the kill: " << at_kill << " rows; the killed run's log:\n"
                  << ferry->Log() << "\nthe restart's log:\n"
                  << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Assignments, KafkaRealBrokerKillTest, ::testing::Values("group", "manual"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

// Two processes share the partitions through the broker's group coordinator; one is SIGKILLed
// (the coordinator gives its partitions to the other after session.timeout.ms, 6 s here) and
// started again (it rejoins and takes some back). Every id once.
TEST_F(KafkaRealBrokerTest, TwoProcessesInOneGroupOneKilledAndRestarted) {
  std::string config = WriteConfig();
  auto producer = StartProducer(topic_, kMessages, 1, 2000);
  auto a = StartFerry(config);
  auto b = StartFerry(config);
  ASSERT_GE(WaitForRows(3000), 3000u) << a->Log() << b->Log() << BrokerLog();
  ASSERT_EQ(kill(a->pid(), SIGKILL), 0);
  EXPECT_EQ(a->Wait(), 128 + SIGKILL);
  a = StartFerry(config);
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  EXPECT_EQ(WaitForRows(kMessages, seconds(180)), static_cast<size_t>(kMessages))
      << a->Log() << b->Log() << BrokerLog();
  ASSERT_EQ(kill(a->pid(), SIGTERM), 0);
  ASSERT_EQ(kill(b->pid(), SIGTERM), 0);
  EXPECT_EQ(a->Wait(), 0) << a->Log();
  EXPECT_EQ(b->Wait(), 0) << b->Log();
  ExpectExactlyOnce(1, kMessages);
}

}  // namespace
}  // namespace ferry

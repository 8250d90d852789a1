// Consumer groups on a real Apache Kafka broker (KRaft, ferry/testing/kafka_broker.h): issue 38's
// second proof. Three `ferry run` processes in one group write one table from a 6-partition topic
// while ids are produced, under each assignor librdkafka 2.0.2 offers: the eager `range` and
// `roundrobin` and the incremental `cooperative-sticky`. One member is SIGKILLed and never comes
// back while the producer runs: the broker's coordinator must give its partitions to the other
// two after the session timeout (6 s here), and the ids it was reading must all arrive without
// it. Then a new member joins and another leaves (SIGTERM, a clean LeaveGroup) while more ids are
// produced. The table then holds each id once, by ferry's reader and by DuckDB, every
// partition's txn position at its largest offset.
//
// The time from the SIGKILL to the survivors' first new assignment is printed (the figure in
// docs/kafka.md), not asserted: no wall-clock thresholds in tests.
//
// One broker serves the whole binary (WHOLE_BINARY), which CTest runs on Kafka 4.4.0 and again
// on 3.9.2 (kafka_real_group_test_kafka3); each test has its own topic, group and table.
// Label: integration. Needs `make setup-kafka`.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "kafka_broker_e2e_fixture.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"

#include "ferry/testing/kafka_broker.h"

namespace ferry {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

constexpr int kPartitions = 6;
constexpr int kPhaseIds = 6000;  // ids produced in each of the two phases
constexpr int kRate = 1500;      // per second: each phase produces for about 4 s

// The number of partitions a `ferry run` log says it started reading.
size_t Starts(const std::string& log) {
  size_t n = 0;
  for (size_t at = log.find(" starts at "); at != std::string::npos;
       at = log.find(" starts at ", at + 1)) {
    ++n;
  }
  return n;
}

class KafkaRealGroupTest : public e2e::KafkaBrokerE2eTest,
                           public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    group_ = "ferry-" + GetParam();
    UseSharedBroker("ferry-kafka-group", "events-" + GetParam(), kPartitions);
  }

  std::string Logs(const std::vector<ChildProcess*>& ferries) const {
    std::string out;
    for (size_t i = 0; i < ferries.size(); ++i) {
      out += fmt::format("\n==== ferry {}:\n{}", i, ferries[i]->Log(6000));
    }
    return out + "\n==== Kafka broker:\n" + broker_->Log(30);
  }
  // Waits until `ferry` reads at least one partition (its group's first rebalance is over).
  bool WaitUntilReading(ChildProcess* ferry, seconds limit = seconds(60)) {
    const auto deadline = steady_clock::now() + limit;
    while (Starts(ferry->Log(1 << 24)) == 0) {
      if (steady_clock::now() > deadline || ferry->ExitReport().has_value()) {
        return false;
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    return true;
  }
};

TEST_P(KafkaRealGroupTest, ThreeProcessesJoinLeaveAndOneIsKilled) {
  const std::string strategy = GetParam();
  std::string config =
      WriteConfig({}, fmt::format(R"(, "partition.assignment.strategy" = "{}")", strategy));
  auto a = StartFerry(config);
  auto b = StartFerry(config);
  auto c = StartFerry(config);
  for (ChildProcess* p : {a.get(), b.get(), c.get()}) {
    ASSERT_TRUE(WaitUntilReading(p))
        << "a member was never assigned a partition" << Logs({a.get(), b.get(), c.get()});
  }
  // Each member reads: the group spread the partitions over all three.
  const std::string protocol = strategy == "cooperative-sticky" ? "cooperative" : "eager";
  EXPECT_NE(a->Log(1 << 24).find("(" + protocol + " protocol)"), std::string::npos) << a->Log();

  // Phase 1: a member is SIGKILLed while ids arrive and never comes back.
  auto producer = StartProducer(topic_, kPhaseIds, 1, kRate);
  ASSERT_GE(WaitForRows(kPhaseIds / 4), static_cast<size_t>(kPhaseIds / 4))
      << Logs({a.get(), b.get(), c.get()});
  const size_t starts_b = Starts(b->Log(1 << 24));
  const size_t starts_c = Starts(c->Log(1 << 24));
  ASSERT_EQ(kill(a->pid(), SIGKILL), 0);
  const auto killed_at = steady_clock::now();
  EXPECT_EQ(a->Wait(), 128 + SIGKILL);
  // The survivors take the dead member's partitions (after the session timeout).
  const auto deadline = killed_at + seconds(90);
  while (Starts(b->Log(1 << 24)) == starts_b && Starts(c->Log(1 << 24)) == starts_c &&
         steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  const double reassigned_s =
      std::chrono::duration<double>(steady_clock::now() - killed_at).count();
  ASSERT_TRUE(Starts(b->Log(1 << 24)) > starts_b || Starts(c->Log(1 << 24)) > starts_c)
      << "the dead member's partitions were never reassigned" << Logs({b.get(), c.get()});
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  // Every id of phase 1 arrives with the dead member gone for good: nothing waits on it.
  EXPECT_EQ(WaitForRows(kPhaseIds, seconds(120)), static_cast<size_t>(kPhaseIds))
      << Logs({b.get(), c.get()});
  const double caught_up_s = std::chrono::duration<double>(steady_clock::now() - killed_at).count();

  // Phase 2: a new member joins, then a member leaves (SIGTERM: LeaveGroup), while ids arrive.
  producer = StartProducer(topic_, kPhaseIds, kPhaseIds + 1, kRate);
  auto d = StartFerry(config);
  ASSERT_TRUE(WaitUntilReading(d.get()))
      << "the new member was never assigned a partition" << Logs({b.get(), c.get(), d.get()});
  ASSERT_EQ(kill(b->pid(), SIGTERM), 0);
  EXPECT_EQ(b->Wait(), 0) << b->Log();
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  EXPECT_EQ(WaitForRows(2 * kPhaseIds, seconds(120)), static_cast<size_t>(2 * kPhaseIds))
      << Logs({c.get(), d.get()});
  ASSERT_EQ(kill(c->pid(), SIGTERM), 0);
  ASSERT_EQ(kill(d->pid(), SIGTERM), 0);
  EXPECT_EQ(c->Wait(), 0) << c->Log();
  EXPECT_EQ(d->Wait(), 0) << d->Log();
  ExpectExactlyOnce(1, 2 * kPhaseIds);
  fmt::print(
      "GROUP {} on Kafka {}: the SIGKILLed member's partitions reassigned after {:.1f} s "
      "(session.timeout.ms 6000), its ids all committed {:.1f} s after the kill\n",
      strategy, broker_->version(), reassigned_s, caught_up_s);
}

INSTANTIATE_TEST_SUITE_P(Assignors, KafkaRealGroupTest,
                         ::testing::Values("range", "roundrobin", "cooperative-sticky"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace ferry

// The torture harness on a three-node Apache Kafka cluster (KRaft, ferry/testing/kafka_cluster.h):
// issue 38's third proof. One 12-partition topic with replication factor 3 and
// min.insync.replicas 2; the scenario of torture_scenario.h (ferry SIGKILLed at random, an
// optimize loop beside it, `ferry verify` at the end) with the cluster's own faults:
//   - in the kill loop, after every third SIGKILL of ferry, the leader of a random partition is
//     SIGKILLed, and restarted after the next one (so ferry starts, reads and is killed while a
//     broker is down and while it rejoins);
//   - in the broker-fault phase, while ids are produced and one ferry runs: the leaders of two
//     partitions SIGKILLed in turn (each restarted after 3 s and waited for until back in sync),
//     and a broker stalled with SIGSTOP for 8 s (longer than the brokers' 3 s session: the
//     controller fences it and moves its leaderships) and then continued with SIGCONT.
// Each id exactly once: 0 duplicates, 0 missing, `ferry verify` clean. The failpoint steps are
// left to kafka_torture_test (they exercise ferry's own steps, the same on any broker).
//
// Short form here (6,000 ids, 10 kills); the long form in `make torture`
// (FERRY_TORTURE_MESSAGES, FERRY_TORTURE_KILLS; docs/RELIABILITY.md), which also runs it on the
// last 3.x line (FERRY_KAFKA_VERSION=3.9.2). One cluster for the binary (WHOLE_BINARY). Label:
// fault. Needs `make setup-kafka`.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <thread>

#include "kafka_torture_source.h"
#include "pipeline_e2e_support.h"
#include "torture_scenario.h"
#include "torture_support.h"

#include "ferry/testing/kafka_cluster.h"

namespace ferry::fault {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kPartitions = 12;

class ClusterTortureSource : public KafkaTortureSource {
 public:
  ClusterTortureSource(testing::KafkaCluster* cluster, uint64_t seed)
      : KafkaTortureSource({.brokers = cluster->bootstrap(),
                            .partitions = kPartitions,
                            .group = "ferry-torture",
                            // The broker's group.min.session.timeout.ms (6 s) is the least it
                            // accepts.
                            .session_ms = 6000,
                            // One request in flight: librdkafka 2.0.2's idempotent producer once
                            // failed fatally with "out of order sequence number" (a rewound
                            // sequence) after a leader kill with several in flight, and the
                            // messages it had not delivered were missing from the run.
                            .producer_extra = {"-X", "max.in.flight.requests.per.connection=1"}}),
        cluster_(cluster),
        rng_(seed + 7) {}

  std::string name() const override { return "kafka-3-brokers"; }

  void AfterKill(int kill) override {
    if (down_ >= 0) {
      RestartDown();
    } else if (kill % 3 == 2) {
      KillLeaderOf(static_cast<int>(rng_() % kPartitions));
    }
  }

  int BrokerFaults(Process* ferry, const TableLocation& table, int64_t first, int64_t count,
                   const std::string& log) override {
    RestartDown();
    int faults = 0;
    auto producers = StartProducers(first, count, std::max<int64_t>(20, count / 25), log);
    WaitForNewVersion(table, ferry, seconds(60));
    for (int partition : {0, 1}) {
      KillLeaderOf(partition);
      std::this_thread::sleep_for(seconds(3));
      RestartDown();
      ++faults;
      WaitForNewVersion(table, ferry, seconds(60));
    }
    Stall(2, seconds(8));
    ++faults;
    for (auto& producer : producers) {
      EXPECT_EQ(producer->Wait(), 0) << Tail(log);
    }
    WaitForNewVersion(table, ferry, seconds(60));
    EXPECT_TRUE(ferry->Running()) << "ferry exited during the broker faults:\n" << Tail(log);
    return faults;
  }

  int leader_kills() const { return leader_kills_; }

 private:
  // The node index of the partition's leader, or -1.
  int LeaderOf(int partition) const {
    auto described = cluster_->DescribeTopic(kKafkaTortureTopic);
    if (!described.ok() || partition >= static_cast<int>(described->size())) {
      return -1;
    }
    return cluster_->IndexOfNodeId((*described)[static_cast<size_t>(partition)].leader);
  }
  void KillLeaderOf(int partition) {
    const int node = LeaderOf(partition);
    ASSERT_GE(node, 0) << "partition " << partition << " has no leader\n" << cluster_->Logs(20);
    fmt::print("torture {}: SIGKILL of node {} (leader of partition {})\n", name(), node + 1,
               partition);
    std::fflush(stdout);
    ASSERT_TRUE(cluster_->node(node)->Kill9().ok());
    down_ = node;
    ++leader_kills_;
  }
  void RestartDown() {
    if (down_ < 0) {
      return;
    }
    const int node = down_;
    down_ = -1;
    Status restarted = cluster_->node(node)->Restart();
    ASSERT_TRUE(restarted.ok()) << restarted.ToString();
    // Back in every partition's ISR before the next fault: two nodes down at once would leave
    // partitions without an in-sync quorum (min.insync.replicas 2), which is not the point.
    Status in_sync = cluster_->WaitUntilInSync(kKafkaTortureTopic, seconds(120));
    EXPECT_TRUE(in_sync.ok()) << in_sync.ToString() << "\n" << cluster_->Logs(20);
    fmt::print("torture {}: node {} restarted in {} ms and back in sync\n", name(), node + 1,
               cluster_->node(node)->last_start_time().count());
    std::fflush(stdout);
  }
  void Stall(int partition, seconds how_long) {
    const int node = LeaderOf(partition);
    ASSERT_GE(node, 0) << "partition " << partition << " has no leader";
    const pid_t pid = cluster_->node(node)->pid();
    fmt::print("torture {}: SIGSTOP of node {} (leader of partition {}) for {} s\n", name(),
               node + 1, partition, how_long.count());
    std::fflush(stdout);
    ASSERT_EQ(kill(pid, SIGSTOP), 0);
    std::this_thread::sleep_for(how_long);
    ASSERT_EQ(kill(pid, SIGCONT), 0);
    Status in_sync = cluster_->WaitUntilInSync(kKafkaTortureTopic, seconds(120));
    EXPECT_TRUE(in_sync.ok()) << in_sync.ToString() << "\n" << cluster_->Logs(20);
  }

  testing::KafkaCluster* cluster_;
  std::mt19937_64 rng_;
  int down_ = -1;  // the node SIGKILLed and not yet restarted
  int leader_kills_ = 0;
};

class KafkaFailoverTortureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto cluster = testing::KafkaCluster::Start();
    if (!cluster.ok()) {
      start_error_ = new Status(cluster.status());
      return;
    }
    cluster_ = cluster->release();
    fmt::print("kafka cluster of {} ({}) up in {} ms, RSS {} MiB; bootstrap {}\n", cluster_->size(),
               cluster_->node(0)->version(), cluster_->start_time().count(),
               cluster_->RssBytes() >> 20, cluster_->bootstrap());
    Status created = cluster_->CreateTopic(kKafkaTortureTopic, kPartitions);
    if (!created.ok()) {
      start_error_ = new Status(created);
    }
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(start_error_, nullptr) << start_error_->ToString();
    settings_ = TortureSettings::FromEnv(/*default_messages=*/6000, /*default_kills=*/10);
    settings_.failpoint_steps = false;
    dir_ = e2e::FreshTestDir("ferry-torture-kafka-cluster");
    watchdog_ =
        std::make_unique<Watchdog>("the Kafka cluster", [c = cluster_] { return c->ExitReport(); });
  }
  void TearDown() override {
    watchdog_.reset();
    if (settings_.keep) {
      fmt::print("kept {}\n", dir_.string());
    } else {
      std::filesystem::remove_all(dir_);
    }
  }

  static testing::KafkaCluster* cluster_;
  static Status* start_error_;
  TortureSettings settings_;
  std::filesystem::path dir_;
  std::unique_ptr<Watchdog> watchdog_;
};

testing::KafkaCluster* KafkaFailoverTortureTest::cluster_ = nullptr;
Status* KafkaFailoverTortureTest::start_error_ = nullptr;

TEST_F(KafkaFailoverTortureTest, KillsLeaderKillsAndAStalledBroker) {
  ClusterTortureSource source(cluster_, settings_.seed);
  Figures figures;
  RunTortureScenario(&source, settings_, dir_.string(), LocalTortureTables(dir_.string()),
                     &figures);
  fmt::print("{} (leader SIGKILLs {}, a broker SIGSTOPped once; cluster RSS now {} MiB)\n",
             FiguresLine(figures), source.leader_kills(), cluster_->RssBytes() >> 20);
}

}  // namespace
}  // namespace ferry::fault

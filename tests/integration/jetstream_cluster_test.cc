// `ferry run` against a three-node JetStream cluster (ferry/testing/nats_cluster.h: three
// nats-server processes on one host, of Debian's 2.9.10 and of the pinned current release) and an
// R3 stream: the stream's leader is SIGKILLed and restarted while ferry ingests, and again while
// ferry itself is down. ferry keeps its connection through another node, moves its consumer to the
// new leader, and after its own restart resumes at the table's position: every id once in the table
// (ferry's reader and DuckDB), the table's position the stream's last sequence. Label: integration.
// A missing server binary fails the test, naming `make setup-nats`.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "config_toml.h"
#include "jetstream_test_client.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"

#include "ferry/testing/nats_cluster.h"
#include "ferry/testing/wait_until.h"

namespace ferry {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";
constexpr char kStream[] = "orders";
constexpr char kSubject[] = "orders.new";
constexpr char kPrefix[] = "test #";
constexpr int kMaxIds = 60000;

// On every tested server (a name of TestedNatsServers()): Debian's 2.9.10 and the current release.
class JetStreamClusterTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    testing::NatsCluster::Options options;
    options.server = GetParam();
    auto cluster = testing::NatsCluster::Start(std::move(options));
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(*cluster);
    auto client = testing::JetStreamTestClient::Connect(cluster_->urls());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
    Status ready = client_->WaitForJetStream(seconds(60));
    ASSERT_TRUE(ready.ok()) << ready.ToString() << "\n" << cluster_->Logs();
    dir_ = e2e::FreshTestDir("ferry-js-cluster");
  }
  void TearDown() override {
    client_.reset();
    cluster_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string table() const { return (dir_ / "table").string(); }

  // The R3 stream, created as soon as the cluster's meta leader places it.
  void AddStream() {
    Status added;
    ASSERT_TRUE(testing::WaitUntil(
        [&] {
          added = client_->AddStream({.name = kStream, .subjects = {"orders.>"}, .replicas = 3});
          return added.ok();
        },
        seconds(60)))
        << added.ToString() << "\n"
        << cluster_->Logs();
  }

  // SIGKILLs the stream's current leader and returns its index.
  int KillLeader() {
    std::string leader;
    EXPECT_TRUE(testing::WaitUntil(
        [&] {
          auto found = client_->StreamLeader(kStream);
          leader = found.ok() ? *found : "";
          return found.ok();
        },
        seconds(60)));
    int index = cluster_->IndexOf(leader);
    EXPECT_GE(index, 0) << "leader '" << leader << "'";
    if (index < 0) {
      return 0;
    }
    EXPECT_TRUE(cluster_->node(index)->Kill9().ok());
    return index;
  }

  std::string WriteConfig() {
    return e2e::WriteConfig(
        dir_ / "ferry.toml",
        {{.id = "orders",
          .table = table(),
          .schema = "payload STRING",
          .metadata_columns = R"(sequence = "_sequence")",
          .source = e2e::JetStreamSection({.servers = cluster_->urls(),
                                           .stream = kStream,
                                           .subjects = {kSubject},
                                           .start = "all",
                                           .extra = R"(reconnect_wait = "200ms")"}),
          .sections = "[pipeline.decode]\nformat = \"raw\"\ncolumn = \"payload\"",
          .max_rows = 500}});
  }

  std::unique_ptr<testing::NatsCluster> cluster_;
  std::unique_ptr<testing::JetStreamTestClient> client_;
  std::filesystem::path dir_;
  std::atomic<int> publish_retries_{0};
};

TEST_P(JetStreamClusterTest, R3StreamLeaderKilledAndRestartedEveryIdOnce) {
  ASSERT_NO_FATAL_FAILURE(AddStream());
  // A publisher of ids 1, 2, ... through its own connection to every node, at most about 2,000
  // a second, until told to stop: the leader dies while messages are published and ingested.
  std::atomic<bool> stop{false};
  std::atomic<int> published{0};
  Status publisher_status;
  std::thread publisher([&] {
    auto client = testing::JetStreamTestClient::Connect(cluster_->urls());
    if (!client.ok()) {
      publisher_status = client.status();
      return;
    }
    for (int id = 1; id <= kMaxIds && !stop; ++id) {
      int retries = 0;
      auto sent = (*client)->PublishRetrying(kSubject, 1, kPrefix, id, seconds(90), &retries);
      publish_retries_ += retries;
      if (!sent.ok()) {
        publisher_status = sent.status();
        return;
      }
      published = id;
      if (id % 2 == 0) {
        std::this_thread::sleep_for(milliseconds(1));
      }
    }
  });
  struct JoinPublisher {  // also when an assertion returns early
    std::atomic<bool>* stop;
    std::thread* thread;
    ~JoinPublisher() {
      *stop = true;
      if (thread->joinable()) {
        thread->join();
      }
    }
  } join_publisher{&stop, &publisher};

  std::string config = WriteConfig();
  auto started = ChildProcess::Start({kFerry, "run", "--config", config});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<ChildProcess> ferry = std::move(*started);
  ASSERT_GE(e2e::WaitForRows(table(), 2000, seconds(120)), 2000u) << ferry->Log();

  // 1. The leader dies while ferry reads and the publisher publishes; it comes back later.
  int killed = KillLeader();
  size_t at_kill = e2e::ReadTable(table()).rows.size();
  EXPECT_GE(e2e::WaitForRows(table(), at_kill + 2000, seconds(120)), at_kill + 2000)
      << ferry->Log() << "\n"
      << cluster_->Logs();
  ASSERT_TRUE(cluster_->node(killed)->Restart().ok()) << cluster_->node(killed)->Log();
  size_t at_restart = e2e::ReadTable(table()).rows.size();
  EXPECT_GE(e2e::WaitForRows(table(), at_restart + 1000, seconds(120)), at_restart + 1000)
      << ferry->Log();
  EXPECT_FALSE(ferry->ExitReport().has_value()) << *ferry->ExitReport();

  // 2. ferry is SIGKILLed and the new leader too, while the publisher goes on; ferry's restart
  //    resumes at the table's position.
  kill(ferry->pid(), SIGKILL);
  EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);
  killed = KillLeader();
  const int before = published;
  ASSERT_TRUE(testing::WaitUntil([&] { return published >= before + 1000; }, seconds(120)));
  ASSERT_TRUE(cluster_->node(killed)->Restart().ok()) << cluster_->node(killed)->Log();
  stop = true;
  publisher.join();
  ASSERT_TRUE(publisher_status.ok()) << publisher_status.ToString();
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const int ids = published;
  e2e::TableContents t = e2e::ReadTable(table());
  std::multiset<std::string> payloads;
  for (const std::string& row : t.rows) {
    payloads.insert(e2e::Field(row, "payload"));
  }
  std::multiset<std::string> expected;
  for (int i = 1; i <= ids; ++i) {
    expected.insert(kPrefix + std::to_string(i));
  }
  ASSERT_EQ(payloads.size(), expected.size()) << "rows: duplicates or missing";
  EXPECT_TRUE(payloads == expected) << "payloads differ (duplicates or missing)";
  e2e::ExpectDuckDbCounts(t.files, "payload", expected.size());
  auto state = client_->State(kStream);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->msgs, static_cast<uint64_t>(ids)) << "the stream holds each id once";
  EXPECT_EQ(t.txns["orders/jetstream/orders/orders.new"], static_cast<int64_t>(state->last_seq));
  std::printf("%d ids; publishes sent again across the leader changes: %d\n", ids,
              publish_retries_.load());
}

INSTANTIATE_TEST_SUITE_P(Servers, JetStreamClusterTest,
                         ::testing::ValuesIn(testing::TestedNatsServers()),
                         testing::NatsServerParamName());

}  // namespace
}  // namespace ferry

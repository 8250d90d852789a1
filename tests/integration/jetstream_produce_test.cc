// `ferry produce nats` end to end: the real binary publishes to a real nats-server, and the
// JetStream source (plus the broker's own stream state) reads back exactly what it reported.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "jetstream_test_client.h"
#include "kafka_child_process.h"

#include "ferry/source/jetstream/jetstream_source.h"
#include "ferry/testing/nats_server.h"

namespace ferry::source::jetstream {
namespace {

using kafka::testing::CommandResult;

// Runs the ferry binary with `args`, capturing stdout and stderr.
CommandResult RunFerry(std::vector<std::string> args) {
  args.insert(args.begin(), FERRY_BINARY_DIR "/src/ferry/app/ferry");
  return kafka::testing::RunCommand(args);
}

class NoPositions : public PartitionListener {
 public:
  Result<std::optional<int64_t>> OnAssigned(const PartitionInfo&) override {
    return std::optional<int64_t>();
  }
  void OnRevoked(const PartitionInfo&) override {}
};

class ProduceNatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ferry::testing::NatsServer::Start();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
  }

  std::vector<std::string> Args(int count, const std::string& stream) {
    return {"produce",    "nats",         "--server", server_->url(), "--stream",
            stream,       "--subject",    "newsub",   "--count",      std::to_string(count),
            "--template", "test #{{seq}}"};
  }

  std::unique_ptr<ferry::testing::NatsServer> server_;
};

TEST_F(ProduceNatsTest, PublishesNMessagesThatReadBackExactly) {
  std::vector<std::string> args = Args(10000, "newstream");
  args.push_back("--create-stream");
  args.push_back("--msg-id");
  CommandResult run = RunFerry(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("published 10000 messages to subject 'newsub' of stream 'newstream' "
                         "(sequences 1..10000, 0 duplicates)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.err.find("created stream 'newstream'"), std::string::npos) << run.err;

  JetStreamOptions options;
  options.connection.servers = {server_->url()};
  options.stream = "newstream";
  options.filters = {"newsub"};
  auto source = JetStreamSource::Create(options);
  ASSERT_TRUE(source.ok());
  NoPositions listener;
  ASSERT_TRUE((*source)->Start(&listener).ok());
  std::vector<Message> batch;
  int64_t expected = 1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (expected <= 10000 && std::chrono::steady_clock::now() < deadline) {
    Status status = (*source)->Poll(1000, std::chrono::milliseconds(200), &batch);
    ASSERT_TRUE(status.ok()) << status.ToString();
    for (const Message& m : batch) {
      ASSERT_EQ(m.position, expected);
      ASSERT_EQ(m.payload, "test #" + std::to_string(expected));
      ASSERT_EQ(m.msg_id, "newsub-" + std::to_string(expected));
      ++expected;
    }
  }
  EXPECT_EQ(expected, 10001);
  ASSERT_TRUE((*source)->Poll(1000, std::chrono::milliseconds(200), &batch).ok());
  EXPECT_TRUE(batch.empty());

  // The created stream has Limits retention (ferry's own source accepts it, above) and file
  // storage; publishing the same ids again is dropped by the server's duplicate window.
  run = RunFerry([&] {
    std::vector<std::string> again = Args(10000, "newstream");
    again.push_back("--msg-id");
    return again;
  }());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("10000 duplicates"), std::string::npos) << run.out;
  auto client = ferry::testing::JetStreamTestClient::Connect(server_->url());
  ASSERT_TRUE(client.ok());
  auto state = (*client)->State("newstream");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->msgs, 10000u);
  EXPECT_EQ(state->last_seq, 10000u);
}

TEST_F(ProduceNatsTest, AppendsWithFirstAndRate) {
  std::vector<std::string> args = Args(50, "s");
  args.insert(args.end(), {"--create-stream", "--rate", "100000"});
  ASSERT_EQ(RunFerry(args).exit_code, 0);
  args = Args(50, "s");
  args.insert(args.end(), {"--first", "51"});
  CommandResult run = RunFerry(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("sequences 51..100"), std::string::npos) << run.out;
}

TEST_F(ProduceNatsTest, FailsClearlyWithoutAStreamOrAServer) {
  CommandResult run = RunFerry(Args(10, "missing"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("10 of 10 messages to 'newsub' were not acknowledged"), std::string::npos)
      << run.err;
  ASSERT_TRUE(server_->Kill9().ok());
  run = RunFerry(Args(10, "missing"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("connect to nats " + server_->url()), std::string::npos) << run.err;
}

}  // namespace
}  // namespace ferry::source::jetstream

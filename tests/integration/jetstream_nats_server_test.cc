// The NatsServer fixture itself: it serves JetStream, survives SIGKILL + restart on the same port
// and store, and leaves no process or directory behind.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "jetstream_test_client.h"

#include "ferry/testing/nats_server.h"

namespace ferry::testing {
namespace {

TEST(NatsServerFixtureTest, KillRestartKeepsTheStoreAndDestructorCleansUp) {
  std::string store;
  int port = 0;
  {
    auto server = NatsServer::Start();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    store = (*server)->store_dir();
    port = (*server)->port();
    EXPECT_EQ((*server)->url(), "nats://127.0.0.1:" + std::to_string(port));
    {
      auto client = JetStreamTestClient::Connect((*server)->url());
      ASSERT_TRUE(client.ok()) << client.status().ToString();
      ASSERT_TRUE((*client)->AddStream({.name = "s", .subjects = {"x"}}).ok());
      ASSERT_TRUE((*client)->Publish("x", 3, "m").ok());
    }
    ASSERT_TRUE((*server)->Kill9().ok());
    EXPECT_FALSE((*server)->running());
    EXPECT_FALSE(JetStreamTestClient::Connect((*server)->url()).ok());
    ASSERT_TRUE((*server)->Restart().ok());
    EXPECT_EQ((*server)->port(), port);
    auto client = JetStreamTestClient::Connect((*server)->url());
    ASSERT_TRUE(client.ok());
    auto state = (*client)->State("s");
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    EXPECT_EQ(state->last_seq, 3u);
    EXPECT_TRUE(std::filesystem::exists(store));
  }
  EXPECT_FALSE(std::filesystem::exists(store));
  EXPECT_FALSE(JetStreamTestClient::Connect("nats://127.0.0.1:" + std::to_string(port)).ok());
}

TEST(NatsServerFixtureTest, BadArgumentsFailWithTheServerLog) {
  NatsServer::Options options;
  options.extra_args = {"--no-such-flag"};
  auto server = NatsServer::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(server.status().message().find("no-such-flag"), std::string::npos)
      << server.status().message();
}

}  // namespace
}  // namespace ferry::testing

// The NatsServer fixture itself: it serves JetStream, survives SIGKILL + restart on the same port
// and store, and leaves no process or directory behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

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

TEST(NatsServerFixtureTest, ChoosesTheBinaryByNameOrPath) {
  EXPECT_EQ(TestedNatsServers(), (std::vector<std::string>{"debian", "v2.15.3"}));
  EXPECT_EQ(NatsServerTestName("v2.15.3"), "v2_15_3");
  EXPECT_EQ(NatsServerBinary("/nonexistent/nats-server").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(NatsServerBinary("v2.1").status().code(), StatusCode::kInvalidArgument);
  auto debian = NatsServerBinary(kDebianNatsServer);
  ASSERT_TRUE(debian.ok()) << debian.status().ToString();
  auto by_path = NatsServerBinary(*debian);
  ASSERT_TRUE(by_path.ok());
  EXPECT_EQ(*by_path, *debian);

  const char* saved = getenv("FERRY_NATS_SERVER");
  std::string restore = saved != nullptr ? saved : "";
  setenv("FERRY_NATS_SERVER", "/nonexistent/nats-server", 1);
  Result<std::string> from_env = NatsServerBinary("");
  EXPECT_EQ(from_env.status().code(), StatusCode::kNotFound);
  EXPECT_NE(from_env.status().message().find("FERRY_NATS_SERVER"), std::string::npos);
  EXPECT_TRUE(NatsServerBinary(kDebianNatsServer).ok()) << "a name given beats the variable";
  if (saved != nullptr) {
    setenv("FERRY_NATS_SERVER", restore.c_str(), 1);
  } else {
    unsetenv("FERRY_NATS_SERVER");
  }
}

// Each tested name runs the release it names (the server logs its version at start). A missing
// binary fails, naming `make setup-nats`.
TEST(NatsServerFixtureTest, EachTestedServerRunsItsRelease) {
  for (const auto& [name, version] : std::vector<std::pair<std::string, std::string>>{
           {kDebianNatsServer, "Version:  2.9."}, {kCurrentNatsServer, "Version:  2.15.3"}}) {
    NatsServer::Options options;
    options.server = name;
    auto server = NatsServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    EXPECT_NE((*server)->Log().find(version), std::string::npos) << name << ":\n"
                                                                 << (*server)->Log();
  }
}

}  // namespace
}  // namespace ferry::testing

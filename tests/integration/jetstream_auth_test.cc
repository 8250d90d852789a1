// Authentication and TLS against real nats-servers: user/password, token, NKey (a key pair made
// with the openssl CLI and encoded here), a creds file in operator mode (operator, account and
// user JWTs signed here with the openssl CLI), and TLS with a CA and client certificates. Each case
// publishes through `ferry produce nats` with the same flags and reads back through the source;
// a wrong credential is refused with InvalidArgument.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nats_auth_fixtures.h"

#include "ferry/source/jetstream/jetstream_source.h"
#include "ferry/testing/nats_server.h"

namespace ferry::source::jetstream {
namespace {

using ferry::testing::nats_auth::MakeCertificates;
using ferry::testing::nats_auth::MakeNKey;
using ferry::testing::nats_auth::MakeOperatorSetup;
using ferry::testing::nats_auth::NKeyPair;
using ferry::testing::nats_auth::OperatorSetup;
using ferry::testing::nats_auth::TempDir;
using ferry::testing::nats_auth::WriteFile;

int RunProduce(const std::string& url, const std::vector<std::string>& auth_flags) {
  std::vector<std::string> args = {FERRY_BINARY_DIR "/src/ferry/app/ferry",
                                   "produce",
                                   "nats",
                                   "--server",
                                   url,
                                   "--stream",
                                   "s",
                                   "--subject",
                                   "x",
                                   "--count",
                                   "5",
                                   "--template",
                                   "m{{seq}}",
                                   "--create-stream"};
  args.insert(args.end(), auth_flags.begin(), auth_flags.end());
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    return -1;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class NoPositions : public PartitionListener {
 public:
  Result<std::optional<int64_t>> OnAssigned(const PartitionInfo&) override {
    return std::optional<int64_t>();
  }
  void OnRevoked(const PartitionInfo&) override {}
};

// Starts a source with `connection` and returns how many of the 5 messages it read, or the
// Start() error.
Result<size_t> ReadBack(NatsConnectionOptions connection) {
  JetStreamOptions options;
  options.connection = std::move(connection);
  // Refusals come back at once; a loaded host may take more than a second to connect.
  options.connection.connect_timeout_ms = 5000;
  options.stream = "s";
  options.filters = {"x"};
  FERRY_ASSIGN_OR_RETURN(auto source, JetStreamSource::Create(options));
  NoPositions listener;
  FERRY_RETURN_IF_ERROR(source->Start(&listener));
  std::vector<Message> batch;
  size_t total = 0;
  for (int i = 0; i < 50 && total < 5; ++i) {
    FERRY_RETURN_IF_ERROR(source->Poll(10, std::chrono::milliseconds(100), &batch));
    total += batch.size();
  }
  return total;
}

std::unique_ptr<ferry::testing::NatsServer> StartServer(std::vector<std::string> args) {
  ferry::testing::NatsServer::Options options;
  options.extra_args = std::move(args);
  auto server = ferry::testing::NatsServer::Start(options);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return server.ok() ? std::move(*server) : nullptr;
}

TEST(JetStreamAuthTest, UserAndPassword) {
  auto server = StartServer({"--user", "ferry", "--pass", "s3cret"});
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(RunProduce(server->url(), {"--user", "ferry", "--password", "s3cret"}), 0);
  NatsConnectionOptions connection;
  connection.servers = {server->url()};
  connection.auth.user = "ferry";
  connection.auth.password = "s3cret";
  auto read = ReadBack(connection);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, 5u);
  connection.auth.password = "wrong";
  read = ReadBack(connection);
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument) << read.status().ToString();
  EXPECT_EQ(read.status().message().find("wrong"), std::string::npos) << "no secrets in errors";
}

TEST(JetStreamAuthTest, Token) {
  auto server = StartServer({"--auth", "t0ken"});
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(RunProduce(server->url(), {"--token", "t0ken"}), 0);
  NatsConnectionOptions connection;
  connection.servers = {server->url()};
  connection.auth.token = "t0ken";
  auto read = ReadBack(connection);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, 5u);
  connection.auth.token = "other";
  EXPECT_EQ(ReadBack(connection).status().code(), StatusCode::kInvalidArgument);
}

TEST(JetStreamAuthTest, NKeySeedFile) {
  TempDir dir;
  std::optional<NKeyPair> key = MakeNKey(dir, "nkey", ferry::testing::nats_auth::kUserPrefix);
  ASSERT_TRUE(key.has_value()) << "openssl could not make an ed25519 key";
  ASSERT_EQ(key->public_key.size(), 56u);
  ASSERT_EQ(key->public_key[0], 'U');
  ASSERT_EQ(key->seed.substr(0, 2), "SU");
  WriteFile(dir / "server.conf",
            "authorization {\n  users = [ { nkey: \"" + key->public_key + "\" } ]\n}\n");
  WriteFile(dir / "user.nk", key->seed + "\n");
  auto server = StartServer({"-c", dir / "server.conf"});
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(
      RunProduce(server->url(), {"--nkey", key->public_key, "--nkey-seed-file", dir / "user.nk"}),
      0);
  NatsConnectionOptions connection;
  connection.servers = {server->url()};
  connection.auth.nkey = key->public_key;
  connection.auth.nkey_seed_file = dir / "user.nk";
  auto read = ReadBack(connection);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, 5u);
  connection.auth = {};
  EXPECT_EQ(ReadBack(connection).status().code(), StatusCode::kInvalidArgument);
}

// A creds file (user JWT + NKey seed) against a server in operator mode whose JWT chain the test
// made itself. A creds file from another operator's chain is refused with InvalidArgument.
TEST(JetStreamAuthTest, CredsFileInOperatorMode) {
  TempDir dir;
  std::optional<OperatorSetup> setup = MakeOperatorSetup(dir, "");
  ASSERT_TRUE(setup.has_value()) << "openssl could not make the keys or sign the JWTs";
  auto server = StartServer({"-c", setup->config});
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(RunProduce(server->url(), {"--creds", setup->creds}), 0);
  NatsConnectionOptions connection;
  connection.servers = {server->url()};
  connection.auth.creds_file = setup->creds;
  auto read = ReadBack(connection);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, 5u);

  std::optional<OperatorSetup> stranger = MakeOperatorSetup(dir, "other-");
  ASSERT_TRUE(stranger.has_value());
  connection.auth.creds_file = stranger->creds;
  read = ReadBack(connection);
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument) << read.status().ToString();
  EXPECT_NE(RunProduce(server->url(), {"--creds", stranger->creds}), 0);
  connection.auth = {};
  EXPECT_EQ(ReadBack(connection).status().code(), StatusCode::kInvalidArgument);
}

TEST(JetStreamAuthTest, TlsWithCaAndClientCertificate) {
  TempDir dir;
  ASSERT_TRUE(MakeCertificates(dir)) << "openssl could not make the certificates";
  auto server = StartServer({"--tlsverify", "--tlscert", dir / "server.pem", "--tlskey",
                             dir / "server.key", "--tlscacert", dir / "ca.pem"});
  ASSERT_NE(server, nullptr);
  std::string url = "tls://127.0.0.1:" + std::to_string(server->port());
  ASSERT_EQ(RunProduce(url, {"--tls-ca", dir / "ca.pem", "--tls-cert", dir / "client.pem",
                             "--tls-key", dir / "client.key"}),
            0);
  NatsConnectionOptions connection;
  connection.servers = {url};
  connection.tls.ca_file = dir / "ca.pem";
  connection.tls.cert_file = dir / "client.pem";
  connection.tls.key_file = dir / "client.key";
  auto read = ReadBack(connection);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, 5u);
  // Without a client certificate the server refuses the handshake.
  connection.tls.cert_file.clear();
  connection.tls.key_file.clear();
  read = ReadBack(connection);
  EXPECT_FALSE(read.ok());
  // A plain connection to a TLS server is refused too.
  connection.servers = {server->url()};
  connection.tls = {};
  EXPECT_FALSE(ReadBack(connection).ok());
}

}  // namespace
}  // namespace ferry::source::jetstream

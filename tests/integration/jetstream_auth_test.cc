// Authentication and TLS against real nats-servers: user/password, token, NKey (a key pair made
// with the openssl CLI and encoded here), and TLS with a CA and client certificates. Each case
// publishes through `ferry produce nats` with the same flags and reads back through the source;
// a wrong credential is refused with InvalidArgument.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ferry/source/jetstream/jetstream_source.h"
#include "ferry/testing/nats_server.h"

namespace ferry::source::jetstream {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/ferry-nats-auth-XXXXXX";
    path_ = mkdtemp(tmpl) != nullptr ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

bool Shell(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

// NKey text encoding: base32 (RFC 4648, no padding) of prefix bytes, key, CRC-16/XMODEM (LE).
std::string NKeyEncode(std::vector<uint8_t> raw) {
  uint16_t crc = 0;
  for (uint8_t byte : raw) {
    crc = static_cast<uint16_t>(crc ^ (byte << 8));
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
  }
  raw.push_back(static_cast<uint8_t>(crc & 0xff));
  raw.push_back(static_cast<uint8_t>(crc >> 8));
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (uint8_t byte : raw) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) {
    out.push_back(kAlphabet[(buffer << (5 - bits)) & 31]);
  }
  return out;
}

struct UserNKey {
  std::string public_key;  // "U..."
  std::string seed;        // "SU..."
};

// An ed25519 key pair from the openssl CLI: the last 32 bytes of the PKCS#8 and SPKI DER forms
// are the seed and the public key.
std::optional<UserNKey> MakeUserNKey(const TempDir& dir) {
  std::string pem = dir / "nkey.pem";
  if (!Shell("openssl genpkey -algorithm ed25519 -out " + pem) ||
      !Shell("openssl pkey -in " + pem + " -outform DER -out " + (dir / "nkey.der")) ||
      !Shell("openssl pkey -in " + pem + " -pubout -outform DER -out " + (dir / "nkey.pub"))) {
    return std::nullopt;
  }
  std::vector<uint8_t> priv = ReadBytes(dir / "nkey.der");
  std::vector<uint8_t> pub = ReadBytes(dir / "nkey.pub");
  if (priv.size() < 32 || pub.size() < 32) {
    return std::nullopt;
  }
  constexpr uint8_t kUser = 20 << 3;
  constexpr uint8_t kSeed = 18 << 3;
  std::vector<uint8_t> seed = {static_cast<uint8_t>(kSeed | (kUser >> 5)),
                               static_cast<uint8_t>((kUser & 31) << 3)};
  seed.insert(seed.end(), priv.end() - 32, priv.end());
  std::vector<uint8_t> public_key = {kUser};
  public_key.insert(public_key.end(), pub.end() - 32, pub.end());
  return UserNKey{NKeyEncode(public_key), NKeyEncode(seed)};
}

// CA, server certificate for 127.0.0.1 and a client certificate, all EC P-256.
bool MakeCertificates(const TempDir& dir) {
  std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  WriteFile(dir / "server.ext", "subjectAltName=IP:127.0.0.1\n");
  WriteFile(dir / "client.ext", "extendedKeyUsage=clientAuth\n");
  return Shell("openssl req -x509 " + ec + " -keyout " + (dir / "ca.key") + " -out " +
               (dir / "ca.pem") + " -days 1 -subj /CN=ferry-test-ca") &&
         Shell("openssl req " + ec + " -keyout " + (dir / "server.key") + " -out " +
               (dir / "server.csr") + " -subj /CN=127.0.0.1") &&
         Shell("openssl x509 -req -in " + (dir / "server.csr") + " -CA " + (dir / "ca.pem") +
               " -CAkey " + (dir / "ca.key") + " -CAcreateserial -days 1 -out " +
               (dir / "server.pem") + " -extfile " + (dir / "server.ext")) &&
         Shell("openssl req " + ec + " -keyout " + (dir / "client.key") + " -out " +
               (dir / "client.csr") + " -subj /CN=ferry-client") &&
         Shell("openssl x509 -req -in " + (dir / "client.csr") + " -CA " + (dir / "ca.pem") +
               " -CAkey " + (dir / "ca.key") + " -CAcreateserial -days 1 -out " +
               (dir / "client.pem") + " -extfile " + (dir / "client.ext"));
}

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
  options.connection.connect_timeout_ms = 1000;
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
  std::optional<UserNKey> key = MakeUserNKey(dir);
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

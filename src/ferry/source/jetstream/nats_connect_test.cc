#include "ferry/source/jetstream/nats_connect.h"

#include <gtest/gtest.h>
#include <nats/nats.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ferry/testing/loopback.h"

namespace ferry::source::jetstream {
namespace {

// A user NKey seed made for this test from the bytes 1..32 (not a key used anywhere else).
constexpr char kSeed[] = "SUAACAQDAQCQMBYIBEFAWDANBYHRAEISCMKBKFQXDAMRUGY4DUPB6IC5CQ";

// The first byte of the seed's signature of `nonce`.
int FirstSignatureByte(const std::string& nonce) {
  unsigned char* sig = nullptr;
  int len = 0;
  EXPECT_EQ(nats_Sign(kSeed, nonce.c_str(), &sig, &len), NATS_OK) << nats_GetLastError(nullptr);
  int first = sig != nullptr && len > 0 ? sig[0] : -1;
  free(sig);
  return first;
}

// A nonce whose signature starts with a zero byte (`zero`) or does not.
std::string FindNonce(bool zero) {
  for (int i = 0; i < 100000; ++i) {
    std::string nonce = "ferry-nonce-" + std::to_string(i);
    if ((FirstSignatureByte(nonce) == 0) == zero) {
      return nonce;
    }
  }
  ADD_FAILURE() << "no nonce found";
  return "";
}

// One NATS server conversation per accepted connection, scripted: send INFO with the next
// nonce, read the client's CONNECT and PING, answer PONG or the refusal. Records each CONNECT.
class ScriptedServer {
 public:
  struct Reply {
    std::string nonce;  // empty: INFO without a nonce
    bool accept;        // PONG, else -ERR 'Authorization Violation'
  };

  explicit ScriptedServer(std::vector<Reply> script) : script_(std::move(script)) {
    Result<int> fd = ferry::testing::ListenOnLoopback(0);
    EXPECT_TRUE(fd.ok()) << fd.status().ToString();
    listen_fd_ = fd.ok() ? *fd : -1;
    Result<int> port = ferry::testing::LocalPort(listen_fd_);
    EXPECT_TRUE(port.ok()) << port.status().ToString();
    port_ = port.ok() ? *port : 0;
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() { Finish(); }

  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

  // Stops accepting and returns the first line (CONNECT ...) of each conversation, once the
  // client has closed every connection it opened.
  std::vector<std::string> Finish() {
    if (thread_.joinable()) {
      shutdown(listen_fd_, SHUT_RDWR);  // wakes the poll for a connection that never comes
      thread_.join();
      close(listen_fd_);
    }
    return connects_;
  }

 private:
  // Waits at most 5 s for `fd` to become readable; the test never hangs on a silent client.
  static bool Readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 5000) == 1;
  }

  void Serve() {
    for (const Reply& reply : script_) {
      if (!Readable(listen_fd_)) {
        return;  // the client stopped connecting
      }
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);  // fails after Finish()
      if (fd < 0) {
        return;
      }
      std::string info = R"(INFO {"server_id":"scripted","version":"2.9.10","proto":1,)"
                         R"("headers":true,"max_payload":1048576,"auth_required":true)";
      info += reply.nonce.empty() ? "}\r\n" : R"(,"nonce":")" + reply.nonce + "\"}\r\n";
      EXPECT_EQ(send(fd, info.data(), info.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(info.size()));
      std::string in;
      char buf[4096];
      while (in.find("PING\r\n") == std::string::npos && Readable(fd)) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
          break;
        }
        in.append(buf, static_cast<size_t>(n));
      }
      connects_.push_back(in.substr(0, in.find("\r\n")));
      std::string answer = reply.accept ? "PONG\r\n" : "-ERR 'Authorization Violation'\r\n";
      send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
      // Drain until the client closes, so that it never sees a reset before our answer.
      while (Readable(fd) && recv(fd, buf, sizeof(buf), 0) > 0) {
      }
      close(fd);
    }
  }

  std::vector<Reply> script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::vector<std::string> connects_;
};

class NatsConnectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // nats_Sign decodes the seed with tables that the library's initialization fills in.
    ASSERT_EQ(nats_Open(-1), NATS_OK);
    seed_file_ = (std::filesystem::temp_directory_path() /
                  ("ferry-nats-connect-" + std::to_string(getpid()) + ".nk"))
                     .string();
    std::ofstream(seed_file_) << kSeed << "\n";
  }
  void TearDown() override { std::filesystem::remove(seed_file_); }

  NatsConnectionOptions Options(const std::string& url) const {
    NatsConnectionOptions options;
    options.servers = {url};
    options.auth.nkey = "UFERRYTESTPUBLICKEY";  // the scripted server checks nothing
    options.auth.nkey_seed_file = seed_file_;
    options.max_reconnect = 0;
    return options;
  }

  std::string seed_file_;
};

// nats.c 3.4.1 sends no "sig" when the signature's first byte is zero (1 nonce in 256), and the
// server refuses the connection. ConnectNats connects again and gets a fresh nonce.
TEST_F(NatsConnectTest, ARefusedSignedConnectIsTriedAgainWithANewNonce) {
  std::string zero = FindNonce(true);
  std::string other = FindNonce(false);
  ScriptedServer server({{zero, false}, {other, true}});
  {
    auto connection = ConnectNats(Options(server.url()));
    ASSERT_TRUE(connection.ok()) << connection.status().ToString();
  }
  std::vector<std::string> connects = server.Finish();
  ASSERT_EQ(connects.size(), 2u);
  if (std::string_view(nats_GetVersion()) == "3.4.1") {
    // The library defect this works around: if this fails, the library was fixed.
    EXPECT_EQ(connects[0].find("\"sig\":"), std::string::npos) << connects[0];
  }
  EXPECT_NE(connects[1].find("\"sig\":"), std::string::npos) << connects[1];
}

// Wrong credentials are still an error, after four refusals, naming the server's answer.
TEST_F(NatsConnectTest, SignedCredentialsRefusedFourTimesAreAnError) {
  std::string other = FindNonce(false);
  ScriptedServer server(std::vector<ScriptedServer::Reply>(5, {other, false}));
  auto connection = ConnectNats(Options(server.url()));
  ASSERT_FALSE(connection.ok());
  EXPECT_NE(connection.status().ToString().find("Authorization Violation"), std::string::npos)
      << connection.status().ToString();
  EXPECT_NE(connection.status().ToString().find(server.url()), std::string::npos)
      << connection.status().ToString();
  EXPECT_EQ(server.Finish().size(), 4u);
}

// A refused password is not retried: it signs nothing, so a second try cannot differ.
TEST_F(NatsConnectTest, ARefusedPasswordIsNotRetried) {
  ScriptedServer server(std::vector<ScriptedServer::Reply>(2, {"", false}));
  NatsConnectionOptions options;
  options.servers = {server.url()};
  options.auth.user = "ferry";
  options.auth.password = "wrong";
  options.max_reconnect = 0;
  auto connection = ConnectNats(options);
  ASSERT_FALSE(connection.ok());
  EXPECT_EQ(server.Finish().size(), 1u);
}

}  // namespace
}  // namespace ferry::source::jetstream

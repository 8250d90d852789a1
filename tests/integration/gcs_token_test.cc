// GCS access tokens end to end: a Delta table at gs://lake/events on fake-gcs-server, opened as a
// user would (a table location and storage options: the emulator and a service-account key file
// whose token_uri is a local stand-in of Google's token endpoint, testing::GoogleTokenStandIn,
// handing out tokens that live a few seconds), committed to across several token expiries. The
// emulator ignores credentials, so the requests reach it through a TCP relay on 127.0.0.1 that
// reads each request's Authorization header: every request must carry "Bearer <token>" with a
// token the stand-in issued and had not expired when the request arrived, and several tokens
// must have been used. No commit may fail.
#include <errno.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/store_factory.h"
#include "ferry/testing/fake_gcs.h"
#include "ferry/testing/google_token_stand_in.h"
#include "ferry/testing/loopback.h"

namespace ferry {
namespace {

using SystemClock = std::chrono::system_clock;
using testing::FakeGcs;
using testing::GoogleTokenStandIn;

columnar::SchemaPtr Schema() {
  return std::make_shared<const columnar::Schema>(std::vector<columnar::Field>{
      {"id", columnar::DataType::Int64(), false, {}},
  });
}

// A TCP relay between the store and the emulator that reads what the store sends: it counts the
// requests (their request lines) and checks each "Authorization: Bearer" token against the
// stand-in's record when it passes. Bytes are relayed unchanged.
class ObservingRelay {
 public:
  ObservingRelay(int upstream_port, const GoogleTokenStandIn* tokens)
      : upstream_port_(upstream_port), tokens_(tokens) {}

  ~ObservingRelay() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      for (int fd : fds_) {
        ::shutdown(fd, SHUT_RDWR);
      }
    }
    if (listener_ >= 0) {
      ::shutdown(listener_, SHUT_RDWR);
    }
    if (accept_thread_.joinable()) {
      accept_thread_.join();
    }
    for (std::thread& t : pumps_) {
      t.join();
    }
    for (int fd : fds_) {
      ::close(fd);
    }
    if (listener_ >= 0) {
      ::close(listener_);
    }
  }

  Status Start() {
    FERRY_ASSIGN_OR_RETURN(listener_, testing::ListenOnLoopback(0));
    FERRY_ASSIGN_OR_RETURN(port_, testing::LocalPort(listener_));
    accept_thread_ = std::thread([this] { AcceptLoop(); });
    return Status::OK();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  int requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // Requests whose token the stand-in issued and had not let expire when it passed.
  int live_tokens_sent() const {
    std::lock_guard lock(mu_);
    return live_;
  }
  std::set<std::string> tokens() const {
    std::lock_guard lock(mu_);
    return tokens_seen_;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) {
        return;  // shut down
      }
      int upstream = testing::ConnectToLoopback(upstream_port_);
      std::lock_guard lock(mu_);
      fds_.push_back(client);
      if (upstream < 0 || stopping_) {
        ::shutdown(client, SHUT_RDWR);
        if (upstream >= 0) {
          ::close(upstream);
        }
        continue;
      }
      fds_.push_back(upstream);
      pumps_.emplace_back([this, client, upstream] { Pump(client, upstream, true); });
      pumps_.emplace_back([this, client, upstream] { Pump(upstream, client, false); });
    }
  }

  // Copies until either side closes, then closes both directions (the other pump ends too).
  void Pump(int from, int to, bool observe) {
    char buffer[64 * 1024];
    std::string carry;
    for (;;) {
      ssize_t n = ::recv(from, buffer, sizeof(buffer), 0);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        break;
      }
      if (observe) {
        Observe(&carry, std::string_view(buffer, static_cast<size_t>(n)));
      }
      size_t sent = 0;
      while (sent < static_cast<size_t>(n)) {
        ssize_t w = ::send(to, buffer + sent, static_cast<size_t>(n) - sent, MSG_NOSIGNAL);
        if (w <= 0) {
          break;
        }
        sent += static_cast<size_t>(w);
      }
      if (sent < static_cast<size_t>(n)) {
        break;
      }
    }
    ::shutdown(from, SHUT_RDWR);
    ::shutdown(to, SHUT_RDWR);
  }

  // Finds request lines and bearer tokens in the client's bytes (which may split them).
  void Observe(std::string* carry, std::string_view data) {
    static constexpr std::string_view kRequestLine = " HTTP/1.1\r\n";
    static constexpr std::string_view kBearer = "\r\nAuthorization: Bearer ";
    carry->append(data);
    size_t consumed = 0;
    for (;;) {
      const size_t request = carry->find(kRequestLine, consumed);
      const size_t bearer = carry->find(kBearer, consumed);
      if (request == std::string::npos && bearer == std::string::npos) {
        break;
      }
      if (request < bearer) {
        std::lock_guard lock(mu_);
        ++requests_;
        consumed = request + kRequestLine.size();
        continue;
      }
      const size_t start = bearer + kBearer.size();
      const size_t end = carry->find("\r\n", start);
      if (end == std::string::npos) {
        consumed = bearer;  // the rest comes with the next bytes
        break;
      }
      const std::string token = carry->substr(start, end - start);
      std::optional<SystemClock::time_point> expiry = tokens_->ExpiryOf(token);
      std::lock_guard lock(mu_);
      if (expiry && *expiry > SystemClock::now()) {
        ++live_;
        tokens_seen_.insert(token);
      }
      consumed = end;
    }
    carry->erase(0, std::max(consumed, carry->size() > 512 ? carry->size() - 512 : size_t{0}));
  }

  const int upstream_port_;
  const GoogleTokenStandIn* tokens_;
  int listener_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  mutable std::mutex mu_;
  // All below guarded by mu_.
  bool stopping_ = false;
  std::vector<int> fds_;
  std::vector<std::thread> pumps_;
  int requests_ = 0;
  int live_ = 0;
  std::set<std::string> tokens_seen_;
};

TEST(GcsTokenTest, CommitsGoOnAcrossSeveralTokenExpiries) {
  auto gcs = FakeGcs::Start();
  ASSERT_TRUE(gcs.ok()) << "fake-gcs-server is needed (make setup-gcs): "
                        << gcs.status().ToString();
  ASSERT_TRUE((*gcs)->CreateBucket("lake").ok());
  char tmpl[] = "/tmp/ferry-gcs-token-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  Result<testing::RsaKeyPair> key = testing::GenerateRsaKeyPair();
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  GoogleTokenStandIn stand_in(
      {.lifetime = std::chrono::seconds(3), .public_key_pem = key->public_key_pem});
  ASSERT_TRUE(stand_in.Start().ok());
  const std::string key_file = dir + "/key.json";
  std::ofstream(key_file) << nlohmann::json{
      {"type", "service_account"},
      {"private_key_id", "k1"},
      {"private_key", key->private_key_pem},
      {"client_email", stand_in.options().client_email},
      {"token_uri",
       stand_in.token_url()}}.dump();
  ObservingRelay relay((*gcs)->port(), &stand_in);
  ASSERT_TRUE(relay.Start().ok());

  auto uri = storage::ParseTableUri("gs://lake/events");
  ASSERT_TRUE(uri.ok()) << uri.status().ToString();
  auto store = storage::OpenTableStore(
      *uri, {{"storage_emulator_host", relay.endpoint()}, {"google_service_account", key_file}},
      storage::OpenMode::kCreate);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto table = delta::Table::Open(*store, "");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  delta::TableSpec spec;
  spec.schema = Schema();
  Result<delta::Snapshot> snapshot = (*table)->Create(spec);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString() << "\n" << (*gcs)->Log();
  // Commit until the fourth token is in use (three expiries at least). Bounded by count.
  int commits = 0;
  for (; stand_in.issued("sa") < 4 && commits < 5000; ++commits) {
    auto writer = delta::TableWriter::Create(**table, *snapshot);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    auto batch = columnar::RecordBatch::MakeEmpty(Schema());
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(commits);
    ASSERT_TRUE((*writer)->Write(batch).ok());
    auto adds = (*writer)->Finish();
    ASSERT_TRUE(adds.ok()) << "commit " << commits << ": " << adds.status().ToString();
    delta::Transaction txn(**table, *snapshot);
    txn.AddFiles(std::move(*adds));
    auto result = txn.Commit();
    ASSERT_TRUE(result.ok()) << "commit " << commits << " failed: " << result.status().ToString();
    snapshot = std::move(result->snapshot);
  }
  EXPECT_GE(stand_in.issued("sa"), 4) << "only " << commits << " commits";
  EXPECT_EQ(stand_in.refused(), 0);
  EXPECT_GT(relay.requests(), commits);
  EXPECT_EQ(relay.live_tokens_sent(), relay.requests()) << "requests without a live token";
  EXPECT_GE(relay.tokens().size(), 3u);
  auto reread = (*table)->LoadSnapshot();
  ASSERT_TRUE(reread.ok()) << reread.status().ToString();
  EXPECT_EQ(reread->version(), commits);
  EXPECT_EQ(reread->num_files(), commits);
  RecordProperty("commits", commits);
  RecordProperty("requests", relay.requests());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ferry

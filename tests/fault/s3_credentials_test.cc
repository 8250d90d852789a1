// The AWS credential chain while `ferry run` ingests into an S3 table (radosgw): credentials
// come from a local stand-in of the ECS container endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI
// on loopback, with an authorization token), handing out radosgw's keys with an expiry a few
// seconds ahead. Ids are published piece by piece until ferry has refreshed its credentials
// several times in the background between commits; no commit may fail (the log and
// ferry_commits_total{outcome="failed"}), and every id is in the table once.
//
// Only the container endpoint is exercised end to end: radosgw (Ceph 16) without its STS
// service refuses a request carrying an X-Amz-Security-Token it did not issue, and the answers
// of STS AssumeRoleWithWebIdentity and IMDSv2 always carry a session token, so with them no data
// could land. The container endpoint's answer may omit Token, which this stand-in does. (The
// STS and IMDSv2 providers refresh across expiries in storage/s3/credential_endpoints_test.cc.)
// Label: integration.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"
#include "s3_torture_store.h"
#include "torture_support.h"

#include "ferry/testing/http_stand_in.h"
#include "ferry/testing/nats_server.h"
#include "ferry/testing/radosgw.h"
#include "ferry/testing/wait_until.h"

namespace ferry::fault {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::StartMockKafka;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kTopic[] = "events";
constexpr char kBucket[] = "creds";
constexpr int64_t kPiece = 300;
// Credentials live this long: ferry refreshes them a quarter of that before they expire.
constexpr seconds kLifetime{4};
constexpr char kAuthorization[] = "container-authorization-token";

std::string Iso8601(std::chrono::system_clock::time_point t) {
  time_t secs = std::chrono::system_clock::to_time_t(t);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[40];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The stand-in: container credentials at GET /creds. Every answer is radosgw's
// keys expiring kLifetime from now; it counts what it issued.
class CredentialEndpoint {
 public:
  CredentialEndpoint(const testing::RadosGw& rgw, bool with_token)
      : key_(rgw.access_key()), secret_(rgw.secret_key()), with_token_(with_token) {
    server_.server().Get("/creds", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value("Authorization") != kAuthorization) {
        res.status = 401;
        return;
      }
      issued_.fetch_add(1);
      std::string token = with_token_ ? R"("Token":"session-token-of-the-stand-in",)" : "";
      res.set_content(
          fmt::format(R"({{"AccessKeyId":"{}","SecretAccessKey":"{}",{})"
                      R"("Expiration":"{}","RoleArn":"arn:aws:iam::1:role/ferry"}})",
                      key_, secret_, token, Iso8601(std::chrono::system_clock::now() + kLifetime)),
          "application/json");
    });
  }
  Status Start() { return server_.Start(); }
  std::string url(std::string_view path) const { return server_.url(path); }
  int issued() const { return issued_.load(); }

 private:
  const std::string key_;
  const std::string secret_;
  const bool with_token_;
  std::atomic<int> issued_{0};
  testing::HttpStandIn server_;
};

class S3CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = e2e::FreshTestDir("ferry-s3-credentials");
    auto rgw = testing::RadosGw::Start();
    ASSERT_TRUE(rgw.ok()) << rgw.status().ToString();
    rgw_ = std::move(*rgw);
    ASSERT_TRUE(rgw_->CreateBucket(kBucket).ok());
    auto mock = StartMockKafka(kFerry, 1, {fmt::format("{}:8", kTopic)});
    ASSERT_TRUE(mock.ok()) << mock.status().ToString();
    mock_ = std::move(mock->child);
    brokers_ = mock->bootstrap;
  }
  void TearDown() override {
    mock_.reset();
    rgw_.reset();
    std::filesystem::remove_all(dir_);
  }

  // What every child that reaches the store needs besides its credentials; no shared files, no
  // instance metadata.
  std::vector<std::string> StoreEnv() const {
    return {"AWS_ENDPOINT_URL=" + rgw_->endpoint(),
            "AWS_REGION=" + rgw_->region(),
            "AWS_ALLOW_HTTP=true",
            "AWS_ACCESS_KEY_ID=",
            "AWS_SECRET_ACCESS_KEY=",
            "AWS_SESSION_TOKEN=",
            "AWS_PROFILE=",
            "AWS_SHARED_CREDENTIALS_FILE=" + (dir_ / "no-credentials").string(),
            "AWS_CONFIG_FILE=" + (dir_ / "no-config").string(),
            "AWS_EC2_METADATA_DISABLED=true"};
  }
  // The table as the harness sees it (radosgw's keys, directly).
  TableLocation Table(const std::string& name) const {
    return TableLocation::Remote(
        fmt::format("s3://{}/{}", kBucket, name),
        {"AWS_ENDPOINT_URL=" + rgw_->endpoint(), "AWS_ACCESS_KEY_ID=" + rgw_->access_key(),
         "AWS_SECRET_ACCESS_KEY=" + rgw_->secret_key(), "AWS_REGION=" + rgw_->region(),
         "AWS_ALLOW_HTTP=true"},
        {},
        {{"aws_endpoint_url", rgw_->endpoint()},
         {"aws_access_key_id", rgw_->access_key()},
         {"aws_secret_access_key", rgw_->secret_key()},
         {"aws_region", rgw_->region()},
         {"aws_allow_http", "true"}});
  }
  std::string WriteConfig(const std::string& name, int metrics_port) const {
    return e2e::WriteConfig(
        dir_ / (name + ".toml"),
        {{.id = "creds",
          .table = fmt::format("s3://{}/{}", kBucket, name),
          .schema = "id BIGINT NOT NULL, payload STRING",
          .source = e2e::KafkaSection(
              {.brokers = brokers_, .topics = {kTopic}, .group_id = "creds-" + name}),
          .max_latency = "300ms"}},
        fmt::format("[metrics]\nlisten = \"127.0.0.1:{}\"", metrics_port));
  }
  bool Produce(int64_t first, int64_t count) {
    return RunToExit(KafkaProducerArgs(brokers_, kTopic, first, count, 0,
                                       R"({"id": {{seq}}, "payload": "test #{{seq}}"})"),
                     {}, (dir_ / "producer.log").string()) == 0;
  }

  // Starts `ferry run` with `credential_env`, publishes pieces of ids (each committed before the
  // next) until the endpoint issued `refreshes` more credentials after the first commit, and
  // stops it. Returns the ids published.
  int64_t IngestAcrossRefreshes(const std::string& name, std::vector<std::string> credential_env,
                                const CredentialEndpoint& endpoint, int refreshes,
                                std::string* log) {
    Result<int> port = testing::PickFreePort();
    EXPECT_TRUE(port.ok());
    *log = (dir_ / (name + ".log")).string();
    std::vector<std::string> env = StoreEnv();
    env.insert(env.end(), credential_env.begin(), credential_env.end());
    auto ferry = Process::Start({kFerry, "run", "--config", WriteConfig(name, *port)}, env, *log);
    EXPECT_TRUE(ferry.ok());
    if (!ferry.ok()) {
      return 0;
    }
    int64_t published = 0;
    int issued_at_first_commit = -1;
    for (int piece = 0; piece < 200 && (*ferry)->Running(); ++piece) {
      EXPECT_TRUE(Produce(published + 1, kPiece));
      published += kPiece;
      // Wait for the piece's rows to be written (the metric counts committed rows).
      testing::WaitUntil(
          [&] {
            return !(*ferry)->Running() || ScrapeMetric(*port, "ferry_rows_written_total") >=
                                               static_cast<double>(published);
          },
          seconds(60));
      EXPECT_EQ(ScrapeMetric(*port, "ferry_rows_written_total"), published) << Tail(*log);
      if (issued_at_first_commit < 0) {
        issued_at_first_commit = endpoint.issued();
      } else if (endpoint.issued() >= issued_at_first_commit + refreshes) {
        break;
      }
    }
    EXPECT_GE(endpoint.issued(), issued_at_first_commit + refreshes)
        << "the credentials were not refreshed during the ingestion";
    EXPECT_EQ(ScrapeMetric(*port, "ferry_commits_total", "outcome=\"failed\""), 0) << Tail(*log);
    fmt::print(
        "{}: {} ids in pieces of {}, credentials issued {} times ({} before the first "
        "commit)\n",
        name, published, kPiece, endpoint.issued(), issued_at_first_commit);
    (*ferry)->Signal(SIGTERM);
    EXPECT_EQ((*ferry)->Wait(), 0) << Tail(*log);
    return published;
  }

  std::filesystem::path dir_;
  std::unique_ptr<testing::RadosGw> rgw_;
  std::unique_ptr<ChildProcess> mock_;
  std::string brokers_;
};

TEST_F(S3CredentialsTest, ContainerCredentialsRefreshedDuringIngestion) {
  CredentialEndpoint endpoint(*rgw_, /*with_token=*/false);
  ASSERT_TRUE(endpoint.Start().ok());
  std::string log;
  const int64_t ids =
      IngestAcrossRefreshes("container",
                            {"AWS_CONTAINER_CREDENTIALS_FULL_URI=" + endpoint.url("/creds"),
                             std::string("AWS_CONTAINER_AUTHORIZATION_TOKEN=") + kAuthorization},
                            endpoint, /*refreshes=*/4, &log);
  const std::string text = ReadFile(log);
  EXPECT_EQ(text.find("not committed"), std::string::npos) << Tail(log);
  EXPECT_EQ(text.find("refresh failed"), std::string::npos) << Tail(log);
  EXPECT_EQ(text.find(kAuthorization), std::string::npos) << "a secret reached the log";
  VerifyResult v = Verify(Table("container"), ids);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_EQ(v.rows, ids) << v.output;
  EXPECT_EQ(v.duplicates, 0) << v.output;
  EXPECT_EQ(v.missing, 0) << v.output;
}

}  // namespace
}  // namespace ferry::fault

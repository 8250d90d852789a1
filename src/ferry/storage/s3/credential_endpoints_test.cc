// The HTTP sources of the credential chain against local stand-ins of their endpoints (STS
// AssumeRoleWithWebIdentity, container credentials, EC2 instance metadata v2), each handing out
// credentials that expire within a second or so: several threads use them across several
// expiries, and the refreshes happen in the background, one at a time, without a failed call.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "ferry/base/file.h"
#include "ferry/http/url.h"
#include "ferry/storage/s3/credentials.h"
#include "ferry/storage/s3/credentials_internal.h"
#include "ferry/storage/s3/env_lookup_for_test.h"
#include "ferry/testing/http_stand_in.h"
#include "ferry/testing/loopback.h"

namespace ferry::storage::s3 {
namespace {

using SystemClock = std::chrono::system_clock;
using std::chrono::milliseconds;

constexpr char kRoleArn[] = "arn:aws:iam::123456789012:role/ferry-writer";

std::string Iso8601Millis(SystemClock::time_point t) {
  auto ms = std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
  time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[40];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ms % 1000);
}

// The endpoints, in one server: each issue of credentials gets the next number; `lifetime`
// says how long they live; `fail_next` makes the next issue answer an error.
class Endpoints {
 public:
  explicit Endpoints(milliseconds lifetime) : lifetime_(lifetime) {
    httplib::Server& s = server_.server();
    // STS: a POSTed form.
    s.Post("/", [this](const httplib::Request& req, httplib::Response& res) {
      Result<std::vector<http::QueryParam>> form = http::ParseQuery(req.body);
      std::map<std::string, std::string> f;
      for (const http::QueryParam& p : form.value_or({})) {
        f[p.key] = p.value;
      }
      {
        std::lock_guard lock(mu_);
        last_sts_form_ = f;
      }
      if (f["Action"] != "AssumeRoleWithWebIdentity" || f["Version"] != "2011-06-15" ||
          f["WebIdentityToken"].empty() || f["RoleSessionName"].empty()) {
        res.status = 400;
        res.set_content(
            "<ErrorResponse><Error><Code>MissingParameter</Code></Error>"
            "</ErrorResponse>",
            "text/xml");
        return;
      }
      if (f["WebIdentityToken"] == "rejected-token") {
        res.status = 400;
        res.set_content(
            "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken"
            "</Code><Message>Incorrect token audience</Message></Error>"
            "</ErrorResponse>",
            "text/xml");
        return;
      }
      Issue(res, [&](const std::string& id, const std::string& expiry) {
        return fmt::format(
            "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/"
            "2011-06-15/\"><AssumeRoleWithWebIdentityResult><Credentials>"
            "<AccessKeyId>{}</AccessKeyId><SecretAccessKey>secret-{}</SecretAccessKey>"
            "<SessionToken>session-{}</SessionToken><Expiration>{}</Expiration>"
            "</Credentials></AssumeRoleWithWebIdentityResult>"
            "</AssumeRoleWithWebIdentityResponse>",
            id, id, id, expiry);
      });
    });
    // Container credentials.
    s.Get("/v2/credentials/abc", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mu_);
        last_authorization_ = req.get_header_value("Authorization");
      }
      Issue(res, [&](const std::string& id, const std::string& expiry) {
        return fmt::format(R"({{"AccessKeyId":"{}","SecretAccessKey":"secret-{}",)"
                           R"("Token":"session-{}","Expiration":"{}","RoleArn":"x"}})",
                           id, id, id, expiry);
      });
    });
    // Instance metadata, v2 only.
    s.Put("/latest/api/token", [](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value("X-aws-ec2-metadata-token-ttl-seconds").empty()) {
        res.status = 400;
        return;
      }
      res.set_content("imds-session-token", "text/plain");
    });
    s.Get("/latest/meta-data/iam/security-credentials/",
          [](const httplib::Request& req, httplib::Response& res) {
            if (req.get_header_value("X-aws-ec2-metadata-token") != "imds-session-token") {
              res.status = 401;
              return;
            }
            res.set_content("ferry-role\n", "text/plain");
          });
    s.Get("/latest/meta-data/iam/security-credentials/ferry-role",
          [this](const httplib::Request& req, httplib::Response& res) {
            if (req.get_header_value("X-aws-ec2-metadata-token") != "imds-session-token") {
              res.status = 401;
              return;
            }
            Issue(res, [&](const std::string& id, const std::string& expiry) {
              return fmt::format(
                  R"({{"Code":"Success","LastUpdated":"2024-01-01T00:00:00Z","Type":"AWS-HMAC",)"
                  R"("AccessKeyId":"{}","SecretAccessKey":"secret-{}","Token":"session-{}",)"
                  R"("Expiration":"{}"}})",
                  id, id, id, expiry);
            });
          });
    EXPECT_TRUE(server_.Start().ok());
  }

  std::string url(std::string_view path = "") const { return server_.url(path); }
  int issued() const { return issued_.load(); }
  int max_in_flight() const { return max_in_flight_.load(); }
  bool in_flight() const { return in_flight_.load() > 0; }
  void fail_next(int n) { fail_next_ = n; }
  std::map<std::string, std::string> last_sts_form() {
    std::lock_guard lock(mu_);
    return last_sts_form_;
  }
  std::string last_authorization() {
    std::lock_guard lock(mu_);
    return last_authorization_;
  }

 private:
  template <typename Body>
  void Issue(httplib::Response& res, Body body) {
    int now_in_flight = ++in_flight_;
    int seen = max_in_flight_.load();
    while (now_in_flight > seen && !max_in_flight_.compare_exchange_weak(seen, now_in_flight)) {
    }
    // Stay in flight a little, so that callers can be seen getting the old credentials
    // meanwhile.
    std::this_thread::sleep_for(milliseconds(50));
    if (fail_next_.load() > 0) {
      --fail_next_;
      res.status = 503;
    } else {
      std::string id = "ASIA" + std::to_string(++issued_);
      res.set_content(body(id, Iso8601Millis(SystemClock::now() + lifetime_)), "text/plain");
    }
    --in_flight_;
  }

  testing::HttpStandIn server_;
  milliseconds lifetime_;
  std::atomic<int> issued_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  std::atomic<int> fail_next_{0};
  std::mutex mu_;
  std::map<std::string, std::string> last_sts_form_;
  std::string last_authorization_;
};

std::unique_ptr<http::HttpClient> MakeClient() {
  Result<std::unique_ptr<http::HttpClient>> c =
      http::HttpClient::Create(http::HttpClientOptions{.allow_http = true});
  EXPECT_TRUE(c.ok());
  return std::move(c).value();
}

class CredentialEndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-creds-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    client_ = MakeClient();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The endpoints live until the fixture ends, after the client (and its open connections):
  // a test server stopping under an open keep-alive connection waits for it to time out.
  Endpoints& Start(milliseconds lifetime) {
    endpoints_ = std::make_unique<Endpoints>(lifetime);
    return *endpoints_;
  }

  std::string WriteFile(const std::string& name, std::string_view text) {
    std::string path = dir_ + "/" + name;
    EXPECT_TRUE(WriteStringToFile(path, text, false).ok());
    return path;
  }

  // Options for a chain where only what `env` configures is present (no HOME files, IMDS only
  // when `env` points at it).
  AwsCredentialOptions Options(std::map<std::string, std::string> env, const Endpoints& e) {
    env.try_emplace("HOME", dir_);
    env.try_emplace("AWS_EC2_METADATA_DISABLED", "true");
    return AwsCredentialOptions{.region = "us-east-1",
                                .sts_endpoint = e.url(),
                                .container_endpoint = e.url(),
                                .env = MapEnv(std::move(env)),
                                .client = client_.get()};
  }

  std::unique_ptr<AwsCredentialProvider> Chain(const AwsCredentialOptions& options) {
    Result<std::unique_ptr<AwsCredentialProvider>> c = MakeDefaultCredentialChain(options);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return std::move(c).value();
  }

  std::string dir_;
  std::unique_ptr<Endpoints> endpoints_;  // declared before client_: destroyed after it
  std::unique_ptr<http::HttpClient> client_;
};

http::Deadline EndpointDeadline() {
  return http::DeadlineAfter(std::chrono::seconds(20));
}

TEST_F(CredentialEndpointsTest, WebIdentityThroughSts) {
  Endpoints& e = Start(std::chrono::hours(1));
  std::string token_file = WriteFile("token", "eyJ.first.jwt\n");
  auto chain = Chain(Options({{"AWS_WEB_IDENTITY_TOKEN_FILE", token_file},
                              {"AWS_ROLE_ARN", kRoleArn},
                              {"AWS_ROLE_SESSION_NAME", "ferry-test"}},
                             e));
  Result<AwsCredentials> c = chain->Get(EndpointDeadline());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "ASIA1");
  EXPECT_EQ(c->secret_access_key, "secret-ASIA1");
  EXPECT_EQ(c->session_token, "session-ASIA1");
  ASSERT_TRUE(c->expiration.has_value());
  EXPECT_GT(*c->expiration, SystemClock::now() + std::chrono::minutes(50));
  EXPECT_NE(chain->Describe().find(kRoleArn), std::string::npos);
  std::map<std::string, std::string> form = e.last_sts_form();
  EXPECT_EQ(form["RoleArn"], kRoleArn);
  EXPECT_EQ(form["RoleSessionName"], "ferry-test");
  EXPECT_EQ(form["WebIdentityToken"], "eyJ.first.jwt");  // trimmed
}

TEST_F(CredentialEndpointsTest, WebIdentityFromAProfile) {
  Endpoints& e = Start(std::chrono::hours(1));
  std::string token_file = WriteFile("token", "eyJ.profile.jwt");
  std::string config = WriteFile("config", fmt::format("[profile eks]\nregion = eu-west-1\n"
                                                       "role_arn = {}\n"
                                                       "web_identity_token_file = {}\n"
                                                       "role_session_name = from-profile\n",
                                                       kRoleArn, token_file));
  auto chain = Chain(Options({{"AWS_CONFIG_FILE", config}, {"AWS_PROFILE", "eks"}}, e));
  Result<AwsCredentials> c = chain->Get(EndpointDeadline());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "ASIA1");
  std::map<std::string, std::string> form = e.last_sts_form();
  EXPECT_EQ(form["RoleArn"], kRoleArn);
  EXPECT_EQ(form["RoleSessionName"], "from-profile");
  EXPECT_EQ(form["WebIdentityToken"], "eyJ.profile.jwt");
  // The STS endpoint from the environment, as the AWS SDKs read it.
  AwsCredentialOptions options = Options(
      {{"AWS_CONFIG_FILE", config}, {"AWS_PROFILE", "eks"}, {"AWS_ENDPOINT_URL_STS", e.url()}}, e);
  options.sts_endpoint.clear();
  c = Chain(options)->Get(EndpointDeadline());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "ASIA2");
}

TEST_F(CredentialEndpointsTest, WebIdentityRereadsTheTokenAndReportsStsErrors) {
  Endpoints& e = Start(std::chrono::hours(1));
  std::string token_file = WriteFile("token", "rejected-token");
  internal::WebIdentityConfig config{
      .role_arn = kRoleArn, .token_file = token_file, .session_name = "s", .sts_endpoint = e.url()};
  CredentialFetch fetch = internal::MakeWebIdentityFetch(client_.get(), config);
  Result<AwsCredentials> c = fetch(EndpointDeadline());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << c.status().ToString();
  EXPECT_NE(c.status().message().find("InvalidIdentityToken"), std::string::npos);
  EXPECT_NE(c.status().message().find("Incorrect token audience"), std::string::npos);
  EXPECT_EQ(c.status().message().find("rejected-token"), std::string::npos);
  // The token file is read for every fetch (EKS rotates it).
  WriteFile("token", "eyJ.rotated");
  c = fetch(EndpointDeadline());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(e.last_sts_form()["WebIdentityToken"], "eyJ.rotated");
  // A missing token file is named.
  std::filesystem::remove(token_file);
  c = fetch(EndpointDeadline());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(token_file), std::string::npos);
}

TEST_F(CredentialEndpointsTest, ContainerCredentials) {
  Endpoints& e = Start(std::chrono::hours(1));
  std::string auth_file = WriteFile("auth", "Bearer pod-identity-token\n");
  auto chain = Chain(Options({{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc"},
                              {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", auth_file},
                              {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "ignored-when-file-set"}},
                             e));
  Result<AwsCredentials> c = chain->Get(EndpointDeadline());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "ASIA1");
  EXPECT_EQ(c->session_token, "session-ASIA1");
  EXPECT_EQ(e.last_authorization(), "Bearer pod-identity-token");

  // A full URI to loopback with the token from the variable.
  chain = Chain(Options({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", e.url("/v2/credentials/abc")},
                         {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "plain-token"}},
                        e));
  c = chain->Get(EndpointDeadline());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(e.last_authorization(), "plain-token");

  // Plain http anywhere else is refused.
  Result<CredentialFetch> bad = internal::MakeContainerFetch(
      client_.get(),
      MapEnv({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://10.1.2.3/creds?secret=1"}}),
      "http://169.254.170.2");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().find("secret=1"), std::string::npos);
  EXPECT_TRUE(internal::MakeContainerFetch(
                  client_.get(),
                  MapEnv({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "https://10.1.2.3/creds"}}),
                  "http://169.254.170.2")
                  .ok());
}

TEST_F(CredentialEndpointsTest, InstanceMetadataV2) {
  Endpoints& e = Start(std::chrono::hours(1));
  auto chain = Chain(Options(
      {{"AWS_EC2_METADATA_DISABLED", "false"}, {"AWS_EC2_METADATA_SERVICE_ENDPOINT", e.url()}}, e));
  Result<AwsCredentials> c = chain->Get(EndpointDeadline());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "ASIA1");
  EXPECT_NE(c->source.find("ferry-role"), std::string::npos);
  EXPECT_NE(chain->Describe().find("instance metadata"), std::string::npos);
  // The probe's credentials are used, not fetched again.
  ASSERT_TRUE(chain->Get(EndpointDeadline()).ok());
  EXPECT_EQ(e.issued(), 1);
}

TEST_F(CredentialEndpointsTest, InstanceMetadataThatDoesNotAnswerMeansNoCredentials) {
  Result<int> fd = testing::ListenOnLoopback(0);
  ASSERT_TRUE(fd.ok());
  int port = *testing::LocalPort(*fd);
  ::close(*fd);  // nothing listens there now
  Endpoints& e = Start(std::chrono::hours(1));
  auto chain = Chain(
      Options({{"AWS_EC2_METADATA_DISABLED", "false"},
               {"AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:" + std::to_string(port)}},
              e));
  Result<AwsCredentials> c = chain->Get(EndpointDeadline());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << c.status().ToString();
  EXPECT_NE(c.status().message().find("no AWS credentials found"), std::string::npos);
  EXPECT_NE(c.status().message().find("did not answer"), std::string::npos);
}

struct Source {
  const char* name;
  std::map<std::string, std::string> (*env)(const Endpoints& e, const std::string& token_file);
};

// Several threads take credentials in a loop across several expiries of ~1 s credentials.
void RunAcrossExpiries(AwsCredentialProvider& provider, const Endpoints& e) {
  constexpr int kThreads = 6;
  constexpr int kDistinct = 4;  // credentials seen: three refreshes at least
  std::mutex mu;
  std::set<std::string> seen;
  std::atomic<int> failures{0};
  std::atomic<int> expired{0};
  std::atomic<int> calls{0};
  std::atomic<int> served_during_refresh{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (!done.load()) {
        bool refreshing = e.in_flight();
        Result<AwsCredentials> c = provider.Get(EndpointDeadline());
        ++calls;
        if (!c.ok()) {
          ++failures;
          ADD_FAILURE() << c.status().ToString();
          continue;
        }
        if (!c->expiration || *c->expiration <= SystemClock::now()) {
          ++expired;
        }
        if (refreshing && e.in_flight()) {
          ++served_during_refresh;  // a refresh was running all along: we were not held up
        }
        std::lock_guard lock(mu);
        seen.insert(c->access_key_id);
        if (seen.size() >= kDistinct) {
          done = true;
        }
      }
    });
  }
  // A bound on the whole test, not a measurement: the loop ends on its own long before.
  for (int i = 0; i < 3000 && !done.load(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  done = true;
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_GE(seen.size(), size_t{kDistinct});
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(expired.load(), 0);
  // One refresh at a time, never a herd: about one issue per credential seen.
  EXPECT_EQ(e.max_in_flight(), 1);
  EXPECT_LE(e.issued(), static_cast<int>(seen.size()) + 1);
  EXPECT_GT(served_during_refresh.load(), 0);
  EXPECT_GT(calls.load(), e.issued() * 10);
}

TEST_F(CredentialEndpointsTest, WebIdentityRefreshesAcrossExpiries) {
  Endpoints& e = Start(milliseconds(1000));
  auto chain = Chain(Options(
      {{"AWS_WEB_IDENTITY_TOKEN_FILE", WriteFile("token", "eyJ.t")}, {"AWS_ROLE_ARN", kRoleArn}},
      e));
  RunAcrossExpiries(*chain, e);
}

TEST_F(CredentialEndpointsTest, ContainerCredentialsRefreshAcrossExpiries) {
  Endpoints& e = Start(milliseconds(1000));
  auto chain =
      Chain(Options({{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc"}}, e));
  RunAcrossExpiries(*chain, e);
}

TEST_F(CredentialEndpointsTest, InstanceMetadataRefreshesAcrossExpiries) {
  Endpoints& e = Start(milliseconds(1000));
  auto chain = Chain(Options(
      {{"AWS_EC2_METADATA_DISABLED", "false"}, {"AWS_EC2_METADATA_SERVICE_ENDPOINT", e.url()}}, e));
  RunAcrossExpiries(*chain, e);
}

TEST_F(CredentialEndpointsTest, AnEndpointBrieflyDownDoesNotStopTheUsers) {
  Endpoints& e = Start(milliseconds(1500));
  auto chain =
      Chain(Options({{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc"}}, e));
  ASSERT_TRUE(chain->Get(EndpointDeadline()).ok());
  // The next three answers are 503: the fetch's own retries and the background retries absorb
  // them while the first credentials are still good.
  e.fail_next(3);
  std::set<std::string> seen;
  for (int i = 0; i < 1000 && seen.size() < 2; ++i) {
    Result<AwsCredentials> c = chain->Get(EndpointDeadline());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_GT(*c->expiration, SystemClock::now());
    seen.insert(c->access_key_id);
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(seen.size(), 2u);
}

TEST(CredentialParsersTest, Iso8601) {
  auto t = internal::ParseIso8601("2015-08-30T12:36:00Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(SystemClock::to_time_t(*t), 1440938160);
  t = internal::ParseIso8601("2015-08-30T12:36:00.250Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(t->time_since_epoch()).count(), 1440938160250);
  t = internal::ParseIso8601("2015-08-30T14:36:00+02:00");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(SystemClock::to_time_t(*t), 1440938160);
  for (const char* bad : {"", "2015-08-30", "2015-08-30T12:36:00", "2015-13-30T12:36:00Z",
                          "2015-08-30T12:36:00Zjunk", "yyyy-08-30T12:36:00Z"}) {
    EXPECT_FALSE(internal::ParseIso8601(bad).ok()) << bad;
  }
}

TEST(CredentialParsersTest, AnswersWithoutCredentialsAreErrorsWithoutSecrets) {
  EXPECT_FALSE(internal::ParseJsonCredentials("not json", "x").ok());
  Result<AwsCredentials> c = internal::ParseJsonCredentials(
      R"({"Code":"AssumeRoleUnauthorizedAccess","SecretAccessKey":"TOPSECRET"})", "imds");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("AssumeRoleUnauthorizedAccess"), std::string::npos);
  EXPECT_EQ(c.status().message().find("TOPSECRET"), std::string::npos);
  c = internal::ParseJsonCredentials(R"({"SecretAccessKey":"TOPSECRET"})", "imds");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().find("TOPSECRET"), std::string::npos);
  c = internal::ParseJsonCredentials(R"({"AccessKeyId":"A","SecretAccessKey":"S"})", "x");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->expiration.has_value());
  EXPECT_FALSE(internal::ParseStsCredentials("<x/>", "AssumeRoleWithWebIdentity").ok());
  EXPECT_FALSE(internal::ParseStsCredentials("<AssumeRoleWithWebIdentityResponse>"
                                             "<AssumeRoleWithWebIdentityResult><Credentials>"
                                             "<AccessKeyId>A</AccessKeyId></Credentials>"
                                             "</AssumeRoleWithWebIdentityResult>"
                                             "</AssumeRoleWithWebIdentityResponse>",
                                             "AssumeRoleWithWebIdentity")
                   .ok());
}

}  // namespace
}  // namespace ferry::storage::s3

// Where GCS access tokens come from (gcs_credentials.h): each provider of the chain against local
// stand-ins of Google's token endpoint, STS, the impersonation endpoint and the metadata server
// (testing::GoogleTokenStandIn) whose tokens live two seconds: several threads take tokens across
// several expiries, the refreshes happen in the background one at a time, and no caller fails or
// is handed a token the stand-in says has expired. The service account's JWT is checked with the
// public half of a key generated for the test. Then the errors: unreadable and malformed files,
// refusals (400, 401), and no source at all.
#include "ferry/storage/gcs/gcs_credentials.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "ferry/testing/google_token_stand_in.h"

namespace ferry::storage::gcs {
namespace {

using SystemClock = std::chrono::system_clock;
using testing::GoogleTokenStandIn;

http::Deadline Soon() {
  return http::DeadlineAfter(std::chrono::seconds(20));
}

EnvLookup MapEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

bool Contains(const Status& s, std::string_view text) {
  return s.message().find(text) != std::string::npos;
}

// One key for the whole binary: RSA generation takes a moment.
const testing::RsaKeyPair& TestKey() {
  static const testing::RsaKeyPair key = [] {
    Result<testing::RsaKeyPair> k = testing::GenerateRsaKeyPair();
    EXPECT_TRUE(k.ok()) << k.status().ToString();
    return k.ok() ? *k : testing::RsaKeyPair{};
  }();
  return key;
}

TEST(GcsAssertionTest, SignedWithTheKeyAndCarryingTheClaims) {
  const auto now = SystemClock::now();
  Result<std::string> jwt = MakeServiceAccountAssertion(
      TestKey().private_key_pem, "key-id-1", "sa@p.iam.gserviceaccount.com", kGcsScope,
      "https://oauth2.googleapis.com/token", now, "test");
  ASSERT_TRUE(jwt.ok()) << jwt.status().ToString();
  EXPECT_EQ(jwt->find('='), std::string::npos);  // base64url, unpadded
  std::string header, claims;
  ASSERT_TRUE(testing::VerifyRs256Jwt(*jwt, TestKey().public_key_pem, &header, &claims).ok());
  nlohmann::json h = nlohmann::json::parse(header);
  EXPECT_EQ(h["alg"], "RS256");
  EXPECT_EQ(h["typ"], "JWT");
  EXPECT_EQ(h["kid"], "key-id-1");
  nlohmann::json c = nlohmann::json::parse(claims);
  const int64_t iat =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  EXPECT_EQ(c["iss"], "sa@p.iam.gserviceaccount.com");
  EXPECT_EQ(c["scope"], "https://www.googleapis.com/auth/devstorage.read_write");
  EXPECT_EQ(c["aud"], "https://oauth2.googleapis.com/token");
  EXPECT_EQ(c["iat"], iat);
  EXPECT_EQ(c["exp"], iat + 3600);
  // Another key's public half does not verify it; a flipped claim breaks the signature.
  Result<testing::RsaKeyPair> other = testing::GenerateRsaKeyPair();
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(testing::VerifyRs256Jwt(*jwt, other->public_key_pem, &header, &claims).ok());
  std::string tampered = *jwt;
  tampered[tampered.find('.') + 2] ^= 1;
  EXPECT_FALSE(testing::VerifyRs256Jwt(tampered, TestKey().public_key_pem, &header, &claims).ok());
  // Not a key: named by its source, never shown.
  Result<std::string> bad = MakeServiceAccountAssertion(
      "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ5dGVz\n-----END PRIVATE KEY-----\n", "", "e",
      kGcsScope, "aud", now, "GOOGLE_APPLICATION_CREDENTIALS=/k.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(bad.status(), "GOOGLE_APPLICATION_CREDENTIALS=/k.json"));
  EXPECT_FALSE(Contains(bad.status(), "c2VjcmV0LWJ5dGVz"));
}

class GcsCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-gcs-creds-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    subject_token_file_ = dir_ + "/subject-token";
    std::ofstream(subject_token_file_) << "subject-token-1\n";
    auto client = http::HttpClient::Create(http::HttpClientOptions{.allow_http = true});
    ASSERT_TRUE(client.ok());
    client_ = std::move(client).value();
    stand_in_ = std::make_unique<GoogleTokenStandIn>(
        GoogleTokenStandIn::Options{.lifetime = std::chrono::seconds(2),
                                    .public_key_pem = TestKey().public_key_pem,
                                    .subject_token_file = subject_token_file_});
    ASSERT_TRUE(stand_in_->Start().ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
  }

  std::string ServiceAccountJson() const {
    return nlohmann::json{{"type", "service_account"},
                          {"project_id", "ferry-project"},
                          {"private_key_id", "key-id-1"},
                          {"private_key", TestKey().private_key_pem},
                          {"client_email", stand_in_->options().client_email},
                          {"token_uri", stand_in_->token_url()}}
        .dump();
  }
  std::string AuthorizedUserJson() const {
    const GoogleTokenStandIn::Options& o = stand_in_->options();
    return nlohmann::json{{"type", "authorized_user"},
                          {"client_id", o.client_id},
                          {"client_secret", o.client_secret},
                          {"refresh_token", o.refresh_token},
                          {"token_uri", stand_in_->token_url()}}
        .dump();
  }
  std::string ExternalAccountJson(bool impersonate) const {
    nlohmann::json j = {{"type", "external_account"},
                        {"audience", stand_in_->options().audience},
                        {"subject_token_type", "urn:ietf:params:oauth:token-type:jwt"},
                        {"token_url", stand_in_->sts_url()},
                        {"credential_source", {{"file", subject_token_file_}}}};
    if (impersonate) {
      j["service_account_impersonation_url"] = stand_in_->impersonation_url();
    }
    return j.dump();
  }

  Result<std::unique_ptr<GcsCredentialProvider>> Chain(std::map<std::string, std::string> env,
                                                       GcsCredentialOptions o = {}) {
    o.env = MapEnv(std::move(env));
    o.client = client_.get();
    o.refresh.retry_backoff = std::chrono::milliseconds(100);
    return MakeGcsCredentialChain(o);
  }

  // Four threads take tokens until they have seen `want` different ones (two seconds each, so
  // across several expiries), at most a minute. Each token handed out must be unexpired by the
  // stand-in's own record.
  void TakeTokensAcrossExpiries(GcsCredentialProvider* provider, const std::string& kind,
                                size_t want = 3) {
    std::atomic<int> failures{0};
    std::atomic<int> expired{0};
    std::atomic<bool> done{false};
    std::mutex mu;
    std::set<std::string> seen;
    std::string first_failure;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        while (!done.load()) {
          Result<GoogleAccessToken> token = provider->Get(Soon());
          std::lock_guard lock(mu);
          if (!token.ok()) {
            if (failures++ == 0) {
              first_failure = token.status().ToString();
            }
            continue;
          }
          std::optional<SystemClock::time_point> expiry = stand_in_->ExpiryOf(token->token);
          if (!expiry || *expiry <= SystemClock::now()) {
            ++expired;
          }
          seen.insert(token->token);
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      });
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    for (;;) {
      {
        std::lock_guard lock(mu);
        if (seen.size() >= want || std::chrono::steady_clock::now() > deadline) {
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    done = true;
    for (std::thread& t : threads) {
      t.join();
    }
    EXPECT_EQ(failures.load(), 0) << first_failure;
    EXPECT_EQ(expired.load(), 0);
    EXPECT_GE(seen.size(), want);
    EXPECT_GE(static_cast<size_t>(stand_in_->issued(kind)), want);
    EXPECT_EQ(stand_in_->max_in_flight(), 1);  // one refresh at a time
    EXPECT_EQ(stand_in_->refused(), 0);
    for (const std::string& token : seen) {
      EXPECT_TRUE(token.starts_with("ya29." + kind + ".")) << token;
    }
  }

  std::string dir_;
  std::string subject_token_file_;
  // Destruction order: the client (and its kept-alive connections) before the stand-in.
  std::unique_ptr<GoogleTokenStandIn> stand_in_;
  std::unique_ptr<http::HttpClient> client_;
};

TEST_F(GcsCredentialsTest, ServiceAccountKeyFromGoogleApplicationCredentials) {
  const std::string key = Write("key.json", ServiceAccountJson());
  auto provider = Chain({{"GOOGLE_APPLICATION_CREDENTIALS", key}});
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  EXPECT_EQ((*provider)->Describe(),
            "service account ferry-test@ferry-project.iam.gserviceaccount.com "
            "(GOOGLE_APPLICATION_CREDENTIALS=" +
                key + ")");
  TakeTokensAcrossExpiries(provider->get(), "sa");
  // The stand-in verified each assertion with the public key; the last one's claims and header.
  nlohmann::json claims = nlohmann::json::parse(stand_in_->last_jwt_claims());
  EXPECT_EQ(claims["iss"], "ferry-test@ferry-project.iam.gserviceaccount.com");
  EXPECT_EQ(claims["scope"], kGcsScope);
  EXPECT_EQ(claims["aud"], stand_in_->token_url());
  EXPECT_EQ(claims["exp"].get<int64_t>() - claims["iat"].get<int64_t>(), 3600);
  EXPECT_EQ(nlohmann::json::parse(stand_in_->last_jwt_header())["kid"], "key-id-1");
}

TEST_F(GcsCredentialsTest, StorageOptionsComeFirst) {
  const std::string key = Write("key.json", ServiceAccountJson());
  const std::string user = Write("user.json", AuthorizedUserJson());
  // The inline key beats a path, which beats the environment.
  auto p = Chain({{"GOOGLE_APPLICATION_CREDENTIALS", user}},
                 {.service_account_key = ServiceAccountJson(), .service_account_path = user});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NE((*p)->Describe().find("(the storage option google_service_account_key)"),
            std::string::npos);
  Result<GoogleAccessToken> t = (*p)->Get(Soon());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->token.starts_with("ya29.sa."));
  p = Chain({{"GOOGLE_APPLICATION_CREDENTIALS", key}}, {.service_account_path = user});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->Describe(),
            "authorized user (the storage option google_service_account=" + user + ")");
  p = Chain({}, {.application_credentials = user});
  ASSERT_TRUE(p.ok());
  t = (*p)->Get(Soon());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->token.starts_with("ya29.user."));
  // Fresh for two seconds: a second Get reuses the token.
  Result<GoogleAccessToken> again = (*p)->Get(Soon());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->token, t->token);
}

TEST_F(GcsCredentialsTest, AuthorizedUserFromGcloudsWellKnownFile) {
  Write("gcloud/application_default_credentials.json", AuthorizedUserJson());
  auto provider = Chain({{"CLOUDSDK_CONFIG", dir_ + "/gcloud"}, {"HOME", "/nonexistent"}});
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  EXPECT_NE((*provider)->Describe().find("gcloud's application default credentials"),
            std::string::npos);
  TakeTokensAcrossExpiries(provider->get(), "user");
  // Without CLOUDSDK_CONFIG: ~/.config/gcloud.
  Write("home/.config/gcloud/application_default_credentials.json", AuthorizedUserJson());
  provider = Chain({{"HOME", dir_ + "/home"}});
  ASSERT_TRUE(provider.ok());
  EXPECT_NE((*provider)->Describe().find(dir_ + "/home/.config/gcloud/"), std::string::npos);
  ASSERT_TRUE((*provider)->Get(Soon()).ok());
}

TEST_F(GcsCredentialsTest, ExternalAccountThroughSts) {
  const std::string config = Write("wif.json", ExternalAccountJson(/*impersonate=*/false));
  auto provider = Chain({{"GOOGLE_APPLICATION_CREDENTIALS", config}});
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  TakeTokensAcrossExpiries(provider->get(), "sts");
  EXPECT_EQ(stand_in_->last_sts_scope(), kGcsScope);
  // The subject token file is read again for each exchange (the stand-in compares with what the
  // file holds now).
  std::ofstream(subject_token_file_) << "subject-token-2\n";
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_TRUE((*provider)->Get(Soon()).ok());
}

TEST_F(GcsCredentialsTest, ExternalAccountWithServiceAccountImpersonation) {
  const std::string config = Write("wif.json", ExternalAccountJson(/*impersonate=*/true));
  auto provider = Chain({{"GOOGLE_APPLICATION_CREDENTIALS", config}});
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  TakeTokensAcrossExpiries(provider->get(), "imp");
  // The STS token was asked for the IAM API, and bought each final token.
  EXPECT_EQ(stand_in_->last_sts_scope(), "https://www.googleapis.com/auth/cloud-platform");
  EXPECT_EQ(stand_in_->issued("sts"), stand_in_->issued("imp"));
}

TEST_F(GcsCredentialsTest, MetadataServerLast) {
  auto provider = Chain({{"GCE_METADATA_HOST", stand_in_->metadata_host()}, {"HOME", dir_}});
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  TakeTokensAcrossExpiries(provider->get(), "gce");
  EXPECT_EQ((*provider)->Describe(), "the GCE metadata server at " + stand_in_->metadata_host());
}

TEST_F(GcsCredentialsTest, NoSourceListsWhatWasTried) {
  // Nothing listens on the metadata host (a port that was just closed).
  std::string closed;
  {
    testing::HttpStandIn gone;
    ASSERT_TRUE(gone.Start().ok());
    closed = "127.0.0.1:" + std::to_string(gone.port());
  }
  auto provider = Chain({{"GCE_METADATA_HOST", closed}, {"HOME", dir_}});
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  Result<GoogleAccessToken> t = (*provider)->Get(Soon());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  const Status& s = t.status();
  EXPECT_TRUE(Contains(s, "no Google credentials found")) << s.ToString();
  EXPECT_TRUE(Contains(s, "google_service_account_key")) << s.ToString();
  EXPECT_TRUE(Contains(s, "GOOGLE_APPLICATION_CREDENTIALS not set")) << s.ToString();
  EXPECT_TRUE(Contains(s, "no gcloud credentials file " + dir_ + "/.config/gcloud/"))
      << s.ToString();
  EXPECT_TRUE(Contains(s, "no GCE metadata server at " + closed)) << s.ToString();
  EXPECT_TRUE(Contains(s, "STORAGE_EMULATOR_HOST")) << s.ToString();
  // Probed when the chain is made: the same error then, as a store reports it when opened.
  auto eager = Chain({{"GCE_METADATA_HOST", closed}, {"HOME", dir_}}, {.probe_metadata_now = true});
  ASSERT_FALSE(eager.ok());
  EXPECT_TRUE(Contains(eager.status(), "no Google credentials found")) << eager.status().ToString();
  eager = Chain({{"GCE_METADATA_HOST", stand_in_->metadata_host()}}, {.probe_metadata_now = true});
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  EXPECT_EQ(stand_in_->issued("gce"), 1);  // the probe's token, handed to the first Get
  Result<GoogleAccessToken> seeded = (*eager)->Get(Soon());
  ASSERT_TRUE(seeded.ok()) << seeded.status().ToString();
  EXPECT_EQ(seeded->token, "ya29.gce.1");
  // Something that answers without Metadata-Flavor: Google is not the metadata server.
  testing::HttpStandIn impostor;
  impostor.server().Get(".*", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"access_token":"x","expires_in":60})", "application/json");
  });
  ASSERT_TRUE(impostor.Start().ok());
  provider = Chain({{"GCE_METADATA_HOST", "127.0.0.1:" + std::to_string(impostor.port())}});
  ASSERT_TRUE(provider.ok());
  t = (*provider)->Get(Soon());
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), "without Metadata-Flavor: Google")) << t.status().ToString();
}

TEST_F(GcsCredentialsTest, FileErrorsNameTheFileNeverTheSecret) {
  auto expect_error = [&](const std::map<std::string, std::string>& env, StatusCode code,
                          std::vector<std::string> wanted) {
    auto p = Chain(env);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().code(), code) << p.status().ToString();
    for (const std::string& w : wanted) {
      EXPECT_TRUE(Contains(p.status(), w)) << p.status().ToString() << " lacks " << w;
    }
    for (const std::string& secret :
         {std::string("ferry-client-secret"), std::string("1//ferry-refresh-token"),
          std::string("PRIVATE KEY")}) {
      EXPECT_FALSE(Contains(p.status(), secret)) << p.status().ToString();
    }
  };
  expect_error({{"GOOGLE_APPLICATION_CREDENTIALS", dir_ + "/missing.json"}},
               StatusCode::kInvalidArgument,
               {"GOOGLE_APPLICATION_CREDENTIALS=" + dir_ + "/missing.json", "cannot read"});
  const std::string garbage = Write("garbage.json", "{not json");
  expect_error({{"GOOGLE_APPLICATION_CREDENTIALS", garbage}}, StatusCode::kInvalidArgument,
               {garbage, "not a JSON credentials file"});
  nlohmann::json no_key = nlohmann::json::parse(ServiceAccountJson());
  no_key.erase("private_key");
  const std::string incomplete = Write("incomplete.json", no_key.dump());
  expect_error({{"GOOGLE_APPLICATION_CREDENTIALS", incomplete}}, StatusCode::kInvalidArgument,
               {incomplete, "the service_account credentials lack private_key"});
  no_key["private_key"] = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n";
  const std::string bad_key = Write("bad_key.json", no_key.dump());
  expect_error({{"GOOGLE_APPLICATION_CREDENTIALS", bad_key}}, StatusCode::kInvalidArgument,
               {bad_key, "not a PEM RSA private key"});
  nlohmann::json user = nlohmann::json::parse(AuthorizedUserJson());
  user.erase("refresh_token");
  const std::string no_refresh = Write("no_refresh.json", user.dump());
  expect_error({{"GOOGLE_APPLICATION_CREDENTIALS", no_refresh}}, StatusCode::kInvalidArgument,
               {no_refresh, "the authorized_user credentials lack refresh_token"});
  nlohmann::json url_sourced = nlohmann::json::parse(ExternalAccountJson(false));
  url_sourced["credential_source"] = {{"url", "http://169.254.169.254/token"}};
  const std::string url_path = Write("url.json", url_sourced.dump());
  expect_error({{"GOOGLE_APPLICATION_CREDENTIALS", url_path}}, StatusCode::kNotSupported,
               {url_path, "credential_source.url"});
  nlohmann::json plain = nlohmann::json::parse(ServiceAccountJson());
  plain["token_uri"] = "http://oauth2.example.com/token";
  const std::string plain_path = Write("plain.json", plain.dump());
  expect_error({{"GOOGLE_APPLICATION_CREDENTIALS", plain_path}}, StatusCode::kInvalidArgument,
               {plain_path, "token_uri 'http://oauth2.example.com/token' must be https"});
  const std::string odd = Write("odd.json", R"({"type":"api_key"})");
  expect_error({{"GOOGLE_APPLICATION_CREDENTIALS", odd}}, StatusCode::kInvalidArgument,
               {odd, "unknown credentials type 'api_key'"});
  // A subject token file that disappears fails the exchange, naming the file.
  const std::string config = Write("wif.json", ExternalAccountJson(false));
  std::filesystem::remove(subject_token_file_);
  auto p = Chain({{"GOOGLE_APPLICATION_CREDENTIALS", config}});
  ASSERT_TRUE(p.ok());
  Result<GoogleAccessToken> t = (*p)->Get(Soon());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(t.status(), subject_token_file_)) << t.status().ToString();
}

TEST_F(GcsCredentialsTest, TokenEndpointRefusalsNameTheEndpoint) {
  const std::string key = Write("key.json", ServiceAccountJson());
  const std::string user = Write("user.json", AuthorizedUserJson());
  for (int status : {400, 401}) {
    stand_in_->ForceTokenStatus(status);
    for (const std::string& file : {key, user}) {
      auto p = Chain({{"GOOGLE_APPLICATION_CREDENTIALS", file}});
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      Result<GoogleAccessToken> t = (*p)->Get(Soon());
      ASSERT_FALSE(t.ok());
      const Status& s = t.status();
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
      EXPECT_TRUE(Contains(s, "HTTP " + std::to_string(status))) << s.ToString();
      EXPECT_TRUE(Contains(s, stand_in_->token_url())) << s.ToString();
      EXPECT_TRUE(Contains(s, status == 400 ? "invalid_grant" : "unauthorized_client"))
          << s.ToString();
      EXPECT_TRUE(Contains(s, "GOOGLE_APPLICATION_CREDENTIALS=" + file)) << s.ToString();
      EXPECT_FALSE(Contains(s, "ferry-client-secret")) << s.ToString();
      EXPECT_FALSE(Contains(s, "ferry-refresh-token")) << s.ToString();
      EXPECT_FALSE(Contains(s, "eyJ")) << s.ToString();  // no JWT
    }
  }
  // A wrong refresh token: Google's invalid_grant.
  stand_in_->ForceTokenStatus(0);
  nlohmann::json j = nlohmann::json::parse(AuthorizedUserJson());
  j["refresh_token"] = "1//revoked-token";
  auto p = Chain({}, {.application_credentials = Write("revoked.json", j.dump())});
  ASSERT_TRUE(p.ok());
  Result<GoogleAccessToken> t = (*p)->Get(Soon());
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status(), "Token has been expired or revoked")) << t.status().ToString();
  EXPECT_FALSE(Contains(t.status(), "revoked-token")) << t.status().ToString();
}

TEST_F(GcsCredentialsTest, AccessTokenFunctionForTheStore) {
  // The emulator with nothing configured: anonymous, as Google's clients.
  Result<std::function<Result<std::string>()>> f =
      MakeGcsAccessToken({}, MapEnv({{"STORAGE_EMULATOR_HOST", "http://127.0.0.1:1"},
                                     {"GOOGLE_APPLICATION_CREDENTIALS", "/ignored.json"}}));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(*f);
  f = MakeGcsAccessToken({{"storage_emulator_host", "127.0.0.1:1"}}, MapEnv({}));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(*f);
  f = MakeGcsAccessToken({{"google_skip_signature", "true"}}, MapEnv({}));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(*f);
  // An option configures tokens even beside the emulator.
  const std::string key = Write("key.json", ServiceAccountJson());
  f = MakeGcsAccessToken({{"google_service_account_path", key}},
                         MapEnv({{"STORAGE_EMULATOR_HOST", "http://127.0.0.1:1"}}));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(*f);
  Result<std::string> token = (*f)();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_TRUE(token->starts_with("ya29.sa."));
  // A broken configuration fails up front.
  f = MakeGcsAccessToken({{"google_application_credentials", dir_ + "/nope.json"}}, MapEnv({}));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(Contains(f.status(), "google_application_credentials=" + dir_ + "/nope.json"));
}

}  // namespace
}  // namespace ferry::storage::gcs

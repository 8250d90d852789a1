// Where Azure credentials come from (azure_credentials.h): the order of the sources, their
// configuration errors, how each authorizes a request, and the Entra ID token exchange against a
// local token endpoint (testing::EntraTokenStandIn) whose tokens live two seconds: several
// threads take tokens across several expiries, the refreshes happen in the background one at a
// time, and no call fails.
#include "ferry/storage/azure/azure_credentials.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "ferry/http/digest.h"
#include "ferry/testing/entra_token_stand_in.h"

namespace ferry::storage::azure {
namespace {

using Kind = AzureCredential::Kind;
using SystemClock = std::chrono::system_clock;

constexpr char kKey[] = "a2V5LWJ5dGVzLW9mLXRoZS1hY2NvdW50";  // base64 of "key-bytes-of-the-account"
constexpr char kSecret[] = "very-secret-client-secret";

http::Deadline Soon() {
  return http::DeadlineAfter(std::chrono::seconds(20));
}

Result<AzureCredential> Resolve(const AzureCredentialOptions& o) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<AzureCredentialProvider> p,
                         MakeAzureCredentialProvider(o));
  return p->Get(Soon());
}

TEST(AzureCredentialsTest, SourcesInObjectStoresOrder) {
  // A bearer token beats a key, a key beats a SAS.
  Result<AzureCredential> c =
      Resolve({.account = "acct", .account_key = kKey, .sas = "sv=1&sig=x", .bearer_token = "t"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, Kind::kBearerToken);
  c = Resolve({.account = "acct", .account_key = kKey, .sas = "sv=1&sig=x"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, Kind::kSharedKey);
  EXPECT_EQ(c->account_key, "key-bytes-of-the-account");
  c = Resolve({.account = "acct", .sas = "?sv=1&sig=x"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, Kind::kSas);
  EXPECT_EQ(c->sas, "sv=1&sig=x");
  // The emulator's development key, and its account when none is named.
  c = Resolve({.use_emulator = true});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, Kind::kSharedKey);
  EXPECT_EQ(c->account_key.size(), 64u);
  // A client id alone (AKS sets AZURE_CLIENT_ID for everything in the pod) configures nothing.
  c = Resolve({.account = "acct", .sas = "sv=1", .client_id = "id", .tenant_id = "t"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, Kind::kSas);
}

TEST(AzureCredentialsTest, ConfigurationErrorsNameTheSettingNeverTheSecret) {
  Result<std::unique_ptr<AzureCredentialProvider>> p =
      MakeAzureCredentialProvider({.account = "a"});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("no Azure credentials found for account 'a'"),
            std::string::npos);
  p = MakeAzureCredentialProvider({.account = "a", .account_key = "not base64!"});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("azure_storage_account_key"), std::string::npos);
  EXPECT_EQ(p.status().message().find("not base64!"), std::string::npos);
  p = MakeAzureCredentialProvider({.account_key = kKey});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("azure_storage_account_name"), std::string::npos);
  p = MakeAzureCredentialProvider(
      {.account = "a", .client_id = "id", .client_secret = kSecret, .client = nullptr});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("azure_tenant_id"), std::string::npos);
  EXPECT_EQ(p.status().message().find(kSecret), std::string::npos);
  p = MakeAzureCredentialProvider({.account = "a", .federated_token_file = "/x"});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("azure_client_id (AZURE_CLIENT_ID) and azure_tenant_id"),
            std::string::npos)
      << p.status().message();
}

TEST(AzureCredentialsTest, AuthorizeSignsBearsOrAppendsTheSignature) {
  http::HttpRequest r{.method = "GET", .url = "https://a.blob.core.windows.net/c/b"};
  r.headers.Set("x-ms-date", "Sun, 11 Oct 2009 21:49:13 GMT");
  ASSERT_TRUE(AuthorizeAzureRequest(&r, {.kind = Kind::kSharedKey, .account_key = "k"}, "a").ok());
  EXPECT_TRUE(r.headers.GetOr("Authorization").starts_with("SharedKey a:"));
  ASSERT_TRUE(AuthorizeAzureRequest(&r, {.kind = Kind::kBearerToken, .token = "tok"}, "a").ok());
  EXPECT_EQ(r.headers.GetOr("Authorization"), "Bearer tok");
  http::HttpRequest s{.method = "GET", .url = "https://a.blob.core.windows.net/c/b"};
  ASSERT_TRUE(AuthorizeAzureRequest(&s, {.kind = Kind::kSas, .sas = "sv=1&sig=x"}, "a").ok());
  EXPECT_EQ(s.url, "https://a.blob.core.windows.net/c/b?sv=1&sig=x");
  s.url = "https://a.blob.core.windows.net/c?comp=list";
  ASSERT_TRUE(AuthorizeAzureRequest(&s, {.kind = Kind::kSas, .sas = "sv=1&sig=x"}, "a").ok());
  EXPECT_EQ(s.url, "https://a.blob.core.windows.net/c?comp=list&sv=1&sig=x");
}

TEST(AzureCredentialsTest, ParsesTheTokenEndpointsAnswer) {
  const auto at = SystemClock::now();
  Result<AzureCredential> c = ParseEntraTokenResponse(
      R"({"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"eyJ0"})",
      at);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->kind, Kind::kBearerToken);
  EXPECT_EQ(c->token, "eyJ0");
  EXPECT_EQ(*c->expiration, at + std::chrono::seconds(3599));
  c = ParseEntraTokenResponse(R"({"token_type":"Bearer","expires_in":"60","access_token":"x"})",
                              at);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c->expiration, at + std::chrono::seconds(60));
  for (const char* bad : {"", "[]", R"({"expires_in":60})", R"({"access_token":"x"})",
                          R"({"access_token":"x","expires_in":"soon"})",
                          R"({"access_token":"x","expires_in":60,"token_type":"MAC"})"}) {
    EXPECT_EQ(ParseEntraTokenResponse(bad, at).status().code(), StatusCode::kUnavailable) << bad;
  }
}

class EntraTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-entra-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    token_file_ = dir_ + "/azure-identity-token";
    WriteToken("federated-token-1");
    auto client = http::HttpClient::Create(http::HttpClientOptions{.allow_http = true});
    ASSERT_TRUE(client.ok());
    client_ = std::move(client).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void WriteToken(const std::string& token) { std::ofstream(token_file_) << token << "\n"; }

  testing::EntraTokenStandIn* StartEndpoint(testing::EntraTokenStandIn::Options options) {
    endpoint_ = std::make_unique<testing::EntraTokenStandIn>(std::move(options));
    EXPECT_TRUE(endpoint_->Start().ok());
    return endpoint_.get();
  }

  std::string dir_;
  std::string token_file_;
  // Destruction order: the client (and its kept-alive connections) before the endpoint, which
  // would otherwise wait for them to time out.
  std::unique_ptr<testing::EntraTokenStandIn> endpoint_;
  std::unique_ptr<http::HttpClient> client_;
};

TEST_F(EntraTokenTest, WorkloadIdentityTokensAreRefreshedAcrossExpiriesWithoutAFailedCall) {
  auto endpoint =
      StartEndpoint({.federated_token_file = token_file_, .lifetime = std::chrono::seconds(2)});
  Result<std::unique_ptr<AzureCredentialProvider>> provider =
      MakeAzureCredentialProvider({.account = "acct",
                                   .client_id = "ferry-client",
                                   .tenant_id = "ferry-tenant",
                                   .federated_token_file = token_file_,
                                   .authority_host = endpoint->authority() + "/",
                                   .client = client_.get()});
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  EXPECT_EQ((*provider)->Describe(),
            "workload identity (client ferry-client, tenant ferry-tenant)");
  // Six threads take tokens until they have seen four (three expiries at least); the token file
  // is rotated meanwhile, as the kubelet does.
  std::atomic<int> failures{0};
  std::atomic<int> expired{0};
  std::atomic<bool> done{false};
  std::mutex mu;
  std::set<int> seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      while (!done.load()) {
        Result<AzureCredential> c = (*provider)->Get(Soon());
        if (!c.ok()) {
          ++failures;
          continue;
        }
        if (*c->expiration <= SystemClock::now()) {
          ++expired;
        }
        std::lock_guard lock(mu);
        seen.insert(testing::EntraTokenStandIn::IssueNumber(c->token));
      }
    });
  }
  // Until the threads have seen four tokens (the endpoint counts one as issued before its answer
  // reaches the provider), at most a minute.
  auto seen_count = [&] {
    std::lock_guard lock(mu);
    return seen.size();
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  for (int rotation = 2; seen_count() < 4 && std::chrono::steady_clock::now() < deadline;
       ++rotation) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    endpoint->RotateFederatedToken("federated-token-" + std::to_string(rotation));
  }
  done = true;
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(expired.load(), 0);
  EXPECT_EQ(endpoint->refused(), 0);
  EXPECT_EQ(endpoint->max_in_flight(), 1);  // one refresh at a time
  EXPECT_GE(seen.size(), 4u);
  EXPECT_GE(endpoint->distinct_assertions(), 2u);  // the rotated file was read again
}

TEST_F(EntraTokenTest, ClientSecretAndTheEndpointsRefusalsAndOutages) {
  auto endpoint = StartEndpoint({.client_secret = kSecret, .lifetime = std::chrono::seconds(3600)});
  auto make = [&](std::string secret) {
    return MakeAzureCredentialProvider({.account = "acct",
                                        .client_id = "ferry-client",
                                        .client_secret = std::move(secret),
                                        .tenant_id = "ferry-tenant",
                                        .authority_host = endpoint->authority(),
                                        .client = client_.get()});
  };
  // Refused: InvalidArgument with Entra's code and description, never the secret.
  Result<std::unique_ptr<AzureCredentialProvider>> wrong = make("wrong-secret-value");
  ASSERT_TRUE(wrong.ok());
  Result<AzureCredential> c = (*wrong)->Get(Soon());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << c.status().ToString();
  EXPECT_NE(c.status().message().find("invalid_client"), std::string::npos);
  EXPECT_NE(c.status().message().find("AADSTS7000215"), std::string::npos);
  EXPECT_EQ(c.status().message().find("wrong-secret-value"), std::string::npos);
  // Briefly down: retried within the call.
  Result<std::unique_ptr<AzureCredentialProvider>> right = make(kSecret);
  ASSERT_TRUE(right.ok());
  endpoint->FailNext(2);
  c = (*right)->Get(Soon());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->kind, Kind::kBearerToken);
  EXPECT_EQ(testing::EntraTokenStandIn::IssueNumber(c->token), 1);
  // Fresh for an hour: no second exchange.
  c = (*right)->Get(Soon());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(endpoint->issued(), 1);
  // A missing token file is a configuration error naming the file.
  Result<std::unique_ptr<AzureCredentialProvider>> missing =
      MakeAzureCredentialProvider({.account = "acct",
                                   .client_id = "ferry-client",
                                   .tenant_id = "ferry-tenant",
                                   .federated_token_file = dir_ + "/nope",
                                   .authority_host = endpoint->authority(),
                                   .client = client_.get()});
  ASSERT_TRUE(missing.ok());
  c = (*missing)->Get(Soon());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(dir_ + "/nope"), std::string::npos);
}

}  // namespace
}  // namespace ferry::storage::azure

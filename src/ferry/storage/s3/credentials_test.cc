// The credential chain's order and its static sources, and the refreshing cache with an
// in-process fetch. The HTTP sources are tested against local stand-ins in
// credential_endpoints_test.cc.
#include "ferry/storage/s3/credentials.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "ferry/base/file.h"
#include "ferry/storage/s3/env_lookup_for_test.h"

namespace ferry::storage::s3 {
namespace {

using SystemClock = std::chrono::system_clock;
using std::chrono::milliseconds;

constexpr std::string_view kSecret = "SECRETwJalrXUtnFEMI";

http::Deadline Soon() {
  return http::DeadlineAfter(std::chrono::seconds(10));
}

class CredentialChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-chain-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    home_ = tmpl;
    ASSERT_TRUE(CreateDirectories(home_ + "/.aws").ok());
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  void WriteAws(const std::string& name, std::string_view text) {
    ASSERT_TRUE(WriteStringToFile(home_ + "/.aws/" + name, text, false).ok());
  }

  // The environment of a machine with nothing configured but HOME and IMDS off, plus `extra`.
  EnvLookup Env(std::map<std::string, std::string> extra = {}) {
    extra.try_emplace("HOME", home_);
    extra.try_emplace("AWS_EC2_METADATA_DISABLED", "true");
    return MapEnv(std::move(extra));
  }

  Result<AwsCredentials> Resolve(AwsCredentialOptions options) {
    Result<std::unique_ptr<AwsCredentialProvider>> chain = MakeDefaultCredentialChain(options);
    if (!chain.ok()) {
      return chain.status();
    }
    return (*chain)->Get(Soon());
  }

  std::string home_;
};

TEST_F(CredentialChainTest, ExplicitOptionsComeFirst) {
  Result<AwsCredentials> c =
      Resolve({.access_key_id = "AKIDEXPLICIT",
               .secret_access_key = std::string(kSecret),
               .session_token = "tok",
               .env = Env({{"AWS_ACCESS_KEY_ID", "AKIDENV"}, {"AWS_SECRET_ACCESS_KEY", "x"}})});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDEXPLICIT");
  EXPECT_EQ(c->session_token, "tok");
  EXPECT_FALSE(c->expiration.has_value());
  EXPECT_NE(c->source.find("storage options"), std::string::npos);
}

TEST_F(CredentialChainTest, ThenTheEnvironment) {
  WriteAws("credentials", "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = s\n");
  Result<AwsCredentials> c = Resolve({.env = Env({{"AWS_ACCESS_KEY_ID", "AKIDENV"},
                                                  {"AWS_SECRET_ACCESS_KEY", std::string(kSecret)},
                                                  {"AWS_SESSION_TOKEN", "envtoken"}})});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDENV");
  EXPECT_EQ(c->secret_access_key, kSecret);
  EXPECT_EQ(c->session_token, "envtoken");
  EXPECT_NE(c->source.find("environment"), std::string::npos);
  // Half a pair is a configuration error, not a reason to look further.
  c = Resolve({.env = Env({{"AWS_ACCESS_KEY_ID", "AKIDENV"}})});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("AWS_SECRET_ACCESS_KEY is not"), std::string::npos);
}

TEST_F(CredentialChainTest, ThenTheSharedFiles) {
  WriteAws("credentials",
           "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n"
           "[prod]\naws_access_key_id = AKIDPROD\naws_secret_access_key = s2\n"
           "aws_session_token = t2\n");
  WriteAws("config",
           "[profile other]\naws_access_key_id = AKIDOTHER\n"
           "aws_secret_access_key = s3\n[profile chained]\nrole_arn = arn:x\n"
           "source_profile = prod\n[profile regiononly]\nregion = eu-west-3\n");
  Result<AwsCredentials> c = Resolve({.env = Env()});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDDEFAULT");
  c = Resolve({.env = Env({{"AWS_PROFILE", "prod"}})});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "AKIDPROD");
  EXPECT_EQ(c->session_token, "t2");
  EXPECT_NE(c->source.find("profile 'prod'"), std::string::npos);
  c = Resolve({.profile = "other", .env = Env({{"AWS_PROFILE", "prod"}})});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "AKIDOTHER");
  // A profile named explicitly must exist.
  c = Resolve({.profile = "missing", .env = Env()});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("'missing'"), std::string::npos);
  // What the chain cannot do is said plainly.
  c = Resolve({.profile = "chained", .env = Env()});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(c.status().message().find("source_profile"), std::string::npos);
  // A profile without credentials lets the chain go on (here: to nothing).
  c = Resolve({.profile = "regiononly", .env = Env()});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("holds no credentials"), std::string::npos);
}

TEST_F(CredentialChainTest, NothingFoundNamesWhereItLooked) {
  Result<AwsCredentials> c = Resolve({.env = Env({{"AWS_SESSION_TOKEN", std::string(kSecret)}})});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  const std::string& m = c.status().message();
  for (const char* place :
       {"no AWS credentials found", "AWS_ACCESS_KEY_ID", "profile 'default'",
        "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS", "instance metadata disabled"}) {
    EXPECT_NE(m.find(place), std::string::npos) << place << " in " << m;
  }
  EXPECT_EQ(m.find(kSecret), std::string::npos);
}

TEST_F(CredentialChainTest, RefusesInconsistentExplicitOptions) {
  EXPECT_FALSE(MakeDefaultCredentialChain({.access_key_id = "AKID", .env = Env()}).ok());
  EXPECT_FALSE(MakeDefaultCredentialChain({.session_token = "t", .env = Env()}).ok());
  Result<AwsCredentials> c = Resolve({.env = Env({{"AWS_ROLE_ARN", "arn:aws:iam::1:role/r"}})});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("AWS_WEB_IDENTITY_TOKEN_FILE is not"), std::string::npos);
}

// A fetch in this process that hands out numbered credentials living `lifetime`, or fails while
// `failing` is set.
struct FakeSource {
  explicit FakeSource(milliseconds l) : lifetime(l) {}
  milliseconds lifetime;
  std::atomic<int> fetches{0};
  std::atomic<bool> failing{false};

  CredentialFetch Fetch() {
    return [this](http::Deadline) -> Result<AwsCredentials> {
      int n = ++fetches;
      if (failing.load()) {
        return NotFound("token endpoint said 404");
      }
      return AwsCredentials{.access_key_id = "ASIA" + std::to_string(n),
                            .secret_access_key = std::string(kSecret),
                            .session_token = "t",
                            .expiration = SystemClock::now() + lifetime};
    };
  }
};

TEST(RefreshingProviderTest, FetchesOnceWhileFresh) {
  FakeSource source(std::chrono::hours(1));
  auto provider = MakeRefreshingCredentialProvider("fake", source.Fetch());
  for (int i = 0; i < 100; ++i) {
    Result<AwsCredentials> c = provider->Get(Soon());
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->access_key_id, "ASIA1");
  }
  EXPECT_EQ(source.fetches.load(), 1);
  EXPECT_EQ(provider->Describe(), "fake");
}

TEST(RefreshingProviderTest, AFailedRefreshKeepsTheValidCredentialsThenRecovers) {
  FakeSource source(milliseconds(1200));
  auto provider = MakeRefreshingCredentialProvider(
      "fake", source.Fetch(), RefreshOptions{.retry_backoff = milliseconds(50)});
  ASSERT_TRUE(provider->Get(Soon()).ok());
  source.failing = true;
  // Until the credentials are too close to expiry, every Get answers with them, although
  // the background refreshes fail; then the failure surfaces, as Unavailable.
  int served_after_a_failed_refresh = 0;
  Result<AwsCredentials> c = provider->Get(Soon());
  while (c.ok()) {
    EXPECT_EQ(c->access_key_id, "ASIA1");
    EXPECT_GT(*c->expiration, SystemClock::now());
    if (source.fetches.load() >= 2) {
      ++served_after_a_failed_refresh;
    }
    std::this_thread::sleep_for(milliseconds(5));
    c = provider->Get(Soon());
  }
  EXPECT_GT(served_after_a_failed_refresh, 0);
  EXPECT_GE(source.fetches.load(), 3);  // the background retried after its backoff
  EXPECT_EQ(c.status().code(), StatusCode::kUnavailable) << c.status().ToString();
  EXPECT_NE(c.status().message().find("AWS credentials from fake"), std::string::npos);
  EXPECT_EQ(c.status().message().find(kSecret), std::string::npos);
  source.failing = false;
  c = provider->Get(Soon());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(c->access_key_id, "ASIA1");
}

TEST(RefreshingProviderTest, ConcurrentFirstCallsFetchOnce) {
  FakeSource source(std::chrono::hours(1));
  auto provider = MakeRefreshingCredentialProvider("fake", source.Fetch());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (provider->Get(Soon()).ok()) {
        ++ok;
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(source.fetches.load(), 1);
}

}  // namespace
}  // namespace ferry::storage::s3

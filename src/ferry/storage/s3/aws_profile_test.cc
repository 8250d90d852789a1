#include "ferry/storage/s3/aws_profile.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>

#include "ferry/base/file.h"
#include "ferry/storage/s3/env_lookup_for_test.h"

namespace ferry::storage::s3 {
namespace {

class AwsSharedFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-aws-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    home_ = tmpl;
    ASSERT_TRUE(CreateDirectories(home_ + "/.aws").ok());
  }
  void TearDown() override { std::filesystem::remove_all(home_); }
  void Write(const std::string& name, std::string_view text) {
    ASSERT_TRUE(WriteStringToFile(home_ + "/.aws/" + name, text, false).ok());
  }
  std::string home_;
};

TEST(AwsIniTest, ParsesSectionsCommentsAndSubKeys) {
  Result<IniSections> s = ParseAwsIni(
      "# comment\n"
      "[default]\n"
      "region = eu-west-1\r\n"
      "  ; indented comment\n"
      "s3 =\n"
      "  addressing_style = path\n"
      "  Endpoint_URL = http://127.0.0.1:9000\n"
      "Output=json\n"
      "\n"
      "[profile prod]\n"
      "aws_access_key_id = AKID = with equals\n",
      true, "config");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)["default"]["region"], "eu-west-1");
  EXPECT_EQ((*s)["default"]["s3.addressing_style"], "path");
  EXPECT_EQ((*s)["default"]["s3.endpoint_url"], "http://127.0.0.1:9000");
  EXPECT_EQ((*s)["default"]["output"], "json");
  EXPECT_EQ((*s)["prod"]["aws_access_key_id"], "AKID = with equals");
  // In the credentials file "profile " is part of the name.
  s = ParseAwsIni("[profile x]\nk = v\n", false, "credentials");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->count("profile x"), 1u);
}

TEST(AwsIniTest, NamesTheLineOfAnError) {
  Result<IniSections> s = ParseAwsIni("[default]\nregion = x\nnot a pair\n", true, "/h/config");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("/h/config:3"), std::string::npos);
  EXPECT_FALSE(ParseAwsIni("k = v\n", true, "c").ok());  // before any section
  EXPECT_FALSE(ParseAwsIni("[broken\n", true, "c").ok());
}

TEST_F(AwsSharedFilesTest, MergesBothFilesWithTheCredentialsFileWinning) {
  Write("config",
        "[default]\nregion = us-west-2\naws_access_key_id = FROMCONFIG\n"
        "[profile prod]\nregion = eu-central-1\n");
  Write("credentials", "[default]\naws_access_key_id = FROMCREDS\naws_secret_access_key = s\n");
  EnvLookup env = MapEnv({{"HOME", home_}});
  Result<std::optional<AwsProfile>> p = LoadAwsProfile(env, "default");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->Get("aws_access_key_id"), "FROMCREDS");
  EXPECT_EQ((*p)->Get("region"), "us-west-2");
  EXPECT_EQ((*p)->Get("missing"), "");
  p = LoadAwsProfile(env, "prod");
  ASSERT_TRUE(p.ok() && p->has_value());
  EXPECT_EQ((*p)->Get("region"), "eu-central-1");
  p = LoadAwsProfile(env, "nope");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
}

TEST_F(AwsSharedFilesTest, FileLocationsFollowTheEnvironment) {
  Write("elsewhere", "[default]\nregion = ap-south-1\n");
  EnvLookup env = MapEnv({{"HOME", "/nonexistent"},
                          {"AWS_CONFIG_FILE", home_ + "/.aws/elsewhere"},
                          {"AWS_SHARED_CREDENTIALS_FILE", home_ + "/.aws/none"}});
  AwsSharedFiles files = AwsSharedFilePaths(env);
  EXPECT_EQ(files.config, home_ + "/.aws/elsewhere");
  EXPECT_EQ(files.credentials, home_ + "/.aws/none");
  Result<std::optional<AwsProfile>> p = LoadAwsProfile(env, "default");
  ASSERT_TRUE(p.ok() && p->has_value());
  EXPECT_EQ(ResolveAwsRegion(env, "", *p), "ap-south-1");
  EXPECT_EQ(AwsSharedFilePaths(MapEnv({{"HOME", "/h"}})).credentials, "/h/.aws/credentials");
  EXPECT_EQ(AwsSharedFilePaths(MapEnv({})).config, "");
  // No files at all is not an error.
  p = LoadAwsProfile(MapEnv({{"HOME", "/nonexistent"}}), "default");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
}

TEST_F(AwsSharedFilesTest, AMalformedFileIsAnError) {
  Write("config", "[default]\nthis line is wrong\n");
  Result<std::optional<AwsProfile>> p = LoadAwsProfile(MapEnv({{"HOME", home_}}), "default");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(home_ + "/.aws/config:2"), std::string::npos);
}

TEST(AwsProfileTest, ProfileNameAndRegionPrecedence) {
  EXPECT_EQ(AwsProfileName(MapEnv({{"AWS_PROFILE", "p"}}), "explicit"), "explicit");
  EXPECT_EQ(AwsProfileName(MapEnv({{"AWS_PROFILE", "p"}}), ""), "p");
  EXPECT_EQ(AwsProfileName(MapEnv({{"AWS_PROFILE", ""}}), ""), "default");
  AwsProfile profile{.name = "default", .values = {{"region", "from-profile"}}};
  EnvLookup both = MapEnv({{"AWS_REGION", "r1"}, {"AWS_DEFAULT_REGION", "r2"}});
  EXPECT_EQ(ResolveAwsRegion(both, "explicit", profile), "explicit");
  EXPECT_EQ(ResolveAwsRegion(both, "", profile), "r1");
  EXPECT_EQ(ResolveAwsRegion(MapEnv({{"AWS_DEFAULT_REGION", "r2"}}), "", profile), "r2");
  EXPECT_EQ(ResolveAwsRegion(MapEnv({}), "", profile), "from-profile");
  EXPECT_EQ(ResolveAwsRegion(MapEnv({}), "", std::nullopt), "");
}

}  // namespace
}  // namespace ferry::storage::s3

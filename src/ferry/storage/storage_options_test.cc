// Storage options: delta-rs names and aliases, any case; unknown keys refused with a suggestion;
// precedence of the layers; the environment; secrets redacted.
#include "ferry/storage/storage_options.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

namespace ferry::storage {
namespace {

TEST(StorageOptionsTest, NamesAreCaseInsensitiveAndAliasesAreCanonical) {
  auto o = NormalizeStorageOptions({{"AWS_REGION", "eu-west-1"},
                                    {"endpoint", "http://127.0.0.1:7480"},
                                    {"Allow_Http", "true"},
                                    {"access_key_id", "AKIA"}},
                                   "test");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(*o, (StorageOptions{{"aws_region", "eu-west-1"},
                                {"aws_endpoint_url", "http://127.0.0.1:7480"},
                                {"aws_allow_http", "true"},
                                {"aws_access_key_id", "AKIA"}}));
}

TEST(StorageOptionsTest, UnknownAndDuplicateKeysAreRefused) {
  auto typo = NormalizeStorageOptions({{"aws_regoin", "x"}}, "ferry.toml:4: [storage]");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message(),
            "ferry.toml:4: [storage]: unknown storage option 'aws_regoin'; did you mean "
            "'aws_region'? (docs/storage.md lists them)");
  auto twice = NormalizeStorageOptions({{"region", "a"}, {"AWS_REGION", "b"}}, "flags");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos);
}

TEST(StorageOptionsTest, FlagsLayersAndEnvironment) {
  auto flag = ParseStorageOptionFlag("aws_endpoint_url=http://h:1/?a=b");
  ASSERT_TRUE(flag.ok());
  EXPECT_EQ(flag->second, "http://h:1/?a=b");
  EXPECT_FALSE(ParseStorageOptionFlag("novalue").ok());
  EXPECT_FALSE(ParseStorageOptionFlag("=x").ok());

  StorageOptions cli{{"aws_region", "cli"}};
  StorageOptions pipeline{{"aws_region", "pipeline"}, {"aws_allow_http", "true"}};
  StorageOptions global{{"aws_allow_http", "false"}, {"aws_endpoint_url", "global"}};
  std::map<std::string, std::string> vars{{"AWS_ENDPOINT_URL", "env"},
                                          {"AWS_DEFAULT_REGION", "env-default"},
                                          {"AWS_SECRET_ACCESS_KEY", "s3cr3t"},
                                          {"AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "true"}};
  StorageOptions env =
      StorageOptionsFromEnvironment([&](std::string_view name) -> std::optional<std::string> {
        auto it = vars.find(std::string(name));
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
      });
  // Credentials are left to the credential chain.
  EXPECT_EQ(env, (StorageOptions{{"aws_endpoint_url", "env"},
                                 {"aws_region", "env-default"},
                                 {"aws_virtual_hosted_style_request", "true"}}));
  StorageOptions merged = MergeStorageOptions({&cli, &pipeline, &global, &env});
  EXPECT_EQ(merged, (StorageOptions{{"aws_region", "cli"},
                                    {"aws_allow_http", "true"},
                                    {"aws_endpoint_url", "global"},
                                    {"aws_virtual_hosted_style_request", "true"}}));
}

// AZURE_* variables: the canonical names, and the aliases the AKS workload identity webhook sets.
TEST(StorageOptionsTest, AzureOptionsComeFromTheEnvironmentUnderTheirAksNames) {
  const std::map<std::string, std::string> vars = {
      {"AZURE_STORAGE_ACCOUNT_NAME", "lakeacct"},
      {"AZURE_STORAGE_ACCOUNT_KEY", "a2V5"},
      {"AZURE_CLIENT_ID", "client"},
      {"AZURE_TENANT_ID", "tenant"},
      {"AZURE_FEDERATED_TOKEN_FILE", "/var/run/secrets/azure/tokens/azure-identity-token"},
      {"AZURE_AUTHORITY_HOST", "https://login.microsoftonline.com/"},
      {"AZURE_STORAGE_USE_EMULATOR", "false"}};
  StorageOptions env =
      StorageOptionsFromEnvironment([&](std::string_view name) -> std::optional<std::string> {
        auto it = vars.find(std::string(name));
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
      });
  EXPECT_EQ(env["azure_storage_account_name"], "lakeacct");
  EXPECT_EQ(env["azure_storage_account_key"], "a2V5");
  EXPECT_EQ(env["azure_storage_client_id"], "client");
  EXPECT_EQ(env["azure_storage_tenant_id"], "tenant");
  EXPECT_EQ(env["azure_federated_token_file"],
            "/var/run/secrets/azure/tokens/azure-identity-token");
  EXPECT_EQ(env["azure_storage_authority_host"], "https://login.microsoftonline.com/");
  EXPECT_EQ(env["azure_storage_use_emulator"], "false");
  // The Azure secrets are redacted like AWS's.
  const std::string text = DescribeStorageOptions({{"azure_storage_account_key", "k3y"},
                                                   {"azure_storage_sas_key", "sig=s1g"},
                                                   {"azure_storage_client_secret", "cl13nt"},
                                                   {"azure_storage_token", "t0k"}});
  for (const char* secret : {"k3y", "s1g", "cl13nt", "t0k"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << text;
  }
}

// GOOGLE_* variables (as the object_store crate reads them) and STORAGE_EMULATOR_HOST;
// GOOGLE_APPLICATION_CREDENTIALS is left to the credential chain (it does not apply to an
// emulator, as in Google's clients).
TEST(StorageOptionsTest, GoogleOptionsByEveryNameAndFromTheEnvironment) {
  auto o = NormalizeStorageOptions({{"GOOGLE_SERVICE_ACCOUNT_PATH", "/k.json"},
                                    {"Service_Account_Key", "{}"},
                                    {"bucket_name", "lake"},
                                    {"Google_Application_Credentials", "/adc.json"},
                                    {"STORAGE_EMULATOR_HOST", "127.0.0.1:4443"},
                                    {"skip_signature", "false"}},
                                   "test");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(*o, (StorageOptions{{"google_service_account", "/k.json"},
                                {"google_service_account_key", "{}"},
                                {"google_bucket", "lake"},
                                {"google_application_credentials", "/adc.json"},
                                {"storage_emulator_host", "127.0.0.1:4443"},
                                {"google_skip_signature", "false"}}));
  const std::map<std::string, std::string> vars = {
      {"GOOGLE_SERVICE_ACCOUNT_PATH", "/var/secrets/key.json"},
      {"GOOGLE_SERVICE_ACCOUNT_KEY", "{\"private_key\":\"pk\"}"},
      {"GOOGLE_BUCKET", "lake"},
      {"GOOGLE_APPLICATION_CREDENTIALS", "/adc.json"},
      {"STORAGE_EMULATOR_HOST", "localhost:9023"}};
  StorageOptions env =
      StorageOptionsFromEnvironment([&](std::string_view name) -> std::optional<std::string> {
        auto it = vars.find(std::string(name));
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
      });
  EXPECT_EQ(env, (StorageOptions{{"google_service_account", "/var/secrets/key.json"},
                                 {"google_service_account_key", "{\"private_key\":\"pk\"}"},
                                 {"google_bucket", "lake"},
                                 {"storage_emulator_host", "localhost:9023"}}));
  const std::string text = DescribeStorageOptions(env);
  EXPECT_EQ(text.find("private_key"), std::string::npos) << text;
  EXPECT_NE(text.find("google_service_account_key=<redacted>"), std::string::npos) << text;
  EXPECT_TRUE(IsSecretStorageOption("SERVICE_ACCOUNT_KEY"));
  EXPECT_FALSE(IsSecretStorageOption("google_service_account"));
  EXPECT_FALSE(IsSecretStorageOption("google_application_credentials"));
}

TEST(StorageOptionsTest, BooleansAndRedaction) {
  StorageOptions o{{"aws_allow_http", "TRUE"},
                   {"aws_virtual_hosted_style_request", "maybe"},
                   {"aws_secret_access_key", "s3cr3t"},
                   {"aws_session_token", "t0ken"}};
  EXPECT_TRUE(*BoolOption(o, "aws_allow_http", false));
  EXPECT_FALSE(*BoolOption(o, "aws_s3_allow_unsafe_rename", false));
  EXPECT_FALSE(BoolOption(o, "aws_virtual_hosted_style_request", false).ok());
  const std::string text = DescribeStorageOptions(o);
  EXPECT_EQ(text.find("s3cr3t"), std::string::npos) << text;
  EXPECT_EQ(text.find("t0ken"), std::string::npos) << text;
  EXPECT_NE(text.find("aws_secret_access_key=<redacted>"), std::string::npos) << text;
  EXPECT_TRUE(IsSecretStorageOption("AWS_SECRET_ACCESS_KEY"));
  EXPECT_TRUE(IsSecretStorageOption("token"));
  EXPECT_FALSE(IsSecretStorageOption("aws_region"));
}

// docs/storage.md documents every option with its aliases (the table users read).
TEST(StorageOptionsTest, EveryOptionIsDocumented) {
  std::ifstream in(std::string(FERRY_SOURCE_DIR) + "/docs/storage.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  ASSERT_FALSE(doc.empty());
  for (const StorageOptionSpec& spec : KnownStorageOptions()) {
    const size_t row = doc.find("| `" + std::string(spec.name) + "` |");
    ASSERT_NE(row, std::string::npos) << spec.name << " is not in docs/storage.md";
    const std::string line = doc.substr(row, doc.find('\n', row) - row);
    for (std::string_view alias : spec.aliases) {
      EXPECT_NE(line.find("`" + std::string(alias) + "`"), std::string::npos)
          << spec.name << ": alias " << alias << " is not in its docs/storage.md row";
    }
  }
}

}  // namespace
}  // namespace ferry::storage

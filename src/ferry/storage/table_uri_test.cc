// Table locations: local paths and file:// URIs, s3://, Azure's and gs:// are served; every other
// scheme is refused with its name and the list of supported ones (never taken for a relative
// local directory).
#include "ferry/storage/table_uri.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <tuple>

#include "ferry/storage/store_factory.h"

namespace ferry::storage {
namespace {

TEST(TableUriTest, PlainPathsAreLocal) {
  for (const auto& [text, path] : std::vector<std::pair<std::string, std::string>>{
           {"/data/delta/events", "/data/delta/events"},
           {"/data/delta/events/", "/data/delta/events"},
           {"events", "events"},
           {"./a:b", "./a:b"},
           {"/", "/"}}) {
    auto uri = ParseTableUri(text);
    ASSERT_TRUE(uri.ok()) << text << ": " << uri.status().ToString();
    EXPECT_EQ(uri->kind, StoreKind::kLocal) << text;
    EXPECT_EQ(uri->scheme, "") << text;
    EXPECT_EQ(uri->path, path) << text;
  }
}

TEST(TableUriTest, FileUrisAreLocal) {
  for (const auto& [text, path] : std::vector<std::pair<std::string, std::string>>{
           {"file:///data/events", "/data/events"},
           {"FILE:///data/events/", "/data/events"},
           {"file://localhost/data/events", "/data/events"},
           {"file:/data/events", "/data/events"}}) {
    auto uri = ParseTableUri(text);
    ASSERT_TRUE(uri.ok()) << text << ": " << uri.status().ToString();
    EXPECT_EQ(uri->scheme, "file") << text;
    EXPECT_EQ(uri->path, path) << text;
  }
  EXPECT_FALSE(ParseTableUri("file://otherhost/data").ok());
  EXPECT_FALSE(ParseTableUri("file:relative").ok());
}

TEST(TableUriTest, UnsupportedSchemesAreRefusedByName) {
  for (const char* text :
       {"hdfs://nn:8020/events", "wasbs://c@a.blob.core.windows.net/t", "ftp://h/t", "events:"}) {
    auto uri = ParseTableUri(text, "dead_letter_table");
    ASSERT_FALSE(uri.ok()) << text;
    const std::string message = uri.status().message();
    EXPECT_EQ(uri.status().code(), StatusCode::kInvalidArgument) << message;
    EXPECT_NE(message.find("dead_letter_table"), std::string::npos) << message;
    EXPECT_NE(message.find(text), std::string::npos) << message;
    EXPECT_NE(message.find("supported: " + SupportedTableSchemes()), std::string::npos) << message;
  }
  auto hdfs = ParseTableUri("hdfs://nn/events");
  EXPECT_NE(hdfs.status().message().find("scheme 'hdfs'"), std::string::npos)
      << hdfs.status().message();
  EXPECT_FALSE(ParseTableUri("").ok());
}

TEST(TableUriTest, S3UrisNameABucketAndAPrefix) {
  for (const auto& [text, bucket, prefix] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"s3://lake/raw/events", "lake", "raw/events"},
           {"s3a://lake/raw/events/", "lake", "raw/events"},
           {"S3://my.lake-1", "my.lake-1", ""},
       }) {
    auto uri = ParseTableUri(text);
    ASSERT_TRUE(uri.ok()) << text << ": " << uri.status().ToString();
    EXPECT_EQ(uri->kind, StoreKind::kS3) << text;
    EXPECT_EQ(uri->bucket, bucket) << text;
    EXPECT_EQ(uri->key_prefix, prefix) << text;
  }
  EXPECT_EQ(ParseTableUri("s3a://lake/raw/events/")->Canonical(), "s3://lake/raw/events");
  EXPECT_EQ(ParseTableUri("/data/t/")->Canonical(), "/data/t");
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"s3:/x", "an s3 URI is s3://BUCKET/PREFIX"},
           {"S3:/x", "an s3 URI is s3://BUCKET/PREFIX"},
           {"s3://Lake/t", "'Lake' is not a bucket name"},
           {"s3://ab/t", "'ab' is not a bucket name"},
           {"s3://lake//t", "has an empty, '.' or '..' segment"},
           {"s3://lake/a/../t", "has an empty, '.' or '..' segment"},
       }) {
    auto uri = ParseTableUri(text);
    ASSERT_FALSE(uri.ok()) << text;
    EXPECT_NE(uri.status().message().find(message), std::string::npos) << uri.status().message();
  }
}

TEST(TableUriTest, GcsUrisNameABucketAndAPrefix) {
  for (const auto& [text, bucket, prefix] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"gs://lake/raw/events", "lake", "raw/events"},
           {"GS://lake/raw/events/", "lake", "raw/events"},
           {"gs://my_lake-1.example.com", "my_lake-1.example.com", ""},
       }) {
    auto uri = ParseTableUri(text);
    ASSERT_TRUE(uri.ok()) << text << ": " << uri.status().ToString();
    EXPECT_EQ(uri->kind, StoreKind::kGcs) << text;
    EXPECT_EQ(uri->scheme, "gs") << text;
    EXPECT_EQ(uri->bucket, bucket) << text;
    EXPECT_EQ(uri->key_prefix, prefix) << text;
  }
  EXPECT_EQ(ParseTableUri("gs://lake/raw/events/")->Canonical(), "gs://lake/raw/events");
  EXPECT_EQ(SiblingLocation("gs://lake/raw/events/", "_dead_letter"),
            "gs://lake/raw/events_dead_letter");
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"gs:/x", "a gs URI is gs://BUCKET/PREFIX"},
           {"gs://Lake/t", "'Lake' is not a bucket name"},
           {"gs://ab/t", "'ab' is not a bucket name"},
           {"gs://-lake/t", "'-lake' is not a bucket name"},
           {"gs://" + std::string(64, 'a') + "/t", "is not a bucket name"},
           {"gs://lake//t", "has an empty, '.' or '..' segment"},
           {"gs://lake/a/../t", "has an empty, '.' or '..' segment"},
       }) {
    auto uri = ParseTableUri(text, "dead_letter_table");
    ASSERT_FALSE(uri.ok()) << text;
    EXPECT_EQ(uri.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(uri.status().message().find(message), std::string::npos) << uri.status().message();
    EXPECT_NE(uri.status().message().find("dead_letter_table"), std::string::npos);
  }
}

// A gs:// table is opened without a request: on an emulator anonymously, otherwise only with
// credentials; what cannot work is refused naming the table and what is missing.
TEST(StoreFactoryTest, GcsLocationsOpenOnAnEmulatorOrAskForCredentials) {
  auto gs = ParseTableUri("gs://lake/raw/t");
  ASSERT_TRUE(gs.ok());
  for (const char* host : {"127.0.0.1:4443", "http://127.0.0.1:4443/"}) {
    auto store = OpenTableStore(*gs, {{"storage_emulator_host", host}}, OpenMode::kExisting);
    ASSERT_TRUE(store.ok()) << host << ": " << store.status().ToString();
    EXPECT_EQ((*store)->Describe("_delta_log/0.json"), "gs://lake/raw/t/_delta_log/0.json");
  }
  EXPECT_TRUE(OpenTableStore(*gs, {{"google_skip_signature", "true"}}, OpenMode::kExisting).ok());
  auto none = OpenTableStore(*gs, {}, OpenMode::kExisting);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  for (const char* part :
       {"table gs://lake/raw/t: no Google credentials found", "google_service_account",
        "google_service_account_key", "google_application_credentials",
        "GOOGLE_APPLICATION_CREDENTIALS", "metadata server", "STORAGE_EMULATOR_HOST"}) {
    EXPECT_NE(none.status().message().find(part), std::string::npos)
        << part << " / " << none.status().ToString();
  }
  auto conflict =
      OpenTableStore(*gs, {{"google_bucket", "other"}, {"storage_emulator_host", "127.0.0.1:1"}},
                     OpenMode::kExisting);
  ASSERT_FALSE(conflict.ok());
  EXPECT_NE(
      conflict.status().message().find("names the bucket 'lake' but google_bucket is 'other'"),
      std::string::npos)
      << conflict.status().ToString();
  auto secret = OpenTableStore(
      *gs, {{"google_service_account_key", "{\"private_key\":\"s3cr3t\"}"}}, OpenMode::kExisting);
  ASSERT_FALSE(secret.ok());
  EXPECT_EQ(secret.status().message().find("s3cr3t"), std::string::npos)
      << secret.status().ToString();
  EXPECT_NE(secret.status().message().find("gs://lake/raw/t"), std::string::npos);
}

TEST(TableUriTest, AzureUrisNameAContainerAPrefixAndMaybeTheAccount) {
  for (const auto& [text, container, prefix, account, host] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string, std::string>>{
           {"az://lake/raw/events", "lake", "raw/events", "", ""},
           {"azure://lake/raw/events/", "lake", "raw/events", "", ""},
           {"abfss://lake@acct1.dfs.core.windows.net/raw/events", "lake", "raw/events", "acct1",
            "acct1.blob.core.windows.net"},
           {"abfs://lake@Acct1.blob.core.windows.net", "lake", "", "acct1",
            "acct1.blob.core.windows.net"},
           {"az://lake@acct1.dfs.core.chinacloudapi.cn/t", "lake", "t", "acct1",
            "acct1.blob.core.chinacloudapi.cn"},
           {"https://acct1.blob.core.windows.net/lake/raw/events", "lake", "raw/events", "acct1",
            "acct1.blob.core.windows.net"},
           {"https://acct1.dfs.core.windows.net/lake", "lake", "", "acct1",
            "acct1.blob.core.windows.net"},
       }) {
    auto uri = ParseTableUri(text);
    ASSERT_TRUE(uri.ok()) << text << ": " << uri.status().ToString();
    EXPECT_EQ(uri->kind, StoreKind::kAzure) << text;
    EXPECT_EQ(uri->bucket, container) << text;
    EXPECT_EQ(uri->key_prefix, prefix) << text;
    EXPECT_EQ(uri->account, account) << text;
    EXPECT_EQ(uri->host, host) << text;
  }
  // One table, however it is spelled.
  const std::string canonical = "https://acct1.blob.core.windows.net/lake/raw/events";
  for (const char* text : {"abfss://lake@acct1.dfs.core.windows.net/raw/events/",
                           "abfs://lake@acct1.blob.core.windows.net/raw/events",
                           "https://acct1.dfs.core.windows.net/lake/raw/events"}) {
    EXPECT_EQ(ParseTableUri(text)->Canonical(), canonical) << text;
  }
  EXPECT_EQ(ParseTableUri("azure://lake/t/")->Canonical(), "az://lake/t");
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"az:/x", "an az URI is az://CONTAINER/PREFIX"},
           {"az://Lake/t", "'Lake' is not a container name"},
           {"az://a--b/t", "'a--b' is not a container name"},
           {"az://lake//t", "has an empty, '.' or '..' segment"},
           {"abfss://lake@acct1.example.com/t", "'acct1.example.com' is not an Azure storage host"},
           {"abfss://lake@a.dfs.core.windows.net/t", "is not an Azure storage host"},
           {"https://example.com/lake/t", "'example.com' is not an Azure storage host"},
       }) {
    auto uri = ParseTableUri(text, "table");
    ASSERT_FALSE(uri.ok()) << text;
    EXPECT_EQ(uri.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(uri.status().message().find(message), std::string::npos) << uri.status().message();
    EXPECT_NE(uri.status().message().find(text), std::string::npos) << uri.status().message();
  }
}

// A misconfigured Azure location is refused before any request, naming what is missing or wrong.
TEST(StoreFactoryTest, AzureLocationsThatCannotWorkAreRefusedByName) {
  auto az = ParseTableUri("az://lake/t");
  ASSERT_TRUE(az.ok());
  for (const auto& [options, message] : std::vector<std::pair<StorageOptions, std::string>>{
           {{}, "table az://lake/t: no storage account; set azure_storage_account_name"},
           {{{"azure_storage_account_name", "acct1"},
             {"azure_storage_endpoint", "http://10.0.0.1:10000/acct1"}},
            "azure_storage_endpoint = http://10.0.0.1:10000/acct1 is plain http"},
           {{{"azure_storage_account_name", "acct1"}},
            "no Azure credentials found for account 'acct1'"},
           {{{"azure_storage_account_name", "acct1"},
             {"azure_storage_account_key", "a2V5"},
             {"upload_part_size", "1KiB"}},
            "upload_part_size 1024 is outside"},
           {{{"azure_storage_account_name", "acct1"}, {"azure_federated_token_file", "/t"}},
            "azure_federated_token_file (AZURE_FEDERATED_TOKEN_FILE) is set without "
            "azure_client_id"},
           {{{"azure_storage_use_emulator", "maybe"}}, "azure_storage_use_emulator"},
       }) {
    auto store = OpenTableStore(*az, options, OpenMode::kExisting);
    ASSERT_FALSE(store.ok()) << message;
    EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument) << store.status().ToString();
    EXPECT_NE(store.status().message().find(message), std::string::npos)
        << message << " / " << store.status().ToString();
  }
  auto named = ParseTableUri("abfss://lake@acct1.dfs.core.windows.net/t");
  ASSERT_TRUE(named.ok());
  auto conflict =
      OpenTableStore(*named, {{"azure_storage_account_name", "acct2"}}, OpenMode::kExisting);
  ASSERT_FALSE(conflict.ok());
  EXPECT_NE(conflict.status().message().find("names the storage account 'acct1' but "
                                             "azure_storage_account_name is 'acct2'"),
            std::string::npos)
      << conflict.status().ToString();
}

TEST(TableUriTest, SiblingLocation) {
  EXPECT_EQ(SiblingLocation("/data/events", "_dead_letter"), "/data/events_dead_letter");
  EXPECT_EQ(SiblingLocation("/data/events//", "_dead_letter"), "/data/events_dead_letter");
}

TEST(StoreFactoryTest, LocalStoreIsRootedAtTheTable) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("ferry-store-factory-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto uri = ParseTableUri("file://" + (dir / "t").string());
  ASSERT_TRUE(uri.ok());
  auto missing = OpenTableStore(*uri, {}, OpenMode::kExisting);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto store = OpenTableStore(*uri, {}, OpenMode::kCreate);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Put("_delta_log/x.json", "{}").ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "t" / "_delta_log" / "x.json"));
  EXPECT_TRUE(OpenTableStore(*uri, {}, OpenMode::kExisting).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ferry::storage

// Table locations: local paths and file:// URIs are served; every other scheme is refused with
// its name and the list of supported ones (never taken for a relative local directory).
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
  for (const char* text : {"gs://bucket/events", "hdfs://nn:8020/events",
                           "abfss://c@a.dfs.core.windows.net/t", "ftp://h/t", "events:"}) {
    auto uri = ParseTableUri(text, "dead_letter_table");
    ASSERT_FALSE(uri.ok()) << text;
    const std::string message = uri.status().message();
    EXPECT_EQ(uri.status().code(), StatusCode::kInvalidArgument) << message;
    EXPECT_NE(message.find("dead_letter_table"), std::string::npos) << message;
    EXPECT_NE(message.find(text), std::string::npos) << message;
    EXPECT_NE(message.find("supported: " + SupportedTableSchemes()), std::string::npos) << message;
  }
  auto gs = ParseTableUri("gs://bucket/events");
  EXPECT_NE(gs.status().message().find("scheme 'gs'"), std::string::npos) << gs.status().message();
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

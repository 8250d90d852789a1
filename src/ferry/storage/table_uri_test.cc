// Table locations: local paths and file:// URIs are served; every other scheme is refused with
// its name and the list of supported ones (never taken for a relative local directory).
#include "ferry/storage/table_uri.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

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
  for (const char* text : {"gs://bucket/events", "hdfs://nn:8020/events", "S3:/x", "s3:/x",
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

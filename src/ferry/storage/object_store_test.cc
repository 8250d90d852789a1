// The ObjectStore conformance suite (testing/object_store_suite.h) for the local stores, and
// LocalStore's own tests (temporary files, failpoints in the write path).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "ferry/base/failpoint.h"
#include "ferry/base/file.h"
#include "ferry/storage/local_store.h"
#include "ferry/testing/object_store_suite.h"
#include "ferry/testing/test_store.h"

namespace ferry::testing {

INSTANTIATE_TEST_SUITE_P(AllStores, ObjectStoreTest, ::testing::ValuesIn(LocalStoreFactories()),
                         [](const auto& p) { return StoreFactoryName(p.param); });

}  // namespace ferry::testing

namespace ferry::storage {
namespace {

std::string MakeTempDir() {
  char tmpl[] = "/tmp/ferry-store-XXXXXX";
  char* dir = ::mkdtemp(tmpl);
  EXPECT_NE(dir, nullptr);
  return dir == nullptr ? std::string() : std::string(dir);
}

// --- LocalStore specifics ---------------------------------------------------------------------

class LocalStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    auto store = LocalStore::Create(dir_);
    ASSERT_TRUE(store.ok());
    store_ = std::move(store).value();
  }
  void TearDown() override {
    failpoint::DisarmAll();
    std::filesystem::remove_all(dir_);
  }
  std::vector<std::string> Entries(const std::string& rel) {
    auto names = ListDirectory(dir_ + "/" + rel);
    return names.ok() ? *names : std::vector<std::string>{};
  }
  std::string dir_;
  std::unique_ptr<LocalStore> store_;
};

TEST_F(LocalStoreTest, RootMustExist) {
  EXPECT_EQ(LocalStore::Create(dir_ + "/missing").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Describe("a/b"), dir_ + "/a/b");
}

TEST_F(LocalStoreTest, ListHidesTemporaryFiles) {
  ASSERT_TRUE(CreateDirectories(dir_ + "/t").ok());
  ASSERT_TRUE(WriteStringToFile(dir_ + "/t/.ferry-tmp-0123-x.json", "torn", false).ok());
  ASSERT_TRUE(store_->Put("t/y.json", "y").ok());
  auto list = store_->List("t/");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].key, "t/y.json");
}

// An error before the link leaves nothing; after the link the object exists even though the
// caller saw an error (the ambiguous outcome the Delta commit must resolve by reading back).
TEST_F(LocalStoreTest, FailpointsAroundLink) {
  for (const char* fp :
       {"storage.local.before_fsync", "storage.local.after_fsync", "storage.local.before_link"}) {
    ASSERT_TRUE(failpoint::Arm(fp, "error(EIO)@1").ok());
    std::string key = fmt::format("log/{}.json", fp);
    EXPECT_EQ(store_->PutIfAbsent(key, "x").code(), StatusCode::kIOError) << fp;
    EXPECT_EQ(store_->Stat(key).status().code(), StatusCode::kNotFound) << fp;
    failpoint::DisarmAll();
  }
  ASSERT_TRUE(failpoint::Arm("storage.local.after_link", "error(EIO)@1").ok());
  EXPECT_EQ(store_->PutIfAbsent("log/after.json", "x").code(), StatusCode::kIOError);
  EXPECT_EQ(*store_->Read("log/after.json"), "x");
  EXPECT_EQ(Entries("log"), std::vector<std::string>{"after.json"}) << "temp file left";
}

TEST_F(LocalStoreTest, FailpointsAroundRename) {
  ASSERT_TRUE(failpoint::Arm("storage.local.before_rename", "error(EIO)@1").ok());
  auto writer = store_->OpenAtomicWriter("d/f.parquet");
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append("abc").ok());
  EXPECT_EQ((*writer)->Close().code(), StatusCode::kIOError);
  EXPECT_TRUE(Entries("d").empty());
  ASSERT_TRUE(failpoint::Arm("storage.local.after_rename", "error(EIO)@1").ok());
  EXPECT_EQ(store_->Put("d/g", "g").code(), StatusCode::kIOError);
  EXPECT_EQ(*store_->Read("d/g"), "g");
}

}  // namespace
}  // namespace ferry::storage

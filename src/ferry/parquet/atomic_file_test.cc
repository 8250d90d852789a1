#include "ferry/parquet/atomic_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "ferry/base/failpoint.h"
#include "ferry/base/file.h"

namespace ferry::parquet {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-atomic-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    failpoint::DisarmAll();
    std::filesystem::remove_all(dir_);
  }
  size_t Entries() {
    auto names = ListDirectory(dir_);
    return names.ok() ? names->size() : 0;
  }
  std::string dir_;
};

TEST_F(AtomicFileTest, AppearsOnlyOnClose) {
  std::string path = dir_ + "/a.parquet";
  auto f = AtomicFileOutputStream::Create(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE((*f)->Append("hello ").ok());
  ASSERT_TRUE((*f)->Append("world").ok());
  EXPECT_EQ((*f)->Tell(), 11u);
  EXPECT_FALSE(FileExists(path));
  EXPECT_TRUE(FileExists((*f)->temp_path()));
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(*ReadFileToString(path), "hello world");
  EXPECT_FALSE(FileExists((*f)->temp_path()));
  f->reset();
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(AtomicFileTest, AbandonedWriteLeavesNothing) {
  std::string path = dir_ + "/b.parquet";
  {
    auto f = AtomicFileOutputStream::Create(path);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("partial").ok());
  }
  EXPECT_FALSE(FileExists(path));
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(AtomicFileTest, FailureBeforeRenameLeavesNothing) {
  std::string path = dir_ + "/c.parquet";
  ASSERT_TRUE(failpoint::Arm("parquet.atomic_file.before_rename", "error(EIO)").ok());
  {
    auto f = AtomicFileOutputStream::Create(path);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("data").ok());
    Status s = (*f)->Close();
#ifdef FERRY_FAILPOINTS_ENABLED
    EXPECT_FALSE(s.ok());
#else
    EXPECT_TRUE(s.ok());
#endif
  }
#ifdef FERRY_FAILPOINTS_ENABLED
  EXPECT_FALSE(FileExists(path));
  EXPECT_EQ(Entries(), 0u);
#endif
}

TEST_F(AtomicFileTest, ReplacesAnExistingFile) {
  std::string path = dir_ + "/d.parquet";
  ASSERT_TRUE(WriteStringToFile(path, "old", false).ok());
  auto f = AtomicFileOutputStream::Create(path);
  ASSERT_TRUE((*f)->Append("new").ok());
  EXPECT_EQ(*ReadFileToString(path), "old");
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(*ReadFileToString(path), "new");
}

TEST_F(AtomicFileTest, MissingDirectoryIsNotFound) {
  auto f = AtomicFileOutputStream::Create(dir_ + "/no/such/dir/x.parquet");
  EXPECT_EQ(f.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ferry::parquet

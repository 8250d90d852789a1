#include "ferry/base/file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

namespace ferry {
namespace {

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-file-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(FileTest, WriteSyncReadBack) {
  std::string path = dir_ + "/a.bin";
  std::string big(200000, 'x');
  big[12345] = 'y';
  ASSERT_TRUE(WriteStringToFile(path, big, /*sync=*/true).ok());
  auto back = ReadFileToString(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, big);

  auto file = LocalRandomAccessFile::Open(path);
  ASSERT_TRUE(file.ok());
  std::string part;
  ASSERT_TRUE((*file)->ReadAt(12340, 10, &part).ok());
  EXPECT_EQ(part, "xxxxxyxxxx");
  Status past = (*file)->ReadAt(199995, 10, &part);
  EXPECT_EQ(past.code(), StatusCode::kDataLoss);
  EXPECT_NE(past.message().find(path), std::string::npos);
}

// ReadInto reads the same bytes as ReadAt into the caller's memory, for a local file (pread) and
// through the default (ReadAt and a copy); past the end is DataLoss naming the file, whatever
// the length asked (nothing is allocated for it).
TEST_F(FileTest, ReadIntoReadsWhatReadAtReads) {
  std::string path = dir_ + "/b.bin";
  std::string bytes;
  for (int i = 0; i < 100000; i++) {
    bytes.push_back(static_cast<char>('a' + i % 26));
  }
  ASSERT_TRUE(WriteStringToFile(path, bytes, /*sync=*/false).ok());
  auto local = LocalRandomAccessFile::Open(path);
  ASSERT_TRUE(local.ok());
  StringRandomAccessFile memory(bytes, "mem.bin");
  for (const RandomAccessFile* file : {static_cast<const RandomAccessFile*>(local->get()),
                                       static_cast<const RandomAccessFile*>(&memory)}) {
    SCOPED_TRACE(file->name());
    std::string out(70000, '\0');
    ASSERT_TRUE(file->ReadInto(30000, 70000, out.data()).ok());
    EXPECT_TRUE(out == bytes.substr(30000));
    ASSERT_TRUE(file->ReadInto(100000, 0, out.data()).ok());
    Status past = file->ReadInto(99990, uint64_t{1} << 62, out.data());
    EXPECT_EQ(past.code(), StatusCode::kDataLoss) << past.ToString();
    EXPECT_NE(past.message().find(file->name()), std::string::npos) << past.ToString();
  }
}

// Appends below the buffer size are buffered, larger ones written from the caller's bytes; the
// file holds them in order and Tell() counts both.
TEST_F(FileTest, SmallAndLargeAppendsKeepTheirOrder) {
  std::string path = dir_ + "/mixed.bin";
  auto file = LocalWritableFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  std::string expected;
  for (size_t size : {10, 100000, 3, 65536, 65537, 7, 300000, 1}) {
    std::string part(size, static_cast<char>('a' + expected.size() % 26));
    ASSERT_TRUE((*file)->Append(part).ok());
    expected += part;
    EXPECT_EQ((*file)->Tell(), expected.size());
  }
  ASSERT_TRUE((*file)->Close().ok());
  auto back = ReadFileToString(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == expected);
}

// With early writeback (WriteBackEvery) the file holds the same bytes, in order, through small
// and large appends, and Sync() succeeds.
TEST_F(FileTest, WriteBackEveryKeepsTheBytes) {
  std::string path = dir_ + "/writeback.bin";
  auto file = LocalWritableFile::Create(path, /*exclusive=*/true);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  (*file)->WriteBackEvery(100000);
  std::string expected;
  for (size_t size : {10, 300000, 3, 65536, 70000, 7, 1 << 20, 1}) {
    std::string part(size, static_cast<char>('a' + expected.size() % 26));
    ASSERT_TRUE((*file)->Append(part).ok());
    expected += part;
  }
  ASSERT_TRUE((*file)->Sync().ok());
  EXPECT_EQ((*file)->Tell(), expected.size());
  ASSERT_TRUE((*file)->Close().ok());
  auto back = ReadFileToString(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == expected);
}

// A failed write names the file; what it could not write is kept and counted by Tell().
TEST_F(FileTest, AFailedLargeWriteNamesTheFile) {
  auto file = LocalWritableFile::Create("/dev/full");
  if (!file.ok()) {
    GTEST_SKIP() << "SKIPPED LOUDLY: /dev/full cannot be opened here: " << file.status().ToString();
  }
  Status st = (*file)->Append(std::string(100000, 'x'));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/dev/full"), std::string::npos) << st.ToString();
  EXPECT_EQ((*file)->Tell(), 100000u);
}

TEST_F(FileTest, ExclusiveCreateRefusesExisting) {
  std::string path = dir_ + "/x";
  ASSERT_TRUE(WriteStringToFile(path, "1", false).ok());
  auto again = LocalWritableFile::Create(path, /*exclusive=*/true);
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
}

TEST_F(FileTest, DirectoriesAndListing) {
  ASSERT_TRUE(CreateDirectories(dir_ + "/a/b/c").ok());
  ASSERT_TRUE(CreateDirectories(dir_ + "/a/b/c").ok());
  ASSERT_TRUE(WriteStringToFile(dir_ + "/a/f", "", false).ok());
  auto names = ListDirectory(dir_ + "/a");
  ASSERT_TRUE(names.ok());
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"b", "f"}));
  EXPECT_TRUE(SyncDirectory(dir_ + "/a").ok());
  EXPECT_EQ(ListDirectory(dir_ + "/none").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadFileToString(dir_ + "/none").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ferry

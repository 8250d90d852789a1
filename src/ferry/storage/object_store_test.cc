// The ObjectStore conformance suite: every implementation runs the same tests (CONVENTIONS.md).
// Local-store specifics (temporary files, failpoints in the write path) follow at the end.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include "ferry/base/failpoint.h"
#include "ferry/base/file.h"
#include "ferry/storage/local_store.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/fault_injecting_store.h"

namespace ferry::storage {
namespace {

// A store plus whatever must outlive it (a temporary directory).
struct StoreFixture {
  std::shared_ptr<ObjectStore> store;
  std::string dir;  // removed at the end when not empty
};

struct StoreFactory {
  std::string name;
  std::function<StoreFixture()> make;
};

std::string MakeTempDir() {
  char tmpl[] = "/tmp/ferry-store-XXXXXX";
  char* dir = ::mkdtemp(tmpl);
  EXPECT_NE(dir, nullptr);
  return dir == nullptr ? std::string() : std::string(dir);
}

StoreFixture MakeLocal(bool sync) {
  std::string dir = MakeTempDir();
  auto store = LocalStore::Create(dir, LocalStoreOptions{.sync = sync});
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return StoreFixture{std::shared_ptr<ObjectStore>(std::move(store).value()), dir};
}

std::vector<StoreFactory> Factories() {
  return {
      {"Memory",
       [] {
         return StoreFixture{std::make_shared<InMemoryStore>(), ""};
       }},
      {"Local", [] { return MakeLocal(true); }},
      {"LocalNoSync", [] { return MakeLocal(false); }},
      {"FaultInjecting",
       [] {
         return StoreFixture{
             std::make_shared<testing::FaultInjectingStore>(std::make_shared<InMemoryStore>()), ""};
       }},
  };
}

class ObjectStoreTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override {
    fixture_ = GetParam().make();
    store_ = fixture_.store.get();
  }
  void TearDown() override {
    fixture_.store.reset();
    if (!fixture_.dir.empty()) {
      std::filesystem::remove_all(fixture_.dir);
    }
  }
  std::vector<std::string> Keys(std::string_view prefix, bool recursive = false,
                                std::string start_after = "") {
    ListOptions options;
    options.recursive = recursive;
    options.start_after = std::move(start_after);
    auto list = store_->List(prefix, options);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    std::vector<std::string> keys;
    if (list.ok()) {
      for (const auto& info : *list) {
        keys.push_back(info.key);
      }
    }
    return keys;
  }

  StoreFixture fixture_;
  ObjectStore* store_ = nullptr;
};

TEST_P(ObjectStoreTest, PutThenReadWholeAndRange) {
  ASSERT_TRUE(store_->Put("t/a.json", "hello world").ok());
  auto whole = store_->Read("t/a.json");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, "hello world");
  auto range = store_->ReadRange("t/a.json", 6, 5);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(*range, "world");
  auto past = store_->ReadRange("t/a.json", 8, 5);
  EXPECT_EQ(past.status().code(), StatusCode::kDataLoss);
  auto info = store_->Stat("t/a.json");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, 11u);
  EXPECT_EQ(info->key, "t/a.json");
  EXPECT_GT(info->modification_time_ms, 0);
}

TEST_P(ObjectStoreTest, EmptyObject) {
  ASSERT_TRUE(store_->PutIfAbsent("empty", "").ok());
  auto data = store_->Read("empty");
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(*data, "");
  EXPECT_EQ(store_->Stat("empty")->size, 0u);
}

TEST_P(ObjectStoreTest, MissingObjectIsNotFound) {
  EXPECT_EQ(store_->Read("nope/x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Stat("nope/x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->OpenForRead("x").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Keys("nope/").empty());
}

TEST_P(ObjectStoreTest, PutReplaces) {
  ASSERT_TRUE(store_->Put("k", "one").ok());
  ASSERT_TRUE(store_->Put("k", "two!").ok());
  EXPECT_EQ(*store_->Read("k"), "two!");
}

TEST_P(ObjectStoreTest, PutIfAbsentKeepsTheFirst) {
  ASSERT_TRUE(store_->PutIfAbsent("log/0.json", "first").ok());
  Status second = store_->PutIfAbsent("log/0.json", "second");
  EXPECT_EQ(second.code(), StatusCode::kAlreadyExists) << second.ToString();
  EXPECT_EQ(*store_->Read("log/0.json"), "first");
}

TEST_P(ObjectStoreTest, OpenFileSurvivesReplaceAndDelete) {
  ASSERT_TRUE(store_->Put("k", "old bytes").ok());
  auto file = store_->OpenForRead("k");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(store_->Put("k", "new").ok());
  ASSERT_TRUE(store_->Delete("k").ok());
  std::string out;
  ASSERT_TRUE((*file)->ReadAt(0, 9, &out).ok());
  EXPECT_EQ(out, "old bytes");
}

TEST_P(ObjectStoreTest, DeleteIsIdempotent) {
  ASSERT_TRUE(store_->Put("d/x", "1").ok());
  ASSERT_TRUE(store_->Delete("d/x").ok());
  EXPECT_EQ(store_->Stat("d/x").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->Delete("d/x").ok());
  EXPECT_TRUE(store_->Delete("never/was").ok());
}

TEST_P(ObjectStoreTest, ListIsSortedAndFiltersByPrefix) {
  for (const char* key :
       {"t/_delta_log/00000000000000000002.json", "t/_delta_log/00000000000000000000.json",
        "t/_delta_log/_last_checkpoint", "t/_delta_log/00000000000000000001.json",
        "t/part-0.parquet", "t/_delta_log/_sidecars/a.parquet", "u/_delta_log/0.json"}) {
    ASSERT_TRUE(store_->Put(key, key).ok()) << key;
  }
  EXPECT_EQ(Keys("t/_delta_log/"),
            (std::vector<std::string>{
                "t/_delta_log/00000000000000000000.json", "t/_delta_log/00000000000000000001.json",
                "t/_delta_log/00000000000000000002.json", "t/_delta_log/_last_checkpoint"}));
  EXPECT_EQ(Keys("t/_delta_log/0000000000000000000"),
            (std::vector<std::string>{"t/_delta_log/00000000000000000000.json",
                                      "t/_delta_log/00000000000000000001.json",
                                      "t/_delta_log/00000000000000000002.json"}));
  EXPECT_EQ(Keys("t/_delta_log/_"), (std::vector<std::string>{"t/_delta_log/_last_checkpoint"}));
  EXPECT_EQ(Keys("t/_delta_log/_", true),
            (std::vector<std::string>{"t/_delta_log/_last_checkpoint",
                                      "t/_delta_log/_sidecars/a.parquet"}));
  EXPECT_EQ(Keys("t/_delta_log/", false, "t/_delta_log/00000000000000000000.json"),
            (std::vector<std::string>{"t/_delta_log/00000000000000000001.json",
                                      "t/_delta_log/00000000000000000002.json",
                                      "t/_delta_log/_last_checkpoint"}));
  EXPECT_EQ(Keys("t/", true, "t/_delta_log/_last_checkpoint"),
            (std::vector<std::string>{"t/_delta_log/_sidecars/a.parquet", "t/part-0.parquet"}));
  EXPECT_EQ(Keys("t/", true, "t/_delta_log/_sidecars/a.parquet"),
            (std::vector<std::string>{"t/part-0.parquet"}));
  EXPECT_EQ(Keys("t/").size(), 1u);  // only t/part-0.parquet at that level
  EXPECT_EQ(Keys("t/", true).size(), 6u);
  EXPECT_EQ(Keys("", true).size(), 7u);
  auto list = store_->List("t/part");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].size, std::string("t/part-0.parquet").size());
}

TEST_P(ObjectStoreTest, InvalidKeysAreRejected) {
  for (const char* key : {"", "/abs", "a//b", "a/../b", "./a", "a/", "a/."}) {
    EXPECT_EQ(store_->Put(key, "x").code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(store_->PutIfAbsent(key, "x").code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(store_->Stat(key).status().code(), StatusCode::kInvalidArgument) << key;
  }
  EXPECT_EQ(store_->List("../x").status().code(), StatusCode::kInvalidArgument);
}

TEST_P(ObjectStoreTest, AtomicWriterPublishesOnlyOnClose) {
  auto writer = store_->OpenAtomicWriter("t/data/part-00000.parquet");
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Append("PAR1").ok());
  ASSERT_TRUE((*writer)->Append(std::string(100000, 'x')).ok());
  EXPECT_EQ((*writer)->Tell(), 100004u);
  EXPECT_EQ(store_->Stat("t/data/part-00000.parquet").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Keys("t/data/", true).empty());
  ASSERT_TRUE((*writer)->Close().ok());
  auto info = store_->Stat("t/data/part-00000.parquet");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, 100004u);
  EXPECT_EQ(Keys("t/data/").size(), 1u);
}

TEST_P(ObjectStoreTest, AbandonedAtomicWriterLeavesNothing) {
  {
    auto writer = store_->OpenAtomicWriter("t/x.parquet");
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append("partial").ok());
  }
  EXPECT_EQ(store_->Stat("t/x.parquet").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Keys("t/", true).empty());
  if (!fixture_.dir.empty()) {
    auto names = ListDirectory(fixture_.dir + "/t");
    ASSERT_TRUE(names.ok());
    EXPECT_TRUE(names->empty()) << "temporary file left behind";
  }
}

// Many threads race for the same keys: each key gets exactly one winner, and its bytes stay.
TEST_P(ObjectStoreTest, ConcurrentPutIfAbsentHasExactlyOneWinner) {
  constexpr int kThreads = 8;
  constexpr int kKeys = 40;
  std::vector<std::vector<int>> winners(kKeys);
  std::mutex mu;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kKeys; ++k) {
        std::string key = fmt::format("race/_delta_log/{:020}.json", k);
        Status st = store_->PutIfAbsent(key, fmt::format("writer {}", t));
        if (st.ok()) {
          std::lock_guard lock(mu);
          winners[static_cast<size_t>(k)].push_back(t);
        } else if (st.code() != StatusCode::kAlreadyExists) {
          errors++;
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(errors.load(), 0);
  for (int k = 0; k < kKeys; ++k) {
    ASSERT_EQ(winners[static_cast<size_t>(k)].size(), 1u) << "key " << k;
    auto data = store_->Read(fmt::format("race/_delta_log/{:020}.json", k));
    ASSERT_TRUE(data.ok());
    EXPECT_EQ(*data, fmt::format("writer {}", winners[static_cast<size_t>(k)][0]));
  }
  EXPECT_EQ(Keys("race/_delta_log/").size(), static_cast<size_t>(kKeys));
}

INSTANTIATE_TEST_SUITE_P(AllStores, ObjectStoreTest, ::testing::ValuesIn(Factories()),
                         [](const auto& p) { return p.param.name; });

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

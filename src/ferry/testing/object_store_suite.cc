// The tests of the ObjectStore conformance suite (object_store_suite.h).
#include "ferry/testing/object_store_suite.h"

#include <fmt/format.h>

#include <atomic>
#include <barrier>
#include <mutex>
#include <random>
#include <thread>

#include "ferry/base/file.h"

namespace ferry::testing {

void ObjectStoreTest::SetUp() {
  Result<TestStore> made = GetParam().fresh();
  ASSERT_TRUE(made.ok()) << GetParam().name << ": " << made.status().ToString();
  fixture_ = std::move(*made);
  store_ = fixture_.store.get();
}

void ObjectStoreTest::TearDown() {
  store_ = nullptr;
  fixture_.store.reset();
  if (fixture_.cleanup) {
    fixture_.cleanup();
  }
}

std::vector<std::string> ObjectStoreTest::Keys(std::string_view prefix, bool recursive,
                                               std::string start_after) {
  storage::ListOptions options;
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

namespace {

// `n` bytes that differ with `seed`, so that a mix-up of two objects shows.
std::string Bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    for (size_t j = 0; j < 8 && i + j < n; ++j) {
      out[i + j] = static_cast<char>(v >> (8 * j));
    }
  }
  return out;
}

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
  ASSERT_TRUE(data.ok()) << data.status().ToString();
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
  // A Put made object counts as existing too, and a deleted one can be created again.
  ASSERT_TRUE(store_->Put("log/1.json", "put").ok());
  EXPECT_EQ(store_->PutIfAbsent("log/1.json", "x").code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(store_->Delete("log/1.json").ok());
  EXPECT_TRUE(store_->PutIfAbsent("log/1.json", "again").ok());
  EXPECT_EQ(*store_->Read("log/1.json"), "again");
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

TEST_P(ObjectStoreTest, DeleteManyRemovesEveryKeyGivenAndNoOther) {
  std::vector<std::string> doomed;
  for (int i = 0; i < 30; ++i) {
    std::string key = fmt::format("v/part-{:03}.parquet", i);
    ASSERT_TRUE(store_->Put(key, key).ok()) << key;
    if (i % 3 != 0) {
      doomed.push_back(key);
    }
  }
  doomed.push_back("v/never-was.parquet");
  ASSERT_TRUE(store_->DeleteMany(doomed).ok());
  std::vector<std::string> left = Keys("v/");
  ASSERT_EQ(left.size(), 10u);
  for (size_t i = 0; i < left.size(); ++i) {
    EXPECT_EQ(left[i], fmt::format("v/part-{:03}.parquet", i * 3));
  }
  EXPECT_TRUE(store_->DeleteMany({}).ok());
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

// The characters Delta's escaped partition directories and Spark's file names put in keys
// ("p=a%2Fb%3Dc%25d e%23f/part-...", "special p@#h") go through every call unchanged.
TEST_P(ObjectStoreTest, KeysWithCharactersThatNeedEscaping) {
  const std::vector<std::string> keys = {
      "s/p=a%2Fb%3Dc%25d e%23f/part-0.parquet",
      "s/special p@#h",
      "s/plus+sign&amp=1;x",
      "s/question?mark",
      "s/tilde~star*paren(1)",
      "s/\xc3\xbcn\xc3\xaf:code",
      "s/a'quote\"x",
  };
  for (const std::string& key : keys) {
    ASSERT_TRUE(store_->Put(key, "put " + key).ok()) << key;
    EXPECT_EQ(store_->PutIfAbsent(key, "x").code(), StatusCode::kAlreadyExists) << key;
    auto data = store_->Read(key);
    ASSERT_TRUE(data.ok()) << key << ": " << data.status().ToString();
    EXPECT_EQ(*data, "put " + key);
    auto info = store_->Stat(key);
    ASSERT_TRUE(info.ok()) << key << ": " << info.status().ToString();
    EXPECT_EQ(info->size, key.size() + 4);
  }
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(Keys("s/", true), sorted);
  EXPECT_EQ(Keys("s/p=a%2Fb%3Dc%25d e%23f/"), (std::vector<std::string>{keys[0]}));
  EXPECT_EQ(Keys("s/", true, "s/plus+sign&amp=1;x"),
            (std::vector<std::string>(sorted.begin() + 3, sorted.end())));
  ASSERT_TRUE(store_->DeleteMany({keys[0], keys[1], keys[2]}).ok());
  ASSERT_TRUE(store_->Delete(keys[3]).ok());
  EXPECT_EQ(Keys("s/", true).size(), keys.size() - 4);
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

TEST_P(ObjectStoreTest, AtomicWriterOfNothingAndOverAnExistingObject) {
  auto empty = store_->OpenAtomicWriter("w/empty");
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE((*empty)->Close().ok());
  EXPECT_EQ(*store_->Read("w/empty"), "");
  ASSERT_TRUE(store_->Put("w/x", "old").ok());
  auto writer = store_->OpenAtomicWriter("w/x");
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append("new bytes").ok());
  EXPECT_EQ(*store_->Read("w/x"), "old") << "replaced before Close";
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(*store_->Read("w/x"), "new bytes");
}

// Larger than S3's 5 MiB minimum part, so that an S3 store configured with that part size
// uploads it in parts; appended in uneven pieces that straddle the part boundaries.
TEST_P(ObjectStoreTest, LargeObjectThroughTheAtomicWriter) {
  const std::string data = Bytes((size_t{12} << 20) + 12345, 7);
  auto writer = store_->OpenAtomicWriter("big/part-00000.parquet");
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  size_t at = 0;
  for (size_t piece = 1; at < data.size(); piece = piece * 3 + 17) {
    const size_t n = std::min(piece % (size_t{3} << 20), data.size() - at);
    ASSERT_TRUE((*writer)->Append(std::string_view(data).substr(at, n)).ok()) << at;
    at += n;
  }
  EXPECT_EQ((*writer)->Tell(), data.size());
  EXPECT_EQ(store_->Stat("big/part-00000.parquet").status().code(), StatusCode::kNotFound);
  Status closed = (*writer)->Close();
  ASSERT_TRUE(closed.ok()) << closed.ToString();
  auto info = store_->Stat("big/part-00000.parquet");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, data.size());
  auto whole = store_->Read("big/part-00000.parquet");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_TRUE(*whole == data) << "the object's bytes differ from those written";
  const uint64_t five_mib = uint64_t{5} << 20;
  for (uint64_t offset : {uint64_t{0}, five_mib - 100, 2 * five_mib - 1, data.size() - 4096}) {
    auto range = store_->ReadRange("big/part-00000.parquet", offset, 4096);
    ASSERT_TRUE(range.ok()) << offset << ": " << range.status().ToString();
    EXPECT_TRUE(*range == data.substr(offset, 4096)) << "at " << offset;
  }
  EXPECT_EQ(Keys("big/"), std::vector<std::string>{"big/part-00000.parquet"});
}

TEST_P(ObjectStoreTest, AbandonedAtomicWriterLeavesNothing) {
  {
    auto writer = store_->OpenAtomicWriter("t/x.parquet");
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append("partial").ok());
  }
  {
    // Past several parts of an S3 multipart upload.
    auto writer = store_->OpenAtomicWriter("t/y.parquet");
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append(Bytes((size_t{11} << 20) + 1, 3)).ok());
  }
  EXPECT_EQ(store_->Stat("t/x.parquet").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Stat("t/y.parquet").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Keys("t/", true).empty());
  if (!fixture_.local_dir.empty()) {
    auto names = ListDirectory(fixture_.local_dir + "/t");
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

// N threads released at once by a barrier, all for one key, round after round: exactly one
// winner each round and the object holds the winner's bytes (bodies of different sizes, up to
// 256 KiB, so that the requests overlap on the wire).
TEST_P(ObjectStoreTest, ThreadsRacingForOneKeyHaveOneWinnerWhoseBytesAreStored) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  for (int round = 0; round < kRounds; ++round) {
    const std::string key = fmt::format("one/_delta_log/{:020}.json", round);
    std::vector<std::string> bodies;
    for (int t = 0; t < kThreads; ++t) {
      bodies.push_back(Bytes(static_cast<size_t>(1 + (t * 37 + round * 11) % 257) << 10,
                             static_cast<uint64_t>(round * 100 + t)));
    }
    std::vector<Status> results(kThreads);
    std::barrier start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        results[static_cast<size_t>(t)] = store_->PutIfAbsent(key, bodies[static_cast<size_t>(t)]);
      });
    }
    for (auto& thread : threads) {
      thread.join();
    }
    int winner = -1;
    for (int t = 0; t < kThreads; ++t) {
      const Status& st = results[static_cast<size_t>(t)];
      if (st.ok()) {
        EXPECT_EQ(winner, -1) << "round " << round << ": threads " << winner << " and " << t
                              << " both won";
        winner = t;
      } else {
        EXPECT_EQ(st.code(), StatusCode::kAlreadyExists)
            << "round " << round << ": " << st.ToString();
      }
    }
    ASSERT_NE(winner, -1) << "round " << round << ": nobody won";
    auto stored = store_->Read(key);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    EXPECT_TRUE(*stored == bodies[static_cast<size_t>(winner)])
        << "round " << round << ": the object does not hold the winner's bytes";
  }
  EXPECT_EQ(Keys("one/_delta_log/").size(), static_cast<size_t>(kRounds));
}

}  // namespace
}  // namespace ferry::testing

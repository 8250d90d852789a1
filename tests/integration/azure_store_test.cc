// AzureBlobStore (storage/azure/azure_store.h) against Azurite, Microsoft's storage emulator: the
// ObjectStore conformance suite (testing/object_store_suite.h) at a container's root and under a
// prefix, then what is particular to Azure, with what it wrote checked by Microsoft's own SDK
// (testing::AzureBlobCli): listing pages, put-if-absent with one winner among racing threads,
// names that need encoding (Shared Key signs the encoded path), block uploads with parts in
// flight and what an abandoned writer leaves, Blob Batch deletes, SAS authorization, the table
// locations, and Delta commits racing from several writers.
//
// One process for all its tests (WHOLE_BINARY in CMake): one emulator serves them, a container
// each.
#include "ferry/storage/azure/azure_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/store_factory.h"
#include "ferry/testing/azure_test_store.h"
#include "ferry/testing/azurite.h"
#include "ferry/testing/object_store_suite.h"
#include "ferry/testing/subprocess.h"

namespace ferry {
namespace testing {

INSTANTIATE_TEST_SUITE_P(Azurite, ObjectStoreTest,
                         ::testing::Values(AzuriteStoreFactory("Azure", ""),
                                           AzuriteStoreFactory("AzurePrefix", "lake/tables/t1")),
                         [](const auto& p) { return StoreFactoryName(p.param); });

}  // namespace testing

namespace {

using storage::ObjectInfo;
using storage::ObjectStore;
using storage::azure::AzureBlobStore;
using storage::azure::AzureCredentialOptions;
using storage::azure::AzureStoreOptions;
using testing::Azurite;

std::string Bytes(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>(seed + static_cast<char>((i * 7 + i / 251) % 61));
  }
  return s;
}

constexpr int kContainers = 16;

class AzureStoreTest : public ::testing::Test {
 protected:
  // Every test's container at once: each SDK run costs about a second of CPU.
  static void SetUpTestSuite() {
    Result<Azurite*> server = Azurite::Shared();
    if (!server.ok()) {
      return;  // SetUp reports it
    }
    std::vector<std::vector<std::string>> commands;
    for (int i = 1; i <= kContainers; ++i) {
      commands.push_back({"create-container", "store-" + std::to_string(i)});
    }
    Result<std::vector<std::string>> created = (*server)->Cli().Sequence(commands);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  void SetUp() override {
    Result<Azurite*> server = Azurite::Shared();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    azurite_ = *server;
    ASSERT_LT(containers_, kContainers);
    container_ = "store-" + std::to_string(++containers_);
  }

  void TearDown() override {
    if (azurite_ != nullptr) {  // null when SetUp failed to start it
      EXPECT_TRUE(azurite_->Alive()) << "azurite died; its log:\n" << azurite_->Log();
    }
  }

  // The store of container_/root with the emulator's account key, small blocks and small pages.
  std::unique_ptr<AzureBlobStore> Store(const std::string& root = "t",
                                        AzureCredentialOptions credentials = {}) {
    if (credentials.account_key.empty() && credentials.sas.empty()) {
      credentials.account_key = Azurite::account_key();
    }
    credentials.account = Azurite::account();
    auto client = http::HttpClient::Create(http::HttpClientOptions{.allow_http = true});
    EXPECT_TRUE(client.ok());
    auto provider = storage::azure::MakeAzureCredentialProvider(credentials);
    EXPECT_TRUE(provider.ok()) << provider.status().ToString();
    auto store = AzureBlobStore::Create(
        AzureStoreOptions{.account = Azurite::account(),
                          .container = container_,
                          .root = root,
                          .endpoint = azurite_->endpoint(),
                          .transfer = {.part_size = 64 * 1024, .parts_in_flight = 3},
                          .list_page_size = 7},
        std::move(client).value(),
        std::shared_ptr<storage::azure::AzureCredentialProvider>(std::move(*provider)));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(store).value();
  }

  std::vector<std::string> Keys(ObjectStore& store, std::string_view prefix,
                                storage::ListOptions options = {}) {
    auto list = store.List(prefix, options);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    std::vector<std::string> keys;
    for (const ObjectInfo& info : list.value_or(std::vector<ObjectInfo>())) {
      keys.push_back(info.key);
    }
    return keys;
  }

  // The blob names under `prefix` as the SDK lists them.
  std::vector<std::string> SdkList(const std::string& prefix) {
    auto names = azurite_->Cli().List(container_, prefix);
    EXPECT_TRUE(names.ok()) << names.status().ToString();
    return names.value_or(std::vector<std::string>());
  }

  // SDK commands run in one node process; their outputs.
  std::vector<std::string> Sdk(const std::vector<std::vector<std::string>>& commands) {
    auto out = azurite_->Cli().Sequence(commands);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.value_or(std::vector<std::string>(commands.size()));
  }

  static inline int containers_ = 0;
  Azurite* azurite_ = nullptr;
  std::string container_;
};

// (The contract itself is the conformance suite's, above.) The store's keys are below its root,
// where the SDK sees them, and Describe names the blob's URL.
TEST_F(AzureStoreTest, KeysAreBlobsBelowTheRootAsTheSdkSeesThem) {
  auto store = Store();
  ASSERT_TRUE(store->Put("a/x.json", "hello world").ok());
  ASSERT_TRUE(store->PutIfAbsent("empty", "").ok());
  EXPECT_EQ(SdkList("t/"), (std::vector<std::string>{"t/a/x.json", "t/empty"}));
  EXPECT_EQ(Sdk({{"get", container_, "t/a/x.json"}})[0], "hello world");
  EXPECT_EQ(store->Describe("a/x.json"), azurite_->endpoint() + "/" + container_ + "/t/a/x.json");
  EXPECT_EQ(store->Describe("."), azurite_->endpoint() + "/" + container_ + "/t");
}

// A blob opened for reading is pinned to its ETag: reads past the first bytes (kept from the
// open) fail with DataLoss once the blob is replaced or deleted, never read another version.
TEST_F(AzureStoreTest, ReadsArePinnedToTheBlobOpened) {
  auto store = Store();
  const std::string data = Bytes(200 * 1024, 5);
  ASSERT_TRUE(store->Put("r/file.parquet", data).ok());
  auto file = store->OpenForRead("r/file.parquet");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->size(), data.size());
  std::string out;
  ASSERT_TRUE((*file)->ReadAt(150000, 50000, &out).ok());
  EXPECT_TRUE(out == data.substr(150000, 50000));
  ASSERT_TRUE(store->Put("r/file.parquet", Bytes(data.size(), 6)).ok());
  Status replaced = (*file)->ReadAt(100000, 1000, &out);
  EXPECT_EQ(replaced.code(), StatusCode::kDataLoss) << replaced.ToString();
  EXPECT_NE(replaced.message().find("blob changed"), std::string::npos) << replaced.ToString();
  ASSERT_TRUE((*file)->ReadAt(10, 100, &out).ok());
  EXPECT_TRUE(out == data.substr(10, 100));
  ASSERT_TRUE(store->Delete("r/file.parquet").ok());
  // Azurite answers a deleted blob's If-Match with 412 (a 404 reads "deleted since it was
  // opened"): DataLoss either way, not NotFound, which a reader could take for a missing file.
  Status deleted = (*file)->ReadAt(100000, 1000, &out);
  EXPECT_EQ(deleted.code(), StatusCode::kDataLoss) << deleted.ToString();
}

TEST_F(AzureStoreTest, ListingPagesDirectoriesAndStartAfter) {
  auto store = Store();
  std::vector<std::string> expected;
  for (int v = 0; v < 23; ++v) {
    char name[64];
    snprintf(name, sizeof(name), "_delta_log/%020d.json", v);
    ASSERT_TRUE(store->Put(name, "{}").ok());
    expected.push_back(name);
  }
  ASSERT_TRUE(store->Put("_delta_log/_last_checkpoint", "{}").ok());
  ASSERT_TRUE(store->Put("_delta_log/sub/deeper.json", "{}").ok());
  ASSERT_TRUE(store->Put("part-0.parquet", "x").ok());
  // 26 names in pages of 7, sorted bytewise; not recursive: nothing below a further '/'.
  std::vector<std::string> flat = Keys(*store, "_delta_log/");
  std::vector<std::string> want = expected;
  want.push_back("_delta_log/_last_checkpoint");
  EXPECT_EQ(flat, want);
  std::vector<std::string> deep = Keys(*store, "_delta_log/", {.recursive = true});
  EXPECT_EQ(deep.size(), 25u);
  EXPECT_EQ(deep.back(), "_delta_log/sub/deeper.json");
  std::vector<std::string> tail =
      Keys(*store, "_delta_log/", {.start_after = "_delta_log/00000000000000000020.json"});
  EXPECT_EQ(tail, (std::vector<std::string>{"_delta_log/00000000000000000021.json",
                                            "_delta_log/00000000000000000022.json",
                                            "_delta_log/_last_checkpoint"}));
  EXPECT_EQ(Keys(*store, "").size(), 1u);  // part-0.parquet; _delta_log/ is a "directory"
  EXPECT_TRUE(Keys(*store, "missing/").empty());
}

TEST_F(AzureStoreTest, EightThreadsRacingPutIfAbsentHaveExactlyOneWinner) {
  auto store = Store();
  std::vector<std::vector<std::string>> gets;
  std::vector<std::string> expected;
  for (int round = 0; round < 5; ++round) {
    const std::string key = "_delta_log/" + std::to_string(round) + ".json";
    std::atomic<int> winners{0};
    std::atomic<int> losers{0};
    std::vector<std::string> bodies;
    for (int w = 0; w < 8; ++w) {
      bodies.push_back(Bytes(20000 + static_cast<size_t>(w), static_cast<char>('A' + w)));
    }
    std::vector<std::thread> threads;
    int winner = -1;
    std::mutex mu;
    for (int w = 0; w < 8; ++w) {
      threads.emplace_back([&, w] {
        Status st = store->PutIfAbsent(key, bodies[static_cast<size_t>(w)]);
        if (st.ok()) {
          ++winners;
          std::lock_guard lock(mu);
          winner = w;
        } else if (st.code() == StatusCode::kAlreadyExists) {
          ++losers;
        } else {
          ADD_FAILURE() << st.ToString();
        }
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
    ASSERT_EQ(winners.load(), 1) << "round " << round;
    EXPECT_EQ(losers.load(), 7);
    gets.push_back({"get", container_, "t/" + key});
    expected.push_back(bodies[static_cast<size_t>(winner)]);
  }
  // The winners' bytes, as another client reads them.
  std::vector<std::string> stored = Sdk(gets);
  for (size_t round = 0; round < expected.size(); ++round) {
    EXPECT_TRUE(stored[round] == expected[round]) << "round " << round;
  }
}

TEST_F(AzureStoreTest, NamesThatNeedEncodingAreSignedAndStoredAsWritten) {
  auto store = Store("lake/t");
  const std::vector<std::string> keys = {
      "as_timestamp=2021-09-08 11%3A11%3A11/part-0.parquet",
      "x=A%2FA/part-1.parquet",
      "odd/a+b&c=d;e,f'g(h)!*~.json",
      "unicode/héllo wörld €.json",
  };
  for (const std::string& key : keys) {
    Status st = store->Put(key, "data:" + key);
    ASSERT_TRUE(st.ok()) << key << ": " << st.ToString() << "\n" << azurite_->Log();
    EXPECT_EQ(*store->Read(key), "data:" + key);
  }
  std::vector<std::string> listed = Keys(*store, "", {.recursive = true});
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(listed, sorted);
  // The SDK sees exactly these names, with their bytes.
  std::vector<std::vector<std::string>> commands = {{"list", container_, "lake/t/"}};
  for (const std::string& key : keys) {
    commands.push_back({"get", container_, "lake/t/" + key});
  }
  std::vector<std::string> sdk = Sdk(commands);
  std::string want_list;
  for (const std::string& key : sorted) {
    want_list += "lake/t/" + key + "\n";
  }
  EXPECT_EQ(sdk[0], want_list);
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(sdk[i + 1], "data:" + keys[i]);
  }
}

TEST_F(AzureStoreTest, LargeFilesGoUpAsBlocksAndAnAbandonedWriterLeavesNothing) {
  auto store = Store();
  const std::string data = Bytes(17 * 64 * 1024 + 123, 'a');
  {
    auto writer = store->OpenAtomicWriter("big.parquet");
    ASSERT_TRUE(writer.ok());
    for (size_t at = 0; at < data.size(); at += 10'000) {
      ASSERT_TRUE((*writer)->Append(std::string_view(data).substr(at, 10'000)).ok());
      if (at == 100'000) {
        // Nothing is visible before Close.
        EXPECT_EQ(store->Stat("big.parquet").status().code(), StatusCode::kNotFound);
      }
    }
    EXPECT_EQ((*writer)->Tell(), data.size());
    Status closed = (*writer)->Close();
    ASSERT_TRUE(closed.ok()) << closed.ToString();
  }
  EXPECT_EQ(store->Stat("big.parquet")->size, data.size());
  // Ranged reads across block boundaries.
  EXPECT_EQ(*store->ReadRange("big.parquet", 65530, 20), data.substr(65530, 20));
  // A small file is one Put Blob.
  {
    auto writer = store->OpenAtomicWriter("small.json");
    ASSERT_TRUE((*writer)->Append("{}").ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
  EXPECT_EQ(*store->Read("small.json"), "{}");
  // Abandoned after three blocks went up: no blob.
  {
    auto writer = store->OpenAtomicWriter("abandoned.parquet");
    ASSERT_TRUE((*writer)->Append(Bytes(4 * 64 * 1024, 'z')).ok());
  }
  EXPECT_EQ(store->Stat("abandoned.parquet").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Keys(*store, ""), (std::vector<std::string>{"big.parquet", "small.json"}));
  // As the SDK sees it: the bytes, 18 committed blocks, and no third blob.
  std::vector<std::string> sdk = Sdk({{"get", container_, "t/big.parquet"},
                                      {"blocks", container_, "t/big.parquet"},
                                      {"list", container_, "t/"}});
  EXPECT_TRUE(sdk[0] == data) << "the SDK read other bytes than were written";
  EXPECT_EQ(sdk[1], "committed 18 uncommitted 0\n");
  EXPECT_EQ(sdk[2], "t/big.parquet\nt/small.json\n");
}

TEST_F(AzureStoreTest, DeleteManyUsesBlobBatches) {
  auto store = Store();
  std::vector<std::string> keys;
  for (int i = 0; i < 270; ++i) {
    keys.push_back("old/part-" + std::to_string(i) + ".parquet");
  }
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (size_t i = static_cast<size_t>(t); i < keys.size(); i += 4) {
          EXPECT_TRUE(store->Put(keys[i], "x").ok());
        }
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
  }
  ASSERT_TRUE(store->Put("keep.json", "{}").ok());
  keys.push_back("old/never-existed.parquet");
  const uint64_t attempts = store->counters().attempts.load();
  Status deleted = store->DeleteMany(keys);
  ASSERT_TRUE(deleted.ok()) << deleted.ToString() << "\n" << azurite_->Log();
  // Two batches (256 + 15), not 271 requests.
  EXPECT_EQ(store->counters().attempts.load() - attempts, 2u);
  EXPECT_EQ(SdkList("t/"), (std::vector<std::string>{"t/keep.json"}));
}

TEST_F(AzureStoreTest, ASharedAccessSignatureAuthorizesEveryOperation) {
  auto sas = azurite_->Cli().ContainerSas(container_);
  ASSERT_TRUE(sas.ok()) << sas.status().ToString();
  auto store = Store("t", {.sas = "?" + *sas});
  ASSERT_TRUE(store->PutIfAbsent("_delta_log/0.json", "{}").ok());
  EXPECT_EQ(store->PutIfAbsent("_delta_log/0.json", "{}").code(), StatusCode::kAlreadyExists);
  {
    auto writer = store->OpenAtomicWriter("big.parquet");
    ASSERT_TRUE((*writer)->Append(Bytes(3 * 64 * 1024 + 5, 'q')).ok());
    Status closed = (*writer)->Close();
    ASSERT_TRUE(closed.ok()) << closed.ToString();
  }
  EXPECT_EQ(store->Stat("big.parquet")->size, 3u * 64 * 1024 + 5);
  EXPECT_EQ(Keys(*store, "", {.recursive = true}).size(), 2u);
  Status deleted = store->DeleteMany({"_delta_log/0.json", "big.parquet"});
  ASSERT_TRUE(deleted.ok()) << deleted.ToString();
  EXPECT_TRUE(SdkList("t/").empty());
  // A wrong key is refused, naming the blob and the service's code, not the key.
  auto wrong = Store("t", {.account_key = "d3Jvbmcta2V5LXdyb25nLWtleQ=="});
  Status refused = wrong->Put("x", "y");
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << refused.ToString();
  EXPECT_NE(refused.message().find("HTTP 403"), std::string::npos) << refused.ToString();
  EXPECT_NE(refused.message().find(container_ + "/t/x"), std::string::npos);
  EXPECT_EQ(refused.message().find("d3Jvbmc"), std::string::npos);
  EXPECT_EQ(refused.message().find("sig="), std::string::npos);
}

TEST_F(AzureStoreTest, EveryLocationSpellingOpensTheContainer) {
  const storage::StorageOptions emulator = {{"azure_storage_use_emulator", "true"},
                                            {"azure_storage_endpoint", azurite_->endpoint()}};
  auto az = storage::ParseTableUri("az://" + container_ + "/lake/t");
  ASSERT_TRUE(az.ok()) << az.status().ToString();
  auto a = storage::OpenTableStore(*az, emulator, storage::OpenMode::kCreate);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE((*a)->Put("_delta_log/0.json", "{\"v\":0}").ok());
  // The account in the host, the key as an option, the endpoint overridden (the emulator).
  for (const std::string& location :
       {"abfss://" + container_ + "@devstoreaccount1.dfs.core.windows.net/lake/t/",
        "https://devstoreaccount1.blob.core.windows.net/" + container_ + "/lake/t"}) {
    auto uri = storage::ParseTableUri(location);
    ASSERT_TRUE(uri.ok()) << uri.status().ToString();
    auto b = storage::OpenTableStore(*uri,
                                     {{"azure_storage_account_key", Azurite::account_key()},
                                      {"azure_storage_endpoint", azurite_->endpoint()},
                                      {"aws_allow_http", "true"}},
                                     storage::OpenMode::kExisting);
    ASSERT_TRUE(b.ok()) << location << ": " << b.status().ToString();
    EXPECT_EQ(*(*b)->Read("_delta_log/0.json"), "{\"v\":0}") << location;
  }
  // Plain http without allow_http (or the emulator option) is refused, naming the option.
  auto refused = storage::OpenTableStore(*az,
                                         {{"azure_storage_account_key", Azurite::account_key()},
                                          {"azure_storage_account_name", "devstoreaccount1"},
                                          {"azure_storage_endpoint", azurite_->endpoint()}},
                                         storage::OpenMode::kExisting);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("plain http"), std::string::npos);
}

columnar::SchemaPtr RaceSchema() {
  return std::make_shared<const columnar::Schema>(std::vector<columnar::Field>{
      {"id", columnar::DataType::Int64(), false, {}},
      {"writer", columnar::DataType::Int64(), false, {}},
  });
}

TEST_F(AzureStoreTest, DeltaCommitsRacingFromFourWritersAllLandOnce) {
  std::shared_ptr<ObjectStore> store = Store("race");
  auto table = delta::Table::Open(store, "");
  ASSERT_TRUE(table.ok());
  delta::TableSpec spec;
  spec.schema = RaceSchema();
  ASSERT_TRUE((*table)->Create(spec).ok());
  constexpr int kWriters = 4;
  constexpr int kCommits = 5;
  std::vector<std::thread> threads;
  std::atomic<int> retried{0};
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      // Each writer its own table handle and snapshot, as separate processes would have.
      auto mine = delta::Table::Open(store, "");
      ASSERT_TRUE(mine.ok());
      auto snapshot = (*mine)->LoadSnapshot();
      ASSERT_TRUE(snapshot.ok());
      for (int c = 0; c < kCommits; ++c) {
        auto writer = delta::TableWriter::Create(**mine, *snapshot);
        ASSERT_TRUE(writer.ok());
        auto batch = columnar::RecordBatch::MakeEmpty(RaceSchema());
        batch.mutable_column(0)->As<columnar::Int64Column>()->Append(w * 100 + c);
        batch.mutable_column(1)->As<columnar::Int64Column>()->Append(w);
        ASSERT_TRUE((*writer)->Write(batch).ok());
        auto adds = (*writer)->Finish();
        ASSERT_TRUE(adds.ok()) << adds.status().ToString();
        delta::Transaction txn(**mine, *snapshot);
        txn.AddFiles(std::move(*adds));
        auto result = txn.Commit();
        ASSERT_TRUE(result.ok()) << result.status().ToString();
        if (result->attempts > 1) {
          ++retried;
        }
        snapshot = std::move(result->snapshot);
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  auto final_snapshot = (*table)->LoadSnapshot();
  ASSERT_TRUE(final_snapshot.ok()) << final_snapshot.status().ToString();
  EXPECT_EQ(final_snapshot->version(), kWriters * kCommits);
  EXPECT_EQ(final_snapshot->num_files(), kWriters * kCommits);
  // Every version once, as the SDK lists the log.
  std::vector<std::string> log = SdkList("race/_delta_log/");
  std::set<std::string> versions;
  for (const std::string& name : log) {
    if (name.ends_with(".json")) {
      versions.insert(name);
    }
  }
  EXPECT_EQ(versions.size(), static_cast<size_t>(kWriters * kCommits + 1));
  RecordProperty("commits_retried", retried.load());

  // The table as an independent client sees it: the SDK downloads it, the log is replayed here
  // (adds only: nothing was removed), and DuckDB reads the live files row for row.
  char tmpl[] = "/tmp/ferry-azure-table-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  Status downloaded = azurite_->Cli().DownloadPrefix(container_, "race/", dir);
  ASSERT_TRUE(downloaded.ok()) << downloaded.ToString();
  std::vector<std::string> files;
  for (int v = 0; v <= kWriters * kCommits; ++v) {
    std::ifstream in(fmt::format("{}/_delta_log/{:020}.json", dir, v));
    ASSERT_TRUE(in.good()) << "version " << v << " was not downloaded";
    for (std::string line; std::getline(in, line);) {
      nlohmann::json action = nlohmann::json::parse(line, nullptr, false);
      if (action.contains("add")) {
        files.push_back(dir + "/" + action["add"]["path"].get<std::string>());
      }
    }
  }
  ASSERT_EQ(files.size(), static_cast<size_t>(kWriters * kCommits));
  std::string list;
  for (const std::string& file : files) {
    list += (list.empty() ? "'" : ", '") + file + "'";
  }
  auto node = testing::FindProgram("node", {}, "Node.js");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  auto duck = testing::RunProgram(
      {*node, std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/query.mjs",
       "SELECT string_agg(id::VARCHAR || ':' || writer::VARCHAR, ',' ORDER BY id) AS rows FROM "
       "read_parquet([" +
           list + "])"},
      std::chrono::minutes(5));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(duck.ok()) << duck.status().ToString();
  ASSERT_EQ(duck->exit_code, 0) << duck->err;
  std::string want;
  for (int w = 0; w < kWriters; ++w) {
    for (int c = 0; c < kCommits; ++c) {
      want += fmt::format("{}{}:{}", want.empty() ? "" : ",", w * 100 + c, w);
    }
  }
  EXPECT_EQ(nlohmann::json::parse(duck->out, nullptr, false).value("rows", ""), want) << duck->out;
}

}  // namespace
}  // namespace ferry

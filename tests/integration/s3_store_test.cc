// The S3 store (storage/s3/s3_store.h) against a real S3 server, radosgw (testing/radosgw.h):
// the ObjectStore conformance suite (testing/object_store_suite.h) at a bucket's root and under
// a prefix, then what is particular to S3, checked where possible with clients no one here wrote
// (the Debian awscli, curl): multipart uploads (several parts, several in flight, none left
// behind by an abandoned or failed writer), ranged reads pinned to the ETag, listings and
// deletes of more than one page, and the errors a user sees for a missing bucket or wrong keys.
//
// One radosgw serves the whole binary (registered as one ctest test: WHOLE_BINARY).
#include "ferry/storage/s3/s3_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "ferry/base/failpoint.h"
#include "ferry/http/client.h"
#include "ferry/storage/s3/credentials.h"
#include "ferry/testing/object_store_suite.h"
#include "ferry/testing/radosgw.h"
#include "ferry/testing/s3_test_store.h"

namespace ferry::testing {

INSTANTIATE_TEST_SUITE_P(RadosGw, ObjectStoreTest,
                         ::testing::Values(RadosGwStoreFactory("S3", ""),
                                           RadosGwStoreFactory("S3Prefix", "lake/tables/t1")),
                         [](const auto& p) { return StoreFactoryName(p.param); });

namespace {

using storage::s3::S3Store;

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

std::string ReadLocalFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class S3StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<RadosGw*> rgw = RadosGw::Shared();
    ASSERT_TRUE(rgw.ok()) << rgw.status().ToString();
    rgw_ = *rgw;
    Result<std::string> bucket = NewRadosGwBucket(*rgw_);
    ASSERT_TRUE(bucket.ok()) << bucket.status().ToString() << "\n" << rgw_->Log();
    bucket_ = *bucket;
  }
  void TearDown() override {
    failpoint::DisarmAll();
    EXPECT_TRUE(rgw_->Alive()) << rgw_->Log();
  }

  // The store as users get it (OpenS3Store), with `overrides` over the test server's options.
  std::unique_ptr<S3Store> Open(const std::string& bucket, const std::string& root,
                                const storage::StorageOptions& overrides = {}) {
    storage::StorageOptions options = RadosGwStorageOptions(*rgw_);
    for (const auto& [key, value] : overrides) {
      options[key] = value;
    }
    auto store = storage::s3::OpenS3Store(bucket, root, options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // A store built by hand around an HTTP client the test can look into.
  std::unique_ptr<S3Store> OpenWithClient(std::shared_ptr<http::HttpClient> client,
                                          int parts_in_flight) {
    storage::s3::S3StoreOptions options{
        .bucket = bucket_,
        .root = "t",
        .endpoint = rgw_->endpoint(),
        .region = rgw_->region(),
        .transfer = {.part_size = size_t{5} << 20, .parts_in_flight = parts_in_flight}};
    auto store = S3Store::Create(
        options, std::move(client),
        storage::s3::MakeStaticCredentialProvider(
            {.access_key_id = rgw_->access_key(), .secret_access_key = rgw_->secret_key()}));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // The incomplete multipart uploads of the bucket, as the awscli lists them.
  std::string MultipartUploads() {
    auto out = rgw_->Cli().Aws(
        {"s3api", "list-multipart-uploads", "--bucket", bucket_, "--output", "json"});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.value_or("");
  }

  RadosGw* rgw_ = nullptr;
  std::string bucket_;
};

// 23 MiB through a writer with 5 MiB parts, at most 3 in flight: five parts (the ETag S3 gives a
// multipart object says how many), the bytes as the awscli downloads them, and the HTTP client's
// handle count showing that parts overlapped (one handle per request in progress at once) but
// never more than the bound (3 parts + the writer's own calls).
TEST_F(S3StoreTest, MultipartUploadSendsSeveralPartsAtOnceWithinTheBound) {
  http::HttpClientOptions client_options;
  client_options.allow_http = true;
  auto client = http::HttpClient::Create(client_options);
  ASSERT_TRUE(client.ok());
  std::shared_ptr<http::HttpClient> shared_client = std::move(*client);
  auto store = OpenWithClient(shared_client, 3);
  ASSERT_NE(store, nullptr);
  // Each part stalls a little on its thread, so that the writer's next parts are handed over
  // while it is in flight.
  ASSERT_TRUE(failpoint::Arm("storage.s3.before_upload_part", "sleep(150)").ok());
  const std::string data = Bytes((size_t{23} << 20) + 333, 11);
  auto writer = store->OpenAtomicWriter("data/big.parquet");
  ASSERT_TRUE(writer.ok());
  for (size_t at = 0; at < data.size(); at += size_t{1} << 20) {
    ASSERT_TRUE((*writer)->Append(std::string_view(data).substr(at, size_t{1} << 20)).ok());
  }
  Status closed = (*writer)->Close();
  ASSERT_TRUE(closed.ok()) << closed.ToString();
  EXPECT_EQ(failpoint::HitCount("storage.s3.before_upload_part"), 5);
  const http::HttpClient::Stats stats = shared_client->stats();
  EXPECT_GE(stats.handles, 2u) << "no two parts were ever in flight at once";
  EXPECT_LE(stats.handles, 4u) << "more requests at once than parts_in_flight + 1";
  // create + 5 parts + complete
  EXPECT_EQ(stats.requests, 7u);

  auto head = rgw_->Cli().Aws({"s3api", "head-object", "--bucket", bucket_, "--key",
                               "t/data/big.parquet", "--output", "json"});
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_NE(head->find("-5\\\""), std::string::npos) << "not a 5-part upload: " << *head;
  EXPECT_NE(head->find(fmt::format("\"ContentLength\": {}", data.size())), std::string::npos)
      << *head;
  const std::string local = rgw_->dir() + "/download-big.parquet";
  ASSERT_TRUE(rgw_->Cli()
                  .Aws({"s3", "cp", fmt::format("s3://{}/t/data/big.parquet", bucket_), local,
                        "--only-show-errors"})
                  .ok());
  EXPECT_TRUE(ReadLocalFile(local) == data) << "the awscli downloads other bytes";
  std::filesystem::remove(local);
  EXPECT_EQ(MultipartUploads().find("UploadId"), std::string::npos) << MultipartUploads();
}

// A writer destroyed before Close and a writer whose third part fails both abort their upload:
// the awscli lists no incomplete upload afterwards (and did list one while the writer lived).
TEST_F(S3StoreTest, AbandonedAndFailedUploadsLeaveNoIncompleteUpload) {
  auto store = Open(bucket_, "t");
  ASSERT_NE(store, nullptr);
  {
    auto writer = store->OpenAtomicWriter("abandoned.parquet");
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append(Bytes((size_t{12} << 20), 1)).ok());
    EXPECT_NE(MultipartUploads().find("t/abandoned.parquet"), std::string::npos)
        << "the writer has no upload in progress: the test proves nothing";
  }
  EXPECT_EQ(MultipartUploads().find("UploadId"), std::string::npos) << MultipartUploads();

  ASSERT_TRUE(failpoint::Arm("storage.s3.before_upload_part", "error(EIO)@3").ok());
  auto writer = store->OpenAtomicWriter("failed.parquet");
  ASSERT_TRUE(writer.ok());
  Status appended = (*writer)->Append(Bytes((size_t{22} << 20), 2));
  Status closed = (*writer)->Close();
  EXPECT_FALSE(closed.ok());
  EXPECT_EQ(closed.code(), appended.ok() ? closed.code() : appended.code());
  EXPECT_NE(closed.message().find("upload part 3 of s3://" + bucket_ + "/t/failed.parquet"),
            std::string::npos)
      << closed.ToString();
  EXPECT_EQ(store->Stat("failed.parquet").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(MultipartUploads().find("UploadId"), std::string::npos) << MultipartUploads();
  auto keys = rgw_->Cli().ListKeys(bucket_, "");
  ASSERT_TRUE(keys.ok());
  EXPECT_TRUE(keys->empty()) << (*keys)[0];
}

// Reads past the first 64 KiB are ranged GETs, one per ReadAt, pinned to the ETag seen at open:
// once the object is replaced they fail with DataLoss naming it; the bytes read at open stay.
TEST_F(S3StoreTest, RangedReadsAndAnObjectReplacedAfterOpen) {
  auto store = Open(bucket_, "");
  ASSERT_NE(store, nullptr);
  const std::string data = Bytes(300 * 1024 + 5, 3);
  ASSERT_TRUE(store->Put("r/file.parquet", data).ok());
  auto file = store->OpenForRead("r/file.parquet");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->size(), data.size());
  EXPECT_EQ((*file)->name(), "s3://" + bucket_ + "/r/file.parquet");
  const uint64_t before = store->counters().attempts.load();
  std::string out;
  ASSERT_TRUE((*file)->ReadAt(100, 60000, &out).ok());
  EXPECT_TRUE(out == data.substr(100, 60000));
  EXPECT_EQ(store->counters().attempts.load(), before) << "the first 64 KiB came with the open";
  for (uint64_t offset : {uint64_t{65000}, uint64_t{65536}, uint64_t{200000}}) {
    ASSERT_TRUE((*file)->ReadAt(offset, data.size() - offset, &out).ok()) << offset;
    EXPECT_TRUE(out == data.substr(offset)) << offset;
  }
  ASSERT_TRUE((*file)->ReadAt(data.size(), 0, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(store->counters().attempts.load(), before + 3);
  EXPECT_EQ((*file)->ReadAt(data.size() - 10, 11, &out).code(), StatusCode::kDataLoss);
  // ReadInto (the Parquet reader's): the same bytes into the caller's memory, from those read at
  // open with no request, else by one ranged GET; nothing for an empty range.
  std::string into(60000, '\0');
  ASSERT_TRUE((*file)->ReadInto(100, 60000, into.data()).ok());
  EXPECT_TRUE(into == data.substr(100, 60000));
  EXPECT_EQ(store->counters().attempts.load(), before + 3);
  ASSERT_TRUE((*file)->ReadInto(200000, 60000, into.data()).ok());
  EXPECT_TRUE(into == data.substr(200000, 60000));
  ASSERT_TRUE((*file)->ReadInto(data.size(), 0, into.data()).ok());
  EXPECT_EQ(store->counters().attempts.load(), before + 4);
  EXPECT_EQ((*file)->ReadInto(data.size() - 10, uint64_t{1} << 62, into.data()).code(),
            StatusCode::kDataLoss);

  ASSERT_TRUE(store->Put("r/file.parquet", Bytes(data.size(), 4)).ok());
  Status replaced = (*file)->ReadAt(70000, 1000, &out);
  EXPECT_EQ(replaced.code(), StatusCode::kDataLoss) << replaced.ToString();
  EXPECT_NE(replaced.message().find("s3://" + bucket_ + "/r/file.parquet"), std::string::npos)
      << replaced.ToString();
  EXPECT_NE(replaced.message().find("changed"), std::string::npos) << replaced.ToString();
  ASSERT_TRUE((*file)->ReadAt(10, 100, &out).ok());
  EXPECT_TRUE(out == data.substr(10, 100));
  ASSERT_TRUE(store->Delete("r/file.parquet").ok());
  Status deleted = (*file)->ReadAt(70000, 1000, &out);
  EXPECT_EQ(deleted.code(), StatusCode::kDataLoss) << deleted.ToString();
}

// 2,345 keys list in three ListObjectsV2 pages, in order, from any start-after; 1,100 "directories"
// beside one file list as that file alone; DeleteObjects removes them in batches of 1,000.
TEST_F(S3StoreTest, ListingAndDeletingMoreThanOnePage) {
  auto store = Open(bucket_, "t");
  ASSERT_NE(store, nullptr);
  std::vector<std::string> keys;
  for (int i = 0; i < 2345; ++i) {
    keys.push_back(fmt::format("_delta_log/{:020}.json", i));
  }
  for (int i = 0; i < 1100; ++i) {
    keys.push_back(fmt::format("dirs/d{:04}/part-0.parquet", i));
  }
  keys.push_back("dirs/file.json");
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < keys.size(); i = next++) {
        failed += store->Put(keys[i], keys[i]).ok() ? 0 : 1;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  ASSERT_EQ(failed.load(), 0);

  uint64_t before = store->counters().attempts.load();
  auto log = store->List("_delta_log/");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(store->counters().attempts.load() - before, 3u) << "pages of 1,000";
  ASSERT_EQ(log->size(), 2345u);
  for (size_t i = 0; i < log->size(); ++i) {
    ASSERT_EQ((*log)[i].key, keys[i]);
    EXPECT_EQ((*log)[i].size, keys[i].size());
  }
  storage::ListOptions from;
  from.start_after = keys[1499];
  auto tail = store->List("_delta_log/", from);
  ASSERT_TRUE(tail.ok());
  ASSERT_EQ(tail->size(), 845u);
  EXPECT_EQ(tail->front().key, keys[1500]);
  EXPECT_EQ(tail->back().key, keys[2344]);

  auto dirs = store->List("dirs/");
  ASSERT_TRUE(dirs.ok()) << dirs.status().ToString();
  ASSERT_EQ(dirs->size(), 1u);
  EXPECT_EQ((*dirs)[0].key, "dirs/file.json");
  storage::ListOptions recursive;
  recursive.recursive = true;
  EXPECT_EQ(store->List("", recursive)->size(), keys.size());
  auto independent = rgw_->Cli().ListKeys(bucket_, "t/");
  ASSERT_TRUE(independent.ok());
  EXPECT_EQ(independent->size(), keys.size());

  before = store->counters().attempts.load();
  std::vector<std::string> doomed = keys;
  doomed.push_back("_delta_log/never-was.json");
  ASSERT_TRUE(store->DeleteMany(doomed).ok());
  EXPECT_EQ(store->counters().attempts.load() - before, 4u) << "batches of 1,000";
  EXPECT_TRUE(store->List("", recursive)->empty());
  independent = rgw_->Cli().ListKeys(bucket_, "");
  ASSERT_TRUE(independent.ok());
  EXPECT_TRUE(independent->empty());
}

// Describe and every error name the object as s3://bucket/root/key; the conditional-write check
// leaves no probe behind.
TEST_F(S3StoreTest, ObjectsAreNamedAsS3UrisAndTheCheckLeavesNoTrace) {
  auto store = Open(bucket_, "lake/events");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Describe("_delta_log/00000000000000000000.json"),
            "s3://" + bucket_ + "/lake/events/_delta_log/00000000000000000000.json");
  auto root = Open(bucket_, "");
  EXPECT_EQ(root->Describe("k"), "s3://" + bucket_ + "/k");
  Status missing = store->Read("_delta_log/x.json").status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("s3://" + bucket_ + "/lake/events/_delta_log/x.json"),
            std::string::npos)
      << missing.ToString();
  ASSERT_TRUE(store->PutIfAbsent("_delta_log/00000000000000000000.json", "{}").ok());
  auto keys = rgw_->Cli().ListKeys(bucket_, "");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(*keys, std::vector<std::string>{"lake/events/_delta_log/00000000000000000000.json"});
}

// A bucket that does not exist: every call fails with a message that names the bucket and says
// that it does not exist, not one that a table reader could take for a missing file.
TEST_F(S3StoreTest, UnknownBucketIsAClearError) {
  auto store = Open("no-such-bucket", "t");
  ASSERT_NE(store, nullptr);
  auto list = store->List("_delta_log/");
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.status().message().find("s3://no-such-bucket"), std::string::npos)
      << list.status().ToString();
  EXPECT_NE(list.status().message().find("NoSuchBucket"), std::string::npos)
      << list.status().ToString();
  EXPECT_NE(list.status().code(), StatusCode::kNotFound) << list.status().ToString();
  for (const Status& st : {store->PutIfAbsent("_delta_log/0.json", "{}"), store->Put("x", "y"),
                           store->Read("x").status()}) {
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.code(), StatusCode::kNotFound) << st.ToString();
    EXPECT_NE(st.message().find("s3://no-such-bucket"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("NoSuchBucket"), std::string::npos) << st.ToString();
  }
}

// Wrong keys: a clear error naming the store and the server's reason, and never the secret.
TEST_F(S3StoreTest, WrongCredentialsAreAClearErrorWithoutTheSecret) {
  const std::string secret = "wrong-secret-0123456789abcdefWXYZ";
  auto store = Open(bucket_, "t", {{"aws_secret_access_key", secret}});
  ASSERT_NE(store, nullptr);
  auto unknown_key = Open(bucket_, "t", {{"aws_access_key_id", "AKIDNOSUCHKEY0000000"}});
  ASSERT_NE(unknown_key, nullptr);
  for (const Status& st :
       {store->List("_delta_log/").status(), store->PutIfAbsent("_delta_log/0.json", "{}"),
        unknown_key->List("_delta_log/").status()}) {
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("s3://" + bucket_ + "/t"), std::string::npos) << st.ToString();
    EXPECT_TRUE(st.message().find("SignatureDoesNotMatch") != std::string::npos ||
                st.message().find("InvalidAccessKeyId") != std::string::npos)
        << st.ToString();
    EXPECT_EQ(st.message().find(secret), std::string::npos) << st.ToString();
    EXPECT_EQ(st.message().find(rgw_->secret_key()), std::string::npos) << st.ToString();
  }
}

}  // namespace
}  // namespace ferry::testing

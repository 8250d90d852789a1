// The GCS store (ferry/storage/gcs/gcs_store.h) against fake-gcs-server (ferry/testing/
// fake_gcs.h): the ObjectStore conformance suite (object_store_suite.h), at a bucket's root and
// under a prefix, with small parts (256 KiB) and listing pages (7) so that resumable uploads in
// several chunks and listings of several pages are exercised; DeleteMany through the batch
// endpoint (several batches of up to 100), and a batch part's failure reported naming its object
// (a stand-in answering the batch). One emulator for the binary; a fresh bucket per test.
#include "ferry/storage/gcs/gcs_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "ferry/http/client.h"
#include "ferry/http/digest.h"
#include "ferry/testing/fake_gcs.h"
#include "ferry/testing/http_stand_in.h"
#include "ferry/testing/object_store_suite.h"
#include "ferry/testing/test_store.h"

namespace ferry::testing {
namespace {

// A GcsStore on `endpoint`'s bucket, under `root`, with 256 KiB parts and pages of 7.
Result<std::unique_ptr<storage::gcs::GcsStore>> NewGcsStore(const std::string& endpoint,
                                                            const std::string& bucket,
                                                            const std::string& root) {
  http::HttpClientOptions client_options;
  client_options.allow_http = true;
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<http::HttpClient> client,
                         http::HttpClient::Create(client_options));
  storage::gcs::GcsStoreOptions options{.bucket = bucket,
                                        .root = root,
                                        .endpoint = endpoint,
                                        .transfer = {.part_size = 256 * 1024},
                                        .list_page_size = 7};
  return storage::gcs::GcsStore::Create(std::move(options), std::move(client));
}

// A bucket of its own on the binary's emulator.
Result<std::string> NewBucket() {
  static std::atomic<int> next_bucket{0};
  FERRY_ASSIGN_OR_RETURN(FakeGcs * server, FakeGcs::Shared());
  const std::string bucket = "suite-" + std::to_string(next_bucket.fetch_add(1));
  FERRY_RETURN_IF_ERROR(server->CreateBucket(bucket));
  return bucket;
}

StoreFactory FakeGcsStoreFactory(const std::string& name, const std::string& root) {
  StoreFactory factory;
  factory.name = name;
  factory.fresh = [root]() -> Result<TestStore> {
    FERRY_ASSIGN_OR_RETURN(FakeGcs * server, FakeGcs::Shared());
    FERRY_ASSIGN_OR_RETURN(std::string bucket, NewBucket());
    FERRY_ASSIGN_OR_RETURN(std::unique_ptr<storage::gcs::GcsStore> store,
                           NewGcsStore(server->endpoint(), bucket, root));
    return TestStore{.store = std::move(store)};
  };
  return factory;
}

INSTANTIATE_TEST_SUITE_P(FakeGcs, ObjectStoreTest,
                         ::testing::Values(FakeGcsStoreFactory("Gcs", ""),
                                           FakeGcsStoreFactory("GcsPrefix", "lake/tables/t1")),
                         [](const auto& p) { return StoreFactoryName(p.param); });

// Every upload path stores the bytes with the CRC32C ferry computed (and sent, where GCS checks
// it): a commit-sized object (multipart upload) and a file of several resumable chunks, as the
// emulator reports them in the objects' metadata.
TEST(GcsStoreIntegrityTest, UploadsCarryTheCrc32cTheStoreHolds) {
  Result<TestStore> fresh = FakeGcsStoreFactory("Gcs", "t").fresh();
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  storage::ObjectStore& store = *fresh->store;
  std::string big(3 * 256 * 1024 + 1000, '\0');
  for (size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>(i * 13 + i / 1021);
  }
  ASSERT_TRUE(store.PutIfAbsent("_delta_log/0.json", "{\"commitInfo\":{}}").ok());
  {
    auto writer = store.OpenAtomicWriter("part-0.parquet");
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->Append(big).ok());
    Status closed = (*writer)->Close();
    ASSERT_TRUE(closed.ok()) << closed.ToString();
  }
  Result<FakeGcs*> server = FakeGcs::Shared();
  ASSERT_TRUE(server.ok());
  const std::string bucket = store.Describe("x").substr(5, store.Describe("x").find('/', 5) - 5);
  for (const auto& [name, data] : std::vector<std::pair<std::string, std::string>>{
           {"t%2F_delta_log%2F0.json", "{\"commitInfo\":{}}"}, {"t%2Fpart-0.parquet", big}}) {
    Result<HttpReply> meta = (*server)->Request("GET", "/storage/v1/b/" + bucket + "/o/" + name);
    ASSERT_TRUE(meta.ok()) << meta.status().ToString();
    ASSERT_EQ(meta->status, 200) << meta->body;
    EXPECT_NE(meta->body.find("\"crc32c\":\"" + http::Crc32cBase64(http::Crc32c(data)) + "\""),
              std::string::npos)
        << name << ": " << meta->body;
  }
  EXPECT_EQ(*store.Read("part-0.parquet"), big);
}

// DeleteMany of 253 keys (3 missing) under a prefix: three batch requests (100, 100, 53 parts);
// every object given is gone (listing and a direct GET on the emulator), the others are kept.
TEST(GcsStoreBatchDeleteTest, DeleteManyGoesInBatchesOfAHundredAndLeavesNoObjectGiven) {
  Result<FakeGcs*> server = FakeGcs::Shared();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  Result<std::string> bucket = NewBucket();
  ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
  auto store = NewGcsStore((*server)->endpoint(), *bucket, "t");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::vector<std::string> doomed;
  for (int i = 0; i < 250; ++i) {
    doomed.push_back(fmt::format("d/part {:03}+=x.parquet", i));  // names that need encoding
    ASSERT_TRUE((*store)->Put(doomed.back(), "x").ok()) << doomed.back();
  }
  for (int i = 0; i < 3; ++i) {
    doomed.push_back(fmt::format("d/never-was-{}", i));
    ASSERT_TRUE((*store)->Put(fmt::format("d/kept-{}", i), "k").ok());
  }
  const uint64_t attempts = (*store)->counters().attempts;
  const uint64_t retries = (*store)->counters().retries;
  Status deleted = (*store)->DeleteMany(doomed);
  ASSERT_TRUE(deleted.ok()) << deleted.ToString();
  EXPECT_EQ((*store)->counters().attempts - attempts - ((*store)->counters().retries - retries), 3u)
      << "253 deletes in 3 batch requests";
  Result<std::vector<storage::ObjectInfo>> left = (*store)->List("d/");
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  ASSERT_EQ(left->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*left)[static_cast<size_t>(i)].key, fmt::format("d/kept-{}", i));
  }
  Result<HttpReply> gone = (*server)->Request(
      "GET", "/storage/v1/b/" + *bucket + "/o/" + "t%2Fd%2Fpart%20007%2B%3Dx.parquet");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(gone->status, 404) << gone->body;
  // Deleting them again (all already gone) is no error.
  EXPECT_TRUE((*store)->DeleteMany(doomed).ok());
}

// A stand-in answers the batch: parts out of order, by Content-ID. A part refused (403) is the
// call's error naming its object; a part answered 503 is sent again alone and succeeds.
TEST(GcsStoreBatchDeleteTest, PartFailureIsReportedNamingTheObject) {
  HttpStandIn stand_in;
  std::mutex mu;
  int second_part_status = 403;  // guarded by mu
  int single_deletes = 0;        // guarded by mu
  std::string batch_body;        // guarded by mu
  stand_in.server().Post("/batch/storage/v1", [&](const httplib::Request& req,
                                                  httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    batch_body = req.body;
    auto part = [](int id, const std::string& status, const std::string& body) {
      return fmt::format(
          "--zz\r\nContent-Type: application/http\r\nContent-ID: <response-{}>\r\n\r\n"
          "HTTP/1.1 {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}\r\n",
          id, status, body.size(), body);
    };
    const std::string error =
        second_part_status == 403
            ? R"({"error":{"code":403,"message":"caller lacks storage.objects.delete","errors":[{"reason":"forbidden"}]}})"
            : R"({"error":{"code":503,"message":"try later","errors":[{"reason":"backendError"}]}})";
    res.set_content(
        part(3, "404 Not Found", "") +
            part(2, second_part_status == 403 ? "403 Forbidden" : "503 Service Unavailable",
                 error) +
            part(1, "204 No Content", "") + "--zz--\r\n",
        "multipart/mixed; boundary=zz");
  });
  stand_in.server().Delete(".*", [&](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    ++single_deletes;
    res.status = 204;
  });
  ASSERT_TRUE(stand_in.Start().ok());
  auto store = NewGcsStore(stand_in.url(), "bkt", "");
  ASSERT_TRUE(store.ok()) << store.status().ToString();

  Status refused = (*store)->DeleteMany({"a.parquet", "sub/b.parquet", "c.parquet"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("gs://bkt/sub/b.parquet"), std::string::npos)
      << refused.ToString();
  EXPECT_NE(refused.message().find("403"), std::string::npos) << refused.ToString();
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_NE(batch_body.find("DELETE /storage/v1/b/bkt/o/sub%2Fb.parquet HTTP/1.1"),
              std::string::npos)
        << batch_body;
    EXPECT_EQ(single_deletes, 0);
    second_part_status = 503;
  }
  Status retried = (*store)->DeleteMany({"a.parquet", "sub/b.parquet", "c.parquet"});
  EXPECT_TRUE(retried.ok()) << retried.ToString();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(single_deletes, 1) << "the part answered 503 is sent again alone";
}

}  // namespace
}  // namespace ferry::testing

// The GCS store (ferry/storage/gcs/gcs_store.h) against fake-gcs-server (ferry/testing/
// fake_gcs.h): the ObjectStore conformance suite (object_store_suite.h), at a bucket's root and
// under a prefix, with small parts (256 KiB) and listing pages (7) so that resumable uploads in
// several chunks and listings of several pages are exercised. One emulator for the binary; a
// fresh bucket per test.
#include "ferry/storage/gcs/gcs_store.h"

#include <gtest/gtest.h>

#include <atomic>

#include "ferry/http/client.h"
#include "ferry/http/digest.h"
#include "ferry/testing/fake_gcs.h"
#include "ferry/testing/object_store_suite.h"
#include "ferry/testing/test_store.h"

namespace ferry::testing {
namespace {

StoreFactory FakeGcsStoreFactory(const std::string& name, const std::string& root) {
  StoreFactory factory;
  factory.name = name;
  factory.fresh = [root]() -> Result<TestStore> {
    static std::atomic<int> next_bucket{0};
    FERRY_ASSIGN_OR_RETURN(FakeGcs * server, FakeGcs::Shared());
    const std::string bucket = "suite-" + std::to_string(next_bucket.fetch_add(1));
    FERRY_RETURN_IF_ERROR(server->CreateBucket(bucket));
    http::HttpClientOptions client_options;
    client_options.allow_http = true;
    FERRY_ASSIGN_OR_RETURN(std::unique_ptr<http::HttpClient> client,
                           http::HttpClient::Create(client_options));
    storage::gcs::GcsStoreOptions options{.bucket = bucket,
                                          .root = root,
                                          .endpoint = server->endpoint(),
                                          .transfer = {.part_size = 256 * 1024},
                                          .list_page_size = 7};
    FERRY_ASSIGN_OR_RETURN(std::unique_ptr<storage::gcs::GcsStore> store,
                           storage::gcs::GcsStore::Create(std::move(options), std::move(client)));
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

}  // namespace
}  // namespace ferry::testing

// The GCS store (ferry/storage/gcs/gcs_store.h) against fake-gcs-server (ferry/testing/
// fake_gcs.h): the ObjectStore conformance suite (object_store_suite.h), at a bucket's root and
// under a prefix, with small parts (256 KiB) and listing pages (7) so that resumable uploads in
// several chunks and listings of several pages are exercised. One emulator for the binary; a
// fresh bucket per test.
#include "ferry/storage/gcs/gcs_store.h"

#include <gtest/gtest.h>

#include <atomic>

#include "ferry/http/client.h"
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

}  // namespace
}  // namespace ferry::testing

#include "ferry/testing/s3_test_store.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>

#include "ferry/storage/s3/s3_store.h"

#ifndef FERRY_TESTDATA_DIR
#error "FERRY_TESTDATA_DIR must name ../shared/testdata"
#endif

namespace ferry::testing {
namespace {

constexpr char kTestdataBucket[] = "testdata";

Result<std::shared_ptr<storage::ObjectStore>> Open(const RadosGw& rgw, const std::string& bucket,
                                                   const std::string& root) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<storage::s3::S3Store> store,
                         storage::s3::OpenS3Store(bucket, root, RadosGwStorageOptions(rgw)));
  return std::shared_ptr<storage::ObjectStore>(std::move(store));
}

// Uploads the golden tables once; every later call answers the first one's outcome.
Status UploadTestdata(RadosGw& rgw) {
  static std::mutex mu;
  static bool done = false;
  static Status outcome;
  std::lock_guard<std::mutex> lock(mu);
  if (done) {
    return outcome;
  }
  done = true;
  outcome = rgw.CreateBucket(kTestdataBucket);
  for (const char* dir : {"delta-golden", "delta-kernel"}) {
    if (!outcome.ok()) {
      break;
    }
    outcome = rgw.Cli()
                  .Aws({"s3", "sync", std::string(FERRY_TESTDATA_DIR) + "/" + dir,
                        fmt::format("s3://{}/{}", kTestdataBucket, dir), "--no-progress",
                        "--only-show-errors"})
                  .status();
  }
  if (!outcome.ok()) {
    outcome = outcome.WithContext("uploading {} to radosgw", FERRY_TESTDATA_DIR);
  }
  return outcome;
}

}  // namespace

storage::StorageOptions RadosGwStorageOptions(const RadosGw& rgw) {
  return {
      {"aws_endpoint_url", rgw.endpoint()},
      {"aws_access_key_id", rgw.access_key()},
      {"aws_secret_access_key", rgw.secret_key()},
      {"aws_region", rgw.region()},
      {"aws_allow_http", "true"},
      {"upload_part_size", "5MiB"},
  };
}

Result<std::string> NewRadosGwBucket(RadosGw& rgw) {
  static std::atomic<int> next{0};
  std::string bucket = fmt::format("ferry-{}", next++);
  FERRY_RETURN_IF_ERROR(rgw.CreateBucket(bucket));
  return bucket;
}

StoreFactory RadosGwStoreFactory(std::string name, std::string root) {
  return {
      .name = std::move(name),
      .fresh = [root]() -> Result<TestStore> {
        FERRY_ASSIGN_OR_RETURN(RadosGw * rgw, RadosGw::Shared());
        FERRY_ASSIGN_OR_RETURN(std::string bucket, NewRadosGwBucket(*rgw));
        FERRY_ASSIGN_OR_RETURN(auto store, Open(*rgw, bucket, root));
        return TestStore{.store = std::move(store)};
      },
      .testdata = []() -> Result<std::shared_ptr<storage::ObjectStore>> {
        FERRY_ASSIGN_OR_RETURN(RadosGw * rgw, RadosGw::Shared());
        FERRY_RETURN_IF_ERROR(UploadTestdata(*rgw));
        return Open(*rgw, kTestdataBucket, "");
      },
  };
}

}  // namespace ferry::testing

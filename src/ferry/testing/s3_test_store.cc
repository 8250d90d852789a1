#include "ferry/testing/s3_test_store.h"

#include <fmt/format.h>

#include <atomic>

#include "ferry/storage/s3/s3_store.h"
#include "ferry/testing/server_test_store.h"

#ifndef FERRY_TESTDATA_DIR
#error "FERRY_TESTDATA_DIR must name ../shared/testdata"
#endif

namespace ferry::testing {
namespace {

Result<std::shared_ptr<storage::ObjectStore>> Open(RadosGw& rgw, const std::string& bucket,
                                                   const std::string& root, bool /*create*/) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<storage::s3::S3Store> store,
                         storage::s3::OpenS3Store(bucket, root, RadosGwStorageOptions(rgw)));
  return std::shared_ptr<storage::ObjectStore>(std::move(store));
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
  return ServerStoreFactory<RadosGw>(
      std::move(name), std::move(root),
      {.server_name = "radosgw",
       .new_bucket = NewRadosGwBucket,
       .create_bucket = [](RadosGw& rgw,
                           const std::string& bucket) { return rgw.CreateBucket(bucket); },
       .upload_dir =
           [](RadosGw& rgw, const std::string& dir, const std::string& bucket,
              const std::string& prefix) {
             return rgw.Cli()
                 .Aws({"s3", "sync", dir, fmt::format("s3://{}/{}", bucket, prefix),
                       "--no-progress", "--only-show-errors"})
                 .status();
           },
       .open = Open});
}

}  // namespace ferry::testing

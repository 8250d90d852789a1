// The StoreFactory (test_store.h) of a store on a test server, as s3_test_store.h (radosgw),
// azure_test_store.h (Azurite) and gcs_test_store.h (fake-gcs-server) make it from the few things
// that differ between them (ServerStoreOps): fresh() opens a store on a bucket (or container) of
// its own, under the factory's root; testdata() opens one on the bucket kTestdataBucket, into
// which ../shared/testdata's golden tables are uploaded once per process (UploadTestdataOnce),
// read-only afterwards. OpenStoreByUri opens a store as users get it, through a table URI.
//
// Header-only. REQUIRES: FERRY_TESTDATA_DIR names ../shared/testdata (the libraries' CMake
// defines it). Thread-safety: the factories' functions may be called from any thread, and so may
// the ops' functions (they are).
#pragma once

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/storage/object_store.h"
#include "ferry/storage/storage_options.h"
#include "ferry/storage/store_factory.h"
#include "ferry/storage/table_uri.h"
#include "ferry/testing/test_store.h"

#ifndef FERRY_TESTDATA_DIR
#error "FERRY_TESTDATA_DIR must name ../shared/testdata"
#endif

namespace ferry::testing {

// The bucket (or container) that holds the golden tables.
inline constexpr char kTestdataBucket[] = "testdata";

// Server: a test server class with `static Result<Server*> Shared()` (one per test binary).
template <typename Server>
struct ServerStoreOps {
  // What the upload's error names: "radosgw", "azurite", "fake-gcs-server".
  std::string server_name;
  // A bucket of its own for one test, created.
  std::function<Result<std::string>(Server&)> new_bucket;
  // Creates kTestdataBucket; empty when upload_dir creates what it needs.
  std::function<Status(Server&, const std::string& bucket)> create_bucket;
  // Uploads the files under the local directory `dir` into `bucket` under the prefix `prefix`.
  std::function<Status(Server&, const std::string& dir, const std::string& bucket,
                       const std::string& prefix)>
      upload_dir;
  // The store on `bucket` under `root` ("" = the bucket's root); `create`: for a fresh bucket
  // (the table may not exist yet), else an existing one.
  std::function<Result<std::shared_ptr<storage::ObjectStore>>(Server&, const std::string& bucket,
                                                              const std::string& root, bool create)>
      open;
};

// Uploads ../shared/testdata's delta-golden and delta-kernel into kTestdataBucket the first time,
// for every factory of `Server` in the process; every later call answers the first one's outcome.
template <typename Server>
Status UploadTestdataOnce(Server& server, const ServerStoreOps<Server>& ops) {
  static std::mutex mu;
  static bool done = false;
  static Status outcome;
  std::lock_guard<std::mutex> lock(mu);
  if (done) {
    return outcome;
  }
  done = true;
  if (ops.create_bucket) {
    outcome = ops.create_bucket(server, kTestdataBucket);
  }
  for (const char* dir : {"delta-golden", "delta-kernel"}) {
    if (!outcome.ok()) {
      break;
    }
    outcome =
        ops.upload_dir(server, std::string(FERRY_TESTDATA_DIR) + "/" + dir, kTestdataBucket, dir);
  }
  if (!outcome.ok()) {
    outcome = outcome.WithContext("uploading {} to {}", FERRY_TESTDATA_DIR, ops.server_name);
  }
  return outcome;
}

// `name` names the factory in test names; `root` is the store's name prefix inside each fresh
// bucket ("" = the bucket's root).
template <typename Server>
StoreFactory ServerStoreFactory(std::string name, std::string root, ServerStoreOps<Server> ops) {
  return {
      .name = std::move(name),
      .fresh = [root, ops]() -> Result<TestStore> {
        FERRY_ASSIGN_OR_RETURN(Server * server, Server::Shared());
        FERRY_ASSIGN_OR_RETURN(std::string bucket, ops.new_bucket(*server));
        FERRY_ASSIGN_OR_RETURN(auto store, ops.open(*server, bucket, root, /*create=*/true));
        return TestStore{.store = std::move(store)};
      },
      .testdata = [ops]() -> Result<std::shared_ptr<storage::ObjectStore>> {
        FERRY_ASSIGN_OR_RETURN(Server * server, Server::Shared());
        FERRY_RETURN_IF_ERROR(UploadTestdataOnce(*server, ops));
        return ops.open(*server, kTestdataBucket, "", /*create=*/false);
      },
  };
}

// The store at SCHEME://BUCKET[/ROOT] with `options`, through storage/store_factory.h.
inline Result<std::shared_ptr<storage::ObjectStore>> OpenStoreByUri(
    const std::string& scheme, const std::string& bucket, const std::string& root,
    const storage::StorageOptions& options, bool create) {
  const std::string location = root.empty() ? fmt::format("{}://{}", scheme, bucket)
                                            : fmt::format("{}://{}/{}", scheme, bucket, root);
  FERRY_ASSIGN_OR_RETURN(storage::TableUri uri, storage::ParseTableUri(location));
  return storage::OpenTableStore(
      uri, options, create ? storage::OpenMode::kCreate : storage::OpenMode::kExisting);
}

}  // namespace ferry::testing

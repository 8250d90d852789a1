#include "ferry/testing/gcs_test_store.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include "ferry/storage/store_factory.h"
#include "ferry/storage/table_uri.h"
#include "ferry/testing/cache_dir.h"
#include "ferry/testing/subprocess.h"

#ifndef FERRY_TESTDATA_DIR
#error "FERRY_TESTDATA_DIR must name ../shared/testdata"
#endif
#ifndef FERRY_SOURCE_DIR
#error "FERRY_SOURCE_DIR must name the source tree"
#endif

namespace ferry::testing {
namespace {

constexpr char kTestdataBucket[] = "testdata";

std::string VenvPython() {
  return FerryCacheDir() + "/gcs-py-venv/bin/python";
}

Result<std::shared_ptr<storage::ObjectStore>> Open(const FakeGcs& gcs, const std::string& bucket,
                                                   const std::string& root,
                                                   storage::OpenMode mode) {
  const std::string location =
      root.empty() ? fmt::format("gs://{}", bucket) : fmt::format("gs://{}/{}", bucket, root);
  FERRY_ASSIGN_OR_RETURN(storage::TableUri uri, storage::ParseTableUri(location));
  return storage::OpenTableStore(uri, FakeGcsStorageOptions(gcs), mode);
}

// Uploads the golden tables once; every later call answers the first one's outcome.
Status UploadTestdata(const FakeGcs& gcs) {
  static std::mutex mu;
  static bool done = false;
  static Status outcome;
  std::lock_guard<std::mutex> lock(mu);
  if (done) {
    return outcome;
  }
  done = true;
  for (const char* dir : {"delta-golden", "delta-kernel"}) {
    Result<std::string> uploaded = GcsPythonClient(
        gcs, {"upload", std::string(FERRY_TESTDATA_DIR) + "/" + dir, kTestdataBucket, dir});
    if (!uploaded.ok()) {
      outcome = uploaded.status().WithContext("uploading {} to fake-gcs-server", dir);
      break;
    }
  }
  return outcome;
}

}  // namespace

storage::StorageOptions FakeGcsStorageOptions(const FakeGcs& gcs) {
  return {
      {"storage_emulator_host", gcs.endpoint()},
      {"upload_part_size", "256KiB"},
  };
}

Result<std::string> NewFakeGcsBucket(const FakeGcs& gcs) {
  static std::atomic<int> next{0};
  std::string bucket = fmt::format("fresh-{}", next.fetch_add(1));
  FERRY_RETURN_IF_ERROR(gcs.CreateBucket(bucket));
  return bucket;
}

Result<std::string> GcsPythonClient(const FakeGcs& gcs, const std::vector<std::string>& args) {
  const std::string python = VenvPython();
  if (::access(python.c_str(), X_OK) != 0) {
    return NotFound(
        "{} is missing: Google's google-cloud-storage client is installed by `make setup-gcs` "
        "(tools/setup_py_venv.sh)",
        python);
  }
  std::vector<std::string> argv = {python,
                                   std::string(FERRY_SOURCE_DIR) + "/tests/gcs/gcs_client.py"};
  argv.insert(argv.end(), args.begin(), args.end());
  FERRY_ASSIGN_OR_RETURN(
      ProgramOutput out,
      RunProgram(
          argv, std::chrono::minutes(5),
          ProgramOptions{.env = {"STORAGE_EMULATOR_HOST=" + gcs.endpoint(),
                                 "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"}}));
  if (out.exit_code != 0) {
    return Unavailable("gcs_client.py {} exited with {}: {}", args.empty() ? "" : args[0],
                       out.exit_code, out.err);
  }
  return out.out;
}

StoreFactory FakeGcsStoreFactory(std::string name, std::string root) {
  return {
      .name = std::move(name),
      .fresh = [root]() -> Result<TestStore> {
        FERRY_ASSIGN_OR_RETURN(FakeGcs * gcs, FakeGcs::Shared());
        FERRY_ASSIGN_OR_RETURN(std::string bucket, NewFakeGcsBucket(*gcs));
        FERRY_ASSIGN_OR_RETURN(auto store, Open(*gcs, bucket, root, storage::OpenMode::kCreate));
        return TestStore{.store = std::move(store)};
      },
      .testdata = []() -> Result<std::shared_ptr<storage::ObjectStore>> {
        FERRY_ASSIGN_OR_RETURN(FakeGcs * gcs, FakeGcs::Shared());
        FERRY_RETURN_IF_ERROR(UploadTestdata(*gcs));
        return Open(*gcs, kTestdataBucket, "", storage::OpenMode::kExisting);
      },
  };
}

}  // namespace ferry::testing

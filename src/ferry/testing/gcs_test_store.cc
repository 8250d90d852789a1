#include "ferry/testing/gcs_test_store.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>

#include "ferry/testing/cache_dir.h"
#include "ferry/testing/server_test_store.h"
#include "ferry/testing/subprocess.h"

#ifndef FERRY_TESTDATA_DIR
#error "FERRY_TESTDATA_DIR must name ../shared/testdata"
#endif
#ifndef FERRY_SOURCE_DIR
#error "FERRY_SOURCE_DIR must name the source tree"
#endif

namespace ferry::testing {
namespace {

std::string VenvPython() {
  return FerryCacheDir() + "/gcs-py-venv/bin/python";
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
  return ServerStoreFactory<FakeGcs>(
      std::move(name), std::move(root),
      {.server_name = "fake-gcs-server",
       .new_bucket = NewFakeGcsBucket,
       // The client creates the bucket.
       .upload_dir =
           [](const FakeGcs& gcs, const std::string& dir, const std::string& bucket,
              const std::string& prefix) {
             return GcsPythonClient(gcs, {"upload", dir, bucket, prefix}).status();
           },
       .open =
           [](const FakeGcs& gcs, const std::string& bucket, const std::string& prefix,
              bool create) {
             return OpenStoreByUri("gs", bucket, prefix, FakeGcsStorageOptions(gcs), create);
           }});
}

}  // namespace ferry::testing

#include "ferry/testing/azure_test_store.h"

#include <fmt/format.h>

#include <mutex>
#include <vector>

#include "ferry/storage/store_factory.h"
#include "ferry/storage/table_uri.h"

#ifndef FERRY_TESTDATA_DIR
#error "FERRY_TESTDATA_DIR must name ../shared/testdata"
#endif

namespace ferry::testing {
namespace {

constexpr char kTestdataContainer[] = "testdata";
constexpr int kContainersPerBatch = 16;

Result<std::shared_ptr<storage::ObjectStore>> Open(const Azurite& azurite,
                                                   const std::string& container,
                                                   const std::string& root,
                                                   storage::OpenMode mode) {
  const std::string location =
      root.empty() ? fmt::format("az://{}", container) : fmt::format("az://{}/{}", container, root);
  FERRY_ASSIGN_OR_RETURN(storage::TableUri uri, storage::ParseTableUri(location));
  return storage::OpenTableStore(uri, AzuriteStorageOptions(azurite), mode);
}

// Uploads the golden tables once; every later call answers the first one's outcome.
Status UploadTestdata(const Azurite& azurite) {
  static std::mutex mu;
  static bool done = false;
  static Status outcome;
  std::lock_guard<std::mutex> lock(mu);
  if (done) {
    return outcome;
  }
  done = true;
  outcome = azurite.CreateContainer(kTestdataContainer);
  for (const char* dir : {"delta-golden", "delta-kernel"}) {
    if (!outcome.ok()) {
      break;
    }
    outcome =
        azurite.Cli()
            .UploadDirectory(std::string(FERRY_TESTDATA_DIR) + "/" + dir, kTestdataContainer, dir)
            .status();
  }
  if (!outcome.ok()) {
    outcome = outcome.WithContext("uploading {} to azurite", FERRY_TESTDATA_DIR);
  }
  return outcome;
}

}  // namespace

storage::StorageOptions AzuriteStorageOptions(const Azurite& azurite) {
  return {
      {"azure_storage_use_emulator", "true"},
      {"azure_storage_endpoint", azurite.endpoint()},
      {"upload_part_size", "64KiB"},
  };
}

Result<std::string> NewAzuriteContainer(const Azurite& azurite) {
  static std::mutex mu;
  static int next = 0;     // the next container to hand out
  static int created = 0;  // containers fresh-0 .. fresh-<created - 1> exist
  std::lock_guard<std::mutex> lock(mu);
  if (next == created) {
    std::vector<std::vector<std::string>> commands;
    for (int i = created; i < created + kContainersPerBatch; ++i) {
      commands.push_back({"create-container", fmt::format("fresh-{}", i)});
    }
    FERRY_RETURN_IF_ERROR(azurite.Cli().Sequence(commands).status());
    created += kContainersPerBatch;
  }
  return fmt::format("fresh-{}", next++);
}

StoreFactory AzuriteStoreFactory(std::string name, std::string root) {
  return {
      .name = std::move(name),
      .fresh = [root]() -> Result<TestStore> {
        FERRY_ASSIGN_OR_RETURN(Azurite * azurite, Azurite::Shared());
        FERRY_ASSIGN_OR_RETURN(std::string container, NewAzuriteContainer(*azurite));
        FERRY_ASSIGN_OR_RETURN(auto store,
                               Open(*azurite, container, root, storage::OpenMode::kCreate));
        return TestStore{.store = std::move(store)};
      },
      .testdata = []() -> Result<std::shared_ptr<storage::ObjectStore>> {
        FERRY_ASSIGN_OR_RETURN(Azurite * azurite, Azurite::Shared());
        FERRY_RETURN_IF_ERROR(UploadTestdata(*azurite));
        return Open(*azurite, kTestdataContainer, "", storage::OpenMode::kExisting);
      },
  };
}

}  // namespace ferry::testing

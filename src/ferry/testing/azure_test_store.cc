#include "ferry/testing/azure_test_store.h"

#include <fmt/format.h>

#include <mutex>
#include <vector>

#include "ferry/testing/server_test_store.h"

#ifndef FERRY_TESTDATA_DIR
#error "FERRY_TESTDATA_DIR must name ../shared/testdata"
#endif

namespace ferry::testing {
namespace {

constexpr int kContainersPerBatch = 16;

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
  return ServerStoreFactory<Azurite>(
      std::move(name), std::move(root),
      {.server_name = "azurite",
       .new_bucket = NewAzuriteContainer,
       .create_bucket =
           [](const Azurite& azurite, const std::string& container) {
             return azurite.CreateContainer(container);
           },
       .upload_dir =
           [](const Azurite& azurite, const std::string& dir, const std::string& container,
              const std::string& prefix) {
             return azurite.Cli().UploadDirectory(dir, container, prefix).status();
           },
       .open =
           [](const Azurite& azurite, const std::string& container, const std::string& prefix,
              bool create) {
             return OpenStoreByUri("az", container, prefix, AzuriteStorageOptions(azurite), create);
           }});
}

}  // namespace ferry::testing

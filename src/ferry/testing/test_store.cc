#include "ferry/testing/test_store.h"

#include <stdlib.h>

#include <filesystem>
#include <system_error>

#include "ferry/storage/local_store.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/fault_injecting_store.h"

#ifndef FERRY_TESTDATA_DIR
#error "FERRY_TESTDATA_DIR must name ../shared/testdata"
#endif

namespace ferry::testing {
namespace {

Result<TestStore> LocalTempStore(bool sync) {
  char tmpl[] = "/tmp/ferry-store-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    return IOError("mkdtemp /tmp/ferry-store-XXXXXX failed");
  }
  const std::string dir = tmpl;
  auto store = storage::LocalStore::Create(dir, storage::LocalStoreOptions{.sync = sync});
  if (!store.ok()) {
    std::filesystem::remove_all(dir);
    return store.status();
  }
  return TestStore{.store = std::shared_ptr<storage::ObjectStore>(std::move(store).value()),
                   .cleanup =
                       [dir] {
                         std::error_code ec;
                         std::filesystem::remove_all(dir, ec);
                       },
                   .local_dir = dir};
}

Result<std::shared_ptr<storage::ObjectStore>> LocalTestdata() {
  FERRY_ASSIGN_OR_RETURN(auto store, storage::LocalStore::Create(FERRY_TESTDATA_DIR));
  return std::shared_ptr<storage::ObjectStore>(std::move(store));
}

}  // namespace

void PrintTo(const StoreFactory& factory, std::ostream* os) {
  *os << factory.name;
}

std::string StoreFactoryName(const StoreFactory& factory) {
  return factory.name;
}

StoreFactory MemoryStoreFactory() {
  return {.name = "Memory", .fresh = []() -> Result<TestStore> {
            return TestStore{.store = std::make_shared<storage::InMemoryStore>()};
          }};
}

StoreFactory LocalDiskStoreFactory() {
  return {.name = "Local", .fresh = [] { return LocalTempStore(true); }, .testdata = LocalTestdata};
}

std::vector<StoreFactory> LocalStoreFactories() {
  return {
      MemoryStoreFactory(),
      LocalDiskStoreFactory(),
      {.name = "LocalNoSync", .fresh = [] { return LocalTempStore(false); }},
      {.name = "FaultInjecting",
       .fresh = []() -> Result<TestStore> {
         return TestStore{.store = std::make_shared<FaultInjectingStore>(
                              std::make_shared<storage::InMemoryStore>())};
       }},
  };
}

}  // namespace ferry::testing

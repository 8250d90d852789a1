// StoreFactory: how the storage-agnostic test suites get the stores they run on, one factory per
// ObjectStore implementation. A suite is written once (testing/object_store_suite.h, the Delta
// suites of delta/store_suites.h) and instantiated per binary for the factories that binary
// has: the unit binaries for the local stores (below), the S3 integration binaries for radosgw
// (testing/s3_test_store.h), the Azure ones for Azurite (testing/azure_test_store.h); another
// store adds a factory and one INSTANTIATE line per suite.
//
// Thread-safety: the factories' functions may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/storage/object_store.h"

namespace ferry::testing {

// A store for one test and what to undo after it.
struct TestStore {
  std::shared_ptr<storage::ObjectStore> store;
  // Runs after the test, once the store is released (removes a temp dir); may be empty.
  std::function<void()> cleanup;
  // The local directory behind a LocalStore, for checks on the file system itself; "" for
  // other stores.
  std::string local_dir;
};

struct StoreFactory {
  // Part of the test names: letters and digits only.
  std::string name;
  // A new, empty store of its own.
  std::function<Result<TestStore>()> fresh;
  // A store holding ../shared/testdata: keys "delta-golden/<table>/..." and
  // "delta-kernel/<table>/...". May be shared by every test of the binary, which only read it.
  // Empty for a store that has none (the golden-table suites are not instantiated for it).
  std::function<Result<std::shared_ptr<storage::ObjectStore>>()> testdata;
};

// gtest prints a parameter with this (its name) in failure messages.
void PrintTo(const StoreFactory& factory, std::ostream* os);

// A name generator for INSTANTIATE_TEST_SUITE_P over StoreFactory parameters.
std::string StoreFactoryName(const StoreFactory& factory);

// Memory (InMemoryStore), Local (LocalStore in a temp dir), LocalNoSync (without fsync),
// FaultInjecting (over an InMemoryStore, with nothing injected).
std::vector<StoreFactory> LocalStoreFactories();
// A LocalStore in a temp dir, whose testdata is ../shared/testdata itself.
StoreFactory LocalDiskStoreFactory();
// An InMemoryStore (no testdata).
StoreFactory MemoryStoreFactory();

}  // namespace ferry::testing

// Azure Blob stores on the test binary's Azurite (azurite.h, Azurite::Shared()) for the
// storage-agnostic suites (test_store.h): AzureBlobStore as users get it, through an az:// table
// URI and storage options (storage/store_factory.h), with small blocks (64 KiB) so that the
// suites' larger objects go up as Put Block + Put Block List.
//
//   - fresh(): a container of its own per test ("fresh-<n>"), the store at its root or under
//     `root`. Containers are made 16 at a time by Microsoft's SDK in one node process (each node
//     start costs about a second of CPU);
//   - testdata(): ../shared/testdata's delta-golden and delta-kernel, uploaded once per process
//     by the SDK into the container "testdata", read-only afterwards.
//
// Thread-safety: the functions and the factories' functions may be called from any thread.
#pragma once

#include <string>

#include "ferry/base/result.h"
#include "ferry/storage/storage_options.h"
#include "ferry/testing/azurite.h"
#include "ferry/testing/test_store.h"

namespace ferry::testing {

// The storage options that reach `azurite` with the emulator's account key: the emulator's
// endpoint, azure_storage_use_emulator, upload_part_size 64KiB.
storage::StorageOptions AzuriteStorageOptions(const Azurite& azurite);

// A container of its own for a test: "fresh-<n>", n counting up in this process. Created.
Result<std::string> NewAzuriteContainer(const Azurite& azurite);

// `name` names the factory in test names; `root` is the store's name prefix inside each fresh
// container ("" = the container's root).
StoreFactory AzuriteStoreFactory(std::string name, std::string root);

}  // namespace ferry::testing

// GCS stores on the test binary's fake-gcs-server (fake_gcs.h, FakeGcs::Shared()) for the
// storage-agnostic suites (test_store.h): GcsStore as users get it, through a gs:// table URI and
// storage options (storage/store_factory.h, storage_emulator_host), with the smallest chunk GCS
// allows (256 KiB) so that the suites' larger objects go up as resumable uploads of several
// chunks.
//
//   - fresh(): a bucket of its own per test ("fresh-<n>"), the store at its root or under `root`;
//   - testdata(): ../shared/testdata's delta-golden and delta-kernel, uploaded once per process by
//     Google's own Python client (GcsPythonClient) into the bucket "testdata", read-only
//     afterwards.
//
// GcsPythonClient runs tests/gcs/gcs_client.py (google-cloud-storage, pinned by
// tests/gcs/requirements.txt) in the venv `make setup-gcs` installs in ~/.cache/ferry/gcs-py-venv,
// with STORAGE_EMULATOR_HOST pointing at the emulator: NotFound naming `make setup-gcs` when the
// venv is missing.
//
// Thread-safety: the functions and the factories' functions may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/storage/storage_options.h"
#include "ferry/testing/fake_gcs.h"
#include "ferry/testing/test_store.h"

namespace ferry::testing {

// The storage options that reach `gcs`: storage_emulator_host, upload_part_size 256KiB.
storage::StorageOptions FakeGcsStorageOptions(const FakeGcs& gcs);

// A bucket of its own for a test: "fresh-<n>", n counting up in this process. Created.
Result<std::string> NewFakeGcsBucket(const FakeGcs& gcs);

// `gcs_client.py ARGS...` against `gcs`; its standard output. Unavailable (with its stderr) when
// it exits non-zero.
Result<std::string> GcsPythonClient(const FakeGcs& gcs, const std::vector<std::string>& args);

// `name` names the factory in test names; `root` is the store's name prefix inside each fresh
// bucket ("" = the bucket's root).
StoreFactory FakeGcsStoreFactory(std::string name, std::string root);

}  // namespace ferry::testing

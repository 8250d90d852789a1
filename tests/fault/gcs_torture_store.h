// GcsTortureStore: the torture harness's tables on Google Cloud Storage. A fake-gcs-server of the
// test's own (testing::FakeGcs, objects in memory, bucket "torture") with a StoreFaultProxy in
// front of it speaking GCS's dialect: every ferry child reaches the bucket through the proxy with
// the emulator variable alone (STORAGE_EMULATOR_HOST, as Google's clients read it: anonymous
// requests; no [storage] table in the configuration), while the harness reads the bucket
// directly. Its store-fault phase is ProxiedTortureStore's: GCS's `503 backendError` among the
// proxy's faults, and for the outage the proxy refusing every connection
// (StoreFaultProxy::SetDown), because the emulator keeps its objects in memory and a killed
// emulator would take the table with it (as AzureTortureStore does for Azurite).
// The storage options of every child: a 5 s request timeout and 4 attempts per request, as
// S3TortureStore's.
//
// Thread-safety: Start, Inject and the destructor from the test's main thread (the emulator dies
// with the thread that started it); Table from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "proxied_torture_store.h"
#include "store_fault_proxy.h"
#include "torture_table.h"

#include "ferry/base/result.h"
#include "ferry/testing/fake_gcs.h"

namespace ferry::fault {

class GcsTortureStore final : public ProxiedTortureStore {
 public:
  // Starts fake-gcs-server with bucket "torture", and the proxy (its faults drawn from `seed`).
  static Result<std::unique_ptr<GcsTortureStore>> Start(uint64_t seed);

  // gs://torture/<name>, reached through the proxy by the children.
  TableLocation Table(const std::string& name) const;
  // The harness's direct options for gs://torture/... (no proxy).
  storage::StorageOptions DirectOptions() const;
  // The children's environment for the bucket, through the proxy.
  std::vector<std::string> ChildEnv() const;

  StoreFaultProxy& proxy() override { return *proxy_; }

 private:
  GcsTortureStore(std::unique_ptr<testing::FakeGcs> gcs, std::unique_ptr<StoreFaultProxy> proxy)
      : gcs_(std::move(gcs)), proxy_(std::move(proxy)) {}

  Status TakeDown() override;
  Status BringBack() override;
  std::string ServerLog() const override;

  // Destruction order: the proxy (its connections to the emulator) before the emulator.
  std::unique_ptr<testing::FakeGcs> gcs_;
  std::unique_ptr<StoreFaultProxy> proxy_;
};

}  // namespace ferry::fault

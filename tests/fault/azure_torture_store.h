// AzureTortureStore: the torture harness's tables on Azure Blob Storage. An Azurite of the test's
// own (testing::Azurite, blobs in memory, container "torture") with a StoreFaultProxy in front of
// it speaking Azure's dialect: every ferry child reaches the account through the proxy with the
// emulator variables alone (AZURE_STORAGE_USE_EMULATOR, AZURE_STORAGE_ENDPOINT; no [storage]
// table in the configuration), while the harness reads the container directly. Its store-fault
// phase is ProxiedTortureStore's: Azure's `503 ServerBusy` among the proxy's faults, and for the
// outage the proxy refusing every connection (StoreFaultProxy::SetDown), because Azurite keeps
// its blobs in memory and a killed emulator would take the table with it.
// The storage options of every child: a 5 s request timeout and 4 attempts per request, as
// S3TortureStore's.
//
// Thread-safety: Start, Inject and the destructor from the test's main thread (Azurite dies with
// the thread that started it); Table from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "proxied_torture_store.h"
#include "store_fault_proxy.h"
#include "torture_table.h"

#include "ferry/base/result.h"
#include "ferry/testing/azurite.h"

namespace ferry::fault {

class AzureTortureStore final : public ProxiedTortureStore {
 public:
  // Starts Azurite (holding at most `memory_limit_mb` of blobs) with container "torture", and
  // the proxy (its faults drawn from `seed`).
  static Result<std::unique_ptr<AzureTortureStore>> Start(uint64_t seed, int64_t memory_limit_mb);

  // az://torture/<name>, reached through the proxy by the children.
  TableLocation Table(const std::string& name) const;
  // The harness's direct options for az://torture/... (no proxy).
  storage::StorageOptions DirectOptions() const;
  // The children's environment for the account, through the proxy.
  std::vector<std::string> ChildEnv() const;

  StoreFaultProxy& proxy() override { return *proxy_; }

 private:
  AzureTortureStore(std::unique_ptr<testing::Azurite> azurite,
                    std::unique_ptr<StoreFaultProxy> proxy)
      : azurite_(std::move(azurite)), proxy_(std::move(proxy)) {}

  Status TakeDown() override;
  Status BringBack() override;
  std::string ServerLog() const override;

  // Destruction order: the proxy (its connections to the emulator) before the emulator.
  std::unique_ptr<testing::Azurite> azurite_;
  std::unique_ptr<StoreFaultProxy> proxy_;
};

}  // namespace ferry::fault

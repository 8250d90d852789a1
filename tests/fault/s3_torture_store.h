// S3TortureStore: the torture harness's tables on S3. A radosgw of the test's own
// (testing::RadosGw, one bucket) with a StoreFaultProxy in front of it: every ferry child reaches
// the store through the proxy with the standard variables alone (AWS_ENDPOINT_URL,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ALLOW_HTTP; no [storage] table in
// the configuration), while the harness reads the bucket directly. Its store-fault phase is
// ProxiedTortureStore's: S3's `503 SlowDown` among the proxy's faults, and radosgw SIGKILLed and
// restarted on the same port for the outage (its OSD keeps the objects).
// The storage options of every child: a 5 s request timeout (a stalled request fails in
// seconds, not the default minute) and 4 attempts per request (a store down for seconds fails
// the batch, which the pipeline retries, rather than the request retrying for long).
//
// Thread-safety: Start, Inject and the destructor from the test's main thread (radosgw dies
// with the thread that started it); Table from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "proxied_torture_store.h"
#include "store_fault_proxy.h"
#include "torture_table.h"

#include "ferry/base/result.h"
#include "ferry/testing/radosgw.h"

namespace ferry::fault {

class S3TortureStore final : public ProxiedTortureStore {
 public:
  // Starts radosgw (its memstore holding `memstore_bytes`) with bucket "torture", and the proxy
  // (its faults drawn from `seed`).
  static Result<std::unique_ptr<S3TortureStore>> Start(uint64_t seed, int64_t memstore_bytes);

  // s3://torture/<name>, reached through the proxy by the children.
  TableLocation Table(const std::string& name) const;
  // The harness's direct options for s3://torture/... (explicit keys, no proxy).
  storage::StorageOptions DirectOptions() const;
  // The children's environment for the store, through the proxy.
  std::vector<std::string> ChildEnv() const;

  testing::RadosGw& gateway() { return *rgw_; }
  StoreFaultProxy& proxy() override { return *proxy_; }

 private:
  S3TortureStore(std::unique_ptr<testing::RadosGw> rgw, std::unique_ptr<StoreFaultProxy> proxy)
      : rgw_(std::move(rgw)), proxy_(std::move(proxy)) {}

  Status TakeDown() override;
  Status BringBack() override;
  std::string ServerLog() const override;

  // Destruction order: the proxy (its connections to the gateway) before the gateway.
  std::unique_ptr<testing::RadosGw> rgw_;
  std::unique_ptr<StoreFaultProxy> proxy_;
};

}  // namespace ferry::fault

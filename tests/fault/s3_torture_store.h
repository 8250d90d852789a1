// S3TortureStore: the torture harness's tables on S3. A radosgw of the test's own
// (testing::RadosGw, one bucket) with an S3FaultProxy in front of it: every ferry child reaches
// the store through the proxy with the standard variables alone (AWS_ENDPOINT_URL,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ALLOW_HTTP; no [storage] table in
// the configuration), while the harness reads the bucket directly. Its store-fault phase
// (StoreFaults::Inject), numbered:
//   1. The proxy turns on a mix of 503 SlowDown, connection resets before and after the request
//      reached the server, and stalled uploads; half the phase's ids are published in ten
//      pieces, each waited for until ferry committed it through the faults.
//   2. The proxy relays cleanly again; radosgw is stopped (SIGKILL), the other half of the ids is
//      published, ferry's /metrics is read while the store is down until it counted a failed
//      commit (at least 4 s), and the gateway is restarted on the same port.
//   3. EXPECTs: ferry never exited; it committed again after the restart; its log shows the
//      store's errors being retried; `ferry_commits_total{outcome="failed"}` counted the batches
//      that could not be committed while the store was down.
// The storage options of every child: a 5 s request timeout (a stalled request fails in
// seconds, not the default minute) and 4 attempts per request (a store down for seconds fails
// the batch, which the pipeline retries, rather than the request retrying for long).
//
// Thread-safety: Start, Inject and the destructor from the test's main thread (radosgw dies
// with the thread that started it); Table from any thread.
#pragma once

#include <memory>
#include <string>

#include "s3_fault_proxy.h"
#include "torture_scenario.h"
#include "torture_table.h"

#include "ferry/base/result.h"
#include "ferry/testing/radosgw.h"

namespace ferry::fault {

class S3TortureStore final : public StoreFaults {
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
  S3FaultProxy& proxy() { return *proxy_; }

  int Inject(Process* ferry, const TableLocation& table, int metrics_port, int64_t ids,
             const std::function<void(int64_t n)>& publish, const std::string& log) override;

 private:
  S3TortureStore(std::unique_ptr<testing::RadosGw> rgw, std::unique_ptr<S3FaultProxy> proxy)
      : rgw_(std::move(rgw)), proxy_(std::move(proxy)) {}

  // Destruction order: the proxy (its connections to the gateway) before the gateway.
  std::unique_ptr<testing::RadosGw> rgw_;
  std::unique_ptr<S3FaultProxy> proxy_;
};

// The sum of every sample of `name` in a Prometheus text exposition whose labels contain all of
// `labels` ("outcome=\"failed\""), -1 when the scrape failed.
double ScrapeMetric(int port, const std::string& name, const std::string& labels = "");

}  // namespace ferry::fault

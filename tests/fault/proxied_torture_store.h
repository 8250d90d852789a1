// ProxiedTortureStore: the torture harness's store-fault phase for tables in an object store that
// every ferry child reaches through a StoreFaultProxy (S3TortureStore, AzureTortureStore). Its
// phases, numbered:
//   1. The proxy turns on a mix of 503s in the store's dialect, connection resets before and
//      after the request reached the server, and stalled uploads; half the phase's ids are
//      published in ten pieces, each waited for until ferry committed it through the faults.
//   2. The proxy relays cleanly again; the store is taken away (TakeDown: radosgw SIGKILLed, or
//      the proxy refusing every connection), the other half of the ids is published, ferry's
//      /metrics is read while the store is away until it counted a failed commit (at least 4 s),
//      and the store is brought back (BringBack) on the same port.
//   3. EXPECTs: ferry never exited; it committed again after the store came back; its log shows
//      the store's errors being retried; `ferry_commits_total{outcome="failed"}` counted the
//      batches that could not be committed while the store was away.
//
// Thread-safety: Inject from the test's main thread.
#pragma once

#include <functional>
#include <string>

#include "store_fault_proxy.h"
#include "torture_scenario.h"
#include "torture_table.h"

#include "ferry/base/status.h"

namespace ferry::fault {

class ProxiedTortureStore : public StoreFaults {
 public:
  int Inject(Process* ferry, const TableLocation& table, int metrics_port, int64_t ids,
             const std::function<void(int64_t n)>& publish, const std::string& log) final;

  virtual StoreFaultProxy& proxy() = 0;

 protected:
  // Phase 2: the store unreachable for ferry, then reachable again with every object it held.
  virtual Status TakeDown() = 0;
  virtual Status BringBack() = 0;
  // The store server's log, for a failure message.
  virtual std::string ServerLog() const = 0;
};

// The sum of every sample of `name` in a Prometheus text exposition whose labels contain all of
// `labels` ("outcome=\"failed\""), -1 when the scrape failed.
double ScrapeMetric(int port, const std::string& name, const std::string& labels = "");

}  // namespace ferry::fault

// StoreFaultProxy: an HTTP/1.1 relay on 127.0.0.1 between ferry and an object store (radosgw for
// S3, Azurite for Azure Blob, fake-gcs-server for GCS) that breaks requests the way a flaky network
// and a throttling store do. It reads each request's head (and its Content-Length) and decides, by
// a seeded draw against the current FaultMix, what happens to it:
//   - kSlowDown: the proxy answers 503 itself in the store's dialect (S3's `SlowDown` XML error,
//     Azure's `ServerBusy` with its x-ms-error-code header, or GCS's JSON error with reason
//     `backendError`); the server never sees the request
//     (as S3 throttling a prefix, or an Azure account over its request rate);
//   - kResetBefore: the client's connection is reset (RST) before anything is forwarded: the
//     request was not sent;
//   - kResetAfter: the whole request is forwarded and the server's answer read, then the client's
//     connection is reset instead of relaying it: the server applied the request and the client
//     cannot know (an outcome-unknown error, settled by reading back);
//   - kStall: the head and half of the body are forwarded (all of a request without a body),
//     then nothing more moves until the client gives up (its request timeout) or `stall_for`
//     passes; then both connections close. A stalled upload is never complete on the server.
// Anything else is relayed unchanged, keep-alive included (one upstream connection per client
// connection). While the server refuses connections (the gateway stopped), every new request's
// client connection is reset (counted as `refused`). SetDown(true) makes the proxy behave the same
// with the server still up (an outage of a store whose data must survive it: Azurite keeps its
// blobs in memory): open connections are cut and every new request is reset until SetDown(false).
// StripQueryParameter(name) removes `name=...` from every forwarded request's target: a store
// that ignores a precondition (GCS's `ifGenerationMatch`), made from one that enforces it.
//
// Thread-safety: thread-safe. One accepting thread and one detached thread per client
// connection; the destructor shuts every socket down and waits for all of them to end.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "ferry/base/result.h"

namespace ferry::fault {

// The probability, per request, of each fault (their sum at most 1).
struct FaultMix {
  double slow_down = 0;
  double reset_before = 0;
  double reset_after = 0;
  double stall = 0;
  std::chrono::milliseconds stall_for{15000};
};

// Requests seen and faults injected so far.
struct ProxyCounts {
  int64_t requests = 0;
  int64_t slow_down = 0;
  int64_t reset_before = 0;
  int64_t reset_after = 0;
  int64_t stall = 0;
  int64_t refused = 0;  // the server did not accept the proxy's connection
  int64_t faults() const { return slow_down + reset_before + reset_after + stall; }
};

// The store whose error answers the proxy speaks.
enum class StoreDialect { kS3, kAzure, kGcs };

class StoreFaultProxy {
 public:
  static Result<std::unique_ptr<StoreFaultProxy>> Start(int upstream_port, uint64_t seed,
                                                        StoreDialect dialect = StoreDialect::kS3);
  ~StoreFaultProxy();
  StoreFaultProxy(const StoreFaultProxy&) = delete;
  StoreFaultProxy& operator=(const StoreFaultProxy&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT"
  std::string endpoint() const;
  // Applies to requests whose head arrives from now on. FaultMix{} relays everything.
  void SetMix(const FaultMix& mix);
  // Down: cuts every open connection and resets each new one (counted as `refused`) until
  // SetDown(false).
  void SetDown(bool down);
  // From now on, forwarded requests lose the query parameter `name` ("" keeps every parameter).
  void StripQueryParameter(std::string name);
  ProxyCounts counts() const;

 private:
  enum class Fault { kNone, kSlowDown, kResetBefore, kResetAfter, kStall };
  StoreFaultProxy(int upstream_port, int listener, int port, int wake_read, int wake_write,
                  uint64_t seed, StoreDialect dialect);
  void AcceptLoop();
  void Serve(int client);
  // The fault for the next request; *down when the proxy is down (the request is refused).
  Fault Draw(FaultMix* mix, bool* down);
  // Registers a socket so that the destructor can shut it down; false when stopping.
  bool Track(int fd);
  void Untrack(int fd);

  const int upstream_port_;
  const StoreDialect dialect_;
  const int listener_;
  const int port_;
  const int wake_read_;
  const int wake_write_;
  mutable std::mutex mu_;
  FaultMix mix_;           // guarded by mu_
  std::mt19937_64 rng_;    // guarded by mu_
  ProxyCounts counts_;     // guarded by mu_
  std::set<int> sockets_;  // guarded by mu_: every open client and upstream socket
  bool stopping_ = false;  // guarded by mu_
  bool down_ = false;      // guarded by mu_
  std::string strip_;      // guarded by mu_: the query parameter removed from requests
  int serving_ = 0;        // guarded by mu_: connection threads (detached) still running
  std::condition_variable served_;
  std::thread accept_thread_;
};

}  // namespace ferry::fault

// PartitionLeases: which partitions of an elastic JetStream pipeline this process reads, decided
// with the other processes running the same pipeline through a JetStream key-value bucket, with
// no coordinator of ferry's own (docs/jetstream.md, "Elastic scale-out"; the choice against
// priority groups in docs/decisions/jetstream-leases.md).
//
// The bucket (History 1, TTL = the lease TTL, so every key vanishes one TTL after its last
// write) holds, under a scope per pipeline and stream ("<pipeline>.<stream>", escaped to key
// tokens):
//   <scope>.m.<member>  one key per live process, rewritten every renewal;
//   <scope>.p.<i>       the lease of partition i: "<member> <unix ms when taken>"
// (lease_bucket.h: the names, the values and the listing, shared with `ferry status`).
//
// A keeper thread runs every TTL / 3 (and at once when the source confirms a revocation):
//   1. Rewrites its membership key.
//   2. Lists the scope (one watcher, current values only).
//   3. Renews each lease it holds with kvStore_Update expecting the revision it wrote last; a
//      lease whose revision moved (expired and taken by another) is dropped at once.
//   4. Its share: the live members sorted by id, k of them, this one at rank r: N / k partitions,
//      one more when r < N % k. So once every process has seen the same members, the spread is
//      exact; while views differ it is off by at most one per process.
//   5. Over its share: marks the extra leases "releasing" (Owned() stops naming them). The lease
//      is still renewed until the source confirms it no longer reads the partition (Confirm;
//      the pipeline has committed or dropped its rows), and only then deleted, with the delete
//      expecting the lease's revision: the next owner starts after the last commit, not beside it.
//   6. Under its share: creates leases for free partitions (kvStore_Create: fails if the key
//      exists), starting at an offset by rank so that processes joining at once collide less.
//
// A lease counts as held locally only until the time of its last renewal request + 3/4 TTL, so a
// process that was paused (SIGSTOP, a long GC-like stall) stops reading before the server lets
// another process take the partition (one TTL after the last write). Two readers of a partition
// can still overlap (a commit already under way when the pause began); the Delta commit fences
// the slower one (each txn expects the position its writer read).
//
// Thread-safety: all public methods may be called from any thread; the keeper thread does all
// NATS I/O on its own connection, which outlives the sources that ask it (a fenced pipeline makes
// a new source; the leases stay).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/jetstream/jetstream_options.h"
#include "ferry/source/jetstream/lease_bucket.h"
#include "ferry/source/jetstream/nats_handles.h"

namespace ferry::source::jetstream {

struct LeaseOptions {
  NatsConnectionOptions connection;
  std::string bucket = "ferry_leases";
  std::string pipeline;  // with `stream`, the scope of the keys
  std::string stream;
  int partitions = 0;
  std::chrono::milliseconds ttl{10000};
  std::string member;  // empty: "<host>-<pid>-<random>"
  // Called by the keeper after each listing with every partition's lease (the status page's
  // lease view); never under the keeper's lock. May be empty.
  std::function<void(const std::vector<LeaseView>&)> on_view;

  Status Validate() const;
};

struct LeaseStats {
  uint64_t ticks = 0;
  uint64_t taken = 0;
  uint64_t released = 0;
  uint64_t lost = 0;    // a renewal found the lease moved or gone
  uint64_t errors = 0;  // NATS errors in a tick (retried at the next)
  size_t live_members = 0;
};

class PartitionLeases {
 public:
  static Result<std::shared_ptr<PartitionLeases>> Create(LeaseOptions options);
  // Leave()s.
  ~PartitionLeases();

  PartitionLeases(const PartitionLeases&) = delete;
  PartitionLeases& operator=(const PartitionLeases&) = delete;

  // Connects, binds the bucket (creates it when missing; InvalidArgument when it exists with
  // another TTL or history), runs one tick and starts the keeper. Later calls return OK at once.
  // Unavailable: no server (retry).
  Status Start();
  // The partitions held now (sorted): taken, renewed within 3/4 TTL, not being released.
  std::vector<int> Owned() const;
  // The source reads exactly `reading` now: leases being released that it no longer reads can go.
  void Confirm(const std::set<int>& reading);
  // Releases every lease and the membership; stops the keeper. Idempotent.
  void Leave();

  const std::string& member() const { return options_.member; }
  std::vector<LeaseView> View() const;
  LeaseStats stats() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Held {
    uint64_t revision = 0;
    int64_t taken_unix_ms = 0;
    Clock::time_point valid_until;
    bool releasing = false;
  };
  using Listed = ListedLease;

  explicit PartitionLeases(LeaseOptions options);

  Status Connect();
  Status Tick();
  void Run();
  Status List(std::map<int, Listed>* leases, std::set<std::string>* members);
  void Renew(const std::map<int, Listed>& listed, Clock::time_point sent);
  void Rebalance(const std::map<int, Listed>& listed, const std::set<std::string>& members,
                 Clock::time_point sent);
  // kvStore_Update/Create of a lease value; revision 0 creates.
  Result<uint64_t> Write(int partition, int64_t taken_unix_ms, uint64_t revision);
  // A delete expecting `revision` (nats.c 3.4.1's kvStore_Delete cannot expect one).
  Status DeleteLease(int partition, uint64_t revision);
  void ReleaseConfirmed();

  const LeaseOptions options_;
  const std::string scope_;

  // nats.c handles, used by the keeper thread only (and by Start/Leave when it is not running).
  // Destroyed in reverse order: the kv store, the JetStream context, then the connection.
  NatsConnectionPtr connection_;
  JsCtxPtr js_;
  std::unique_ptr<kvStore, void (*)(kvStore*)> kv_{nullptr, kvStore_Destroy};

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool started_ = false;
  bool stopping_ = false;
  bool left_ = false;
  std::map<int, Held> held_;     // guarded by mu_
  std::set<int> reading_;        // guarded by mu_: what the source last confirmed
  bool confirmed_ = false;       // guarded by mu_: a Confirm came since the last tick
  std::vector<LeaseView> view_;  // guarded by mu_
  LeaseStats stats_;             // guarded by mu_
  std::thread keeper_;
};

}  // namespace ferry::source::jetstream

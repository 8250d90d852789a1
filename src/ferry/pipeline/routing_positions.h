// RoutingPositions: the router's book of what is durable where (router.h), from which it computes
// each source partition's low-water mark L: every message of the partition at or below L is
// durably committed in the table it was routed to (or dead-lettered there). docs/decisions/
// routing.md has the argument; the steps, as the router and the inner pipelines call them:
//
//   1. Reset(p, floor) when the real source assigns p, resuming after `floor` (the max L read
//      from the tables; nullopt: the start policy): nothing of p is outstanding, and nothing
//      above `floor` is known durable until this assignment polls it.
//   2. Take(p, position, route) for every message the router polls, before it is queued to any
//      route: from now on it is outstanding (dispatched or waiting to be, not yet durable).
//   3. Seal(p, route, sealed) when route's inner pipeline seals a batch holding p up to `sealed`:
//      L = (the oldest outstanding message of p that is not route's at or below `sealed`) - 1,
//      capped at `sealed` and at the highest position polled since Reset (or `floor`): a batch
//      sealed from before a revocation knows nothing of the new assignment. The batch's commit
//      makes L true: the route's own messages up to `sealed` are in it (and its earlier batches
//      commit before it), every other outstanding message is above L, and what is not outstanding
//      is durable already. L is remembered with the seal and goes in the batch's commit as txn
//      "<id>/<p key>/resume".
//   4. Committed(p, route, position) when the route's inner pipeline acknowledges p up to
//      `position` (after its commit is durable): route's messages up to it leave the outstanding
//      set, and the L of every seal of route up to `position` is durable: Durable(p) rises.
//   5. Skipped(p, route, position): a message the route's table already holds (its position is
//      at or below the table's own txn for p) is not delivered again; it leaves the outstanding
//      set as durable.
//
// L is monotone per (partition, route): later seals see a subset of the earlier outstanding set
// plus messages above everything polled before.
//
// Thread-safety: thread-safe (the router thread and every inner pipeline thread call it).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "ferry/base/check.h"
#include "ferry/base/ring.h"

namespace ferry::pipeline {

class RoutingPositions {
 public:
  void Reset(int32_t partition, std::optional<int64_t> floor);
  void Forget(int32_t partition);  // a revocation: the partition is no longer ours
  // `timestamp_us`: the message's (0: the source gives none), for LowTimestamps.
  void Take(int32_t partition, int64_t position, int route, int64_t timestamp_us = 0);
  // Take for each, in order, under one lock (a poll's messages).
  struct Taken {
    int32_t partition;
    int64_t position;
    int route;
    int64_t timestamp_us = 0;
  };
  void Take(std::span<const Taken> taken);
  // Returns L (nullopt when it would be below every position: nothing to say yet).
  std::optional<int64_t> Seal(int32_t partition, int route, int64_t sealed);
  void Committed(int32_t partition, int route, int64_t position);
  void Skipped(int32_t partition, int route, int64_t position);
  // The highest L made durable by a commit since Reset (nullopt: none yet).
  std::optional<int64_t> Durable(int32_t partition) const;
  // Skipped() calls since the start: re-reads of messages their table held already.
  int64_t skipped() const {
    std::lock_guard lock(mu_);
    return skipped_;
  }
  // Every partition's L as of now: (its oldest outstanding message) - 1, or the highest position
  // polled (or the floor) when nothing is outstanding. True at the instant it is read: whatever
  // is not outstanding is durable. What the router acknowledges and puts in its positions table.
  std::map<int32_t, int64_t> LowNow() const;
  // Every partition's timestamp (µs) of its newest message at or below LowNow's L, the last
  // message of the durable prefix, for the lag in seconds; absent until one was taken and became
  // durable since Reset, 0 when the source gave it none.
  std::map<int32_t, int64_t> LowTimestamps() const;
  // Every partition's durable L (from seals whose commits were acknowledged).
  std::map<int32_t, int64_t> DurableAll() const;
  // Messages of `route` not durable yet (all partitions).
  int64_t Outstanding(int route) const;
  // Messages not durable yet (all routes and partitions).
  int64_t Outstanding() const;
  // Waits until Outstanding() differs from `outstanding` (a commit, a skip, a revocation) or
  // `timeout` passed.
  void WaitWhileOutstanding(int64_t outstanding, std::chrono::milliseconds timeout) const;
  // When nothing is outstanding: every message polled is durable; the highest polled position of
  // each partition is then a true L (a drained router's last word).
  std::map<int32_t, int64_t> HighestWhenIdle() const;

 private:
  struct PendingSeal {
    int64_t sealed;
    int64_t low;
  };
  // One message taken and not yet known durable (done: it is, and waits to leave the front).
  struct Entry {
    int64_t position;
    int64_t timestamp_us;
    int route;
    bool done;
  };
  // The outstanding messages of a partition in position order (the router takes them in order),
  // as a ring with each route's own in a ring of indices: no node per message, no allocation
  // once the rings have grown (the router's thread takes, the tables' threads commit), and a
  // commit walks only its route's messages.
  struct Partition {
    Ring<Entry> log;  // log[0] is the entry of absolute index `base`
    uint64_t base = 0;
    int64_t count = 0;  // entries not done
    // By route (routes are small numbers, one per table of the router).
    std::vector<Ring<uint64_t>> owned;  // absolute indices, in order
    std::vector<Ring<PendingSeal>> seals;
    std::optional<int64_t> durable;
    std::optional<int64_t> highest;
    std::optional<int64_t> low_timestamp_us;  // of the last entry trimmed off the front
  };
  // Take, with mu_ held; `p` is the partition's.
  void TakeLocked(Partition* p, int32_t partition, int64_t position, int route,
                  int64_t timestamp_us);
  // Marks log entry `index` durable; the caller trims.
  void Done(Partition* p, uint64_t index);
  static void Trim(Partition* p);

  int64_t OutstandingLocked() const;
  // (*v)[route], made when missing.
  template <typename T>
  static T& ByRoute(std::vector<T>* v, int route) {
    FERRY_CHECK_MSG(route >= 0, "routing positions: a negative route");
    if (static_cast<size_t>(route) >= v->size()) {
      v->resize(static_cast<size_t>(route) + 1);
    }
    return (*v)[static_cast<size_t>(route)];
  }
  // Wakes WaitWhileOutstanding (mu_ held).
  void NotifyLocked() const {
    if (waiters_ > 0) {
      changed_.notify_all();
    }
  }

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  mutable int waiters_ = 0;
  std::map<int32_t, Partition> partitions_;
  std::vector<int64_t> per_route_;  // outstanding count by route
  int64_t skipped_ = 0;
};

}  // namespace ferry::pipeline

// FaultInjectingStore: wraps an ObjectStore and makes chosen calls fail, before or after the
// wrapped store applied them, and simulates a crash of the writing process. The two questions
// the Delta commit must answer correctly under faults are exercised here without a real crash:
//   - an error *before* the put: nothing was written; retrying is safe;
//   - an error *after* the put (a timeout, a crash between link and the reply): the object
//     exists although the caller saw an error; the caller must read it back to learn the outcome.
// SimulateCrash() drops what a crashed process had not made durable, as LevelDB's fault-injection
// Env drops unsynced data: atomic writers still open never publish their bytes, and every later
// mutation fails until Restart(). What a Put/PutIfAbsent returned OK for stays (it was durable).
//
// Thread-safety: thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "ferry/storage/object_store.h"

namespace ferry::testing {

class FaultInjectingStore final : public storage::ObjectStore {
 public:
  enum class Op { kList, kRead, kStat, kPutIfAbsent, kPut, kDelete, kAtomicClose, kNumOps };
  enum class When {
    kBefore,  // the call fails and the wrapped store is not touched
    kAfter,   // the wrapped store applies the call, then the caller gets the error
  };

  explicit FaultInjectingStore(std::shared_ptr<storage::ObjectStore> base)
      : base_(std::move(base)) {}

  // The `nth` next call of `op` (1 = the very next) fails with `status`.
  // REQUIRES: !status.ok(), nth >= 1
  void InjectError(Op op, When when, Status status, int nth = 1);
  // Drops pending injections.
  void ClearErrors();
  // From now on: open atomic writers are abandoned (their Close fails, nothing is published)
  // and every mutating call fails with IOError, as if the process had died.
  void SimulateCrash();
  // Back to normal after SimulateCrash() (the "restarted process").
  void Restart();
  // Calls of `op` seen so far (including failed ones).
  int64_t count(Op op) const;

  using ObjectStore::List;
  Result<std::vector<storage::ObjectInfo>> List(std::string_view prefix,
                                                const storage::ListOptions& options) override;
  Result<std::shared_ptr<const RandomAccessFile>> OpenForRead(std::string_view key) override;
  Result<storage::ObjectInfo> Stat(std::string_view key) override;
  Status PutIfAbsent(std::string_view key, std::string_view data) override;
  Status Put(std::string_view key, std::string_view data) override;
  Status Delete(std::string_view key) override;
  Result<std::unique_ptr<OutputStream>> OpenAtomicWriter(std::string_view key) override;
  std::string Describe(std::string_view key) const override { return base_->Describe(key); }

  // Used by the atomic writer this store hands out.
  Status PublishFromWriter(std::string_view key, std::string_view data, uint64_t epoch);
  uint64_t epoch() const { return epoch_.load(); }

 private:
  struct Injection {
    When when;
    Status status;
    int remaining;  // calls to let through before this one fires
  };
  // Returns the injection that fires for this call of `op`, if any (and counts the call).
  std::optional<Injection> Next(Op op);
  // Runs `apply` under the injection rules of `op`.
  template <typename Fn>
  Status Mutate(Op op, std::string_view key, Fn&& apply);

  std::shared_ptr<storage::ObjectStore> base_;
  mutable std::mutex mu_;
  std::array<std::deque<Injection>, static_cast<size_t>(Op::kNumOps)> injections_;  // mu_
  std::array<int64_t, static_cast<size_t>(Op::kNumOps)> counts_{};                  // mu_
  std::atomic<bool> crashed_{false};
  // Bumped by SimulateCrash(): writers opened in an older epoch never publish.
  std::atomic<uint64_t> epoch_{0};
};

}  // namespace ferry::testing

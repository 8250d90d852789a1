// InMemoryStore: an ObjectStore held in a map, for unit tests, benchmarks and the engine's tests
// without a disk. Same semantics as LocalStore (put-if-absent has exactly one winner, atomic
// writers publish on Close), nothing survives the process.
//
// Thread-safety: thread-safe (one mutex); readers share the bytes without copying.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "ferry/storage/object_store.h"

namespace ferry::storage {

class InMemoryStore final : public ObjectStore {
 public:
  InMemoryStore() = default;

  using ObjectStore::List;
  Result<std::vector<ObjectInfo>> List(std::string_view prefix,
                                       const ListOptions& options) override;
  Result<std::shared_ptr<const RandomAccessFile>> OpenForRead(std::string_view key) override;
  Result<ObjectInfo> Stat(std::string_view key) override;
  Status PutIfAbsent(std::string_view key, std::string_view data) override;
  Status Put(std::string_view key, std::string_view data) override;
  Status Delete(std::string_view key) override;
  Result<std::unique_ptr<OutputStream>> OpenAtomicWriter(std::string_view key) override;
  std::string Describe(std::string_view key) const override;

  // Total bytes held (for tests that check nothing leaked).
  uint64_t TotalBytes() const;

 private:
  struct Object {
    std::shared_ptr<const std::string> data;
    int64_t modification_time_ms = 0;
  };

  mutable std::mutex mu_;
  std::map<std::string, Object, std::less<>> objects_;  // guarded by mu_
};

}  // namespace ferry::storage

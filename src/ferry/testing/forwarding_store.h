// ForwardingStore: an ObjectStore that passes every call to another one. Tests derive from it
// and override only the calls they watch or hold (a gate before a commit, a cleanup after a
// listing); DeleteMany stays the base class's, one Delete() per key, so an override of Delete()
// sees every deletion.
//
// Thread-safety: as the wrapped store.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/storage/object_store.h"

namespace ferry::testing {

class ForwardingStore : public storage::ObjectStore {
 public:
  explicit ForwardingStore(std::shared_ptr<storage::ObjectStore> base) : base_(std::move(base)) {}

  using ObjectStore::List;
  Result<std::vector<storage::ObjectInfo>> List(std::string_view prefix,
                                                const storage::ListOptions& options) override {
    return base_->List(prefix, options);
  }
  Result<std::shared_ptr<const RandomAccessFile>> OpenForRead(std::string_view key) override {
    return base_->OpenForRead(key);
  }
  Result<storage::ObjectInfo> Stat(std::string_view key) override { return base_->Stat(key); }
  Status PutIfAbsent(std::string_view key, std::string_view data) override {
    return base_->PutIfAbsent(key, data);
  }
  Status Put(std::string_view key, std::string_view data) override { return base_->Put(key, data); }
  Status Delete(std::string_view key) override { return base_->Delete(key); }
  Result<std::unique_ptr<OutputStream>> OpenAtomicWriter(std::string_view key) override {
    return base_->OpenAtomicWriter(key);
  }
  std::string Describe(std::string_view key) const override { return base_->Describe(key); }

 private:
  std::shared_ptr<storage::ObjectStore> base_;
};

}  // namespace ferry::testing

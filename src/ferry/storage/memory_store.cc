#include "ferry/storage/memory_store.h"

#include "ferry/base/clock.h"

namespace ferry::storage {
namespace {

// A read-only view of an object's bytes that keeps them alive after a replace or delete.
class SharedStringFile final : public RandomAccessFile {
 public:
  SharedStringFile(std::shared_ptr<const std::string> data, std::string name)
      : data_(std::move(data)), name_(std::move(name)) {}
  uint64_t size() const override { return data_->size(); }
  Status ReadAt(uint64_t offset, uint64_t n, std::string* out) const override {
    if (offset > data_->size() || n > data_->size() - offset) {
      return DataLoss("{}: read of {} bytes at offset {} is past the end ({} bytes)", name_, n,
                      offset, data_->size());
    }
    out->assign(*data_, offset, n);
    return Status::OK();
  }
  const std::string& name() const override { return name_; }

 private:
  std::shared_ptr<const std::string> data_;
  std::string name_;
};

// Buffers the bytes and publishes them with Put on Close.
class MemoryAtomicWriter final : public OutputStream {
 public:
  MemoryAtomicWriter(InMemoryStore* store, std::string key, std::string name)
      : store_(store), key_(std::move(key)), name_(std::move(name)) {}
  Status Append(std::string_view data) override {
    if (closed_) {
      return Internal("{}: append after close", name_);
    }
    buffer_.append(data);
    return Status::OK();
  }
  uint64_t Tell() const override { return buffer_.size(); }
  Status Close() override {
    if (closed_) {
      return Status::OK();
    }
    closed_ = true;
    return store_->Put(key_, buffer_);
  }
  const std::string& name() const override { return name_; }

 private:
  InMemoryStore* store_;
  std::string key_;
  std::string name_;
  std::string buffer_;
  bool closed_ = false;
};

}  // namespace

Result<std::vector<ObjectInfo>> InMemoryStore::List(std::string_view prefix,
                                                    const ListOptions& options) {
  FERRY_RETURN_IF_ERROR(ValidatePrefix(prefix));
  size_t dir_end = prefix.rfind('/');
  size_t rest_start = dir_end == std::string_view::npos ? 0 : dir_end + 1;
  std::vector<ObjectInfo> out;
  std::lock_guard lock(mu_);
  auto it = objects_.lower_bound(prefix);
  if (!options.start_after.empty() && options.start_after >= prefix) {
    it = objects_.upper_bound(options.start_after);
  }
  for (; it != objects_.end(); ++it) {
    const std::string& key = it->first;
    if (key.compare(0, prefix.size(), prefix) != 0) {
      break;
    }
    if (!options.recursive && key.find('/', rest_start) != std::string::npos) {
      continue;
    }
    out.push_back(ObjectInfo{key, it->second.data->size(), it->second.modification_time_ms});
  }
  return out;
}

Result<std::shared_ptr<const RandomAccessFile>> InMemoryStore::OpenForRead(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) {
    return NotFound("open {}: no such object", Describe(key));
  }
  return std::shared_ptr<const RandomAccessFile>(
      std::make_shared<SharedStringFile>(it->second.data, Describe(key)));
}

Result<ObjectInfo> InMemoryStore::Stat(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) {
    return NotFound("stat {}: no such object", Describe(key));
  }
  return ObjectInfo{std::string(key), it->second.data->size(), it->second.modification_time_ms};
}

Status InMemoryStore::PutIfAbsent(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  auto bytes = std::make_shared<const std::string>(data);
  std::lock_guard lock(mu_);
  auto [it, inserted] = objects_.try_emplace(std::string(key), Object{bytes, WallMillis()});
  if (!inserted) {
    return AlreadyExists("put-if-absent {}: object exists", Describe(key));
  }
  return Status::OK();
}

Status InMemoryStore::Put(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  auto bytes = std::make_shared<const std::string>(data);
  std::lock_guard lock(mu_);
  objects_.insert_or_assign(std::string(key), Object{bytes, WallMillis()});
  return Status::OK();
}

Status InMemoryStore::Delete(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it != objects_.end()) {
    objects_.erase(it);
  }
  return Status::OK();
}

Result<std::unique_ptr<OutputStream>> InMemoryStore::OpenAtomicWriter(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  return std::unique_ptr<OutputStream>(
      std::make_unique<MemoryAtomicWriter>(this, std::string(key), Describe(key)));
}

std::string InMemoryStore::Describe(std::string_view key) const {
  return "memory://" + std::string(key);
}

uint64_t InMemoryStore::TotalBytes() const {
  std::lock_guard lock(mu_);
  uint64_t total = 0;
  for (const auto& [key, object] : objects_) {
    total += object.data->size();
  }
  return total;
}

}  // namespace ferry::storage

#include "ferry/testing/fault_injecting_store.h"

namespace ferry::testing {
namespace {

// Buffers the bytes; Close publishes them through the store unless a crash came in between.
class FaultAtomicWriter final : public OutputStream {
 public:
  FaultAtomicWriter(FaultInjectingStore* store, std::string key, uint64_t epoch)
      : store_(store), key_(std::move(key)), name_(store->Describe(key_)), epoch_(epoch) {}
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
    return store_->PublishFromWriter(key_, buffer_, epoch_);
  }
  const std::string& name() const override { return name_; }

 private:
  FaultInjectingStore* store_;
  std::string key_;
  std::string name_;
  uint64_t epoch_;
  std::string buffer_;
  bool closed_ = false;
};

}  // namespace

void FaultInjectingStore::InjectError(Op op, When when, Status status, int nth) {
  FERRY_CHECK(!status.ok() && nth >= 1);
  std::lock_guard lock(mu_);
  injections_[static_cast<size_t>(op)].push_back(Injection{when, std::move(status), nth - 1});
}

void FaultInjectingStore::ClearErrors() {
  std::lock_guard lock(mu_);
  for (auto& queue : injections_) {
    queue.clear();
  }
}

void FaultInjectingStore::SimulateCrash() {
  epoch_.fetch_add(1);
  crashed_.store(true);
}

void FaultInjectingStore::Restart() {
  crashed_.store(false);
}

int64_t FaultInjectingStore::count(Op op) const {
  std::lock_guard lock(mu_);
  return counts_[static_cast<size_t>(op)];
}

std::optional<FaultInjectingStore::Injection> FaultInjectingStore::Next(Op op) {
  std::lock_guard lock(mu_);
  counts_[static_cast<size_t>(op)]++;
  auto& queue = injections_[static_cast<size_t>(op)];
  std::optional<Injection> fired;
  for (auto it = queue.begin(); it != queue.end();) {
    if (it->remaining == 0 && !fired.has_value()) {
      fired = *it;
      it = queue.erase(it);
    } else {
      if (it->remaining > 0) {
        it->remaining--;
      }
      ++it;
    }
  }
  return fired;
}

template <typename Fn>
Status FaultInjectingStore::Mutate(Op op, std::string_view key, Fn&& apply) {
  if (crashed_.load()) {
    return IOError("{}: store unusable after a simulated crash", Describe(key));
  }
  std::optional<Injection> injection = Next(op);
  if (injection.has_value() && injection->when == When::kBefore) {
    return injection->status;
  }
  Status st = apply();
  if (injection.has_value() && st.ok()) {
    return injection->status;
  }
  return st;
}

Result<std::vector<storage::ObjectInfo>> FaultInjectingStore::List(
    std::string_view prefix, const storage::ListOptions& options) {
  if (auto injection = Next(Op::kList)) {
    return injection->status;
  }
  return base_->List(prefix, options);
}

Result<std::shared_ptr<const RandomAccessFile>> FaultInjectingStore::OpenForRead(
    std::string_view key) {
  if (auto injection = Next(Op::kRead)) {
    return injection->status;
  }
  return base_->OpenForRead(key);
}

Result<storage::ObjectInfo> FaultInjectingStore::Stat(std::string_view key) {
  if (auto injection = Next(Op::kStat)) {
    return injection->status;
  }
  return base_->Stat(key);
}

Status FaultInjectingStore::PutIfAbsent(std::string_view key, std::string_view data) {
  return Mutate(Op::kPutIfAbsent, key, [&] { return base_->PutIfAbsent(key, data); });
}

Status FaultInjectingStore::Put(std::string_view key, std::string_view data) {
  return Mutate(Op::kPut, key, [&] { return base_->Put(key, data); });
}

Status FaultInjectingStore::Delete(std::string_view key) {
  return Mutate(Op::kDelete, key, [&] { return base_->Delete(key); });
}

Result<std::unique_ptr<OutputStream>> FaultInjectingStore::OpenAtomicWriter(std::string_view key) {
  FERRY_RETURN_IF_ERROR(storage::ValidateKey(key));
  if (crashed_.load()) {
    return IOError("{}: store unusable after a simulated crash", Describe(key));
  }
  return std::unique_ptr<OutputStream>(
      std::make_unique<FaultAtomicWriter>(this, std::string(key), epoch_.load()));
}

Status FaultInjectingStore::PublishFromWriter(std::string_view key, std::string_view data,
                                              uint64_t epoch) {
  if (epoch != epoch_.load()) {
    return IOError("{}: writer opened before a simulated crash; its bytes were never synced",
                   Describe(key));
  }
  return Mutate(Op::kAtomicClose, key, [&] { return base_->Put(key, data); });
}

}  // namespace ferry::testing

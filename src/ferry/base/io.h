// Byte-stream interfaces shared by the layers: a sequential output (Parquet writer → file or
// object) and a random-access input (Parquet reader ← file, object or memory), plus the
// in-memory implementations. Local-file implementations are in file.h; object-store ones in
// storage/.
//
// Bytes are carried in std::string (owned) and std::string_view (borrowed), as in LevelDB.
// Thread-safety: implementations are not thread-safe unless they say so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry {

class OutputStream {
 public:
  virtual ~OutputStream() = default;
  virtual Status Append(std::string_view data) = 0;
  // Bytes appended so far.
  virtual uint64_t Tell() const = 0;
  // Makes the bytes durable and visible. For files that commit atomically (see
  // storage::ObjectStore::OpenAtomicWriter) this is the commit point.
  virtual Status Close() = 0;
  // Name for error messages.
  virtual const std::string& name() const = 0;
};

class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  virtual uint64_t size() const = 0;
  // Reads exactly `n` bytes at `offset` into *out (replacing its contents). Reading past the end
  // is an error (DataLoss: the caller computed the range from metadata that lied).
  virtual Status ReadAt(uint64_t offset, uint64_t n, std::string* out) const = 0;
  // The same into out[0, n), memory the caller owns (unspecified after an error). A std::string
  // is zero-filled wherever it grows, so a buffer reused for reads of varying sizes pays a
  // memset per read through ReadAt. By default ReadAt and a copy; local files and object-store
  // ranges read into `out` directly.
  virtual Status ReadInto(uint64_t offset, uint64_t n, char* out) const;
  // Name for error messages (a path).
  virtual const std::string& name() const = 0;
};

// Appends to a std::string it owns.
class StringOutputStream final : public OutputStream {
 public:
  explicit StringOutputStream(std::string name = "<memory>") : name_(std::move(name)) {}
  Status Append(std::string_view data) override {
    buffer_.append(data);
    return Status::OK();
  }
  uint64_t Tell() const override { return buffer_.size(); }
  Status Close() override { return Status::OK(); }
  const std::string& name() const override { return name_; }
  const std::string& buffer() const { return buffer_; }
  std::string Release() { return std::move(buffer_); }

 private:
  std::string name_;
  std::string buffer_;
};

// Reads from a std::string it owns.
class StringRandomAccessFile final : public RandomAccessFile {
 public:
  explicit StringRandomAccessFile(std::string data, std::string name = "<memory>")
      : data_(std::move(data)), name_(std::move(name)) {}
  uint64_t size() const override { return data_.size(); }
  Status ReadAt(uint64_t offset, uint64_t n, std::string* out) const override;
  const std::string& name() const override { return name_; }

 private:
  std::string data_;
  std::string name_;
};

}  // namespace ferry

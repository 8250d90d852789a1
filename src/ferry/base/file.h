// Local files: POSIX open/pread/write/fsync wrapped in Status-returning calls that name the path.
// The building blocks of storage::LocalStore (atomic put-if-absent by write, fsync, link) and of
// tools that read and write plain files.
//
// Thread-safety: LocalRandomAccessFile::ReadAt is thread-safe (pread); LocalWritableFile is not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/io.h"
#include "ferry/base/result.h"

namespace ferry {

// An open file descriptor, closed on destruction.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.Release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

class LocalRandomAccessFile final : public RandomAccessFile {
 public:
  static Result<std::unique_ptr<LocalRandomAccessFile>> Open(const std::string& path);
  uint64_t size() const override { return size_; }
  Status ReadAt(uint64_t offset, uint64_t n, std::string* out) const override;
  Status ReadInto(uint64_t offset, uint64_t n, char* out) const override;
  const std::string& name() const override { return path_; }

 private:
  LocalRandomAccessFile(std::string path, FileDescriptor fd, uint64_t size)
      : path_(std::move(path)), fd_(std::move(fd)), size_(size) {}
  // DataLoss naming the file when [offset, offset + n) is not inside it.
  Status CheckRange(uint64_t offset, uint64_t n) const;
  std::string path_;
  FileDescriptor fd_;
  uint64_t size_;
};

// A file opened for writing (created or truncated), buffered in user space.
// Close() flushes but does not fsync; call Sync() first when the bytes must be durable.
class LocalWritableFile final : public OutputStream {
 public:
  // `exclusive`: fail with AlreadyExists if the file exists (O_EXCL).
  static Result<std::unique_ptr<LocalWritableFile>> Create(const std::string& path,
                                                           bool exclusive = false);
  ~LocalWritableFile() override;
  Status Append(std::string_view data) override;
  uint64_t Tell() const override { return written_ + buffer_.size(); }
  Status Flush();
  // Flushes and fsyncs the file.
  Status Sync();
  Status Close() override;
  const std::string& name() const override { return path_; }

  // Asks the kernel to start writing back every `bytes` (> 0) written, without waiting
  // (sync_file_range SYNC_FILE_RANGE_WRITE; RocksDB's bytes_per_sync): the disk works while the
  // rest of the file is produced, and Sync() waits only for what is left. A hint: durability
  // still comes from Sync() alone, and a failed hint is ignored (Sync() reports the error).
  void WriteBackEvery(uint64_t bytes) { write_back_every_ = bytes; }

 private:
  LocalWritableFile(std::string path, FileDescriptor fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}
  // Writes data from *done on, adding each write to *done and written_.
  Status WriteAll(std::string_view data, size_t* done);
  static constexpr size_t kBufferSize = 1 << 16;
  std::string path_;
  FileDescriptor fd_;
  std::string buffer_;
  uint64_t written_ = 0;
  uint64_t write_back_every_ = 0;  // 0: no early writeback
  uint64_t written_back_ = 0;      // bytes before this offset were handed to writeback
};

// Whole-file helpers.
Result<std::string> ReadFileToString(const std::string& path);
// Writes `data` to `path` (truncating) and, if `sync`, fsyncs the file.
Status WriteStringToFile(const std::string& path, std::string_view data, bool sync);
// fsyncs a directory so that entries created or removed in it are durable.
Status SyncDirectory(const std::string& path);
// mkdir -p. Returns OK if the directory exists.
Status CreateDirectories(const std::string& path);
// Names in a directory (not "." or ".."), unsorted. NotFound if the directory does not exist.
Result<std::vector<std::string>> ListDirectory(const std::string& path);
Status RemoveFile(const std::string& path);
bool FileExists(const std::string& path);

}  // namespace ferry

#include "ferry/base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace ferry {

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = other.Release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

Result<std::unique_ptr<LocalRandomAccessFile>> LocalRandomAccessFile::Open(
    const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoStatus(errno, "open", path);
  }
  FileDescriptor owned(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return ErrnoStatus(errno, "stat", path);
  }
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgument("open {}: is a directory", path);
  }
  return std::unique_ptr<LocalRandomAccessFile>(
      new LocalRandomAccessFile(path, std::move(owned), static_cast<uint64_t>(st.st_size)));
}

Status LocalRandomAccessFile::CheckRange(uint64_t offset, uint64_t n) const {
  if (offset > size_ || n > size_ - offset) {
    return DataLoss("{}: read of {} bytes at offset {} is past the end ({} bytes)", path_, n,
                    offset, size_);
  }
  return Status::OK();
}

Status LocalRandomAccessFile::ReadAt(uint64_t offset, uint64_t n, std::string* out) const {
  FERRY_RETURN_IF_ERROR(CheckRange(offset, n));  // before sizing *out from n
  out->resize(n);
  return ReadInto(offset, n, out->data());
}

Status LocalRandomAccessFile::ReadInto(uint64_t offset, uint64_t n, char* out) const {
  FERRY_RETURN_IF_ERROR(CheckRange(offset, n));
  uint64_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_.get(), out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoStatus(errno, "read", path_);
    }
    if (r == 0) {
      return DataLoss("{}: file shrank while reading at offset {}", path_, offset + done);
    }
    done += static_cast<uint64_t>(r);
  }
  return Status::OK();
}

Result<std::unique_ptr<LocalWritableFile>> LocalWritableFile::Create(const std::string& path,
                                                                     bool exclusive) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    return ErrnoStatus(errno, "create", path);
  }
  return std::unique_ptr<LocalWritableFile>(new LocalWritableFile(path, FileDescriptor(fd)));
}

LocalWritableFile::~LocalWritableFile() {
  if (fd_.valid()) {
    Flush().IgnoreError();
  }
}

Status LocalWritableFile::Append(std::string_view data) {
  if (!fd_.valid()) {
    return Internal("{}: append after close", path_);
  }
  if (buffer_.size() + data.size() > kBufferSize) {
    FERRY_RETURN_IF_ERROR(Flush());
    if (data.size() > kBufferSize) {
      // Written from the caller's bytes: a Parquet page of a megabyte is not copied first.
      // What a failed write leaves is kept, as Flush() keeps it.
      size_t done = 0;
      Status st = WriteAll(data, &done);
      if (!st.ok()) {
        buffer_.assign(data.substr(done));
      }
      return st;
    }
  }
  buffer_.append(data);
  return Status::OK();
}

Status LocalWritableFile::Flush() {
  size_t done = 0;
  Status st = WriteAll(buffer_, &done);
  buffer_.erase(0, done);
  return st;
}

Status LocalWritableFile::WriteAll(std::string_view data, size_t* done) {
  while (*done < data.size()) {
    ssize_t w = ::write(fd_.get(), data.data() + *done, data.size() - *done);
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoStatus(errno, "write", path_);
    }
    *done += static_cast<size_t>(w);
    written_ += static_cast<uint64_t>(w);
  }
  if (write_back_every_ > 0 && written_ - written_back_ >= write_back_every_) {
    // A hint only (see the header): its outcome is Sync()'s to report.
    (void)::sync_file_range(fd_.get(), static_cast<off_t>(written_back_),
                            static_cast<off_t>(written_ - written_back_), SYNC_FILE_RANGE_WRITE);
    written_back_ = written_;
  }
  return Status::OK();
}

Status LocalWritableFile::Sync() {
  FERRY_RETURN_IF_ERROR(Flush());
  if (::fsync(fd_.get()) != 0) {
    return ErrnoStatus(errno, "fsync", path_);
  }
  return Status::OK();
}

Status LocalWritableFile::Close() {
  if (!fd_.valid()) {
    return Status::OK();
  }
  Status st = Flush();
  int fd = fd_.Release();
  if (::close(fd) != 0 && st.ok()) {
    st = ErrnoStatus(errno, "close", path_);
  }
  return st;
}

Result<std::string> ReadFileToString(const std::string& path) {
  FERRY_ASSIGN_OR_RETURN(auto file, LocalRandomAccessFile::Open(path));
  std::string out;
  FERRY_RETURN_IF_ERROR(file->ReadAt(0, file->size(), &out));
  return out;
}

Status WriteStringToFile(const std::string& path, std::string_view data, bool sync) {
  FERRY_ASSIGN_OR_RETURN(auto file, LocalWritableFile::Create(path));
  FERRY_RETURN_IF_ERROR(file->Append(data));
  if (sync) {
    FERRY_RETURN_IF_ERROR(file->Sync());
  }
  return file->Close();
}

Status SyncDirectory(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoStatus(errno, "open directory", path);
  }
  FileDescriptor owned(fd);
  if (::fsync(fd) != 0) {
    return ErrnoStatus(errno, "fsync directory", path);
  }
  return Status::OK();
}

Status CreateDirectories(const std::string& path) {
  if (path.empty()) {
    return Status::OK();
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    return S_ISDIR(st.st_mode) ? Status::OK()
                               : AlreadyExists("mkdir {}: exists and is not a directory", path);
  }
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    FERRY_RETURN_IF_ERROR(CreateDirectories(path.substr(0, slash)));
  }
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "mkdir", path);
  }
  return Status::OK();
}

Result<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) {
    return ErrnoStatus(errno, "list", path);
  }
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string_view name(entry->d_name);
    if (name != "." && name != "..") {
      names.emplace_back(name);
    }
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) {
    return ErrnoStatus(err, "list", path);
  }
  return names;
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    return ErrnoStatus(errno, "remove", path);
  }
  return Status::OK();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace ferry

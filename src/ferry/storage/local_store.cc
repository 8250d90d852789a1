#include "ferry/storage/local_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <random>

#include "ferry/base/failpoint.h"
#include "ferry/base/file.h"

namespace ferry::storage {
namespace {

enum class PublishMode { kLink, kRename };

std::string ParentDir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string("/") : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int64_t MtimeMillis(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 +
         static_cast<int64_t>(st.st_mtim.tv_nsec) / 1000000;
}

std::string TempPath(const std::string& final_path) {
  thread_local std::mt19937_64 rng{std::random_device{}() ^
                                   (static_cast<uint64_t>(::getpid()) << 32)};
  // Keep the temporary name within NAME_MAX (255) whatever the final name's length.
  std::string base = BaseName(final_path).substr(0, 200);
  return fmt::format("{}/{}{:016x}-{}", ParentDir(final_path), LocalStore::kTempPrefix, rng(),
                     base);
}

// mkdir -p that makes each directory it creates durable by fsync'ing its parent.
Status EnsureDirectory(const std::string& dir, bool sync) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    return S_ISDIR(st.st_mode) ? Status::OK()
                               : AlreadyExists("mkdir {}: exists and is not a directory", dir);
  }
  std::string parent = ParentDir(dir);
  if (parent != dir) {
    FERRY_RETURN_IF_ERROR(EnsureDirectory(parent, sync));
  }
  if (::mkdir(dir.c_str(), 0755) != 0) {
    return errno == EEXIST ? Status::OK() : ErrnoStatus(errno, "mkdir", dir);
  }
  return sync ? SyncDirectory(parent) : Status::OK();
}

Status SyncFile(LocalWritableFile* file, bool sync) {
  FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("storage.local.before_fsync"));
  FERRY_RETURN_IF_ERROR(sync ? file->Sync() : file->Flush());
  return FERRY_FAILPOINT("storage.local.after_fsync");
}

// Step 4 and 5 of the header: moves `temp` to `final_path` and makes the entry durable. The
// temporary name is gone afterwards whatever happens.
Status Publish(const std::string& temp, const std::string& final_path, PublishMode mode,
               bool sync) {
  bool link = mode == PublishMode::kLink;
  Status st = FERRY_FAILPOINT(link ? "storage.local.before_link" : "storage.local.before_rename");
  if (st.ok()) {
    int rc = link ? ::link(temp.c_str(), final_path.c_str())
                  : ::rename(temp.c_str(), final_path.c_str());
    if (rc != 0) {
      int err = errno;
      st = err == EEXIST && link
               ? AlreadyExists("put-if-absent {}: object exists (another writer won)", final_path)
               : ErrnoStatus(err, link ? "link" : "rename", final_path);
    } else {
      st = FERRY_FAILPOINT(link ? "storage.local.after_link" : "storage.local.after_rename");
    }
  }
  if (link || !st.ok()) {
    ::unlink(temp.c_str());
  }
  FERRY_RETURN_IF_ERROR(st);
  return sync ? SyncDirectory(ParentDir(final_path)) : Status::OK();
}

Status WriteAndPublish(const std::string& path, std::string_view data, PublishMode mode,
                       bool sync) {
  FERRY_RETURN_IF_ERROR(EnsureDirectory(ParentDir(path), sync));
  std::string temp = TempPath(path);
  FERRY_ASSIGN_OR_RETURN(auto file, LocalWritableFile::Create(temp, /*exclusive=*/true));
  Status st = file->Append(data);
  if (st.ok()) {
    st = SyncFile(file.get(), sync);
  }
  Status closed = file->Close();
  if (st.ok()) {
    st = closed;
  }
  if (!st.ok()) {
    ::unlink(temp.c_str());
    return st;
  }
  return Publish(temp, path, mode, sync);
}

class LocalAtomicWriter final : public OutputStream {
 public:
  LocalAtomicWriter(std::unique_ptr<LocalWritableFile> file, std::string temp,
                    std::string final_path, bool sync)
      : file_(std::move(file)),
        temp_(std::move(temp)),
        final_path_(std::move(final_path)),
        sync_(sync) {}
  ~LocalAtomicWriter() override {
    if (file_ != nullptr) {
      file_->Close().IgnoreError();
      ::unlink(temp_.c_str());
    }
  }
  Status Append(std::string_view data) override {
    if (file_ == nullptr) {
      return Internal("{}: append after close", final_path_);
    }
    return file_->Append(data);
  }
  uint64_t Tell() const override { return file_ == nullptr ? size_ : file_->Tell(); }
  Status Close() override {
    if (file_ == nullptr) {
      return Status::OK();
    }
    size_ = file_->Tell();
    Status st = SyncFile(file_.get(), sync_);
    Status closed = file_->Close();
    file_.reset();
    if (st.ok()) {
      st = closed;
    }
    if (!st.ok()) {
      ::unlink(temp_.c_str());
      return st;
    }
    return Publish(temp_, final_path_, PublishMode::kRename, sync_);
  }
  const std::string& name() const override { return final_path_; }

 private:
  std::unique_ptr<LocalWritableFile> file_;  // null once closed
  std::string temp_;
  std::string final_path_;
  bool sync_;
  uint64_t size_ = 0;
};

Status ListDir(const std::string& root, const std::string& rel_dir, std::string_view name_prefix,
               const ListOptions& options, std::vector<ObjectInfo>* out) {
  std::string dir = rel_dir.empty() ? root : root + "/" + rel_dir;
  auto names = ListDirectory(dir);
  if (!names.ok()) {
    return names.status().code() == StatusCode::kNotFound ? Status::OK() : names.status();
  }
  for (const std::string& name : *names) {
    if (name.compare(0, name_prefix.size(), name_prefix) != 0 ||
        name.compare(0, LocalStore::kTempPrefix.size(), LocalStore::kTempPrefix) == 0) {
      continue;
    }
    std::string key = rel_dir.empty() ? name : rel_dir + "/" + name;
    // A directory's key may sort before start_after while keys inside it sort after.
    bool maybe_dir_prefix = options.start_after.compare(0, key.size() + 1, key + "/") == 0;
    if (!options.start_after.empty() && key <= options.start_after && !maybe_dir_prefix) {
      continue;  // skipped without a stat(): the point of start_after
    }
    struct stat st;
    std::string path = dir + "/" + name;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) {
        continue;  // deleted while listing
      }
      return ErrnoStatus(errno, "stat", path);
    }
    if (S_ISDIR(st.st_mode)) {
      if (options.recursive) {
        FERRY_RETURN_IF_ERROR(ListDir(root, key, "", options, out));
      }
    } else if (S_ISREG(st.st_mode) && (options.start_after.empty() || key > options.start_after)) {
      out->push_back(ObjectInfo{key, static_cast<uint64_t>(st.st_size), MtimeMillis(st)});
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<LocalStore>> LocalStore::Create(const std::string& root,
                                                       LocalStoreOptions options) {
  std::string normalized = root;
  while (normalized.size() > 1 && normalized.back() == '/') {
    normalized.pop_back();
  }
  struct stat st;
  if (normalized.empty() || ::stat(normalized.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return InvalidArgument("local store root '{}' is not an existing directory", root);
  }
  if (normalized[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) {
      return ErrnoStatus(errno, "getcwd", root);
    }
    normalized = normalized == "." ? std::string(cwd) : std::string(cwd) + "/" + normalized;
  }
  return std::unique_ptr<LocalStore>(new LocalStore(std::move(normalized), options));
}

Result<std::vector<ObjectInfo>> LocalStore::List(std::string_view prefix,
                                                 const ListOptions& options) {
  FERRY_RETURN_IF_ERROR(ValidatePrefix(prefix));
  size_t slash = prefix.rfind('/');
  std::string rel_dir = slash == std::string_view::npos ? "" : std::string(prefix.substr(0, slash));
  std::string_view name_prefix =
      slash == std::string_view::npos ? prefix : prefix.substr(slash + 1);
  std::vector<ObjectInfo> out;
  FERRY_RETURN_IF_ERROR(ListDir(root_, rel_dir, name_prefix, options, &out));
  std::sort(out.begin(), out.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
  return out;
}

Result<std::shared_ptr<const RandomAccessFile>> LocalStore::OpenForRead(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  FERRY_ASSIGN_OR_RETURN(auto file, LocalRandomAccessFile::Open(Describe(key)));
  return std::shared_ptr<const RandomAccessFile>(std::move(file));
}

Result<ObjectInfo> LocalStore::Stat(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  std::string path = Describe(key);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return ErrnoStatus(errno, "stat", path);
  }
  if (!S_ISREG(st.st_mode)) {
    return NotFound("stat {}: not a regular file", path);
  }
  return ObjectInfo{std::string(key), static_cast<uint64_t>(st.st_size), MtimeMillis(st)};
}

Status LocalStore::PutIfAbsent(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  return WriteAndPublish(Describe(key), data, PublishMode::kLink, options_.sync);
}

Status LocalStore::Put(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  return WriteAndPublish(Describe(key), data, PublishMode::kRename, options_.sync);
}

Status LocalStore::Delete(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  std::string path = Describe(key);
  if (::unlink(path.c_str()) != 0) {
    return errno == ENOENT ? Status::OK() : ErrnoStatus(errno, "delete", path);
  }
  return options_.sync ? SyncDirectory(ParentDir(path)) : Status::OK();
}

Result<std::unique_ptr<OutputStream>> LocalStore::OpenAtomicWriter(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  std::string path = Describe(key);
  FERRY_RETURN_IF_ERROR(EnsureDirectory(ParentDir(path), options_.sync));
  std::string temp = TempPath(path);
  FERRY_ASSIGN_OR_RETURN(auto file, LocalWritableFile::Create(temp, /*exclusive=*/true));
  // No early writeback (LocalWritableFile::WriteBackEvery): tried for the data files in
  // 9b996dc, it moved ~0.03 s of kernel time per million JetStream messages into ferry and
  // showed no gain in wall time (docs/BENCHMARKS.md "JetStream ingestion").
  return std::unique_ptr<OutputStream>(
      std::make_unique<LocalAtomicWriter>(std::move(file), temp, path, options_.sync));
}

std::string LocalStore::Describe(std::string_view key) const {
  return root_ == "/" ? "/" + std::string(key) : root_ + "/" + std::string(key);
}

}  // namespace ferry::storage

#include "ferry/parquet/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <random>

#include "ferry/base/failpoint.h"

namespace ferry::parquet {
namespace {

std::string RandomSuffix() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return fmt::format("{:016x}", v);
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Result<std::unique_ptr<AtomicFileOutputStream>> AtomicFileOutputStream::Create(
    const std::string& path) {
  std::string temp = path + ".tmp-" + RandomSuffix();
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<LocalWritableFile> file,
                         LocalWritableFile::Create(temp, /*exclusive=*/true));
  return std::unique_ptr<AtomicFileOutputStream>(
      new AtomicFileOutputStream(path, std::move(temp), std::move(file)));
}

AtomicFileOutputStream::~AtomicFileOutputStream() {
  if (!committed_) {
    if (file_) {
      file_->Close().IgnoreError();
    }
    std::remove(temp_path_.c_str());
  }
}

Status AtomicFileOutputStream::Append(std::string_view data) {
  if (!file_) {
    return Internal("{}: append after close", path_);
  }
  return file_->Append(data);
}

Status AtomicFileOutputStream::Close() {
  if (committed_) {
    return Status::OK();
  }
  if (!file_) {
    return Internal("{}: close after a failed close", path_);
  }
  size_ = file_->Tell();
  Status s = file_->Sync();
  Status c = file_->Close();
  file_.reset();
  FERRY_RETURN_IF_ERROR(s);
  FERRY_RETURN_IF_ERROR(c);
  FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("parquet.atomic_file.before_rename"));
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return ErrnoStatus(errno, "rename " + temp_path_ + " to", path_);
  }
  committed_ = true;
  return SyncDirectory(DirectoryOf(path_));
}

}  // namespace ferry::parquet

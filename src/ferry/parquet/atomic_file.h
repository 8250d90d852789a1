// AtomicFileOutputStream: a local file that appears under its final name only when complete,
// for writers whose Close() is the commit point (parquet/writer.h) and that write to the local
// filesystem directly (the CLI; the Delta layer uses its object store's atomic writer instead).
//
// Protocol:
//   1. Create() opens `<path>.tmp-<16 random hex digits>` in the same directory (O_EXCL).
//   2. Append() writes there.
//   3. Close(): fsync the temporary file, close it, rename it to `path` (replacing a file of
//      that name), fsync the directory. Failpoint `parquet.atomic_file.before_rename` fires
//      between the fsync and the rename.
//   4. A stream destroyed without a successful Close() (an error, an abandoned write) removes
//      its temporary file. A crash leaves the temporary file behind, never a partial `path`.
//
// Thread-safety: not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/base/file.h"
#include "ferry/base/io.h"
#include "ferry/base/result.h"

namespace ferry::parquet {

class AtomicFileOutputStream final : public OutputStream {
 public:
  // Errors: those of creating the temporary file (NotFound if the directory does not exist).
  static Result<std::unique_ptr<AtomicFileOutputStream>> Create(const std::string& path);
  ~AtomicFileOutputStream() override;

  Status Append(std::string_view data) override;
  uint64_t Tell() const override { return file_ ? file_->Tell() : size_; }
  Status Close() override;
  // The final path.
  const std::string& name() const override { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  AtomicFileOutputStream(std::string path, std::string temp_path,
                         std::unique_ptr<LocalWritableFile> file)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), file_(std::move(file)) {}

  std::string path_;
  std::string temp_path_;
  std::unique_ptr<LocalWritableFile> file_;  // null once closed
  uint64_t size_ = 0;
  bool committed_ = false;
};

}  // namespace ferry::parquet

#include "ferry/base/io.h"

#include <cstring>

namespace ferry {

Status RandomAccessFile::ReadInto(uint64_t offset, uint64_t n, char* out) const {
  std::string bytes;
  FERRY_RETURN_IF_ERROR(ReadAt(offset, n, &bytes));
  if (n > 0) {
    std::memcpy(out, bytes.data(), n);
  }
  return Status::OK();
}

Status StringRandomAccessFile::ReadAt(uint64_t offset, uint64_t n, std::string* out) const {
  if (offset > data_.size() || n > data_.size() - offset) {
    return DataLoss("{}: read of {} bytes at offset {} is past the end ({} bytes)", name_, n,
                    offset, data_.size());
  }
  out->assign(data_, offset, n);
  return Status::OK();
}

}  // namespace ferry

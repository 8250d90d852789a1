#include "ferry/parquet/file_series.h"

namespace ferry::parquet {

bool FileSeries::StartPlain(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plain_left_.find(path);
  if (it == plain_left_.end() || it->second <= 0) {
    return false;
  }
  --it->second;
  return true;
}

void FileSeries::Record(const std::string& path, bool fell_back) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fell_back) {
    plain_left_[path] = kPlainFiles;
  } else {
    plain_left_.erase(path);
  }
}

}  // namespace ferry::parquet

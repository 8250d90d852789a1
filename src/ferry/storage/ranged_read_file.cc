#include "ferry/storage/ranged_read_file.h"

#include <cstring>
#include <optional>
#include <utility>

#include "ferry/http/header_values.h"

namespace ferry::storage {
namespace {

class RangedReadFile final : public RandomAccessFile {
 public:
  RangedReadFile(std::shared_ptr<const RangedGets> gets, uint64_t size, std::string etag,
                 std::string head)
      : gets_(std::move(gets)), size_(size), etag_(std::move(etag)), head_(std::move(head)) {}

  uint64_t size() const override { return size_; }
  const std::string& name() const override { return gets_->name; }

  Status ReadAt(uint64_t offset, uint64_t n, std::string* out) const override {
    FERRY_RETURN_IF_ERROR(CheckRange(offset, n));
    if (offset + n <= head_.size()) {
      out->assign(head_, offset, n);
      return Status::OK();
    }
    out->resize(n);
    return ReadInto(offset, n, out->data());
  }

  Status ReadInto(uint64_t offset, uint64_t n, char* out) const override {
    const std::string& name = gets_->name;
    FERRY_RETURN_IF_ERROR(CheckRange(offset, n));
    if (n == 0) {
      return Status::OK();
    }
    if (offset + n <= head_.size()) {
      std::memcpy(out, head_.data() + offset, n);
      return Status::OK();
    }
    http::HttpOutcome r = gets_->get(offset, n, etag_, std::span<char>(out, n));
    if (r.status_code() == 412) {
      return DataLoss("{}: the {} changed since it was opened (ETag {} no longer matches)", name,
                      gets_->noun, etag_);
    }
    if (r.status_code() == 404 && !etag_.empty()) {
      // The version this file reads is gone: the same case as a replaced object, and not one a
      // caller may take for a file that never existed (it opened it).
      return DataLoss("{}: the {} was deleted since it was opened ({})", name, gets_->noun,
                      r.status.message());
    }
    if (!r.ok()) {
      return gets_->error(r, "GET " + name);
    }
    if (r.response.body_size != n) {
      return DataLoss("{}: asked for {} bytes at {}, got {}", name, n, offset,
                      r.response.body_size);
    }
    return Status::OK();
  }

 private:
  Status CheckRange(uint64_t offset, uint64_t n) const {
    if (offset > size_ || n > size_ - offset) {
      return DataLoss("{}: read of {} bytes at {} is past its end ({} bytes)", gets_->name, n,
                      offset, size_);
    }
    return Status::OK();
  }

  const std::shared_ptr<const RangedGets> gets_;
  const uint64_t size_;
  const std::string etag_;
  const std::string head_;  // the first bytes, read at open
};

}  // namespace

Result<std::shared_ptr<const RandomAccessFile>> OpenRangedReadFile(
    RangedGets gets, uint64_t first_read, const std::function<Result<uint64_t>()>& size,
    const std::function<Status(const http::HttpResponse&)>& check_first) {
  auto shared = std::make_shared<const RangedGets>(std::move(gets));
  const std::string& name = shared->name;
  http::HttpOutcome r = shared->get(0, first_read, "", {});
  if (r.status_code() == 416) {
    // An empty object has no byte 0.
    FERRY_ASSIGN_OR_RETURN(uint64_t bytes, size());
    if (bytes != 0) {
      return DataLoss("{}: a range from byte 0 was refused but the {} holds {} bytes", name,
                      shared->noun, bytes);
    }
    return std::shared_ptr<const RandomAccessFile>(
        std::make_shared<RangedReadFile>(std::move(shared), 0, "", ""));
  }
  if (!r.ok()) {
    return shared->error(r, "GET " + name);
  }
  if (check_first) {
    FERRY_RETURN_IF_ERROR(check_first(r.response));
  }
  uint64_t bytes = r.response.body.size();
  if (r.status_code() == 206) {
    std::optional<uint64_t> total =
        http::TotalFromContentRange(r.response.headers.GetOr("Content-Range"));
    if (!total) {
      return DataLoss("{}: a ranged GET answered without a usable Content-Range", name);
    }
    bytes = *total;
  }
  std::string etag(r.response.headers.GetOr("ETag"));
  return std::shared_ptr<const RandomAccessFile>(std::make_shared<RangedReadFile>(
      std::move(shared), bytes, std::move(etag), std::move(r.response.body)));
}

}  // namespace ferry::storage

#include "ferry/storage/multipart_writer.h"

#include <algorithm>
#include <deque>
#include <future>

#include "ferry/base/check.h"

namespace ferry::storage {
namespace {

class MultipartWriter final : public OutputStream {
 public:
  MultipartWriter(std::unique_ptr<MultipartUpload> upload, std::string name,
                  MultipartWriterOptions options)
      : upload_(std::move(upload)), name_(std::move(name)), options_(options) {
    FERRY_CHECK(options_.part_size > 0 && options_.parts_in_flight >= 1);
  }

  ~MultipartWriter() override {
    if (!closed_) {
      Abort();
    }
  }

  Status Append(std::string_view data) override {
    FERRY_RETURN_IF_ERROR(failed_);
    if (closed_) {
      return Internal("{}: append after close", name_);
    }
    const size_t part_size = options_.part_size;
    while (!data.empty()) {
      if (buffer_.capacity() < part_size) {
        buffer_.reserve(part_size);
      }
      const size_t take = std::min(data.size(), part_size - buffer_.size());
      buffer_.append(data.substr(0, take));
      data.remove_prefix(take);
      written_ += take;
      if (buffer_.size() == part_size) {
        failed_ = SendPart();
        FERRY_RETURN_IF_ERROR(failed_);
      }
    }
    return Status::OK();
  }

  uint64_t Tell() const override { return written_; }
  const std::string& name() const override { return name_; }

  Status Close() override {
    if (closed_) {
      return failed_;
    }
    Status st = failed_.ok() ? Finish() : failed_;
    if (!st.ok()) {
      Abort();
    }
    closed_ = true;
    failed_ = st;
    return st;
  }

 private:
  Status Finish() {
    if (!started_) {
      return upload_->PutWhole(buffer_);
    }
    if (!buffer_.empty()) {
      FERRY_RETURN_IF_ERROR(SendPart());
    }
    while (!in_flight_.empty()) {
      FERRY_RETURN_IF_ERROR(WaitOldest());
    }
    FERRY_RETURN_IF_ERROR(upload_->Complete(parts_, written_));
    completed_ = true;
    return Status::OK();
  }

  // Hands the buffer to a background upload; first waits for the oldest part when the most
  // allowed are in flight.
  Status SendPart() {
    if (!started_) {
      FERRY_RETURN_IF_ERROR(upload_->Start());
      started_ = true;
    }
    while (static_cast<int>(in_flight_.size()) >= options_.parts_in_flight) {
      FERRY_RETURN_IF_ERROR(WaitOldest());
    }
    const int number = next_part_++;
    const uint64_t size = buffer_.size();
    // The writer outlives the task: Close and the destructor wait for every part in flight.
    MultipartUpload* upload = upload_.get();
    in_flight_.push_back(
        {number, size,
         std::async(std::launch::async, [upload, number, data = std::move(buffer_)]() {
           return upload->UploadPart(number, data);
         })});
    buffer_ = std::string();
    return Status::OK();
  }

  Status WaitOldest() {
    InFlight part = std::move(in_flight_.front());
    in_flight_.pop_front();
    Result<std::string> token = part.token.get();
    if (!token.ok()) {
      return token.status();
    }
    parts_.push_back(
        UploadedPart{.number = part.number, .token = std::move(*token), .size = part.size});
    return Status::OK();
  }

  // Waits for the parts in flight, then lets the store free the upload.
  void Abort() {
    while (!in_flight_.empty()) {
      in_flight_.front().token.wait();
      in_flight_.pop_front();
    }
    if (started_ && !completed_ && !aborted_) {
      aborted_ = true;
      upload_->Abort();
    }
  }

  struct InFlight {
    int number;
    uint64_t size;
    std::future<Result<std::string>> token;
  };

  // Destruction order: in_flight_ (whose futures wait for their tasks) goes before upload_,
  // which the tasks use; Abort in the destructor has emptied it anyway.
  const std::unique_ptr<MultipartUpload> upload_;
  const std::string name_;
  const MultipartWriterOptions options_;
  std::string buffer_;
  uint64_t written_ = 0;
  bool started_ = false;
  bool completed_ = false;
  bool aborted_ = false;
  int next_part_ = 1;
  std::deque<InFlight> in_flight_;
  std::vector<UploadedPart> parts_;  // in order
  Status failed_;
  bool closed_ = false;
};

}  // namespace

std::unique_ptr<OutputStream> NewMultipartWriter(std::unique_ptr<MultipartUpload> upload,
                                                 std::string name, MultipartWriterOptions options) {
  return std::make_unique<MultipartWriter>(std::move(upload), std::move(name), options);
}

}  // namespace ferry::storage

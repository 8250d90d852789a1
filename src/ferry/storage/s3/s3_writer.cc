// OpenAtomicWriter of S3Store (s3_store.h): one PutObject below the part size, a multipart upload
// above it, with parts sent on background threads while the writer takes the next bytes.
#include <fmt/format.h>

#include <deque>
#include <future>

#include "ferry/base/failpoint.h"
#include "ferry/base/log.h"
#include "ferry/http/digest.h"
#include "ferry/http/xml.h"
#include "ferry/storage/s3/s3_internal.h"
#include "ferry/storage/s3/sigv4.h"

namespace ferry::storage::s3 {
namespace {

// Uploads one part; its ETag (as S3 returned it, quoted) or the error.
Result<std::string> UploadPart(const S3Core& core, const std::string& object_key,
                               const std::string& upload_id, int number, const std::string& data) {
  FERRY_RETURN_IF_ERROR(
      FERRY_FAILPOINT("storage.s3.before_upload_part")
          .WithContext("upload part {} of {}", number, core.DescribeObject(object_key)));
  S3Call call{.method = "PUT",
              .object_key = object_key,
              .query = {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}},
              .body = data,
              .payload_hash = std::string(kUnsignedPayload)};
  call.headers.Set("Content-MD5", http::ContentMd5(data));
  http::HttpOutcome r = core.Send(call);
  if (!r.ok()) {
    return S3Error(r, fmt::format("upload part {} of {}", number, core.DescribeObject(object_key)));
  }
  std::optional<std::string_view> etag = r.response.headers.Get("ETag");
  if (!etag || etag->empty()) {
    return Unavailable("upload part {} of {}: no ETag in the answer", number,
                       core.DescribeObject(object_key));
  }
  return std::string(*etag);
}

class S3Writer final : public OutputStream {
 public:
  S3Writer(std::shared_ptr<S3Core> core, std::string object_key)
      : core_(std::move(core)),
        object_key_(std::move(object_key)),
        name_(core_->DescribeObject(object_key_)) {}

  ~S3Writer() override {
    if (!closed_) {
      Abort();
    }
  }

  Status Append(std::string_view data) override {
    FERRY_RETURN_IF_ERROR(failed_);
    if (closed_) {
      return Internal("{}: append after close", name_);
    }
    const size_t part_size = core_->options.part_size;
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
    if (upload_id_.empty()) {
      // Small enough for one request.
      S3Call call{.method = "PUT",
                  .object_key = object_key_,
                  .body = buffer_,
                  .payload_hash = std::string(kUnsignedPayload)};
      call.headers.Set("Content-MD5", http::ContentMd5(buffer_));
      http::HttpOutcome r = core_->Send(call);
      return r.ok() ? Status::OK() : S3Error(r, "PUT " + name_);
    }
    if (!buffer_.empty()) {
      FERRY_RETURN_IF_ERROR(SendPart());
    }
    while (!in_flight_.empty()) {
      FERRY_RETURN_IF_ERROR(WaitOldest());
    }
    return Complete();
  }

  // Hands the buffer to a background upload; first waits for the oldest part when the most
  // allowed are in flight.
  Status SendPart() {
    if (upload_id_.empty()) {
      FERRY_RETURN_IF_ERROR(StartUpload());
    }
    while (static_cast<int>(in_flight_.size()) >= core_->options.parts_in_flight) {
      FERRY_RETURN_IF_ERROR(WaitOldest());
    }
    const int number = next_part_++;
    in_flight_.push_back(
        {number, std::async(std::launch::async, [core = core_, key = object_key_, id = upload_id_,
                                                 number, data = std::move(buffer_)]() {
           return UploadPart(*core, key, id, number, data);
         })});
    buffer_ = std::string();
    return Status::OK();
  }

  Status WaitOldest() {
    InFlight part = std::move(in_flight_.front());
    in_flight_.pop_front();
    Result<std::string> etag = part.etag.get();
    if (!etag.ok()) {
      return etag.status();
    }
    parts_.emplace_back(part.number, std::move(*etag));
    return Status::OK();
  }

  Status StartUpload() {
    S3Call call{.method = "POST", .object_key = object_key_, .query = {{"uploads", ""}}};
    http::HttpOutcome r = core_->Send(call);
    if (!r.ok()) {
      return S3Error(r, "start multipart upload of " + name_);
    }
    Result<http::XmlElement> doc = http::ParseXml(r.response.body);
    std::optional<std::string_view> id =
        doc.ok() ? doc->ChildText("UploadId") : std::optional<std::string_view>();
    if (!id || id->empty()) {
      return Unavailable("start multipart upload of {}: no UploadId in the answer", name_);
    }
    upload_id_ = std::string(*id);
    return Status::OK();
  }

  Status Complete() {
    std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUpload>";
    for (const auto& [number, etag] : parts_) {
      body += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>", number);
      http::AppendXmlEscaped(&body, etag);
      body += "</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    S3Call call{.method = "POST",
                .object_key = object_key_,
                .query = {{"uploadId", upload_id_}},
                .body = body};
    call.headers.Set("Content-Type", "application/xml");
    http::HttpOutcome r = core_->Send(call);
    if (r.ok()) {
      // S3 may answer 200 and put an <Error> in the body (a failure after the headers went).
      Result<http::XmlElement> doc = http::ParseXml(r.response.body);
      if (doc.ok() && doc->name == "Error") {
        return Unavailable("complete multipart upload of {}: {}: {}", name_,
                           doc->ChildText("Code").value_or(""),
                           doc->ChildText("Message").value_or(""));
      }
      upload_id_.clear();  // done: nothing to abort
      return Status::OK();
    }
    if (r.status_code() == 404) {
      // NoSuchUpload after a retry: an earlier attempt may have completed it. The key is this
      // writer's own (data files have unique names): the object with our size is our upload.
      http::HttpOutcome head = core_->Send(S3Call{.method = "HEAD", .object_key = object_key_});
      std::optional<std::string_view> length = head.response.headers.Get("Content-Length");
      if (head.ok() && length && *length == std::to_string(written_)) {
        upload_id_.clear();
        return Status::OK();
      }
    }
    return S3Error(r, "complete multipart upload of " + name_);
  }

  // Waits for the parts in flight, then aborts the upload so that S3 frees its parts.
  void Abort() {
    while (!in_flight_.empty()) {
      in_flight_.front().etag.wait();
      in_flight_.pop_front();
    }
    if (upload_id_.empty()) {
      return;
    }
    http::HttpOutcome r = core_->Send(
        S3Call{.method = "DELETE", .object_key = object_key_, .query = {{"uploadId", upload_id_}}});
    if (!r.ok() && r.status_code() != 404) {
      FERRY_LOG_WARN(
          "abort multipart upload {} of {}: {} (a bucket lifecycle rule for "
          "incomplete uploads frees its parts)",
          upload_id_, name_, r.status.ToString());
    }
    upload_id_.clear();
  }

  struct InFlight {
    int number;
    std::future<Result<std::string>> etag;
  };

  const std::shared_ptr<S3Core> core_;
  const std::string object_key_;
  const std::string name_;
  std::string buffer_;
  uint64_t written_ = 0;
  std::string upload_id_;  // empty until the first part; cleared once completed or aborted
  int next_part_ = 1;
  std::deque<InFlight> in_flight_;
  std::vector<std::pair<int, std::string>> parts_;  // number -> ETag, in order
  Status failed_;
  bool closed_ = false;
};

}  // namespace

std::unique_ptr<OutputStream> NewS3Writer(std::shared_ptr<S3Core> core, std::string object_key) {
  return std::make_unique<S3Writer>(std::move(core), std::move(object_key));
}

}  // namespace ferry::storage::s3

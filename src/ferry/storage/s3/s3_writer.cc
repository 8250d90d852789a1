// OpenAtomicWriter of S3Store (s3_store.h): the S3 calls of the store-neutral multipart writer
// (storage/multipart_writer.h, opened by storage/http_object_store.h), which buffers the bytes and
// sends the parts on background threads while the writer takes the next bytes. One PutObject below
// the part size; above it a multipart upload (CreateMultipartUpload, UploadPart,
// CompleteMultipartUpload), aborted on failure.
#include <fmt/format.h>

#include "ferry/base/failpoint.h"
#include "ferry/base/log.h"
#include "ferry/http/digest.h"
#include "ferry/http/xml.h"
#include "ferry/storage/multipart_writer.h"
#include "ferry/storage/s3/s3_internal.h"
#include "ferry/storage/s3/sigv4.h"

namespace ferry::storage::s3 {
namespace {

class S3MultipartUpload final : public MultipartUpload {
 public:
  S3MultipartUpload(std::shared_ptr<const S3Core> core, std::string object_key)
      : core_(std::move(core)),
        object_key_(std::move(object_key)),
        name_(core_->Describe(object_key_)) {}

  Status PutWhole(std::string_view data) override {
    HttpCall call{.method = "PUT",
                  .object = object_key_,
                  .body = data,
                  .payload_hash = std::string(kUnsignedPayload)};
    call.headers.Set("Content-MD5", http::ContentMd5(data));
    http::HttpOutcome r = core_->Send(call);
    return r.ok() ? Status::OK() : core_->Error(r, "PUT " + name_);
  }

  Status Start() override {
    HttpCall call{.method = "POST", .object = object_key_, .query = {{"uploads", ""}}};
    http::HttpOutcome r = core_->Send(call);
    if (!r.ok()) {
      return core_->Error(r, "start multipart upload of " + name_);
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

  // Its ETag, as S3 returned it (quoted).
  Result<std::string> UploadPart(int number, std::string_view data) override {
    FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("storage.s3.before_upload_part")
                              .WithContext("upload part {} of {}", number, name_));
    HttpCall call{.method = "PUT",
                  .object = object_key_,
                  .query = {{"partNumber", std::to_string(number)}, {"uploadId", upload_id_}},
                  .body = data,
                  .payload_hash = std::string(kUnsignedPayload)};
    call.headers.Set("Content-MD5", http::ContentMd5(data));
    http::HttpOutcome r = core_->Send(call);
    if (!r.ok()) {
      return core_->Error(r, fmt::format("upload part {} of {}", number, name_));
    }
    std::optional<std::string_view> etag = r.response.headers.Get("ETag");
    if (!etag || etag->empty()) {
      return Unavailable("upload part {} of {}: no ETag in the answer", number, name_);
    }
    return std::string(*etag);
  }

  Status Complete(const std::vector<UploadedPart>& parts, uint64_t total_size) override {
    std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUpload>";
    for (const UploadedPart& part : parts) {
      body += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>", part.number);
      http::AppendXmlEscaped(&body, part.token);
      body += "</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    HttpCall call{
        .method = "POST", .object = object_key_, .query = {{"uploadId", upload_id_}}, .body = body};
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
      return Status::OK();
    }
    if (r.status_code() == 404) {
      // NoSuchUpload after a retry: an earlier attempt may have completed it. The key is this
      // writer's own (data files have unique names): the object with our size is our upload.
      http::HttpOutcome head = core_->Send(HttpCall{.method = "HEAD", .object = object_key_});
      std::optional<std::string_view> length = head.response.headers.Get("Content-Length");
      if (head.ok() && length && *length == std::to_string(total_size)) {
        return Status::OK();
      }
    }
    return core_->Error(r, "complete multipart upload of " + name_);
  }

  // Aborts the upload so that S3 frees its parts.
  void Abort() override {
    http::HttpOutcome r = core_->Send(
        HttpCall{.method = "DELETE", .object = object_key_, .query = {{"uploadId", upload_id_}}});
    if (!r.ok() && r.status_code() != 404) {
      FERRY_LOG_WARN(
          "abort multipart upload {} of {}: {} (a bucket lifecycle rule for "
          "incomplete uploads frees its parts)",
          upload_id_, name_, r.status.ToString());
    }
  }

 private:
  const std::shared_ptr<const S3Core> core_;
  const std::string object_key_;
  const std::string name_;
  std::string upload_id_;  // set by Start, before any part
};

}  // namespace

std::unique_ptr<MultipartUpload> NewS3Upload(std::shared_ptr<const S3Core> core,
                                             std::string object_key) {
  return std::make_unique<S3MultipartUpload>(std::move(core), std::move(object_key));
}

}  // namespace ferry::storage::s3

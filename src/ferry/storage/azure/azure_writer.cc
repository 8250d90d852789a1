// OpenAtomicWriter of AzureBlobStore (azure_store.h): the Azure calls of the store-neutral
// multipart writer (storage/multipart_writer.h, opened by storage/http_object_store.h), which
// buffers the bytes and sends the parts on background threads while the writer takes the next
// bytes. One Put Blob below the part size; above it one Put Block per part and a Put Block List
// that commits them in order.
//
// Block ids: base64 of "ferry-<16 hex of this writer>-<6-digit part number>", one length for
// every block of every writer (Azure demands equal lengths within a blob), and a fresh random
// part per writer, so blocks that an abandoned writer left uncommitted under the same name are
// never taken for this one's. Nothing is sent on abort: uncommitted blocks are invisible, and the
// service discards them a week later or when the blob is next committed.
#include <fmt/format.h>

#include <random>

#include "ferry/base/log.h"
#include "ferry/http/digest.h"
#include "ferry/http/xml.h"
#include "ferry/storage/azure/azure_internal.h"
#include "ferry/storage/multipart_writer.h"

namespace ferry::storage::azure {
namespace {

// Put Block List names at most this many blocks.
constexpr int kMaxBlocks = 50'000;

std::string RandomHex16() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  return fmt::format("{:016x}", rng());
}

class AzureBlockUpload final : public MultipartUpload {
 public:
  AzureBlockUpload(std::shared_ptr<const AzureCore> core, std::string blob)
      : core_(std::move(core)), blob_(std::move(blob)), name_(core_->DescribeBlob(blob_)) {}

  Status PutWhole(std::string_view data) override {
    http::HttpOutcome r = core_->Send(core_->PutCall(blob_, data, /*if_absent=*/false));
    return r.ok() ? Status::OK() : AzureError(r, "PUT " + name_);
  }

  Status Start() override {
    writer_id_ = RandomHex16();
    return Status::OK();
  }

  // The block id.
  Result<std::string> UploadPart(int number, std::string_view data) override {
    if (number > kMaxBlocks) {
      return ResourceExhausted(
          "{}: more than {} blocks; raise upload_part_size to write a file this large", name_,
          kMaxBlocks);
    }
    std::string id = http::Base64Encode(fmt::format("ferry-{}-{:06d}", writer_id_, number));
    HttpCall call{.method = "PUT",
                  .object = blob_,
                  .query = {{"comp", "block"}, {"blockid", id}},
                  .body = data};
    call.headers.Set("Content-MD5", http::ContentMd5(data));
    http::HttpOutcome r = core_->Send(call);
    if (!r.ok()) {
      return AzureError(r, fmt::format("put block {} of {}", number, name_));
    }
    return id;
  }

  // Committing the same list twice gives the same blob, so a retried Put Block List is safe.
  Status Complete(const std::vector<UploadedPart>& parts, uint64_t) override {
    std::string body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
    for (const UploadedPart& part : parts) {
      body += "<Latest>";
      http::AppendXmlEscaped(&body, part.token);
      body += "</Latest>";
    }
    body += "</BlockList>";
    HttpCall call{.method = "PUT", .object = blob_, .query = {{"comp", "blocklist"}}, .body = body};
    call.headers.Set("Content-Type", "application/xml");
    call.headers.Set("Content-MD5", http::ContentMd5(body));
    http::HttpOutcome r = core_->Send(call);
    return r.ok() ? Status::OK() : AzureError(r, "put block list of " + name_);
  }

  void Abort() override {
    FERRY_LOG_DEBUG("{}: upload abandoned; its uncommitted blocks expire by themselves", name_);
  }

 private:
  const std::shared_ptr<const AzureCore> core_;
  const std::string blob_;
  const std::string name_;
  std::string writer_id_;  // set by Start, before any block
};

}  // namespace

std::unique_ptr<MultipartUpload> NewAzureUpload(std::shared_ptr<const AzureCore> core,
                                                std::string blob) {
  return std::make_unique<AzureBlockUpload>(std::move(core), std::move(blob));
}

}  // namespace ferry::storage::azure

#include "ferry/storage/gcs/gcs_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <span>

#include <nlohmann/json.hpp>

#include "ferry/base/log.h"
#include "ferry/http/digest.h"
#include "ferry/http/header_values.h"
#include "ferry/http/outcome.h"
#include "ferry/http/url.h"
#include "ferry/storage/gcs/gcs_batch.h"

namespace ferry::storage::gcs {
namespace {

// Resumable chunks but the last are multiples of this (GCS's rule).
constexpr size_t kChunkGranularity = 256 * 1024;

HttpStoreSettings Settings(const GcsStoreOptions& o) {
  HttpStoreSettings settings{.root = o.root, .transfer = o.transfer};
  settings.conditional_writes = ConditionalWrites::kProbe;
  settings.condition = "ifGenerationMatch=0";
  settings.unsafe_option = "";            // no override: GCS enforces the precondition
  settings.transfer.parts_in_flight = 1;  // a resumable session is sequential
  return settings;
}

// The value of `name` in a query string ("" when absent; no decoding: upload ids need none).
std::string QueryValue(std::string_view url, std::string_view name) {
  const size_t mark = url.find('?');
  std::string_view query = mark == std::string_view::npos ? "" : url.substr(mark + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    if (pair.size() > name.size() && pair.substr(0, name.size()) == name &&
        pair[name.size()] == '=') {
      return std::string(pair.substr(name.size() + 1));
    }
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
  }
  return "";
}

// A multipart/related boundary: random, so that no object's bytes contain it in practice (a
// collision would only make the upload fail: the server checks the CRC32C).
std::string Boundary() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("ferry_{:016x}{:016x}", rng(), rng());
}

// The crc32c of an object resource (an upload's answer), "" when absent.
std::string ResponseCrc32c(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("crc32c") && j["crc32c"].is_string()
             ? j["crc32c"].get<std::string>()
             : std::string();
}

}  // namespace

// The GCS protocol (http_object_store.h). A call names its object in `object` for the object
// resource (/storage/v1/b/B/o/NAME; GET and HEAD read the media), or is an upload when its query
// has uploadType (/upload/storage/v1/b/B/o, the name in the query), or a batch (a POST without
// uploadType: /batch/storage/v1), or a listing (no object).
class GcsCore final : public HttpStoreCore {
 public:
  GcsCore(GcsStoreOptions o, std::shared_ptr<http::HttpClient> c, std::string bucket_url,
          std::string upload_url, std::string batch_url, std::string object_path)
      : HttpStoreCore(Settings(o), std::move(c)),
        options(std::move(o)),
        bucket_url_(std::move(bucket_url)),
        upload_url_(std::move(upload_url)),
        batch_url_(std::move(batch_url)),
        object_path_(std::move(object_path)) {}

  const GcsStoreOptions options;

  std::string Url(const HttpCall& call) const override {
    bool upload = false;
    for (const http::QueryParam& p : call.query) {
      upload = upload || p.key == "uploadType";
    }
    std::vector<http::QueryParam> query = call.query;
    std::string url;
    if (upload) {
      url = upload_url_;
    } else if (call.method == "POST" && call.object.empty()) {
      url = batch_url_;  // the one POST that is no upload: a batch (DeleteBatch)
    } else if (call.object.empty()) {
      url = bucket_url_;
    } else {
      url = bucket_url_ + "/" + http::UriEncode(call.object);
      if (call.method == "GET" || call.method == "HEAD") {
        query.insert(query.begin(), {"alt", "media"});
      }
    }
    return query.empty() ? url : url + "?" + http::BuildQuery(query);
  }

  // A bearer token when the options have a source of them; anonymous otherwise.
  Status Authorize(http::HttpRequest* request, const HttpCall&) const override {
    if (!options.access_token) {
      return Status::OK();
    }
    FERRY_ASSIGN_OR_RETURN(std::string token, options.access_token());
    request->headers.Set("Authorization", "Bearer " + token);
    return Status::OK();
  }

  // {"error":{"code":412,"message":"...","errors":[{"reason":"conditionNotMet",...}]}}
  http::ServiceError ParseError(const http::HttpResponse& response) const override {
    http::ServiceError e;
    nlohmann::json j = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("error") && j["error"].is_object()) {
      const nlohmann::json& error = j["error"];
      if (error.contains("message") && error["message"].is_string()) {
        e.message = error["message"].get<std::string>();
      }
      if (error.contains("errors") && error["errors"].is_array() && !error["errors"].empty() &&
          error["errors"][0].is_object() && error["errors"][0].contains("reason") &&
          error["errors"][0]["reason"].is_string()) {
        e.code = error["errors"][0]["reason"].get<std::string>();
      }
    }
    return e;
  }

  Status Error(const http::HttpOutcome& outcome, std::string_view what) const override {
    if (outcome.status_code() == 404) {
      return Status(StatusCode::kNotFound, fmt::format("{}: {}", what, outcome.status.message()));
    }
    return outcome.status.WithContext("{}", what);
  }

  // "gs://bucket/name"; the root itself (a key of "." or "") without a trailing "/.".
  std::string Describe(std::string_view object) const override {
    if (object == "." || object.ends_with("/.")) {
      object.remove_suffix(object.size() == 1 ? 1 : 2);
    }
    while (object.ends_with('/')) {
      object.remove_suffix(1);
    }
    return object.empty() ? fmt::format("gs://{}", options.bucket)
                          : fmt::format("gs://{}/{}", options.bucket, object);
  }

  // A multipart upload (metadata, then the bytes), so that the object's CRC32C travels in its
  // metadata, where GCS checks it against the bytes it received (400 when they differ).
  HttpCall PutCall(std::string object, std::string_view data, bool if_absent) const override {
    const std::string boundary = Boundary();
    nlohmann::json metadata = {{"name", object},
                               {"crc32c", http::Crc32cBase64(http::Crc32c(data))}};
    auto body = std::make_shared<std::string>();
    body->reserve(data.size() + 512);
    *body += fmt::format(
        "--{}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{}\r\n--{}\r\n"
        "Content-Type: application/octet-stream\r\n\r\n",
        boundary, metadata.dump(), boundary);
    body->append(data);
    *body += fmt::format("\r\n--{}--\r\n", boundary);
    HttpCall call{.method = "POST",
                  .query = {{"uploadType", "multipart"}},
                  .body = *body,
                  .owned_body = body,
                  .idempotent = !if_absent};
    if (if_absent) {
      call.query.push_back({"ifGenerationMatch", "0"});
    }
    call.headers.Set("Content-Type", "multipart/related; boundary=" + boundary);
    return call;
  }

  bool Taken(const http::HttpOutcome& outcome) const override {
    return outcome.status_code() == 412;
  }

  std::unique_ptr<MultipartUpload> NewUpload(std::string object) const override;

  Result<ListedPage> ListPage(const std::string& prefix, bool recursive,
                              const std::string& start_after, const std::string& token,
                              const std::string& what) const override {
    HttpCall call{.method = "GET"};
    call.query = {{"prefix", prefix},
                  {"maxResults", std::to_string(options.list_page_size)},
                  {"fields", "items(name,size,updated),nextPageToken"}};
    if (!recursive) {
      call.query.push_back({"delimiter", "/"});
    }
    if (!start_after.empty()) {
      call.query.push_back({"startOffset", start_after});  // inclusive: the caller filters
    }
    if (!token.empty()) {
      call.query.push_back({"pageToken", token});
    }
    http::HttpOutcome r = Send(call);
    if (!r.ok()) {
      return Error(r, what);
    }
    nlohmann::json j = nlohmann::json::parse(r.response.body, nullptr, false);
    if (!j.is_object()) {
      return DataLoss("{}: unreadable listing answer", what);
    }
    ListedPage page;
    if (j.contains("items") && j["items"].is_array()) {
      for (const nlohmann::json& item : j["items"]) {
        if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
          continue;
        }
        ObjectInfo info;
        info.key = item["name"].get<std::string>();
        if (item.contains("size") && item["size"].is_string()) {
          info.size = std::stoull(item["size"].get<std::string>());
        }
        if (item.contains("updated") && item["updated"].is_string()) {
          info.modification_time_ms = ParseIsoMillis(item["updated"].get<std::string>());
        }
        page.objects.push_back(std::move(info));
      }
    }
    if (j.contains("nextPageToken") && j["nextPageToken"].is_string()) {
      page.next_token = j["nextPageToken"].get<std::string>();
    }
    return page;
  }

  // Batches of up to kBatchParts DELETEs (gcs_batch.h); one object alone is a plain DELETE.
  Status DeleteObjects(const std::vector<std::string>& objects) const override {
    for (size_t first = 0; first < objects.size(); first += kBatchParts) {
      std::span<const std::string> batch(objects.data() + first,
                                         std::min(kBatchParts, objects.size() - first));
      FERRY_RETURN_IF_ERROR(batch.size() == 1 ? DeleteOne(batch[0]) : DeleteBatch(batch));
    }
    return Status::OK();
  }

 private:
  // DELETE .../o/NAME through the request loop; 404 is success.
  Status DeleteOne(const std::string& object) const {
    http::HttpOutcome r = Send(HttpCall{.method = "DELETE", .object = object});
    if (!r.ok() && r.status_code() != 404) {
      return Error(r, "DELETE " + Describe(object));
    }
    return Status::OK();
  }

  // One batch request (retried whole by the request loop: every part is idempotent). Each part's
  // answer is classified as a response of its own (http/outcome.h): 2xx and 404 are success; a
  // part that may succeed when tried again (429, 5xx) or that the answer did not hold is sent
  // again alone; any other failure is the call's error, naming its object.
  Status DeleteBatch(std::span<const std::string> objects) const {
    std::vector<std::string> paths;
    paths.reserve(objects.size());
    for (const std::string& object : objects) {
      paths.push_back(object_path_ + "/" + http::UriEncode(object));
    }
    const std::string boundary = Boundary();
    auto body = std::make_shared<std::string>(BatchDeleteBody(boundary, paths));
    HttpCall call{.method = "POST", .body = *body, .owned_body = body, .idempotent = true};
    call.headers.Set("Content-Type", "multipart/mixed; boundary=" + boundary);
    const std::string what = fmt::format("batch DELETE of {} objects from {}", objects.size(),
                                         Describe(objects.front()));
    http::HttpOutcome r = Send(call);
    if (!r.ok()) {
      return Error(r, what);
    }
    Result<std::vector<BatchPartAnswer>> parsed =
        ParseBatchAnswer(r.response.headers.GetOr("Content-Type"), r.response.body, objects.size());
    if (!parsed.ok()) {
      return parsed.status().WithContext("{}", what);
    }
    const std::vector<BatchPartAnswer>& answers = *parsed;
    for (size_t i = 0; i < objects.size(); ++i) {
      const BatchPartAnswer& answer = answers[i];
      if ((answer.status >= 200 && answer.status < 300) || answer.status == 404) {
        continue;
      }
      if (answer.status == 0) {
        FERRY_RETURN_IF_ERROR(DeleteOne(objects[i]));
        continue;
      }
      http::HttpRequest request{.method = "DELETE",
                                .url = bucket_url_ + "/" + http::UriEncode(objects[i])};
      http::HttpResponse response{.status_code = answer.status, .body = answer.body};
      const http::ServiceError error = ParseError(response);
      http::HttpOutcome part = http::ClassifyResponse(request, std::move(response), error);
      if (part.retryable) {
        FERRY_RETURN_IF_ERROR(DeleteOne(objects[i]));
        continue;
      }
      return Error(part,
                   fmt::format("DELETE {} (part {} of a {})", Describe(objects[i]), i + 1, what));
    }
    return Status::OK();
  }

  // ".../storage/v1/b/BUCKET/o" and ".../upload/storage/v1/b/BUCKET/o"; ".../batch/storage/v1";
  // the path of bucket_url_ ("/storage/v1/b/BUCKET/o"), as a batch's parts name objects.
  const std::string bucket_url_;
  const std::string upload_url_;
  const std::string batch_url_;
  const std::string object_path_;
};

namespace {

// A resumable upload, one chunk per part: parts come one at a time and in order
// (parts_in_flight is 1). A part that is not a multiple of 256 KiB can only be the last, so it
// is held back and sent by Complete with the total size; otherwise Complete sends no bytes and
// only the size.
class GcsResumableUpload final : public MultipartUpload {
 public:
  GcsResumableUpload(std::shared_ptr<const GcsCore> core, std::string object)
      : core_(std::move(core)), object_(std::move(object)), name_(core_->Describe(object_)) {}

  Status PutWhole(std::string_view data) override {
    http::HttpOutcome r = core_->Send(core_->PutCall(object_, data, /*if_absent=*/false));
    return r.ok() ? Status::OK() : core_->Error(r, "upload " + name_);
  }

  Status Start() override {
    HttpCall call{
        .method = "POST", .query = {{"uploadType", "resumable"}, {"name", object_}}, .body = "{}"};
    call.headers.Set("Content-Type", "application/json; charset=UTF-8");
    http::HttpOutcome r = core_->Send(call);
    if (!r.ok()) {
      return core_->Error(r, "start resumable upload of " + name_);
    }
    upload_id_ = QueryValue(r.response.headers.GetOr("Location"), "upload_id");
    if (upload_id_.empty()) {
      return Unavailable("start resumable upload of {}: no session (upload_id) in the answer",
                         name_);
    }
    return Status::OK();
  }

  Result<std::string> UploadPart(int number, std::string_view data) override {
    crc_ = http::Crc32c(data, crc_);  // parts come in order (parts_in_flight is 1)
    if (data.size() % kChunkGranularity != 0) {
      held_back_.assign(data);  // the last part
      return std::string("held");
    }
    FERRY_RETURN_IF_ERROR(
        SendChunk(data, "*", /*last=*/false).WithContext("chunk {} of {}", number, name_));
    return std::string("sent");
  }

  Status Complete(const std::vector<UploadedPart>&, uint64_t total_size) override {
    return SendChunk(held_back_, std::to_string(total_size), /*last=*/true)
        .WithContext("finish resumable upload of {}", name_);
  }

  void Abort() override {
    http::HttpOutcome r = core_->Send(Session("DELETE"));
    if (!r.ok() && r.status_code() != 499 && r.status_code() != 404) {
      FERRY_LOG_WARN("cancel resumable upload of {}: {}", name_, r.status.ToString());
    }
  }

 private:
  HttpCall Session(std::string method) const {
    return HttpCall{.method = std::move(method),
                    .query = {{"uploadType", "resumable"}, {"upload_id", upload_id_}}};
  }

  // PUT of bytes [sent_, sent_ + data.size()) with the total ("*" while unknown). The last one
  // carries the object's CRC32C in `x-goog-hash` (GCS checks it; fake-gcs-server ignores it),
  // and the CRC32C the answer reports for the stored object must be ours: otherwise the object
  // is deleted and the upload fails Unavailable (the writer writes the file again). A chunk of a
  // session that is not finished is answered 308, whose Range header ("bytes=0-N") says how much
  // the session holds: GCS may keep less than a chunk, so anything but exactly what was sent is an
  // error (Unavailable: the writer starts the file again), never a silent gap. The last PUT must
  // be answered 200/201: a 308 there means the object was not finalised.
  Status SendChunk(std::string_view data, const std::string& total, bool last) {
    HttpCall call = Session("PUT");
    call.body = data;
    const std::string crc = http::Crc32cBase64(crc_);
    if (last) {
      call.headers.Set("x-goog-hash", "crc32c=" + crc);
    }
    call.headers.Set("Content-Range", data.empty() ? fmt::format("bytes */{}", total)
                                                   : fmt::format("bytes {}-{}/{}", sent_,
                                                                 sent_ + data.size() - 1, total));
    http::HttpOutcome r = core_->Send(call);
    const uint64_t expected = sent_ + data.size();
    if (r.status_code() == 308) {
      if (last) {
        return Unavailable("PUT {}: the upload is not complete after its last chunk ({} bytes)",
                           name_, expected);
      }
      const uint64_t held = HeldBytes(r.response.headers.GetOr("Range"));
      if (held != expected) {
        return Unavailable("PUT {}: the upload session holds {} bytes, {} were sent", name_, held,
                           expected);
      }
    } else if (!r.ok()) {
      return core_->Error(r, "PUT " + name_);
    } else if (last) {
      const std::string stored = ResponseCrc32c(r.response.body);
      if (!stored.empty() && stored != crc) {
        http::HttpOutcome removed =
            core_->Send(HttpCall{.method = "DELETE", .object = object_, .idempotent = true});
        (void)removed;
        return Unavailable("PUT {}: the store holds bytes whose CRC32C is {}, not {} as sent",
                           name_, stored, crc);
      }
    }
    sent_ = expected;
    return Status::OK();
  }

  // "bytes=0-N" -> N + 1; no header: the session holds nothing.
  static uint64_t HeldBytes(std::string_view range) {
    const size_t dash = range.rfind('-');
    if (range.empty() || dash == std::string_view::npos) {
      return 0;
    }
    uint64_t last = 0;
    for (char c : range.substr(dash + 1)) {
      if (c < '0' || c > '9') {
        return 0;
      }
      last = last * 10 + static_cast<uint64_t>(c - '0');
    }
    return last + 1;
  }

  const std::shared_ptr<const GcsCore> core_;
  const std::string object_;
  const std::string name_;
  std::string upload_id_;  // set by Start
  uint64_t sent_ = 0;      // bytes the session holds
  std::string held_back_;  // the last part, when it is not a whole number of chunks
  uint32_t crc_ = 0;       // CRC32C of the parts so far
};

}  // namespace

std::unique_ptr<MultipartUpload> GcsCore::NewUpload(std::string object) const {
  return std::make_unique<GcsResumableUpload>(
      std::static_pointer_cast<const GcsCore>(shared_from_this()), std::move(object));
}

GcsStore::GcsStore(std::shared_ptr<GcsCore> core) : HttpObjectStore(std::move(core)) {}
GcsStore::~GcsStore() = default;

Result<std::unique_ptr<GcsStore>> GcsStore::Create(GcsStoreOptions options,
                                                   std::shared_ptr<http::HttpClient> client) {
  if (options.bucket.empty()) {
    return InvalidArgument("GCS store: no bucket");
  }
  if (options.transfer.part_size == 0 || options.transfer.part_size % kChunkGranularity != 0) {
    return InvalidArgument("GCS store: upload_part_size {} is not a multiple of 256 KiB",
                           options.transfer.part_size);
  }
  if (options.list_page_size < 1 || options.list_page_size > 1000) {
    return InvalidArgument("GCS store: a listing page holds 1 to 1000 objects, not {}",
                           options.list_page_size);
  }
  if (!options.root.empty()) {
    FERRY_RETURN_IF_ERROR(ValidateKey(options.root));
  }
  FERRY_ASSIGN_OR_RETURN(http::Url parsed, http::ParseUrl(options.endpoint));
  std::string_view endpoint = options.endpoint;
  while (!endpoint.empty() && endpoint.back() == '/') {
    endpoint.remove_suffix(1);
  }
  std::string_view base_path = parsed.path;  // an endpoint behind a path prefix keeps it
  while (!base_path.empty() && base_path.back() == '/') {
    base_path.remove_suffix(1);
  }
  const std::string bucket = http::UriEncode(options.bucket);
  std::string bucket_url = fmt::format("{}/storage/v1/b/{}/o", endpoint, bucket);
  std::string upload_url = fmt::format("{}/upload/storage/v1/b/{}/o", endpoint, bucket);
  std::string batch_url = fmt::format("{}/batch/storage/v1", endpoint);
  std::string object_path = fmt::format("{}/storage/v1/b/{}/o", base_path, bucket);
  auto core = std::make_shared<GcsCore>(std::move(options), std::move(client),
                                        std::move(bucket_url), std::move(upload_url),
                                        std::move(batch_url), std::move(object_path));
  return std::unique_ptr<GcsStore>(new GcsStore(std::move(core)));
}

}  // namespace ferry::storage::gcs

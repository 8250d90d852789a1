#include "ferry/storage/azure/azure_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "ferry/base/log.h"
#include "ferry/http/digest.h"
#include "ferry/http/header_values.h"
#include "ferry/http/xml.h"
#include "ferry/storage/azure/azure_internal.h"
#include "ferry/storage/ranged_read_file.h"

namespace ferry::storage::azure {
namespace {

// The first read of OpenForRead: the whole of a log file or checkpoint header in one request.
constexpr uint64_t kFirstRead = 64 * 1024;

// Hierarchical-namespace accounts mark directories with this metadata (and, in newer API
// versions, ResourceType "directory").
bool IsFolderMetadata(std::string_view value) {
  return http::EqualsIgnoreCase(value, "true");
}

bool IsFolder(const http::HttpResponse& r) {
  return IsFolderMetadata(r.headers.GetOr("x-ms-meta-hdi_isfolder")) ||
         http::EqualsIgnoreCase(r.headers.GetOr("x-ms-resource-type"), "directory");
}

}  // namespace

AzureCore::AzureCore(AzureStoreOptions o, std::shared_ptr<http::HttpClient> c,
                     std::shared_ptr<AzureCredentialProvider> creds, std::string url)
    : options(std::move(o)),
      client(std::move(c)),
      credentials(std::move(creds)),
      policy(options.retry, &counters,
             [](const http::RetryEvent& e) {
               FERRY_LOG_DEBUG("azure: attempt {} failed ({}); retrying in {} ms", e.attempt,
                               e.cause.ToString(), e.delay.count());
             }),
      container_url(std::move(url)) {}

std::string AzureCore::BlobName(std::string_view key) const {
  return JoinKey(options.root, key);
}

std::string AzureCore::DescribeBlob(std::string_view blob) const {
  return blob.empty() ? container_url : container_url + "/" + std::string(blob);
}

std::string AzureCore::BlobUrl(std::string_view blob) const {
  return blob.empty() ? container_url : container_url + "/" + http::UriEncodePath(blob);
}

Status AzureCore::Authorize(http::HttpRequest* request, http::Deadline deadline,
                            bool batch_subrequest) const {
  request->headers.Set("x-ms-date", http::FormatHttpDate(std::chrono::system_clock::now()));
  if (!batch_subrequest) {
    request->headers.Set("x-ms-version", kApiVersion);
  }
  FERRY_ASSIGN_OR_RETURN(AzureCredential credential, credentials->Get(deadline));
  return AuthorizeAzureRequest(request, credential, options.account);
}

http::HttpOutcome AzureCore::Send(const AzureCall& call) const {
  http::HttpRequest request;
  request.method = call.method;
  request.url = BlobUrl(call.blob);
  if (!call.query.empty()) {
    request.url += "?" + http::BuildQuery(call.query);
  }
  request.headers = call.headers;
  request.body = call.body;
  request.idempotent = call.idempotent;
  request.response_buffer = call.response_buffer;
  request.deadline = http::DeadlineAfter(options.retry_timeout);
  const std::chrono::milliseconds per_attempt = options.request_timeout;
  return http::SendWithRetry(*client, policy, std::move(request),
                             {.prepare = [&](http::HttpRequest* r) -> Status {
                                r->deadline =
                                    std::min(r->deadline, http::DeadlineAfter(per_attempt));
                                return Authorize(r, r->deadline);
                              },
                              .parse_error = ParseAzureError});
}

http::ServiceError ParseAzureError(const http::HttpResponse& response) {
  http::ServiceError e;
  e.code = std::string(response.headers.GetOr("x-ms-error-code"));
  if (!response.body.empty()) {
    Result<http::XmlElement> doc = http::ParseXml(response.body);
    if (doc.ok() && doc->name == "Error") {
      if (e.code.empty()) {
        e.code = std::string(doc->ChildText("Code").value_or(""));
      }
      // The message's first line; the rest is a request id and a time.
      std::string_view message = doc->ChildText("Message").value_or("");
      e.message = std::string(message.substr(0, message.find('\n')));
    }
  }
  return e;
}

std::string AzureErrorCode(const http::HttpOutcome& outcome) {
  return std::string(outcome.response.headers.GetOr("x-ms-error-code"));
}

Status AzureError(const http::HttpOutcome& outcome, std::string_view what) {
  // The http layer's message begins with the request ("GET https://..."): not twice.
  const bool named = outcome.status.message().starts_with(what);
  if (outcome.status_code() == 404) {
    return Status(
        StatusCode::kNotFound,
        named ? outcome.status.message() : fmt::format("{}: {}", what, outcome.status.message()));
  }
  return named ? outcome.status : outcome.status.WithContext("{}", what);
}

AzureBlobStore::AzureBlobStore(std::shared_ptr<AzureCore> core) : core_(std::move(core)) {}
AzureBlobStore::~AzureBlobStore() = default;

Result<std::unique_ptr<AzureBlobStore>> AzureBlobStore::Create(
    AzureStoreOptions options, std::shared_ptr<http::HttpClient> client,
    std::shared_ptr<AzureCredentialProvider> credentials) {
  if (options.account.empty()) {
    return InvalidArgument("Azure store: no storage account");
  }
  if (options.container.empty()) {
    return InvalidArgument("Azure store: no container");
  }
  if (options.part_size < (size_t{64} << 10) || options.part_size > (size_t{4000} << 20)) {
    return InvalidArgument(
        "Azure store: upload_part_size {} is outside the block sizes Azure takes (64 KiB to "
        "4000 MiB)",
        options.part_size);
  }
  if (options.parts_in_flight < 1) {
    return InvalidArgument("Azure store: upload_parts_in_flight must be at least 1");
  }
  if (options.list_page_size < 1 || options.list_page_size > 5000) {
    return InvalidArgument("Azure store: a listing page holds 1 to 5000 blobs, not {}",
                           options.list_page_size);
  }
  if (!options.root.empty()) {
    FERRY_RETURN_IF_ERROR(ValidateKey(options.root));
  }
  FERRY_RETURN_IF_ERROR(http::ParseUrl(options.endpoint).status());
  std::string_view endpoint = options.endpoint;
  while (!endpoint.empty() && endpoint.back() == '/') {
    endpoint.remove_suffix(1);
  }
  std::string url = fmt::format("{}/{}", endpoint, http::UriEncode(options.container));
  auto core = std::make_shared<AzureCore>(std::move(options), std::move(client),
                                          std::move(credentials), std::move(url));
  return std::unique_ptr<AzureBlobStore>(new AzureBlobStore(std::move(core)));
}

const http::RetryCounters& AzureBlobStore::counters() const {
  return core_->counters;
}

std::string AzureBlobStore::Describe(std::string_view key) const {
  // The root itself (a table at the store's root describes itself as ".").
  if (key.empty() || key == ".") {
    return core_->DescribeBlob(core_->options.root);
  }
  return core_->DescribeBlob(core_->BlobName(key));
}

Result<std::vector<ObjectInfo>> AzureBlobStore::List(std::string_view prefix,
                                                     const ListOptions& options) {
  FERRY_RETURN_IF_ERROR(ValidatePrefix(prefix));
  const std::string root = core_->options.root.empty() ? "" : core_->options.root + "/";
  const std::string full_prefix = root + std::string(prefix);
  const std::string what = "list " + core_->DescribeBlob(full_prefix);
  std::vector<ObjectInfo> out;
  std::string marker;
  while (true) {
    AzureCall call{.method = "GET"};
    call.query = {{"restype", "container"},
                  {"comp", "list"},
                  {"prefix", full_prefix},
                  {"maxresults", std::to_string(core_->options.list_page_size)},
                  {"include", "metadata"}};
    if (!options.recursive) {
      call.query.push_back({"delimiter", "/"});
    }
    if (!marker.empty()) {
      call.query.push_back({"marker", marker});
    }
    http::HttpOutcome r = core_->Send(call);
    if (!r.ok()) {
      return AzureError(r, what);
    }
    Result<http::XmlElement> doc = http::ParseXml(r.response.body);
    if (!doc.ok()) {
      return DataLoss("{}: unreadable List Blobs answer: {}", what, doc.status().message());
    }
    const http::XmlElement* blobs = doc->Child("Blobs");
    for (const http::XmlElement* b :
         blobs == nullptr ? std::vector<const http::XmlElement*>() : blobs->Children("Blob")) {
      const http::XmlElement* name_element = b->Child("Name");
      if (name_element == nullptr) {
        continue;
      }
      std::string name = name_element->text;
      if (name_element->Attribute("Encoded").value_or("") == "true") {
        // Names with characters XML cannot carry come percent-encoded.
        FERRY_ASSIGN_OR_RETURN(name, http::UriDecode(name));
      }
      const http::XmlElement* properties = b->Child("Properties");
      const http::XmlElement* metadata = b->Child("Metadata");
      if ((metadata != nullptr &&
           IsFolderMetadata(metadata->ChildText("hdi_isfolder").value_or(""))) ||
          (properties != nullptr &&
           properties->ChildText("ResourceType").value_or("") == "directory")) {
        continue;  // a directory of a hierarchical namespace, not an object
      }
      if (name.size() <= root.size() || name.compare(0, root.size(), root) != 0) {
        continue;
      }
      ObjectInfo info;
      info.key = name.substr(root.size());
      if (!options.start_after.empty() && info.key <= options.start_after) {
        continue;
      }
      if (properties != nullptr) {
        std::string_view size = properties->ChildText("Content-Length").value_or("0");
        std::from_chars(size.data(), size.data() + size.size(), info.size);
        info.modification_time_ms =
            http::ParseHttpDateMillis(properties->ChildText("Last-Modified").value_or(""));
      }
      out.push_back(std::move(info));
    }
    marker = std::string(doc->ChildText("NextMarker").value_or(""));
    if (marker.empty()) {
      break;
    }
  }
  // The service sorts by name; the contract wants bytewise order, which this guarantees.
  std::sort(out.begin(), out.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
  return out;
}

Result<std::shared_ptr<const RandomAccessFile>> AzureBlobStore::OpenForRead(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string blob = core_->BlobName(key);
  RangedGets gets{
      .name = core_->DescribeBlob(blob),
      .noun = "blob",
      .get =
          [core = core_, blob](uint64_t offset, uint64_t n, const std::string& etag,
                               std::span<char> into) {
            AzureCall call{.method = "GET", .blob = blob};
            call.headers.Set("x-ms-range", fmt::format("bytes={}-{}", offset, offset + n - 1));
            if (!etag.empty()) {
              call.headers.Set("If-Match", etag);
            }
            call.response_buffer = into;
            return core->Send(call);
          },
      .error = [](const http::HttpOutcome& r,
                  const std::string& what) { return AzureError(r, what); },
  };
  const std::string name = gets.name;
  return OpenRangedReadFile(
      std::move(gets), kFirstRead,
      [&]() -> Result<uint64_t> {
        FERRY_ASSIGN_OR_RETURN(ObjectInfo info, Stat(key));
        return info.size;
      },
      [&](const http::HttpResponse& first) {
        return IsFolder(first) ? NotFound("GET {}: a directory, not a blob", name) : Status::OK();
      });
}

Result<ObjectInfo> AzureBlobStore::Stat(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string blob = core_->BlobName(key);
  http::HttpOutcome r = core_->Send(AzureCall{.method = "HEAD", .blob = blob});
  if (!r.ok()) {
    return AzureError(r, "HEAD " + core_->DescribeBlob(blob));
  }
  if (IsFolder(r.response)) {
    return NotFound("HEAD {}: a directory, not a blob", core_->DescribeBlob(blob));
  }
  ObjectInfo info{.key = std::string(key)};
  info.size = http::ContentLength(r.response).value_or(0);
  info.modification_time_ms = http::ParseHttpDateMillis(r.response.headers.GetOr("Last-Modified"));
  return info;
}

Status AzureBlobStore::PutIfAbsent(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string blob = core_->BlobName(key);
  const std::string name = core_->DescribeBlob(blob);
  AzureCall call{.method = "PUT", .blob = blob, .body = data, .idempotent = false};
  call.headers.Set("x-ms-blob-type", "BlockBlob");
  call.headers.Set("If-None-Match", "*");
  call.headers.Set("Content-MD5", http::ContentMd5(data));
  http::HttpOutcome r = core_->Send(call);
  if (r.ok()) {
    return Status::OK();
  }
  if ((r.status_code() == 409 && AzureErrorCode(r) == "BlobAlreadyExists") ||
      r.status_code() == 412) {
    return AlreadyExists("put-if-absent {}: blob exists (another writer won)", name);
  }
  if (r.maybe_applied) {
    return Unavailable("put-if-absent {}: outcome unknown ({}); read it back to settle", name,
                       r.status.message());
  }
  return AzureError(r, "PUT " + name);
}

Status AzureBlobStore::Put(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string blob = core_->BlobName(key);
  AzureCall call{.method = "PUT", .blob = blob, .body = data};
  call.headers.Set("x-ms-blob-type", "BlockBlob");
  call.headers.Set("Content-MD5", http::ContentMd5(data));
  http::HttpOutcome r = core_->Send(call);
  return r.ok() ? Status::OK() : AzureError(r, "PUT " + core_->DescribeBlob(blob));
}

Status AzureBlobStore::Delete(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string blob = core_->BlobName(key);
  http::HttpOutcome r = core_->Send(AzureCall{.method = "DELETE", .blob = blob});
  if (r.ok() || r.status_code() == 404) {
    return Status::OK();
  }
  return AzureError(r, "DELETE " + core_->DescribeBlob(blob));
}

Status AzureBlobStore::DeleteMany(const std::vector<std::string>& keys) {
  std::vector<std::string> blobs;
  blobs.reserve(keys.size());
  for (const std::string& key : keys) {
    FERRY_RETURN_IF_ERROR(ValidateKey(key));
    blobs.push_back(core_->BlobName(key));
  }
  return DeleteBlobs(core_, blobs);
}

Result<std::unique_ptr<OutputStream>> AzureBlobStore::OpenAtomicWriter(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  return NewAzureWriter(core_, core_->BlobName(key));
}

}  // namespace ferry::storage::azure

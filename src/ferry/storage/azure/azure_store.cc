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

// Hierarchical-namespace accounts mark directories with this metadata (and, in newer API
// versions, ResourceType "directory").
bool IsFolderMetadata(std::string_view value) {
  return http::EqualsIgnoreCase(value, "true");
}

bool IsFolder(const http::HttpResponse& r) {
  return IsFolderMetadata(r.headers.GetOr("x-ms-meta-hdi_isfolder")) ||
         http::EqualsIgnoreCase(r.headers.GetOr("x-ms-resource-type"), "directory");
}

// The shared settings of the Azure options (http_object_store.h).
HttpStoreSettings Settings(const AzureStoreOptions& o) {
  HttpStoreSettings settings{.root = o.root, .transfer = o.transfer};
  settings.noun = "blob";
  settings.range_header = "x-ms-range";
  return settings;
}

}  // namespace

AzureCore::AzureCore(AzureStoreOptions o, std::shared_ptr<http::HttpClient> c,
                     std::shared_ptr<AzureCredentialProvider> creds, std::string url)
    : HttpStoreCore(Settings(o), std::move(c)),
      options(std::move(o)),
      credentials_(std::move(creds)),
      container_url_(std::move(url)) {}

std::string AzureCore::DescribeBlob(std::string_view blob) const {
  return blob.empty() ? container_url_ : container_url_ + "/" + std::string(blob);
}

std::string AzureCore::BlobUrl(std::string_view blob) const {
  return blob.empty() ? container_url_ : container_url_ + "/" + http::UriEncodePath(blob);
}

Status AzureCore::Authorize(http::HttpRequest* request, http::Deadline deadline,
                            bool batch_subrequest) const {
  request->headers.Set("x-ms-date", http::FormatHttpDate(std::chrono::system_clock::now()));
  if (!batch_subrequest) {
    request->headers.Set("x-ms-version", kApiVersion);
  }
  FERRY_ASSIGN_OR_RETURN(AzureCredential credential, credentials_->Get(deadline));
  return AuthorizeAzureRequest(request, credential, options.account);
}

std::string AzureCore::Url(const HttpCall& call) const {
  std::string url = BlobUrl(call.object);
  if (!call.query.empty()) {
    url += "?" + http::BuildQuery(call.query);
  }
  return url;
}

Status AzureCore::Authorize(http::HttpRequest* request, const HttpCall&) const {
  return Authorize(request, request->deadline);
}

http::ServiceError AzureCore::ParseError(const http::HttpResponse& response) const {
  return ParseAzureError(response);
}

Status AzureCore::Error(const http::HttpOutcome& outcome, std::string_view what) const {
  return AzureError(outcome, what);
}

HttpCall AzureCore::PutCall(std::string blob, std::string_view data, bool if_absent) const {
  HttpCall call{.method = "PUT", .object = std::move(blob), .body = data, .idempotent = !if_absent};
  call.headers.Set("x-ms-blob-type", "BlockBlob");
  if (if_absent) {
    call.headers.Set("If-None-Match", "*");
  }
  call.headers.Set("Content-MD5", http::ContentMd5(data));
  return call;
}

bool AzureCore::Taken(const http::HttpOutcome& outcome) const {
  return (outcome.status_code() == 409 && AzureErrorCode(outcome) == "BlobAlreadyExists") ||
         outcome.status_code() == 412;
}

std::unique_ptr<MultipartUpload> AzureCore::NewUpload(std::string blob) const {
  return NewAzureUpload(std::static_pointer_cast<const AzureCore>(shared_from_this()),
                        std::move(blob));
}

Status AzureCore::CheckObject(const http::HttpResponse& response, std::string_view name) const {
  return IsFolder(response) ? NotFound("{}: a directory, not a blob", name) : Status::OK();
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

AzureBlobStore::AzureBlobStore(std::shared_ptr<AzureCore> core)
    : HttpObjectStore(std::move(core)) {}
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
  if (options.transfer.part_size < (size_t{64} << 10) ||
      options.transfer.part_size > (size_t{4000} << 20)) {
    return InvalidArgument(
        "Azure store: upload_part_size {} is outside the block sizes Azure takes (64 KiB to "
        "4000 MiB)",
        options.transfer.part_size);
  }
  if (options.transfer.parts_in_flight < 1) {
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

std::string AzureBlobStore::Describe(std::string_view key) const {
  // The root itself (a table at the store's root describes itself as ".").
  return HttpObjectStore::Describe(key == "." ? std::string_view() : key);
}

Result<ListedPage> AzureCore::ListPage(const std::string& prefix, bool recursive,
                                       const std::string&, const std::string& token,
                                       const std::string& what) const {
  HttpCall call{.method = "GET"};
  call.query = {{"restype", "container"},
                {"comp", "list"},
                {"prefix", prefix},
                {"maxresults", std::to_string(options.list_page_size)},
                {"include", "metadata"}};
  if (!recursive) {
    call.query.push_back({"delimiter", "/"});
  }
  if (!token.empty()) {
    call.query.push_back({"marker", token});
  }
  http::HttpOutcome r = Send(call);
  if (!r.ok()) {
    return AzureError(r, what);
  }
  Result<http::XmlElement> doc = http::ParseXml(r.response.body);
  if (!doc.ok()) {
    return DataLoss("{}: unreadable List Blobs answer: {}", what, doc.status().message());
  }
  ListedPage page;
  const http::XmlElement* blobs = doc->Child("Blobs");
  for (const http::XmlElement* b :
       blobs == nullptr ? std::vector<const http::XmlElement*>() : blobs->Children("Blob")) {
    const http::XmlElement* name_element = b->Child("Name");
    if (name_element == nullptr) {
      continue;
    }
    ObjectInfo info;
    info.key = name_element->text;
    if (name_element->Attribute("Encoded").value_or("") == "true") {
      // Names with characters XML cannot carry come percent-encoded.
      FERRY_ASSIGN_OR_RETURN(info.key, http::UriDecode(info.key));
    }
    const http::XmlElement* properties = b->Child("Properties");
    const http::XmlElement* metadata = b->Child("Metadata");
    if ((metadata != nullptr &&
         IsFolderMetadata(metadata->ChildText("hdi_isfolder").value_or(""))) ||
        (properties != nullptr &&
         properties->ChildText("ResourceType").value_or("") == "directory")) {
      continue;  // a directory of a hierarchical namespace, not an object
    }
    if (properties != nullptr) {
      std::string_view size = properties->ChildText("Content-Length").value_or("0");
      std::from_chars(size.data(), size.data() + size.size(), info.size);
      info.modification_time_ms =
          http::ParseHttpDateMillis(properties->ChildText("Last-Modified").value_or(""));
    }
    page.objects.push_back(std::move(info));
  }
  page.next_token = std::string(doc->ChildText("NextMarker").value_or(""));
  return page;
}

Status AzureCore::DeleteObjects(const std::vector<std::string>& blobs) const {
  return DeleteBlobs(*this, blobs);
}

}  // namespace ferry::storage::azure

#include "ferry/storage/s3/s3_store.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>

#include "ferry/base/log.h"
#include "ferry/http/digest.h"
#include "ferry/http/header_values.h"
#include "ferry/http/xml.h"
#include "ferry/storage/ranged_read_file.h"
#include "ferry/storage/s3/aws_error.h"
#include "ferry/storage/s3/s3_internal.h"
#include "ferry/storage/s3/sigv4.h"

namespace ferry::storage::s3 {
namespace {

constexpr size_t kDeleteBatch = 1000;

// A key of a ListObjectsV2 answer with encoding-type=url: S3 encodes it as HTML forms do, a
// space as '+' and a '+' as %2B (botocore decodes it with unquote_plus), so '+' is a space.
Result<std::string> DecodeListedKey(std::string_view encoded) {
  std::string plus_as_space(encoded);
  std::replace(plus_as_space.begin(), plus_as_space.end(), '+', ' ');
  return http::UriDecode(plus_as_space);
}

// The shared settings of the S3 options (http_object_store.h).
HttpStoreSettings Settings(const S3StoreOptions& o) {
  HttpStoreSettings settings{.root = o.root, .transfer = o.transfer};
  settings.conditional_writes =
      o.allow_unsafe_rename ? ConditionalWrites::kUnsafe : ConditionalWrites::kProbe;
  settings.unsafe_option = "aws_s3_allow_unsafe_rename";
  return settings;
}

}  // namespace

S3Core::S3Core(S3StoreOptions o, std::shared_ptr<http::HttpClient> c,
               std::shared_ptr<AwsCredentialProvider> creds, std::string base)
    : HttpStoreCore(Settings(o), std::move(c)),
      options_(std::move(o)),
      credentials_(std::move(creds)),
      base_url_(std::move(base)) {}

std::string S3Core::Describe(std::string_view object) const {
  return fmt::format("s3://{}/{}", options_.bucket, object);
}

std::string S3Core::Url(const HttpCall& call) const {
  std::string url = base_url_;
  if (!call.object.empty()) {
    url += "/" + http::UriEncodePath(call.object);
  } else if (!options_.virtual_hosted) {
    url += "/";
  }
  if (!call.query.empty()) {
    url += "?" + http::BuildQuery(call.query);
  }
  return url;
}

Status S3Core::Authorize(http::HttpRequest* request, const HttpCall& call) const {
  SigV4Params params{.region = options_.region, .payload_hash = call.payload_hash};
  if (params.payload_hash.empty() && call.body_reader != nullptr) {
    params.payload_hash = std::string(kUnsignedPayload);
  }
  FERRY_ASSIGN_OR_RETURN(AwsCredentials creds, credentials_->Get(request->deadline));
  return SignV4(request, creds, params);
}

http::ServiceError S3Core::ParseError(const http::HttpResponse& response) const {
  return ParseAwsError(response);
}

Status S3Core::Error(const http::HttpOutcome& outcome, std::string_view what) const {
  if (outcome.status_code() == 404 && ParseAwsError(outcome.response).code == "NoSuchBucket") {
    // A configuration error, not a missing object: a table reader must not take a missing
    // bucket for a table that does not exist yet (and create it, or report "no Delta table").
    return InvalidArgument("{}: the bucket does not exist ({})", what, outcome.status.message());
  }
  if (outcome.status_code() == 404) {
    return Status(StatusCode::kNotFound, fmt::format("{}: {}", what, outcome.status.message()));
  }
  return outcome.status.WithContext("{}", what);
}

HttpCall S3Core::PutCall(std::string object, std::string_view data, bool if_absent) const {
  HttpCall call{
      .method = "PUT", .object = std::move(object), .body = data, .idempotent = !if_absent};
  if (if_absent) {
    call.headers.Set("If-None-Match", "*");
  }
  call.headers.Set("Content-MD5", http::ContentMd5(data));
  return call;
}

bool S3Core::Taken(const http::HttpOutcome& outcome) const {
  return outcome.status_code() == 412;
}

std::unique_ptr<MultipartUpload> S3Core::NewUpload(std::string object) const {
  return NewS3Upload(std::static_pointer_cast<const S3Core>(shared_from_this()), std::move(object));
}

S3Store::S3Store(std::shared_ptr<S3Core> core) : HttpObjectStore(std::move(core)) {}
S3Store::~S3Store() = default;

Result<std::unique_ptr<S3Store>> S3Store::Create(
    S3StoreOptions options, std::shared_ptr<http::HttpClient> client,
    std::shared_ptr<AwsCredentialProvider> credentials) {
  if (options.bucket.empty()) {
    return InvalidArgument("S3 store: no bucket");
  }
  if (options.transfer.part_size < (size_t{5} << 20)) {
    return InvalidArgument("S3 store: upload_part_size {} is below S3's minimum part of 5 MiB",
                           options.transfer.part_size);
  }
  if (options.transfer.parts_in_flight < 1) {
    return InvalidArgument("S3 store: upload_parts_in_flight must be at least 1");
  }
  if (!options.root.empty()) {
    FERRY_RETURN_IF_ERROR(ValidateKey(options.root));
  }
  FERRY_ASSIGN_OR_RETURN(http::Url url, http::ParseUrl(options.endpoint));
  std::string base;
  if (options.virtual_hosted) {
    base = fmt::format("{}://{}.{}", url.scheme, options.bucket, url.HostHeader());
  } else {
    std::string_view endpoint = options.endpoint;
    while (!endpoint.empty() && endpoint.back() == '/') {
      endpoint.remove_suffix(1);
    }
    base = fmt::format("{}/{}", endpoint, http::UriEncode(options.bucket));
  }
  auto core = std::make_shared<S3Core>(std::move(options), std::move(client),
                                       std::move(credentials), std::move(base));
  return std::unique_ptr<S3Store>(new S3Store(std::move(core)));
}

Result<ListedPage> S3Core::ListPage(const std::string& prefix, bool recursive,
                                    const std::string& start_after, const std::string& token,
                                    const std::string& what) const {
  HttpCall call{.method = "GET"};
  call.query = {{"list-type", "2"}, {"prefix", prefix}, {"encoding-type", "url"}};
  if (!recursive) {
    call.query.push_back({"delimiter", "/"});
  }
  if (!token.empty()) {
    call.query.push_back({"continuation-token", token});
  } else if (!start_after.empty()) {
    call.query.push_back({"start-after", start_after});
  }
  http::HttpOutcome r = Send(call);
  if (!r.ok()) {
    return Error(r, what);
  }
  Result<http::XmlElement> doc = http::ParseXml(r.response.body);
  if (!doc.ok()) {
    return DataLoss("{}: unreadable ListObjectsV2 answer: {}", what, doc.status().message());
  }
  ListedPage page;
  for (const http::XmlElement* c : doc->Children("Contents")) {
    ObjectInfo info;
    FERRY_ASSIGN_OR_RETURN(info.key, DecodeListedKey(c->ChildText("Key").value_or("")));
    std::string_view size = c->ChildText("Size").value_or("0");
    std::from_chars(size.data(), size.data() + size.size(), info.size);
    info.modification_time_ms = ParseIsoMillis(c->ChildText("LastModified").value_or(""));
    page.objects.push_back(std::move(info));
  }
  if (doc->ChildText("IsTruncated").value_or("false") == "true") {
    std::optional<std::string_view> next = doc->ChildText("NextContinuationToken");
    if (!next || next->empty()) {
      return DataLoss("{}: a truncated page without a continuation token", what);
    }
    page.next_token = std::string(*next);
  }
  return page;
}

Status S3Core::DeleteObjects(const std::vector<std::string>& objects) const {
  for (size_t start = 0; start < objects.size(); start += kDeleteBatch) {
    const size_t end = std::min(objects.size(), start + kDeleteBatch);
    std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>";
    for (size_t i = start; i < end; ++i) {
      body += "<Object><Key>";
      http::AppendXmlEscaped(&body, objects[i]);
      body += "</Key></Object>";
    }
    body += "</Delete>";
    HttpCall call{.method = "POST", .query = {{"delete", ""}}, .body = body};
    call.headers.Set("Content-MD5", http::ContentMd5(body));
    call.headers.Set("Content-Type", "application/xml");
    http::HttpOutcome r = Send(call);
    const std::string what = fmt::format("delete {} objects under s3://{}/{}", end - start,
                                         options_.bucket, options_.root);
    if (!r.ok()) {
      return Error(r, what);
    }
    Result<http::XmlElement> doc = http::ParseXml(r.response.body);
    if (!doc.ok()) {
      return Unavailable("{}: unreadable DeleteObjects answer: {}", what, doc.status().message());
    }
    std::vector<const http::XmlElement*> errors = doc->Children("Error");
    if (!errors.empty()) {
      const http::XmlElement* e = errors.front();
      return IOError("{}: {} not deleted, the first {} ({}: {})", what, errors.size(),
                     Describe(e->ChildText("Key").value_or("")), e->ChildText("Code").value_or(""),
                     e->ChildText("Message").value_or(""));
    }
  }
  return Status::OK();
}

}  // namespace ferry::storage::s3

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

// The first read of OpenForRead: the whole of a log file or checkpoint header in one request.
constexpr uint64_t kFirstRead = 64 * 1024;
constexpr size_t kDeleteBatch = 1000;

// "2026-12-02T05:29:03.584Z" (ListObjectsV2) -> milliseconds since the epoch; 0 when malformed.
int64_t ParseIsoMillis(std::string_view s) {
  struct tm tm {};
  int millis = 0;
  if (s.size() < 19 ||
      std::sscanf(std::string(s).c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6) {
    return 0;
  }
  if (s.size() > 20 && s[19] == '.') {
    std::string_view frac = s.substr(20, 3);
    int scale = 100;
    for (char c : frac) {
      if (c < '0' || c > '9') {
        break;
      }
      millis += (c - '0') * scale;
      scale /= 10;
    }
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + millis;
}

// A key of a ListObjectsV2 answer with encoding-type=url: S3 encodes it as HTML forms do, a
// space as '+' and a '+' as %2B (botocore decodes it with unquote_plus), so '+' is a space.
Result<std::string> DecodeListedKey(std::string_view encoded) {
  std::string plus_as_space(encoded);
  std::replace(plus_as_space.begin(), plus_as_space.end(), '+', ' ');
  return http::UriDecode(plus_as_space);
}

std::string RandomHex() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  return fmt::format("{:016x}{:016x}", rng(), rng());
}

}  // namespace

S3Core::S3Core(S3StoreOptions o, std::shared_ptr<http::HttpClient> c,
               std::shared_ptr<AwsCredentialProvider> creds, std::string base)
    : options(std::move(o)),
      client(std::move(c)),
      credentials(std::move(creds)),
      policy(options.retry, &counters, [this](const http::RetryEvent& e) { LogRetry(e); }),
      base_url(std::move(base)) {}

void S3Core::LogRetry(const http::RetryEvent& e) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_retry_log_ms.load();
  if (last != 0 && now - last < 1000) {
    retries_not_logged.fetch_add(1);
    return;
  }
  if (!last_retry_log_ms.compare_exchange_strong(last, now)) {
    retries_not_logged.fetch_add(1);
    return;  // another thread logs this second
  }
  const int64_t others = retries_not_logged.exchange(0);
  FERRY_LOG_WARN("s3://{}/{}: attempt {} of {} failed ({}); retrying in {} ms{}", options.bucket,
                 options.root, e.attempt, options.retry.max_attempts, e.cause.ToString(),
                 e.delay.count(),
                 others > 0 ? fmt::format(" ({} more retries since the last message)", others)
                            : std::string());
}

std::string S3Core::ObjectKey(std::string_view key) const {
  return JoinKey(options.root, key);
}

std::string S3Core::DescribeObject(std::string_view object_key) const {
  return fmt::format("s3://{}/{}", options.bucket, object_key);
}

http::HttpOutcome S3Core::Send(const S3Call& call) const {
  http::HttpRequest request;
  request.method = call.method;
  request.url = base_url;
  if (!call.object_key.empty()) {
    request.url += "/" + http::UriEncodePath(call.object_key);
  } else if (!options.virtual_hosted) {
    request.url += "/";
  }
  if (!call.query.empty()) {
    request.url += "?" + http::BuildQuery(call.query);
  }
  request.headers = call.headers;
  request.body = call.body;
  request.body_reader = call.body_reader;
  request.idempotent = call.idempotent;
  request.response_buffer = call.response_buffer;
  request.deadline = http::DeadlineAfter(options.retry_timeout);
  SigV4Params params{.region = options.region, .payload_hash = call.payload_hash};
  if (params.payload_hash.empty() && call.body_reader != nullptr) {
    params.payload_hash = std::string(kUnsignedPayload);
  }
  const std::chrono::milliseconds per_attempt = options.request_timeout;
  return http::SendWithRetry(
      *client, policy, std::move(request),
      {.prepare = [&](http::HttpRequest* r) -> Status {
         r->deadline = std::min(r->deadline, http::DeadlineAfter(per_attempt));
         FERRY_ASSIGN_OR_RETURN(AwsCredentials creds, credentials->Get(r->deadline));
         return SignV4(r, creds, params);
       },
       .parse_error = ParseAwsError});
}

Status S3Error(const http::HttpOutcome& outcome, std::string_view what) {
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

S3Store::S3Store(std::shared_ptr<S3Core> core) : core_(std::move(core)) {}
S3Store::~S3Store() = default;

Result<std::unique_ptr<S3Store>> S3Store::Create(
    S3StoreOptions options, std::shared_ptr<http::HttpClient> client,
    std::shared_ptr<AwsCredentialProvider> credentials) {
  if (options.bucket.empty()) {
    return InvalidArgument("S3 store: no bucket");
  }
  if (options.part_size < (size_t{5} << 20)) {
    return InvalidArgument("S3 store: upload_part_size {} is below S3's minimum part of 5 MiB",
                           options.part_size);
  }
  if (options.parts_in_flight < 1) {
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

const http::RetryCounters& S3Store::counters() const {
  return core_->counters;
}

std::string S3Store::Describe(std::string_view key) const {
  return core_->DescribeObject(core_->ObjectKey(key));
}

Result<std::vector<ObjectInfo>> S3Store::List(std::string_view prefix, const ListOptions& options) {
  FERRY_RETURN_IF_ERROR(ValidatePrefix(prefix));
  const std::string root = core_->options.root.empty() ? "" : core_->options.root + "/";
  const std::string full_prefix = root + std::string(prefix);
  std::vector<ObjectInfo> out;
  std::string token;
  while (true) {
    S3Call call{.method = "GET"};
    call.query = {{"list-type", "2"}, {"prefix", full_prefix}, {"encoding-type", "url"}};
    if (!options.recursive) {
      call.query.push_back({"delimiter", "/"});
    }
    if (!token.empty()) {
      call.query.push_back({"continuation-token", token});
    } else if (!options.start_after.empty()) {
      call.query.push_back({"start-after", root + options.start_after});
    }
    http::HttpOutcome r = core_->Send(call);
    if (!r.ok()) {
      return S3Error(r, fmt::format("list s3://{}/{}", core_->options.bucket, full_prefix));
    }
    Result<http::XmlElement> doc = http::ParseXml(r.response.body);
    if (!doc.ok()) {
      return DataLoss("list s3://{}/{}: unreadable ListObjectsV2 answer: {}", core_->options.bucket,
                      full_prefix, doc.status().message());
    }
    for (const http::XmlElement* c : doc->Children("Contents")) {
      FERRY_ASSIGN_OR_RETURN(std::string key, DecodeListedKey(c->ChildText("Key").value_or("")));
      if (key.size() <= root.size() || key.compare(0, root.size(), root) != 0) {
        continue;
      }
      ObjectInfo info;
      info.key = key.substr(root.size());
      std::string_view size = c->ChildText("Size").value_or("0");
      std::from_chars(size.data(), size.data() + size.size(), info.size);
      info.modification_time_ms = ParseIsoMillis(c->ChildText("LastModified").value_or(""));
      out.push_back(std::move(info));
    }
    if (doc->ChildText("IsTruncated").value_or("false") != "true") {
      break;
    }
    std::optional<std::string_view> next = doc->ChildText("NextContinuationToken");
    if (!next || next->empty()) {
      return DataLoss("list s3://{}/{}: a truncated page without a continuation token",
                      core_->options.bucket, full_prefix);
    }
    token = std::string(*next);
  }
  // S3 sorts by UTF-8 bytes, as the contract asks; a store that does not is corrected here.
  std::sort(out.begin(), out.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
  return out;
}

Result<std::shared_ptr<const RandomAccessFile>> S3Store::OpenForRead(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string object_key = core_->ObjectKey(key);
  RangedGets gets{
      .name = core_->DescribeObject(object_key),
      .noun = "object",
      .get =
          [core = core_, object_key](uint64_t offset, uint64_t n, const std::string& etag,
                                     std::span<char> into) {
            S3Call call{.method = "GET", .object_key = object_key};
            call.headers.Set("Range", fmt::format("bytes={}-{}", offset, offset + n - 1));
            if (!etag.empty()) {
              call.headers.Set("If-Match", etag);
            }
            call.response_buffer = into;
            return core->Send(call);
          },
      .error = [](const http::HttpOutcome& r, const std::string& what) { return S3Error(r, what); },
  };
  return OpenRangedReadFile(std::move(gets), kFirstRead, [&]() -> Result<uint64_t> {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo info, Stat(key));
    return info.size;
  });
}

Result<ObjectInfo> S3Store::Stat(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string object_key = core_->ObjectKey(key);
  http::HttpOutcome r = core_->Send(S3Call{.method = "HEAD", .object_key = object_key});
  if (!r.ok()) {
    return S3Error(r, "HEAD " + core_->DescribeObject(object_key));
  }
  ObjectInfo info{.key = std::string(key)};
  info.size = http::ContentLength(r.response).value_or(0);
  info.modification_time_ms = http::ParseHttpDateMillis(r.response.headers.GetOr("Last-Modified"));
  return info;
}

Status S3Store::CheckConditionalWrites() {
  if (core_->options.allow_unsafe_rename) {
    return Status::OK();
  }
  std::lock_guard<std::mutex> lock(core_->conditional_mu);
  if (core_->conditional_checked) {
    return core_->conditional_status;
  }
  const std::string probe = core_->ObjectKey("_ferry/probe/conditional-put-" + RandomHex());
  const std::string name = core_->DescribeObject(probe);
  auto put = [&]() {
    S3Call call{.method = "PUT", .object_key = probe, .body = "probe", .idempotent = false};
    call.headers.Set("If-None-Match", "*");
    call.headers.Set("Content-MD5", http::ContentMd5("probe"));
    return core_->Send(call);
  };
  http::HttpOutcome first = put();
  if (!first.ok()) {
    return S3Error(first, "conditional-write check: PUT " + name);
  }
  http::HttpOutcome second = put();
  Status verdict;
  if (second.ok()) {
    verdict = NotSupported(
        "s3://{}/{}: the store ignored `If-None-Match: *` (a second conditional PUT of {} "
        "succeeded), so two writers could both win one commit version and lose data. ferry "
        "refuses to commit to it. If only one process ever writes this table, set the storage "
        "option aws_s3_allow_unsafe_rename=true",
        core_->options.bucket, core_->options.root, name);
  } else if (second.status_code() != 412) {
    return S3Error(second, "conditional-write check: second PUT " + name);
  }
  http::HttpOutcome removed = core_->Send(S3Call{.method = "DELETE", .object_key = probe});
  if (!removed.ok() && removed.status_code() != 404) {
    FERRY_LOG_WARN("conditional-write check: could not delete {}: {}", name,
                   removed.status.ToString());
  }
  core_->conditional_checked = true;
  core_->conditional_status = verdict;
  return verdict;
}

Status S3Store::PutIfAbsent(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  FERRY_RETURN_IF_ERROR(CheckConditionalWrites());
  const std::string object_key = core_->ObjectKey(key);
  const std::string name = core_->DescribeObject(object_key);
  if (core_->options.allow_unsafe_rename) {
    // A store that may ignore the condition: at least never replace what this writer can see.
    http::HttpOutcome head = core_->Send(S3Call{.method = "HEAD", .object_key = object_key});
    if (head.ok()) {
      return AlreadyExists("put-if-absent {}: object exists", name);
    }
    if (head.status_code() != 404) {
      return S3Error(head, "HEAD " + name);
    }
  }
  S3Call call{.method = "PUT", .object_key = object_key, .body = data, .idempotent = false};
  call.headers.Set("If-None-Match", "*");
  call.headers.Set("Content-MD5", http::ContentMd5(data));
  http::HttpOutcome r = core_->Send(call);
  if (r.ok()) {
    return Status::OK();
  }
  if (r.status_code() == 412) {
    return AlreadyExists("put-if-absent {}: object exists (another writer won)", name);
  }
  if (r.maybe_applied) {
    return Unavailable("put-if-absent {}: outcome unknown ({}); read it back to settle", name,
                       r.status.message());
  }
  return S3Error(r, "PUT " + name);
}

Status S3Store::Put(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string object_key = core_->ObjectKey(key);
  S3Call call{.method = "PUT", .object_key = object_key, .body = data};
  call.headers.Set("Content-MD5", http::ContentMd5(data));
  http::HttpOutcome r = core_->Send(call);
  return r.ok() ? Status::OK() : S3Error(r, "PUT " + core_->DescribeObject(object_key));
}

Status S3Store::Delete(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string object_key = core_->ObjectKey(key);
  http::HttpOutcome r = core_->Send(S3Call{.method = "DELETE", .object_key = object_key});
  if (r.ok() || r.status_code() == 404) {
    return Status::OK();
  }
  return S3Error(r, "DELETE " + core_->DescribeObject(object_key));
}

Status S3Store::DeleteMany(const std::vector<std::string>& keys) {
  for (size_t start = 0; start < keys.size(); start += kDeleteBatch) {
    const size_t end = std::min(keys.size(), start + kDeleteBatch);
    std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>";
    for (size_t i = start; i < end; ++i) {
      FERRY_RETURN_IF_ERROR(ValidateKey(keys[i]));
      body += "<Object><Key>";
      http::AppendXmlEscaped(&body, core_->ObjectKey(keys[i]));
      body += "</Key></Object>";
    }
    body += "</Delete>";
    S3Call call{.method = "POST", .query = {{"delete", ""}}, .body = body};
    call.headers.Set("Content-MD5", http::ContentMd5(body));
    call.headers.Set("Content-Type", "application/xml");
    http::HttpOutcome r = core_->Send(call);
    const std::string what = fmt::format("delete {} objects under s3://{}/{}", end - start,
                                         core_->options.bucket, core_->options.root);
    if (!r.ok()) {
      return S3Error(r, what);
    }
    Result<http::XmlElement> doc = http::ParseXml(r.response.body);
    if (!doc.ok()) {
      return Unavailable("{}: unreadable DeleteObjects answer: {}", what, doc.status().message());
    }
    std::vector<const http::XmlElement*> errors = doc->Children("Error");
    if (!errors.empty()) {
      const http::XmlElement* e = errors.front();
      return IOError("{}: {} not deleted, the first {} ({}: {})", what, errors.size(),
                     core_->DescribeObject(e->ChildText("Key").value_or("")),
                     e->ChildText("Code").value_or(""), e->ChildText("Message").value_or(""));
    }
  }
  return Status::OK();
}

Result<std::unique_ptr<OutputStream>> S3Store::OpenAtomicWriter(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  return NewS3Writer(core_, core_->ObjectKey(key));
}

}  // namespace ferry::storage::s3

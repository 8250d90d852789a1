#include "ferry/storage/http_object_store.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "ferry/base/log.h"
#include "ferry/http/header_values.h"
#include "ferry/storage/ranged_read_file.h"

namespace ferry::storage {
namespace {

// The first read of OpenForRead: the whole of a log file or checkpoint header in one request.
constexpr uint64_t kFirstRead = 64 * 1024;

std::string RandomHex() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  return fmt::format("{:016x}{:016x}", rng(), rng());
}

}  // namespace

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

HttpStoreCore::HttpStoreCore(HttpStoreSettings settings, std::shared_ptr<http::HttpClient> client)
    : settings_(std::move(settings)),
      client_(std::move(client)),
      policy_(settings_.transfer.retry, &counters_,
              [this](const http::RetryEvent& e) { LogRetry(e); }) {}

HttpStoreCore::~HttpStoreCore() = default;

void HttpStoreCore::LogRetry(const http::RetryEvent& e) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_retry_log_ms_.load();
  if (last != 0 && now - last < 1000) {
    retries_not_logged_.fetch_add(1);
    return;
  }
  if (!last_retry_log_ms_.compare_exchange_strong(last, now)) {
    retries_not_logged_.fetch_add(1);
    return;  // another thread logs this second
  }
  const int64_t others = retries_not_logged_.exchange(0);
  FERRY_LOG_WARN("{}: attempt {} of {} failed ({}); retrying in {} ms{}", Describe(settings_.root),
                 e.attempt, settings_.transfer.retry.max_attempts, e.cause.ToString(),
                 e.delay.count(),
                 others > 0 ? fmt::format(" ({} more retries since the last message)", others)
                            : std::string());
}

std::string HttpStoreCore::ObjectName(std::string_view key) const {
  return JoinKey(settings_.root, key);
}

Status HttpStoreCore::CheckObject(const http::HttpResponse&, std::string_view) const {
  return Status::OK();
}

http::HttpOutcome HttpStoreCore::Send(const HttpCall& call) const {
  http::HttpRequest request;
  request.method = call.method;
  request.url = Url(call);
  request.headers = call.headers;
  request.body = call.body;
  request.body_reader = call.body_reader;
  request.idempotent = call.idempotent;
  request.response_buffer = call.response_buffer;
  request.deadline = http::DeadlineAfter(settings_.transfer.retry_timeout);
  const std::chrono::milliseconds per_attempt = settings_.transfer.request_timeout;
  return http::SendWithRetry(
      *client_, policy_, std::move(request),
      {.prepare = [&](http::HttpRequest* r) -> Status {
         r->deadline = std::min(r->deadline, http::DeadlineAfter(per_attempt));
         return Authorize(r, call);
       },
       .parse_error = [this](const http::HttpResponse& r) { return ParseError(r); }});
}

HttpObjectStore::HttpObjectStore(std::shared_ptr<HttpStoreCore> core) : core_(std::move(core)) {}
HttpObjectStore::~HttpObjectStore() = default;

std::string HttpObjectStore::Describe(std::string_view key) const {
  return core_->Describe(core_->ObjectName(key));
}

Result<std::shared_ptr<const RandomAccessFile>> HttpObjectStore::OpenForRead(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string object = core_->ObjectName(key);
  RangedGets gets{
      .name = core_->Describe(object),
      .noun = core_->settings().noun,
      .get =
          [core = core_, object](uint64_t offset, uint64_t n, const std::string& etag,
                                 std::span<char> into) {
            HttpCall call{.method = "GET", .object = object};
            call.headers.Set(core->settings().range_header,
                             fmt::format("bytes={}-{}", offset, offset + n - 1));
            if (!etag.empty()) {
              call.headers.Set("If-Match", etag);
            }
            call.response_buffer = into;
            return core->Send(call);
          },
      .error = [core = core_](const http::HttpOutcome& r,
                              const std::string& what) { return core->Error(r, what); },
  };
  const std::string name = gets.name;
  return OpenRangedReadFile(
      std::move(gets), kFirstRead,
      [&]() -> Result<uint64_t> {
        FERRY_ASSIGN_OR_RETURN(ObjectInfo info, Stat(key));
        return info.size;
      },
      [&](const http::HttpResponse& first) { return core_->CheckObject(first, "GET " + name); });
}

Result<ObjectInfo> HttpObjectStore::Stat(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string object = core_->ObjectName(key);
  const std::string what = "HEAD " + core_->Describe(object);
  http::HttpOutcome r = core_->Send(HttpCall{.method = "HEAD", .object = object});
  if (!r.ok()) {
    return core_->Error(r, what);
  }
  FERRY_RETURN_IF_ERROR(core_->CheckObject(r.response, what));
  ObjectInfo info{.key = std::string(key)};
  info.size = http::ContentLength(r.response).value_or(0);
  info.modification_time_ms = http::ParseHttpDateMillis(r.response.headers.GetOr("Last-Modified"));
  return info;
}

Status HttpObjectStore::CheckConditionalWrites() {
  if (core_->settings().conditional_writes != ConditionalWrites::kProbe) {
    return Status::OK();
  }
  std::lock_guard<std::mutex> lock(core_->conditional_mu_);
  if (core_->conditional_checked_) {
    return core_->conditional_status_;
  }
  const std::string probe = core_->ObjectName("_ferry/probe/conditional-put-" + RandomHex());
  const std::string name = core_->Describe(probe);
  HttpCall put = core_->PutCall(probe, "probe", /*if_absent=*/true);
  http::HttpOutcome first = core_->Send(put);
  if (!first.ok()) {
    return core_->Error(first, "conditional-write check: PUT " + name);
  }
  http::HttpOutcome second = core_->Send(put);
  Status verdict;
  if (second.ok()) {
    const std::string& unsafe = core_->settings().unsafe_option;
    verdict = NotSupported(
        "{}: the store ignored {} (a second conditional PUT of {} succeeded), so two writers "
        "could both win one commit version and lose data. ferry refuses to commit to it.{}",
        core_->Describe(core_->settings().root), core_->settings().condition, name,
        unsafe.empty() ? std::string(" There is no override for this kind of store.")
                       : fmt::format(" If only one process ever writes this table, set the "
                                     "storage option {}=true",
                                     unsafe));
  } else if (!core_->Taken(second)) {
    return core_->Error(second, "conditional-write check: second PUT " + name);
  }
  http::HttpOutcome removed = core_->Send(HttpCall{.method = "DELETE", .object = probe});
  if (!removed.ok() && removed.status_code() != 404) {
    FERRY_LOG_WARN("conditional-write check: could not delete {}: {}", name,
                   removed.status.ToString());
  }
  core_->conditional_checked_ = true;
  core_->conditional_status_ = verdict;
  return verdict;
}

Status HttpObjectStore::PutIfAbsent(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  FERRY_RETURN_IF_ERROR(CheckConditionalWrites());
  const std::string object = core_->ObjectName(key);
  const std::string name = core_->Describe(object);
  const std::string_view noun = core_->settings().noun;
  if (core_->settings().conditional_writes == ConditionalWrites::kUnsafe) {
    // A store that may ignore the condition: at least never replace what this writer can see.
    http::HttpOutcome head = core_->Send(HttpCall{.method = "HEAD", .object = object});
    if (head.ok()) {
      return AlreadyExists("put-if-absent {}: {} exists", name, noun);
    }
    if (head.status_code() != 404) {
      return core_->Error(head, "HEAD " + name);
    }
  }
  http::HttpOutcome r = core_->Send(core_->PutCall(object, data, /*if_absent=*/true));
  if (r.ok()) {
    return Status::OK();
  }
  if (core_->Taken(r)) {
    return AlreadyExists("put-if-absent {}: {} exists (another writer won)", name, noun);
  }
  if (r.maybe_applied) {
    return Unavailable("put-if-absent {}: outcome unknown ({}); read it back to settle", name,
                       r.status.message());
  }
  return core_->Error(r, "PUT " + name);
}

Status HttpObjectStore::Put(std::string_view key, std::string_view data) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string object = core_->ObjectName(key);
  http::HttpOutcome r = core_->Send(core_->PutCall(object, data, /*if_absent=*/false));
  return r.ok() ? Status::OK() : core_->Error(r, "PUT " + core_->Describe(object));
}

Status HttpObjectStore::Delete(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  const std::string object = core_->ObjectName(key);
  http::HttpOutcome r = core_->Send(HttpCall{.method = "DELETE", .object = object});
  if (r.ok() || r.status_code() == 404) {
    return Status::OK();
  }
  return core_->Error(r, "DELETE " + core_->Describe(object));
}

Result<std::vector<ObjectInfo>> HttpObjectStore::List(std::string_view prefix,
                                                      const ListOptions& options) {
  FERRY_RETURN_IF_ERROR(ValidatePrefix(prefix));
  const std::string& root_name = core_->settings().root;
  const std::string root = root_name.empty() ? "" : root_name + "/";
  const std::string full_prefix = root + std::string(prefix);
  const std::string start_after = options.start_after.empty() ? "" : root + options.start_after;
  const std::string what = "list " + core_->Describe(full_prefix);
  std::vector<ObjectInfo> out;
  std::string token;
  do {
    FERRY_ASSIGN_OR_RETURN(
        ListedPage page, core_->ListPage(full_prefix, options.recursive, start_after, token, what));
    for (ObjectInfo& info : page.objects) {
      if (info.key.size() <= root.size() || info.key.compare(0, root.size(), root) != 0) {
        continue;
      }
      info.key.erase(0, root.size());
      if (!options.start_after.empty() && info.key <= options.start_after) {
        continue;
      }
      out.push_back(std::move(info));
    }
    token = std::move(page.next_token);
  } while (!token.empty());
  // The contract wants bytewise order; a service that sorts otherwise is corrected here.
  std::sort(out.begin(), out.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
  return out;
}

Status HttpObjectStore::DeleteMany(const std::vector<std::string>& keys) {
  std::vector<std::string> objects;
  objects.reserve(keys.size());
  for (const std::string& key : keys) {
    FERRY_RETURN_IF_ERROR(ValidateKey(key));
    objects.push_back(core_->ObjectName(key));
  }
  return core_->DeleteObjects(objects);
}

Result<std::unique_ptr<OutputStream>> HttpObjectStore::OpenAtomicWriter(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  std::string object = core_->ObjectName(key);
  std::string name = core_->Describe(object);
  const MultipartWriterOptions options{
      .part_size = core_->settings().transfer.part_size,
      .parts_in_flight = core_->settings().transfer.parts_in_flight};
  return NewMultipartWriter(core_->NewUpload(std::move(object)), std::move(name), options);
}

}  // namespace ferry::storage

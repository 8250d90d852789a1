#include "ferry/http/client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "ferry/base/check.h"
#include "ferry/http/url.h"

namespace ferry::http {

namespace {

// Error bodies are read into memory even for a ranged GET into the caller's buffer; they are
// small (an XML or JSON document), so a modest bound suffices.
constexpr size_t kMaxErrorBodyBytes = size_t{1} << 20;

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

// The state of one transfer, shared with libcurl's callbacks.
struct Transfer {
  const HttpRequest* request = nullptr;
  HttpResponse* response = nullptr;
  CURL* easy = nullptr;
  size_t max_body = 0;
  // Upload.
  size_t body_offset = 0;
  bool reader_failed = false;
  Status reader_status;
  // Download: -1 undecided, 0 into response->body, 1 into request->response_buffer.
  int sink = -1;
  bool too_large = false;
  std::string too_large_detail;
};

size_t ReadCallback(char* buf, size_t size, size_t nitems, void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  size_t want = size * nitems;
  if (t->request->body_reader != nullptr) {
    Result<size_t> n = t->request->body_reader->read(buf, want);
    if (!n.ok()) {
      t->reader_failed = true;
      t->reader_status = n.status();
      return CURL_READFUNC_ABORT;
    }
    if (*n > want) {
      t->reader_failed = true;
      t->reader_status = Internal("the body reader returned {} bytes for {} asked", *n, want);
      return CURL_READFUNC_ABORT;
    }
    return *n;
  }
  std::string_view body = t->request->body;
  size_t n = std::min(want, body.size() - t->body_offset);
  std::memcpy(buf, body.data() + t->body_offset, n);
  t->body_offset += n;
  return n;
}

int SeekCallback(void* userp, curl_off_t offset, int origin) {
  auto* t = static_cast<Transfer*>(userp);
  if (origin != SEEK_SET || offset < 0) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  if (t->request->body_reader != nullptr) {
    if (offset != 0 || !t->request->body_reader->rewind) {
      return CURL_SEEKFUNC_CANTSEEK;
    }
    Status s = t->request->body_reader->rewind();
    if (!s.ok()) {
      t->reader_failed = true;
      t->reader_status = s;
      return CURL_SEEKFUNC_FAIL;
    }
    return CURL_SEEKFUNC_OK;
  }
  if (static_cast<size_t>(offset) > t->request->body.size()) {
    return CURL_SEEKFUNC_FAIL;
  }
  t->body_offset = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

size_t WriteCallback(char* data, size_t size, size_t nmemb, void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  size_t n = size * nmemb;
  if (t->sink < 0) {
    long code = 0;  // NOLINT(google-runtime-int): libcurl's type
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    bool success = code >= 200 && code < 300;
    t->sink = (success && !t->request->response_buffer.empty()) ? 1 : 0;
    if (!success) {
      t->max_body = std::min(t->max_body, kMaxErrorBodyBytes);
    }
  }
  HttpResponse* r = t->response;
  if (t->sink == 1) {
    std::span<char> buffer = t->request->response_buffer;
    if (r->body_size + n > buffer.size()) {
      t->too_large = true;
      t->too_large_detail =
          fmt::format("the response body is larger than the {}-byte buffer", buffer.size());
      return 0;
    }
    std::memcpy(buffer.data() + r->body_size, data, n);
  } else {
    if (r->body.size() + n > t->max_body) {
      t->too_large = true;
      t->too_large_detail =
          fmt::format("the response body is larger than the limit of {} bytes", t->max_body);
      return 0;
    }
    r->body.append(data, n);
  }
  r->body_size += n;
  return n;
}

size_t HeaderCallback(char* data, size_t size, size_t nitems, void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  std::string_view line(data, size * nitems);
  if (StartsWithIgnoreCase(line, "HTTP/")) {
    // A new response (after a 100 Continue, say): forget the headers of the one before.
    t->response->headers.Clear();
    return line.size();
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    t->response->headers.Add(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)));
  }
  return line.size();
}

TransportFailure FailureFromCurl(CURLcode rc, const Transfer& t, const char* errbuf,
                                 bool maybe_sent) {
  using Kind = TransportFailure::Kind;
  TransportFailure f;
  f.detail = errbuf[0] != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
  f.maybe_sent = maybe_sent;
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      f.kind = Kind::kResolve;
      f.maybe_sent = false;
      break;
    case CURLE_COULDNT_CONNECT:
      f.kind = Kind::kConnect;
      f.maybe_sent = false;
      break;
    case CURLE_SSL_CONNECT_ERROR:
      f.kind = Kind::kTlsHandshake;
      f.maybe_sent = false;
      break;
    case CURLE_PEER_FAILED_VERIFICATION:
      f.kind = Kind::kTlsVerification;
      f.maybe_sent = false;
      break;
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      f.kind = Kind::kLocalConfig;
      f.maybe_sent = false;
      break;
    case CURLE_OPERATION_TIMEDOUT:
      f.kind = Kind::kTimeout;
      break;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
      f.kind = Kind::kConnectionLost;
      f.maybe_sent = true;
      break;
    case CURLE_SEND_ERROR:
    case CURLE_SEND_FAIL_REWIND:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      f.kind = Kind::kConnectionLost;
      break;
    default:
      f.kind = Kind::kOther;
      break;
  }
  if (t.reader_failed) {
    f.kind = Kind::kBodyReadFailed;
    f.reader_status = t.reader_status;
    f.maybe_sent = false;  // an incomplete body: the server cannot complete the request
  } else if (t.too_large) {
    f.kind = Kind::kResponseTooLarge;
    f.detail = t.too_large_detail;
  }
  return f;
}

}  // namespace

struct HttpClient::Share {
  CURLSH* sh = nullptr;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;

  Share() {
    sh = curl_share_init();
    FERRY_CHECK(sh != nullptr);
    curl_share_setopt(sh, CURLSHOPT_LOCKFUNC, &Share::Lock);
    curl_share_setopt(sh, CURLSHOPT_UNLOCKFUNC, &Share::Unlock);
    curl_share_setopt(sh, CURLSHOPT_USERDATA, this);
    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  ~Share() { curl_share_cleanup(sh); }

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* userp) {
    static_cast<Share*>(userp)->locks[static_cast<size_t>(data)].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* userp) {
    static_cast<Share*>(userp)->locks[static_cast<size_t>(data)].unlock();
  }
};

struct HttpClient::Handle {
  CURL* easy = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {};

  Handle() : easy(curl_easy_init()) { FERRY_CHECK(easy != nullptr); }
  ~Handle() { curl_easy_cleanup(easy); }
};

Result<std::unique_ptr<HttpClient>> HttpClient::Create(const HttpClientOptions& options) {
  static std::once_flag global_init;
  std::call_once(global_init, [] { FERRY_CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == 0); });
  const std::pair<const char*, const std::string*> files[] = {
      {"CA bundle", &options.ca_file},
      {"client certificate", &options.client_cert_file},
      {"client key", &options.client_key_file}};
  for (const auto& [what, file] : files) {
    if (!file->empty() && ::access(file->c_str(), R_OK) != 0) {
      return InvalidArgument("HTTP client: cannot read the {} file '{}': {}", what, *file,
                             std::strerror(errno));
    }
  }
  if (options.client_cert_file.empty() != options.client_key_file.empty()) {
    return InvalidArgument(
        "HTTP client: a client certificate needs both its certificate and its key file");
  }
  return std::unique_ptr<HttpClient>(new HttpClient(options));
}

HttpClient::HttpClient(const HttpClientOptions& options)
    : options_(options), share_(std::make_unique<Share>()) {}

HttpClient::~HttpClient() {
  std::lock_guard lock(mu_);
  idle_.clear();  // before share_, which the handles use
}

std::unique_ptr<HttpClient::Handle> HttpClient::Acquire() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Handle> h = std::move(idle_.back());
      idle_.pop_back();
      return h;
    }
  }
  handles_.fetch_add(1, std::memory_order_relaxed);
  return std::make_unique<Handle>();
}

void HttpClient::Release(std::unique_ptr<Handle> handle) {
  std::lock_guard lock(mu_);
  if (idle_.size() < options_.max_idle_handles) {
    idle_.push_back(std::move(handle));
  }
}

HttpClient::Stats HttpClient::stats() const {
  return Stats{.requests = requests_.load(std::memory_order_relaxed),
               .connections = connections_.load(std::memory_order_relaxed),
               .handles = handles_.load(std::memory_order_relaxed)};
}

HttpOutcome HttpClient::Send(const HttpRequest& request) {
  using Kind = TransportFailure::Kind;
  Deadline deadline =
      request.deadline == Deadline{} ? DeadlineAfter(options_.default_timeout) : request.deadline;
  if (StartsWithIgnoreCase(request.url, "http://") && !options_.allow_http) {
    return ClassifyTransportFailure(
        request, TransportFailure{.kind = Kind::kLocalConfig,
                                  .detail = "plain http:// is refused unless allowed explicitly "
                                            "(allow_http); use https:// or allow it"});
  }
  int64_t timeout_ms = MillisLeft(deadline);
  if (timeout_ms <= 0) {
    return ClassifyTransportFailure(
        request, TransportFailure{.kind = Kind::kTimeout,
                                  .detail = "the deadline passed before the request started"});
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  std::unique_ptr<Handle> handle = Acquire();
  CURL* easy = handle->easy;
  curl_easy_reset(easy);  // options of the last call go; connections and caches stay
  handle->errbuf[0] = '\0';

  HttpResponse response;
  Transfer t{.request = &request,
             .response = &response,
             .easy = easy,
             .max_body = request.max_response_bytes != 0 ? request.max_response_bytes
                                                         : options_.max_response_bytes};
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, handle->errbuf);
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, options_.allow_http ? "http,https" : "https");
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_SHARE, share_->sh);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(
      easy, CURLOPT_CONNECTTIMEOUT_MS,
      static_cast<long>(std::min<int64_t>(timeout_ms, options_.connect_timeout.count())));
  if (options_.low_speed_time.count() > 0) {
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME,
                     static_cast<long>(options_.low_speed_time.count()));
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(options_.low_speed_bytes));
  }
  curl_easy_setopt(easy, CURLOPT_USERAGENT, options_.user_agent.c_str());
  if (!options_.ca_file.empty()) {
    // CAINFO replaces the default bundle; libcurl's default CA path (the system's hashed
    // certificate directory, /etc/ssl/certs on Debian) stays, so both are trusted.
    curl_easy_setopt(easy, CURLOPT_CAINFO, options_.ca_file.c_str());
  }
  if (options_.allow_invalid_certificates) {
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!options_.client_cert_file.empty()) {
    curl_easy_setopt(easy, CURLOPT_SSLCERT, options_.client_cert_file.c_str());
    curl_easy_setopt(easy, CURLOPT_SSLKEY, options_.client_key_file.c_str());
  }

  // The method, and the body when there is one.
  const std::string& method = request.method;
  bool has_body = request.body_reader != nullptr || !request.body.empty() || method == "PUT" ||
                  method == "POST" || method == "PATCH";
  if (method == "HEAD") {
    curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else if (has_body) {
    curl_off_t size = request.body_reader != nullptr ? request.body_reader->size
                                                     : static_cast<curl_off_t>(request.body.size());
    curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, size);
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, &ReadCallback);
    curl_easy_setopt(easy, CURLOPT_READDATA, &t);
    curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, &SeekCallback);
    curl_easy_setopt(easy, CURLOPT_SEEKDATA, &t);
    if (method != "PUT") {
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method.c_str());
    }
  } else if (method != "GET") {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &WriteCallback);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &HeaderCallback);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t);

  Slist headers;
  auto append = [&](const std::string& line) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    FERRY_CHECK(next != nullptr);
    (void)headers.release();
    headers.reset(next);
  };
  for (const auto& [name, value] : request.headers.fields()) {
    // "Name;" is libcurl's way to send a header with an empty value.
    append(value.empty() ? name + ";" : name + ": " + value);
  }
  if (!request.headers.Has("Expect")) {
    append("Expect:");  // no 100-continue round trip (and its one-second wait on some servers)
  }
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers.get());

  CURLcode rc = curl_easy_perform(easy);

  long connects = 0;  // NOLINT(google-runtime-int): libcurl's type
  curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects);
  connections_.fetch_add(static_cast<uint64_t>(connects), std::memory_order_relaxed);
  curl_off_t pretransfer_us = 0;
  curl_easy_getinfo(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);
  long code = 0;  // NOLINT(google-runtime-int)
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
  HttpOutcome outcome;
  if (rc == CURLE_OK) {
    response.status_code = static_cast<int>(code);
    outcome = ClassifyResponse(request, std::move(response));
  } else {
    // Anything after "pretransfer" may have put request bytes on the wire.
    outcome = ClassifyTransportFailure(request,
                                       FailureFromCurl(rc, t, handle->errbuf, pretransfer_us > 0));
    response.status_code = static_cast<int>(code);
    outcome.response = std::move(response);
  }
  // Unlink the per-call state before the handle goes back to the pool.
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
  Release(std::move(handle));
  return outcome;
}

}  // namespace ferry::http

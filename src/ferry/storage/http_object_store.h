// HttpObjectStore: the one shape of the object stores that speak HTTP (S3 in s3/, Azure Blob in
// azure/), so that each of them adds only its protocol. Two pieces:
//   - HttpStoreCore, the state that a store, its open files and its writers share (they hold it
//     by shared_ptr, so a file outlives nothing it uses): the HTTP client, the retry policy and
//     its counters, and Send(), the request loop: the URL built once, each attempt authorized
//     afresh within its own timeout and the whole call within the retry deadline, retries with
//     backoff by http/retry.h, retries logged at WARN at most once a second. A protocol derives
//     from it and supplies the URL, the authorization of an attempt, the error parser and
//     mapping, the single-request PUT, the multipart upload, a page of a listing and a batch of
//     deletes (Url, Authorize, ParseError, Error, PutCall, Taken, NewUpload, ListPage,
//     DeleteObjects).
//   - HttpObjectStore, the ObjectStore operations that are the same on every such store, on a
//     core: PutIfAbsent (the conditional-write probe, the 'taken' answer as AlreadyExists, an
//     outcome that may have been applied as Unavailable for the caller to read back), Put,
//     Delete (404 is success), Stat (HEAD), OpenForRead (ranged GETs pinned to the ETag,
//     ranged_read_file.h), OpenAtomicWriter (the bounded upload pipeline of
//     multipart_writer.h), List (pages fetched by the protocol's ListPage; the root stripped,
//     start_after applied, the result sorted bytewise) and DeleteMany (keys checked, then the
//     protocol's DeleteObjects). A store derives from it and adds its factory.
// Why a base class and a core rather than one class: files and writers must outlive the store
// object, so what they call (the protocol) lives in the shared core; the operations that take
// a key live on the store, where ObjectStore puts them. The protocol hooks are virtual functions
// of the core rather than a table of std::functions, so that a store's protocol reads as one
// class with its own state (credentials, base URL) beside the hooks.
//
// The conditional-write check (ConditionalWrites::kProbe), numbered:
//   1. PUT `_ferry/probe/conditional-put-<random>` if absent (must succeed);
//   2. PUT it again the same way: a store that honours the condition answers 'taken';
//   3. DELETE it (nothing is left in the table; a failed delete is only logged);
//   4. a success in step 2 means the store ignored the condition: every later PutIfAbsent fails
//      with NotSupported naming the store and the override option. An Unavailable step is not
//      remembered: the next PutIfAbsent tries again.
//
// Thread-safety: thread-safe; files and writers as object_store.h says.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/http/client.h"
#include "ferry/http/headers.h"
#include "ferry/http/outcome.h"
#include "ferry/http/retry.h"
#include "ferry/http/url.h"
#include "ferry/storage/multipart_writer.h"
#include "ferry/storage/object_store.h"
#include "ferry/storage/transfer_options.h"

namespace ferry::storage {

// One call of a store's protocol, before the URL is built and the request authorized.
struct HttpCall {
  std::string method = "GET";
  // The object's full name in the bucket or container ("" for a call on the bucket).
  std::string object;
  std::vector<http::QueryParam> query;
  http::HttpHeaders headers;
  std::string_view body;
  // The storage behind `body` when the protocol builds the body itself (GCS's multipart upload);
  // copies of the call share it, so `body` stays valid as long as any of them.
  std::shared_ptr<const std::string> owned_body;
  http::BodyReader* body_reader = nullptr;
  bool idempotent = true;
  std::span<char> response_buffer;
  // The hex SHA-256 of the body that AWS Signature V4 signs, or its UNSIGNED-PAYLOAD; empty:
  // hashed from `body`. Read by the S3 protocol only (a signing input, not a header).
  std::string payload_hash;
};

// How a store's PutIfAbsent trusts the condition.
enum class ConditionalWrites {
  kTrusted,  // the service always enforces it (Azure)
  kProbe,    // proved once per store before the first conditional write (S3-compatible stores)
  kUnsafe,   // the user vouches for one writer: a HEAD first, then the conditional PUT
};

// What the shared operations need of a store's options.
struct HttpStoreSettings {
  // The store's root inside the bucket or container: no leading or trailing '/'.
  std::string root;
  // What the store calls an object in messages ("object", "blob").
  std::string noun = "object";
  // The header of a ranged GET ("Range"; Azure: "x-ms-range").
  std::string range_header = "Range";
  ConditionalWrites conditional_writes = ConditionalWrites::kTrusted;
  // The condition in messages ("`If-None-Match: *`").
  std::string condition = "`If-None-Match: *`";
  // With kProbe: the storage option that skips the check, named when the store fails it ("":
  // there is none).
  std::string unsafe_option;
  TransferOptions transfer;
};

// "2026-12-02T05:29:03.584Z" (S3's ListObjectsV2, GCS's RFC 3339 times) -> milliseconds since
// the epoch; 0 when malformed.
int64_t ParseIsoMillis(std::string_view s);

// One page of a listing: the objects by their full names (root included), and the token of the
// next page ("" after the last).
struct ListedPage {
  std::vector<ObjectInfo> objects;
  std::string next_token;
};

class HttpStoreCore : public std::enable_shared_from_this<HttpStoreCore> {
 public:
  HttpStoreCore(HttpStoreSettings settings, std::shared_ptr<http::HttpClient> client);
  virtual ~HttpStoreCore();

  HttpStoreCore(const HttpStoreCore&) = delete;
  HttpStoreCore& operator=(const HttpStoreCore&) = delete;

  // Builds the URL, authorizes each attempt (Authorize), retries by the policy within
  // retry_timeout (each attempt within request_timeout). The outcome as http/outcome.h
  // classifies it, with the service's error parsed (ParseError).
  http::HttpOutcome Send(const HttpCall& call) const;

  // The object's full name of a store key: root + '/' + key.
  std::string ObjectName(std::string_view key) const;
  const HttpStoreSettings& settings() const { return settings_; }
  const http::RetryCounters& counters() const { return counters_; }
  http::HttpClient& client() const { return *client_; }

  // ---- The protocol.
  // The URL of a call, query included.
  virtual std::string Url(const HttpCall& call) const = 0;
  // Authorizes one attempt of `call` (signing, dates, tokens); request->deadline is the
  // attempt's.
  virtual Status Authorize(http::HttpRequest* request, const HttpCall& call) const = 0;
  virtual http::ServiceError ParseError(const http::HttpResponse& response) const = 0;
  // The status of a failed call for `what` ("GET <name>"): NotFound for a missing object, the
  // classification's code otherwise, with the service's error in the message.
  virtual Status Error(const http::HttpOutcome& outcome, std::string_view what) const = 0;
  // The object in messages ("s3://bucket/key", "https://account.../container/blob").
  virtual std::string Describe(std::string_view object) const = 0;
  // The single request that stores `data` as `object`, only if absent when `if_absent`.
  virtual HttpCall PutCall(std::string object, std::string_view data, bool if_absent) const = 0;
  // A failed PutCall(if_absent) that says the object exists (S3: 412).
  virtual bool Taken(const http::HttpOutcome& outcome) const = 0;
  // The multipart upload of one object (multipart_writer.h).
  virtual std::unique_ptr<MultipartUpload> NewUpload(std::string object) const = 0;
  // One page of the objects whose full names start with `prefix`: all below it when
  // `recursive`, else those of its level; `start_after` (a full name, may be "") asks the
  // service to skip up to it where it can (the caller filters again); `token` is the previous
  // page's next_token ("" for the first). `what` names the listing in messages.
  virtual Result<ListedPage> ListPage(const std::string& prefix, bool recursive,
                                      const std::string& start_after, const std::string& token,
                                      const std::string& what) const = 0;
  // Deletes the objects (full names; a missing one is no error), in as few requests as the
  // protocol allows.
  virtual Status DeleteObjects(const std::vector<std::string>& objects) const = 0;
  // Refuses what a HEAD or the first ranged GET describes when it is no object (an Azure
  // directory marker): NotFound naming `name`. OK by default.
  virtual Status CheckObject(const http::HttpResponse& response, std::string_view name) const;

 private:
  void LogRetry(const http::RetryEvent& event);

  const HttpStoreSettings settings_;
  const std::shared_ptr<http::HttpClient> client_;
  http::RetryCounters counters_;
  http::RetryPolicy policy_;
  // Retries are logged at WARN, at most one line a second per store (a throttling storm would
  // flood the log otherwise); the retries in between are counted in the next line.
  std::atomic<int64_t> last_retry_log_ms_{0};
  std::atomic<int64_t> retries_not_logged_{0};

  friend class HttpObjectStore;
  // The conditional-write check, done once per store.
  std::mutex conditional_mu_;
  bool conditional_checked_ = false;  // guarded by conditional_mu_
  Status conditional_status_;         // guarded by conditional_mu_
};

class HttpObjectStore : public ObjectStore {
 public:
  ~HttpObjectStore() override;

  Result<std::shared_ptr<const RandomAccessFile>> OpenForRead(std::string_view key) override;
  Result<ObjectInfo> Stat(std::string_view key) override;
  Status PutIfAbsent(std::string_view key, std::string_view data) override;
  Status Put(std::string_view key, std::string_view data) override;
  Status Delete(std::string_view key) override;
  Result<std::unique_ptr<OutputStream>> OpenAtomicWriter(std::string_view key) override;
  using ObjectStore::List;
  Result<std::vector<ObjectInfo>> List(std::string_view prefix,
                                       const ListOptions& options) override;
  Status DeleteMany(const std::vector<std::string>& keys) override;
  std::string Describe(std::string_view key) const override;

  // Attempts, retries and throttled retries of every request so far.
  const http::RetryCounters& counters() const { return core_->counters(); }

 protected:
  explicit HttpObjectStore(std::shared_ptr<HttpStoreCore> core);

 private:
  Status CheckConditionalWrites();

  std::shared_ptr<HttpStoreCore> core_;
};

}  // namespace ferry::storage

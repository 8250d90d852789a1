// S3Store: an ObjectStore in an S3 bucket, or any store that speaks the S3 API (MinIO, Ceph RGW,
// Cloudflare R2), under a key prefix (the table's root). Every call goes through the one HTTP
// client and retry policy of http/, signed with AWS Signature V4 (sigv4.h) by credentials from
// the chain of credentials.h.
//
// The operations:
//   - PutIfAbsent: PutObject with `If-None-Match: *` and Content-MD5. 412 is AlreadyExists; 409
//     ConditionalRequestConflict is retried; an outcome that may have been applied (a timeout
//     after sending, a 5xx) is Unavailable, and the caller settles it by reading back
//     (object_store.h; delta/transaction.cc does).
//     Before the first of them, the store proves that it honours the condition
//     (http_object_store.h) and refuses to create anything conditionally when it does not, unless
//     `allow_unsafe_rename` (one writer per table) is set.
//   - Put: PutObject with Content-MD5. Delete: DeleteObject. DeleteMany: DeleteObjects, 1000 keys
//     a request, Content-MD5.
//   - OpenForRead: a GET of the first 64 KiB (Range) gives the size, the ETag and, for the small
//     files of the log, the whole object in one request; further reads are ranged GETs with
//     `If-Match: <ETag>`, so a file never mixes two versions of an object: a read past the first
//     64 KiB of an object replaced or deleted since the open fails with DataLoss (the contract
//     of object_store.h asks more, a file that stays readable; S3 keeps no old version to read).
//   - A bucket that does not exist is InvalidArgument for every call (never NotFound, which a
//     table reader would take for a table that does not exist yet).
//   - List: ListObjectsV2 pages of 1000 (delimiter '/' unless recursive, start-after,
//     continuation tokens, url-encoded keys).
//   - OpenAtomicWriter: bytes are buffered up to `part_size`; a file that ends below it is one
//     PutObject, a larger one a multipart upload whose parts go up on background threads while
//     the writer takes the next bytes, at most `parts_in_flight` at a time (memory: about
//     part_size x (parts_in_flight + 1)), each with Content-MD5. Close() completes the upload
//     (the object appears atomically); a failure or a writer destroyed without Close() aborts
//     it, so no upload lingers.
//
// The shared operations (PutIfAbsent with its conditional-write check, Put, Delete, Stat,
// OpenForRead, OpenAtomicWriter) are HttpObjectStore's (storage/http_object_store.h); this store
// adds the S3 protocol (s3_internal.h: signing, URLs, errors, listing pages, batched deletes).
//
// Thread-safety: thread-safe; files and writers as object_store.h says.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ferry/http/client.h"
#include "ferry/http/retry.h"
#include "ferry/storage/http_object_store.h"
#include "ferry/storage/object_store.h"
#include "ferry/storage/s3/credentials.h"
#include "ferry/storage/storage_options.h"
#include "ferry/storage/transfer_options.h"

namespace ferry::storage::s3 {

struct S3StoreOptions {
  std::string bucket;
  // The store's root inside the bucket ("lake/events"): no leading or trailing '/'; "" = the
  // bucket's root.
  std::string root;
  // "https://s3.eu-west-1.amazonaws.com", or a compatible store's ("http://127.0.0.1:7480").
  std::string endpoint;
  std::string region = "us-east-1";
  // The bucket in the host name (https://bucket.endpoint-host/key) instead of the path.
  bool virtual_hosted = false;
  // Skip the conditional-write check (one writer per table; delta-rs's
  // aws_s3_allow_unsafe_rename).
  bool allow_unsafe_rename = false;
  TransferOptions transfer;
};

class S3Core;

class S3Store final : public HttpObjectStore {
 public:
  // InvalidArgument for options that cannot work (no bucket, a part size under 5 MiB, a bad
  // endpoint URL).
  static Result<std::unique_ptr<S3Store>> Create(
      S3StoreOptions options, std::shared_ptr<http::HttpClient> client,
      std::shared_ptr<AwsCredentialProvider> credentials);
  ~S3Store() override;

 private:
  explicit S3Store(std::shared_ptr<S3Core> core);
};

// The store of `s3://bucket/root` with the storage options (storage_options.h): endpoint,
// region (else the profile's, else us-east-1), addressing, TLS, timeouts, part sizes and the
// credential chain. InvalidArgument naming the option that is wrong.
Result<std::unique_ptr<S3Store>> OpenS3Store(const std::string& bucket, const std::string& root,
                                             const StorageOptions& options);

}  // namespace ferry::storage::s3

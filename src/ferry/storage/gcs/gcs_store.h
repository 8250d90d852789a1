// GcsStore: an ObjectStore in a Google Cloud Storage bucket, under a name prefix (the table's
// root), through the JSON API, on the shared shape of the HTTP stores
// (storage/http_object_store.h), which does the request loop, put-if-absent, ranged reads and
// the upload pipeline. This file adds the GCS protocol:
//   - PutIfAbsent: a multipart upload (`uploadType=multipart`: the metadata with the object's
//     CRC32C, then the bytes) with `ifGenerationMatch=0`; 412 is AlreadyExists. GCS refuses
//     bytes whose CRC32C differs from the metadata's (400). The conditional-write check of
//     http_object_store.h runs before the first one (a store that ignores the precondition is
//     refused; there is no override).
//   - OpenForRead / Stat: `GET` and `HEAD .../o/NAME?alt=media`, ranged by `Range`.
//   - List: `GET .../o` pages (prefix, delimiter '/' unless recursive, startOffset, pageToken).
//   - Delete: `DELETE .../o/NAME` (404 is success); DeleteMany: batches of up to 100 DELETEs
//     through the JSON batch endpoint (gcs_batch.h), each part's answer judged on its own: 2xx
//     and 404 are success, a part answered 429 or 5xx is sent again alone, any other failure is
//     the call's error naming the object.
//   - OpenAtomicWriter: one multipart upload below the part size; above it a resumable upload,
//     one chunk per part, in order (a resumable session takes its bytes sequentially, so one part
//     is in flight while the writer takes the next bytes), finished by the last chunk naming the
//     size and carrying the CRC32C of the whole object (`x-goog-hash`); the CRC32C the answer
//     reports must be the same, or the object is deleted and the writer fails. Abandoned sessions
//     are cancelled with DELETE.
// Each attempt carries "Authorization: Bearer <token>" from `access_token` when it is set (the
// function is asked afresh per attempt, so a refreshed token is picked up); without it the
// store is anonymous, as Google's clients are when STORAGE_EMULATOR_HOST points them at an
// emulator (fake-gcs-server in the tests) or for a public bucket.
//
// Thread-safety: thread-safe; files and writers as object_store.h says.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ferry/http/client.h"
#include "ferry/storage/http_object_store.h"
#include "ferry/storage/storage_options.h"
#include "ferry/storage/table_uri.h"
#include "ferry/storage/transfer_options.h"

namespace ferry::storage::gcs {

struct GcsStoreOptions {
  std::string bucket;
  // The store's root inside the bucket: no leading or trailing '/'; "" = the bucket's root.
  std::string root;
  // "https://storage.googleapis.com", or an emulator's "http://127.0.0.1:PORT".
  std::string endpoint = "https://storage.googleapis.com";
  // part_size must be a multiple of 256 KiB (GCS's chunk granularity); parts_in_flight is 1
  // whatever is asked (a resumable session is sequential).
  TransferOptions transfer;
  // Objects per listing page (GCS's maximum is 1000; tests use small pages).
  int list_page_size = 1000;
  // The OAuth 2.0 access token for each request's "Authorization: Bearer"; empty = anonymous.
  std::function<Result<std::string>()> access_token;
};

class GcsCore;

class GcsStore final : public HttpObjectStore {
 public:
  // InvalidArgument for options that cannot work (no bucket, a part size that is not a
  // multiple of 256 KiB, a bad endpoint URL).
  static Result<std::unique_ptr<GcsStore>> Create(GcsStoreOptions options,
                                                  std::shared_ptr<http::HttpClient> client);
  ~GcsStore() override;

 private:
  explicit GcsStore(std::shared_ptr<GcsCore> core);
};

// The store of a gs:// table location (table_uri.h) with the storage options
// (storage_options.h), as OpenTableStore opens it:
//   1. the bucket from the location (google_bucket, when given, must name the same one);
//   2. the endpoint: storage_emulator_host (STORAGE_EMULATOR_HOST) when set, host:port or
//      http(s)://host:port as Google's clients accept it, plain http allowed; otherwise
//      https://storage.googleapis.com;
//   3. the credentials: none with google_skip_signature, or with an emulator and no credential
//      configured (anonymous, as Google's clients are); otherwise the credential chain
//      (gcs_credentials.h: MakeGcsAccessToken), which fails naming the table and what it looked
//      for, or what is wrong with the source it found;
//   4. the transfer options (upload_part_size rounded up to a multiple of 256 KiB), timeouts
//      and retries, the HTTP client.
// InvalidArgument naming the option that is wrong, or the table when no credentials are found.
Result<std::unique_ptr<GcsStore>> OpenGcsStore(const TableUri& location,
                                               const StorageOptions& options);

}  // namespace ferry::storage::gcs

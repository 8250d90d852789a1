// GcsStore: an ObjectStore in a Google Cloud Storage bucket, under a name prefix (the table's
// root), through the JSON API, on the shared shape of the HTTP stores
// (storage/http_object_store.h), which does the request loop, put-if-absent, ranged reads and
// the upload pipeline. This file adds the GCS protocol:
//   - PutIfAbsent: a media upload (`uploadType=media`) with `ifGenerationMatch=0`; 412 is
//     AlreadyExists. The conditional-write check of http_object_store.h runs before the first
//     one (a store that ignores the precondition is refused).
//   - OpenForRead / Stat: `GET` and `HEAD .../o/NAME?alt=media`, ranged by `Range`.
//   - List: `GET .../o` pages (prefix, delimiter '/' unless recursive, startOffset, pageToken).
//   - Delete: `DELETE .../o/NAME` (404 is success); DeleteMany: one request per object.
//   - OpenAtomicWriter: one media upload below the part size; above it a resumable upload, one
//     chunk per part, in order (a resumable session takes its bytes sequentially, so one part is
//     in flight while the writer takes the next bytes), finished by the last chunk naming the
//     size; abandoned sessions are cancelled with DELETE.
// Credentials are not implemented yet: the store talks to the endpoint anonymously, as Google's
// clients do when STORAGE_EMULATOR_HOST points them at an emulator (fake-gcs-server in the
// tests). OpenGcsStore refuses a bucket on Google itself until they are.
//
// Thread-safety: thread-safe; files and writers as object_store.h says.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ferry/http/client.h"
#include "ferry/storage/http_object_store.h"
#include "ferry/storage/storage_options.h"
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

}  // namespace ferry::storage::gcs

// AzureBlobStore: an ObjectStore in a container of an Azure storage account (Blob Storage, and
// ADLS Gen2 accounts with a hierarchical namespace, through their Blob endpoint as delta-rs does),
// under a name prefix (the table's root). Every call goes through the one HTTP client and retry
// policy of http/ (503 ServerBusy, 500 OperationTimedOut, resets and timeouts retried with
// backoff), authorized by azure_credentials.h (Shared Key, SAS or an Entra ID token).
//
// The operations:
//   - PutIfAbsent: Put Blob with `If-None-Match: *` and Content-MD5. 409 BlobAlreadyExists (or
//     412 ConditionNotMet) is AlreadyExists; an outcome that may have been applied (a timeout
//     after sending, a 500) is Unavailable, and the caller settles it by reading back
//     (object_store.h; delta/transaction.cc does). Azure always honours the condition, so there
//     is no conditional-write check as on S3.
//   - Put: Put Blob with Content-MD5. Delete: Delete Blob (404 is success).
//   - DeleteMany: Blob Batch requests of up to 256 Delete Blob subrequests, each authorized on its
//     own; where the account refuses batches (some hierarchical-namespace accounts), one Delete
//     Blob per key, several at once.
//   - OpenForRead: a Get Blob of the first 64 KiB (x-ms-range) gives the size, the ETag and, for
//     the small files of the log, the whole blob in one request; further reads are ranged with
//     `If-Match: <ETag>`, so a file never mixes two versions of a blob (412: DataLoss).
//   - List: List Blobs pages of up to 5000 (delimiter '/' unless recursive, marker continuation);
//     `start_after` is applied to the names as they arrive (the API has no such parameter).
//     Directory entries of hierarchical-namespace accounts (metadata hdi_isfolder=true) are left
//     out, so such accounts list like flat ones.
//   - OpenAtomicWriter: the multipart writer (storage/multipart_writer.h): one Put Blob below the
//     part size, above it Put Block for each part (on background threads, at most
//     `parts_in_flight` at once) and Put Block List on Close, which makes the blob appear
//     atomically. A failed or abandoned writer sends nothing more: its uncommitted blocks are
//     invisible and the service discards them (after a week, or at the blob's next commit).
//
// The shared operations (PutIfAbsent, Put, Delete, Stat, OpenForRead, OpenAtomicWriter) are
// HttpObjectStore's (storage/http_object_store.h); this store adds the Azure protocol
// (azure_internal.h: authorization, URLs, errors, listing pages, Blob Batch deletes) and
// Describe.
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
#include "ferry/storage/azure/azure_credentials.h"
#include "ferry/storage/http_object_store.h"
#include "ferry/storage/object_store.h"
#include "ferry/storage/storage_options.h"
#include "ferry/storage/table_uri.h"
#include "ferry/storage/transfer_options.h"

namespace ferry::storage::azure {

struct AzureStoreOptions {
  std::string account;
  std::string container;
  // The store's root inside the container ("lake/events"): no leading or trailing '/'; "" = the
  // container's root.
  std::string root;
  // The account's Blob endpoint, everything before "/<container>":
  // "https://myaccount.blob.core.windows.net", or an emulator's "http://127.0.0.1:10000/
  // devstoreaccount1".
  std::string endpoint;
  TransferOptions transfer;
  // Blobs per List Blobs page (the service's maximum is 5000; tests use small pages).
  int list_page_size = 5000;
};

class AzureCore;

class AzureBlobStore final : public HttpObjectStore {
 public:
  // InvalidArgument for options that cannot work (no account or container, a part size outside
  // 64 KiB .. 4000 MiB, a bad endpoint URL).
  static Result<std::unique_ptr<AzureBlobStore>> Create(
      AzureStoreOptions options, std::shared_ptr<http::HttpClient> client,
      std::shared_ptr<AzureCredentialProvider> credentials);
  ~AzureBlobStore() override;

  // "<endpoint>/<container>/<root>/<key>" ("<endpoint>/<container>/<root>" for "." or ""), e.g.
  // "https://myaccount.blob.core.windows.net/lake/events/_delta_log/00000000000000000000.json".
  std::string Describe(std::string_view key) const override;

 private:
  explicit AzureBlobStore(std::shared_ptr<AzureCore> core);
};

// The store of an Azure table location (table_uri.h: az://, abfs[s]://, https://) with the
// storage options (storage_options.h): account, endpoint or emulator, credentials, TLS, timeouts,
// part sizes. InvalidArgument naming the option that is wrong.
Result<std::unique_ptr<AzureBlobStore>> OpenAzureStore(const TableUri& location,
                                                       const StorageOptions& options);

}  // namespace ferry::storage::azure

// AzureBlobCli: an Azure Blob client that no one on this project wrote, for tests to set up an
// account and to check what ferry wrote to it independently of ferry's own Shared Key signer:
// Microsoft's SDK (@azure/storage-blob, pinned in tests/azurite/package.json, `make setup-npm`)
// driven through tests/azurite/blob.mjs, one `node` process per call.
//
// Thread-safety: const methods may be called from several threads at once.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::testing {

class AzureBlobCli {
 public:
  // `connection_string`: "DefaultEndpointsProtocol=http;AccountName=...;AccountKey=...;
  // BlobEndpoint=http://127.0.0.1:PORT/ACCOUNT;" (Azurite::connection_string()).
  // `ca_file`: a PEM certificate to trust (an emulator serving HTTPS), or "".
  explicit AzureBlobCli(std::string connection_string,
                        std::chrono::milliseconds timeout = std::chrono::minutes(5),
                        std::string ca_file = "")
      : connection_string_(std::move(connection_string)),
        timeout_(timeout),
        ca_file_(std::move(ca_file)) {}

  // AlreadyExists when the container exists.
  Status CreateContainer(std::string_view container) const;
  // One Put Blob of `data` (with `If-None-Match: *` when asked); returns the outcome as the SDK
  // saw it: "201", or "409 BlobAlreadyExists" and the like.
  Result<std::string> Put(std::string_view container, std::string_view blob, std::string_view data,
                          bool if_none_match) const;
  // `writers` Put Blobs of one blob at once, each with `If-None-Match: *`; writer i's body is
  // RaceBody(i). One outcome per writer, as Put.
  Result<std::vector<std::string>> Race(std::string_view container, std::string_view blob,
                                        int writers) const;
  static std::string RaceBody(int writer);
  // The blob's bytes. NotFound-like Unavailable (with the SDK's message) when it is missing.
  Result<std::string> Get(std::string_view container, std::string_view blob) const;
  // A shared access signature for the container (sv=...&sig=..., without '?') that allows read,
  // add, create, write, delete and list for `minutes`, signed by the SDK with the account key.
  Result<std::string> ContainerSas(std::string_view container, int minutes = 60) const;
  // The blob's committed and uncommitted block counts ("committed N uncommitted M"), to see what
  // a block upload left.
  Result<std::string> BlockCounts(std::string_view container, std::string_view blob) const;
  // The blob names that start with `prefix`, in the service's (lexicographic) order.
  Result<std::vector<std::string>> List(std::string_view container, std::string_view prefix) const;
  // Downloads every blob under `prefix` into `local_dir`, the name below the prefix (without
  // leading '/') as the relative path, e.g. a table for DuckDB to read.
  Status DownloadPrefix(std::string_view container, std::string_view prefix,
                        const std::string& local_dir) const;
  // Uploads every file under `local_dir` as the blob "<prefix>/<relative path>" (Put Blob by the
  // SDK, 16 at once); how many.
  Result<int64_t> UploadDirectory(const std::string& local_dir, std::string_view container,
                                  std::string_view prefix) const;

  // Runs several blob.mjs commands in turn in one node process (each node start loads the SDK,
  // ~1 s of CPU) and returns each one's output, e.g. {{"put", C, B, "text", "--if-none-match"},
  // {"get", C, B}}: a put's data is TEXT, or the file's bytes for "@FILE". Unavailable when one
  // fails (the rest are not run).
  Result<std::vector<std::string>> Sequence(
      const std::vector<std::vector<std::string>>& commands) const;

  // Runs `node blob.mjs ARGS...` and returns its stdout; `exit_code` receives the exit code
  // (Unavailable with the output when it is neither 0 nor one the caller accepts).
  Result<std::string> Run(const std::vector<std::string>& args, int* exit_code = nullptr) const;

 private:
  const std::string connection_string_;
  const std::chrono::milliseconds timeout_;
  const std::string ca_file_;
};

// tests/azurite under the source tree (package.json, blob.mjs, node_modules after
// `make setup-npm`).
std::string AzuriteNpmDir();

}  // namespace ferry::testing

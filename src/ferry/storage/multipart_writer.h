// MultipartWriter: the OutputStream that object stores return from OpenAtomicWriter when they
// upload large objects in parts: S3 (a multipart upload: s3/s3_writer.cc) and Azure Blob (Put
// Block + Put Block List: azure/azure_writer.cc). The writer owns what the stores share: the
// buffering, the parts in flight, the order of the parts, and clean-up on failure. A store
// supplies a MultipartUpload, the few calls that differ.
//
// The writer, numbered:
//   1. Append buffers bytes up to `part_size`.
//   2. A file that ends below it is one request: PutWhole (S3 PutObject, Azure Put Blob).
//   3. When the buffer fills, the first time: Start (S3 CreateMultipartUpload; Azure: nothing).
//      Then the buffer goes to UploadPart on a background thread while Append takes the next
//      bytes; at most `parts_in_flight` parts are in flight, so the writer holds about
//      part_size x (parts_in_flight + 1) bytes whatever the file's size. Append waits for the
//      oldest part when the most allowed are in flight, and the first part that fails fails the
//      writer.
//   4. Close sends the last part, waits for every part, and calls Complete with the parts in
//      order (S3 CompleteMultipartUpload, Azure Put Block List): the object appears atomically.
//   5. A failure at any step, or a writer destroyed without Close, waits for the parts still in
//      flight and calls Abort once (S3 AbortMultipartUpload; Azure: nothing, uncommitted blocks
//      expire by themselves), so no upload lingers where the store can free it.
//
// Thread-safety: the writer is used from one thread (object_store.h). UploadPart is called from
// several background threads at once; the other MultipartUpload calls from the writer's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/io.h"
#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::storage {

// One part the store accepted.
struct UploadedPart {
  int number = 0;     // 1-based, in the object's order
  std::string token;  // what Complete needs to name it: S3's ETag, Azure's block id
  uint64_t size = 0;  // bytes
};

// The store-specific calls of a MultipartWriter (steps above).
class MultipartUpload {
 public:
  virtual ~MultipartUpload() = default;
  // The whole object in one request (step 2).
  virtual Status PutWhole(std::string_view data) = 0;
  // Before the first part (step 3).
  virtual Status Start() = 0;
  // Uploads part `number` (1-based); returns its token. Called on background threads, several at
  // once, after Start returned OK.
  virtual Result<std::string> UploadPart(int number, std::string_view data) = 0;
  // Makes the object from `parts`, in order; `total_size` is their sum (step 4).
  virtual Status Complete(const std::vector<UploadedPart>& parts, uint64_t total_size) = 0;
  // Frees what a started upload holds (step 5), best effort: a failure is logged, not returned.
  // Called at most once, after Start succeeded, when no part is in flight, and never after
  // Complete succeeded.
  virtual void Abort() = 0;
};

struct MultipartWriterOptions {
  // The size of every part but the last, and the size from which a file goes up in parts.
  size_t part_size = size_t{16} << 20;
  // Parts uploaded at once, at least 1.
  int parts_in_flight = 4;
};

// A writer of `name` (for messages: "s3://bucket/key") through `upload`.
// REQUIRES: options.part_size > 0, options.parts_in_flight >= 1.
std::unique_ptr<OutputStream> NewMultipartWriter(std::unique_ptr<MultipartUpload> upload,
                                                 std::string name, MultipartWriterOptions options);

}  // namespace ferry::storage

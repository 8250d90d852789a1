// GCS's JSON batch endpoint (`POST /batch/storage/v1`), for GcsStore's DeleteMany: the
// multipart/mixed body of up to kBatchParts DELETEs, and the parts of the multipart/mixed
// answer, each an HTTP response of its own. Numbered:
//   1. the body: per object a part `Content-Type: application/http`, `Content-ID: <N>` (N counts
//      from 1), whose content is the request `DELETE <object path> HTTP/1.1` and an empty line;
//      the outer request's Authorization applies to every part (GCS's rule);
//   2. the answer: its boundary from the answer's Content-Type; each part carries
//      `Content-ID: <response-N>` and the part's response (status line, headers, body). A part
//      is matched to its object by that Content-ID, or by its place when the ID is absent.
// Real GCS answers a deleted object 204, fake-gcs-server 200 with the body `null`; 404 means it
// was already gone. Interpreting a part's status is the store's (gcs_store.cc, through
// http/outcome.h like every other response).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::storage::gcs {

// GCS accepts at most 100 calls in one batch request.
inline constexpr size_t kBatchParts = 100;

// The body of a batch deleting `object_paths` (each the path of an object resource,
// "/storage/v1/b/BUCKET/o/NAME" with NAME percent-encoded), parts separated by `boundary`.
std::string BatchDeleteBody(std::string_view boundary, std::span<const std::string> object_paths);

// One part of a batch's answer: its HTTP status (0 when the answer held no part for it) and body.
struct BatchPartAnswer {
  int status = 0;
  std::string body;
};

// The answers to a batch of `parts` calls, by call (index 0 answers Content-ID <1>), from the
// answer's Content-Type (multipart/mixed; boundary=...) and body. DataLoss when the answer is
// not a multipart/mixed message.
Result<std::vector<BatchPartAnswer>> ParseBatchAnswer(std::string_view content_type,
                                                      std::string_view body, size_t parts);

}  // namespace ferry::storage::gcs

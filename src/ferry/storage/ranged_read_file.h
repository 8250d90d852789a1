// Reading an object of a remote store (S3, Azure Blob) by HTTP ranged GETs, as one
// RandomAccessFile pinned to the version it was opened at:
//   - OpenRangedReadFile reads the first bytes (a ranged GET from byte 0) and keeps them: a small
//     object (a Delta commit, a checkpoint's footer) costs one request. Its ETag pins every later
//     read (If-Match): a 412 means the object was replaced, a 404 that it was deleted since it
//     was opened; both are DataLoss, never a file that silently changed or never existed.
//   - An empty object (the store refuses a range from byte 0 with 416) is confirmed by its size.
// The stores supply the request and their error parser (RangedGets); the rules above are here
// once.
//
// Thread-safety: the file is immutable; ReadAt from any number of threads, as far as `get` is.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ferry/base/io.h"
#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/http/outcome.h"

namespace ferry::storage {

struct RangedGets {
  // The object in messages ("s3://bucket/key") and what the store calls one ("object", "blob").
  std::string name;
  std::string_view noun;
  // One GET of bytes [offset, offset + n), with If-Match: `etag` when it is not empty; the body
  // into `into` when it is not empty (else into the response's body).
  std::function<http::HttpOutcome(uint64_t offset, uint64_t n, const std::string& etag,
                                  std::span<char> into)>
      get;
  // A failed GET as its Status (the store's error parser); `what` is "GET <name>".
  std::function<Status(const http::HttpOutcome& outcome, const std::string& what)> error;
};

// Opens the object by a GET of its first `first_read` bytes. `size` gives its size by another
// request (HEAD), asked only when the store refuses the first range (an empty object);
// `check_first` may refuse what the first answer describes (an Azure directory marker).
Result<std::shared_ptr<const RandomAccessFile>> OpenRangedReadFile(
    RangedGets gets, uint64_t first_read, const std::function<Result<uint64_t>()>& size,
    const std::function<Status(const http::HttpResponse&)>& check_first = nullptr);

}  // namespace ferry::storage

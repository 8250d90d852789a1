// The options every remote store (S3, Azure Blob) reads the same way: how large the parts of an
// upload are and how many are in flight, how long one attempt and one call with its retries may
// take, how many attempts a call gets, and the HTTP client's connect timeout and certificate
// check. Storage option names and defaults as docs/storage.md lists them:
//   upload_part_size 16MiB, upload_parts_in_flight 4 (at most 64), timeout 60s,
//   retry_timeout 180s, max_retries 10 (1-1000 attempts), connect_timeout 10s,
//   allow_invalid_certificates false.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/http/client.h"
#include "ferry/http/retry.h"
#include "ferry/storage/storage_options.h"

namespace ferry::storage {

// The transfer fields of every remote store's options (S3StoreOptions, AzureStoreOptions).
struct TransferOptions {
  // The bounded upload pipeline (multipart_writer.h): memory about
  // part_size x (parts_in_flight + 1).
  size_t part_size = size_t{16} << 20;
  int parts_in_flight = 4;
  // One attempt, and one call with all its retries.
  std::chrono::milliseconds request_timeout{60'000};
  std::chrono::milliseconds retry_timeout{180'000};
  http::RetryOptions retry;
};

// Fills the transfer fields of a store's options and `client`'s timeouts. InvalidArgument naming
// the option that does not parse.
inline Status ReadTransferOptions(const StorageOptions& o, TransferOptions* s,
                                  http::HttpClientOptions* client) {
  FERRY_ASSIGN_OR_RETURN(int64_t part_size, SizeOption(o, "upload_part_size", 16LL << 20));
  s->part_size = static_cast<size_t>(part_size);
  FERRY_ASSIGN_OR_RETURN(int64_t in_flight, IntOption(o, "upload_parts_in_flight", 4));
  s->parts_in_flight = static_cast<int>(std::min<int64_t>(in_flight, 64));
  FERRY_ASSIGN_OR_RETURN(s->request_timeout,
                         DurationOption(o, "timeout", std::chrono::milliseconds(60'000)));
  FERRY_ASSIGN_OR_RETURN(s->retry_timeout,
                         DurationOption(o, "retry_timeout", std::chrono::milliseconds(180'000)));
  FERRY_ASSIGN_OR_RETURN(int64_t attempts, IntOption(o, "max_retries", 10));
  s->retry.max_attempts = static_cast<int>(std::clamp<int64_t>(attempts, 1, 1000));
  FERRY_ASSIGN_OR_RETURN(client->connect_timeout,
                         DurationOption(o, "connect_timeout", std::chrono::milliseconds(10'000)));
  client->default_timeout = s->request_timeout;
  FERRY_ASSIGN_OR_RETURN(client->allow_invalid_certificates,
                         BoolOption(o, "allow_invalid_certificates", false));
  return Status::OK();
}

}  // namespace ferry::storage

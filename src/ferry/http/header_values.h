// Values of standard HTTP header fields that more than one service client reads or writes: HTTP
// dates (RFC 9110's IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT": Last-Modified, Azure's
// x-ms-date), Content-Length, and the total size in a Content-Range.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/http/message.h"

namespace ferry::http {

// "Sun, 06 Nov 1994 08:49:37 GMT".
std::string FormatHttpDate(std::chrono::system_clock::time_point t);
// An IMF-fixdate -> milliseconds since the Unix epoch; 0 when malformed.
int64_t ParseHttpDateMillis(std::string_view text);

// The response's Content-Length; nullopt when absent or malformed.
std::optional<uint64_t> ContentLength(const HttpResponse& response);
// "bytes 0-65535/1234567" -> 1234567; nullopt when malformed or the total is "*".
std::optional<uint64_t> TotalFromContentRange(std::string_view content_range);

}  // namespace ferry::http

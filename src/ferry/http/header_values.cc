#include "ferry/http/header_values.h"

#include <time.h>

#include <charconv>

namespace ferry::http {

std::string FormatHttpDate(std::chrono::system_clock::time_point t) {
  const time_t secs = std::chrono::system_clock::to_time_t(t);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  // strftime's %a and %b follow the locale; HTTP wants the English names whatever it is.
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char buf[40];
  snprintf(buf, sizeof(buf), "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday], tm.tm_mday,
           kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

int64_t ParseHttpDateMillis(std::string_view text) {
  struct tm tm {};
  const std::string s(text);
  const char* end = strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S", &tm);
  return end == nullptr ? 0 : static_cast<int64_t>(timegm(&tm)) * 1000;
}

std::optional<uint64_t> ContentLength(const HttpResponse& response) {
  std::optional<std::string_view> v = response.headers.Get("Content-Length");
  uint64_t n = 0;
  if (!v || v->empty()) {
    return std::nullopt;
  }
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size()) {
    return std::nullopt;
  }
  return n;
}

std::optional<uint64_t> TotalFromContentRange(std::string_view content_range) {
  size_t slash = content_range.rfind('/');
  if (slash == std::string_view::npos) {
    return std::nullopt;
  }
  uint64_t total = 0;
  std::string_view digits = content_range.substr(slash + 1);
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), total);
  if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty()) {
    return std::nullopt;
  }
  return total;
}

}  // namespace ferry::http

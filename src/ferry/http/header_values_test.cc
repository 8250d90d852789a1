// HTTP dates, Content-Length and Content-Range totals (header_values.h), with RFC 9110's example
// date.
#include "ferry/http/header_values.h"

#include <gtest/gtest.h>

namespace ferry::http {
namespace {

TEST(HeaderValuesTest, HttpDatesBothWays) {
  // RFC 9110, 5.6.7: Sun, 06 Nov 1994 08:49:37 GMT = 784111777 s after the epoch.
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(784111777));
  EXPECT_EQ(FormatHttpDate(t), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatHttpDate(t + std::chrono::milliseconds(999)), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(ParseHttpDateMillis("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777000);
  EXPECT_EQ(ParseHttpDateMillis("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
  EXPECT_EQ(ParseHttpDateMillis(FormatHttpDate(
                std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000)))),
            1'700'000'000'000);
  EXPECT_EQ(ParseHttpDateMillis("yesterday"), 0);
  EXPECT_EQ(ParseHttpDateMillis(""), 0);
}

TEST(HeaderValuesTest, ContentLengthAndTheTotalOfAContentRange) {
  HttpResponse r;
  EXPECT_EQ(ContentLength(r), std::nullopt);
  r.headers.Set("Content-Length", "1234567");
  EXPECT_EQ(ContentLength(r), 1234567u);
  for (const char* bad : {"", "12x", "-1", " 12"}) {
    r.headers.Set("Content-Length", bad);
    EXPECT_EQ(ContentLength(r), std::nullopt) << bad;
  }
  EXPECT_EQ(TotalFromContentRange("bytes 0-65535/1234567"), 1234567u);
  EXPECT_EQ(TotalFromContentRange("bytes 0-0/1"), 1u);
  for (const char* bad : {"bytes 0-65535/*", "bytes 0-65535/", "bytes 0-65535", "bytes */x"}) {
    EXPECT_EQ(TotalFromContentRange(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace ferry::http

#include "ferry/storage/s3/aws_error.h"

#include <gtest/gtest.h>

namespace ferry::storage::s3 {
namespace {

http::HttpResponse Body(std::string body) {
  http::HttpResponse r;
  r.status_code = 503;
  r.body = std::move(body);
  return r;
}

TEST(AwsErrorTest, ReadsS3AndStsErrors) {
  http::ServiceError e = ParseAwsError(Body(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>"
      "<Message>Please reduce your request rate.</Message><RequestId>4442587FB7D0A2F9</RequestId>"
      "<HostId>x</HostId></Error>"));
  EXPECT_EQ(e.code, "SlowDown");
  EXPECT_EQ(e.message, "Please reduce your request rate. (request id 4442587FB7D0A2F9)");
  e = ParseAwsError(
      Body("<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error><Type>Sender"
           "</Type><Code>InvalidIdentityToken</Code><Message>No OpenIDConnect provider</Message>"
           "</Error><RequestId>c6104cbe</RequestId></ErrorResponse>"));
  EXPECT_EQ(e.code, "InvalidIdentityToken");
  EXPECT_EQ(e.message, "No OpenIDConnect provider (request id c6104cbe)");
  // The classification then sees the code.
  http::HttpRequest req;
  req.method = "PUT";
  req.url = "https://b.s3.amazonaws.com/k";
  http::HttpOutcome o =
      http::ClassifyResponse(req, Body("<Error><Code>SlowDown</Code></Error>"), e);
  EXPECT_TRUE(o.throttled);
}

TEST(AwsErrorTest, AnythingElseIsEmpty) {
  for (const char* body : {"", "not xml", "<Other><Code>x</Code></Other>", "{\"code\":\"x\"}"}) {
    http::ServiceError e = ParseAwsError(Body(body));
    EXPECT_TRUE(e.code.empty()) << body;
    EXPECT_TRUE(e.message.empty()) << body;
  }
}

}  // namespace
}  // namespace ferry::storage::s3

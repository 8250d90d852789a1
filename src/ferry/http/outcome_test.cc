#include "ferry/http/outcome.h"

#include <gtest/gtest.h>

namespace ferry::http {
namespace {

HttpRequest Put(bool idempotent = true) {
  HttpRequest r;
  r.method = "PUT";
  r.url = "https://b.s3.amazonaws.com/t/_delta_log/1.json?X-Amz-Signature=abc123";
  r.headers.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDSECRET/...");
  r.headers.Set("x-amz-security-token", "TOKENSECRET");
  r.idempotent = idempotent;
  return r;
}

HttpResponse Response(int code) {
  HttpResponse r;
  r.status_code = code;
  return r;
}

void ExpectNoSecrets(const Status& s) {
  for (const char* secret : {"abc123", "AKIDSECRET", "TOKENSECRET"}) {
    EXPECT_EQ(s.message().find(secret), std::string::npos) << s.ToString();
  }
}

TEST(OutcomeTest, SuccessIsOk) {
  for (int code : {200, 201, 204, 206}) {
    HttpOutcome o = ClassifyResponse(Put(), Response(code));
    EXPECT_TRUE(o.ok()) << code;
    EXPECT_FALSE(o.retryable);
    EXPECT_TRUE(o.response_complete);
    EXPECT_EQ(o.status_code(), code);
  }
}

TEST(OutcomeTest, ThrottlingIsRetryableAndNotApplied) {
  for (int code : {429, 503}) {
    HttpOutcome o = ClassifyResponse(Put(false), Response(code), {"SlowDown", "Reduce rate"});
    EXPECT_EQ(o.status.code(), StatusCode::kUnavailable);
    EXPECT_TRUE(o.retryable) << code;
    EXPECT_TRUE(o.throttled);
    EXPECT_FALSE(o.maybe_applied);
    EXPECT_NE(o.status.message().find("HTTP " + std::to_string(code) + " SlowDown: Reduce rate"),
              std::string::npos)
        << o.status.ToString();
    ExpectNoSecrets(o.status);
  }
  // Throttling codes some services send with a 400.
  HttpOutcome o = ClassifyResponse(Put(false), Response(400), {"Throttling", "Rate exceeded"});
  EXPECT_TRUE(o.retryable);
  EXPECT_TRUE(o.throttled);
  o = ClassifyResponse(Put(false), Response(400), {"RequestTimeout", "socket not read"});
  EXPECT_TRUE(o.retryable);
  EXPECT_FALSE(o.throttled);
  o = ClassifyResponse(Put(false), Response(409), {"ConditionalRequestConflict", ""});
  EXPECT_TRUE(o.retryable);
  EXPECT_FALSE(o.maybe_applied);
  EXPECT_TRUE(ClassifyResponse(Put(), Response(408)).retryable);
}

TEST(OutcomeTest, ServerErrorsLeaveTheOutcomeUnknown) {
  for (int code : {500, 502, 504}) {
    HttpOutcome o = ClassifyResponse(Put(true), Response(code), {"InternalError", "x"});
    EXPECT_EQ(o.status.code(), StatusCode::kUnavailable);
    EXPECT_TRUE(o.maybe_applied) << code;
    EXPECT_TRUE(o.retryable);
    // A conditional create is not repeated: the store settles it by reading back.
    o = ClassifyResponse(Put(false), Response(code), {"InternalError", "x"});
    EXPECT_TRUE(o.maybe_applied);
    EXPECT_FALSE(o.retryable);
    EXPECT_NE(o.status.message().find("outcome is unknown"), std::string::npos);
  }
  EXPECT_EQ(ClassifyResponse(Put(), Response(501)).status.code(), StatusCode::kNotSupported);
}

TEST(OutcomeTest, ClientErrorsAreFinalWithGenericCodes) {
  struct Case {
    int http;
    StatusCode code;
  };
  for (Case c : {Case{400, StatusCode::kInvalidArgument}, Case{401, StatusCode::kInvalidArgument},
                 Case{403, StatusCode::kInvalidArgument}, Case{404, StatusCode::kNotFound},
                 Case{405, StatusCode::kNotSupported}, Case{409, StatusCode::kAborted},
                 Case{410, StatusCode::kNotFound}, Case{412, StatusCode::kAborted},
                 Case{413, StatusCode::kResourceExhausted}, Case{416, StatusCode::kInvalidArgument},
                 Case{304, StatusCode::kAborted}, Case{301, StatusCode::kInvalidArgument}}) {
    HttpOutcome o =
        ClassifyResponse(Put(), Response(c.http), {"Code" + std::to_string(c.http), ""});
    EXPECT_EQ(o.status.code(), c.code) << c.http;
    EXPECT_FALSE(o.retryable) << c.http;
    EXPECT_FALSE(o.maybe_applied) << c.http;
    EXPECT_EQ(o.status_code(), c.http);
    ExpectNoSecrets(o.status);
  }
  HttpResponse redirect = Response(301);
  redirect.headers.Set("Location", "https://b.s3.eu-west-1.amazonaws.com/k?sig=SECRETSIG");
  HttpOutcome o = ClassifyResponse(Put(), redirect);
  EXPECT_NE(o.status.message().find("redirected to https://b.s3.eu-west-1.amazonaws.com/k"),
            std::string::npos);
  EXPECT_EQ(o.status.message().find("SECRETSIG"), std::string::npos);
}

TEST(OutcomeTest, RetryAfterIsRead) {
  HttpResponse r = Response(503);
  r.headers.Set("Retry-After", "3");
  EXPECT_EQ(ClassifyResponse(Put(), r).retry_after, std::chrono::seconds(3));
  r.headers.Set("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT");
  EXPECT_EQ(ClassifyResponse(Put(), r).retry_after, std::chrono::seconds(0));
}

TEST(OutcomeTest, TransportFailuresBeforeSendingAreSafeToRepeat) {
  using Kind = TransportFailure::Kind;
  for (Kind k : {Kind::kResolve, Kind::kConnect, Kind::kTlsHandshake, Kind::kTimeout,
                 Kind::kConnectionLost}) {
    HttpOutcome o = ClassifyTransportFailure(
        Put(false), TransportFailure{.kind = k, .maybe_sent = false, .detail = "boom"});
    EXPECT_EQ(o.status.code(), StatusCode::kUnavailable);
    EXPECT_TRUE(o.retryable);
    EXPECT_FALSE(o.maybe_applied);
    EXPECT_FALSE(o.response_complete);
    EXPECT_NE(o.status.message().find("not sent"), std::string::npos);
    ExpectNoSecrets(o.status);
  }
}

TEST(OutcomeTest, TransportFailuresAfterSendingAreOutcomeUnknown) {
  using Kind = TransportFailure::Kind;
  for (Kind k : {Kind::kTimeout, Kind::kConnectionLost, Kind::kOther}) {
    TransportFailure f{.kind = k, .maybe_sent = true, .detail = "reset"};
    HttpOutcome o = ClassifyTransportFailure(Put(false), f);
    EXPECT_EQ(o.status.code(), StatusCode::kUnavailable);
    EXPECT_TRUE(o.maybe_applied);
    EXPECT_FALSE(o.retryable);
    EXPECT_NE(o.status.message().find("outcome is unknown"), std::string::npos);
    o = ClassifyTransportFailure(Put(true), f);
    EXPECT_TRUE(o.maybe_applied);
    EXPECT_TRUE(o.retryable);
  }
}

TEST(OutcomeTest, ConfigurationProblemsAreFinal) {
  using Kind = TransportFailure::Kind;
  HttpOutcome o = ClassifyTransportFailure(Put(), TransportFailure{.kind = Kind::kTlsVerification});
  EXPECT_EQ(o.status.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(o.retryable);
  EXPECT_NE(o.status.message().find("CA bundle"), std::string::npos);
  o = ClassifyTransportFailure(Put(), TransportFailure{.kind = Kind::kLocalConfig});
  EXPECT_EQ(o.status.code(), StatusCode::kInvalidArgument);
  o = ClassifyTransportFailure(Put(),
                               TransportFailure{.kind = Kind::kBodyReadFailed,
                                                .reader_status = IOError("read /tmp/part: EIO")});
  EXPECT_EQ(o.status.code(), StatusCode::kIOError);
  EXPECT_FALSE(o.retryable);
  EXPECT_NE(o.status.message().find("/tmp/part"), std::string::npos);
}

TEST(OutcomeTest, DescribeRequestRedactsTheUrl) {
  EXPECT_EQ(DescribeRequest(Put()),
            "PUT https://b.s3.amazonaws.com/t/_delta_log/1.json?X-Amz-Signature=REDACTED");
}

}  // namespace
}  // namespace ferry::http

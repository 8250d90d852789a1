// AWS Signature V4 against the examples AWS publishes: the four S3 examples of "Signature
// Calculations for the Authorization Header: Transferring Payload in a Single Chunk" (bucket
// examplebucket, us-east-1, 2013-05-24) and cases of the general SigV4 test suite (service
// "service", us-east-1, 2015-08-30T12:36:00Z). Canonical requests, strings to sign and
// signatures are AWS's figures.
#include "ferry/storage/s3/sigv4.h"

#include <gtest/gtest.h>

namespace ferry::storage::s3 {
namespace {

const AwsCredentials kS3Example{.access_key_id = "AKIAIOSFODNN7EXAMPLE",
                                .secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
const AwsCredentials kSuite{.access_key_id = "AKIDEXAMPLE",
                            .secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"};

http::HttpRequest S3Request(std::string method, std::string path_and_query) {
  http::HttpRequest r;
  r.method = std::move(method);
  r.url = "https://examplebucket.s3.amazonaws.com" + path_and_query;
  r.headers.Set("x-amz-date", "20130524T000000Z");
  return r;
}

SigV4Signature Sign(const http::HttpRequest& r, const AwsCredentials& creds,
                    const SigV4Params& params) {
  Result<SigV4Signature> sig = ComputeSigV4(r, creds, params);
  EXPECT_TRUE(sig.ok()) << sig.status().ToString();
  return sig.ok() ? *sig : SigV4Signature{};
}

TEST(SigV4S3ExamplesTest, GetObjectWithRange) {
  http::HttpRequest r = S3Request("GET", "/test.txt");
  r.headers.Set("Range", "bytes=0-9");
  r.headers.Set("x-amz-content-sha256", std::string(kEmptySha256));
  SigV4Signature sig = Sign(r, kS3Example, {.region = "us-east-1"});
  EXPECT_EQ(
      sig.canonical_request,
      "GET\n/test.txt\n\n"
      "host:examplebucket.s3.amazonaws.com\n"
      "range:bytes=0-9\n"
      "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
      "x-amz-date:20130524T000000Z\n\n"
      "host;range;x-amz-content-sha256;x-amz-date\n"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sig.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(sig.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(sig.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4S3ExamplesTest, PutObject) {
  http::HttpRequest r = S3Request("PUT", "/test$file.text");
  r.headers.Set("Date", "Fri, 24 May 2013 00:00:00 GMT");
  r.headers.Set("x-amz-storage-class", "REDUCED_REDUNDANCY");
  r.body = "Welcome to Amazon S3.";
  // The payload hash comes from the body.
  SigV4Signature sig = Sign(r, kS3Example, {.region = "us-east-1"});
  EXPECT_EQ(sig.canonical_request,
            "PUT\n/test%24file.text\n\n"
            "date:Fri, 24 May 2013 00:00:00 GMT\n"
            "host:examplebucket.s3.amazonaws.com\n"
            "x-amz-date:20130524T000000Z\n"
            "x-amz-storage-class:REDUCED_REDUNDANCY\n\n"
            "date;host;x-amz-date;x-amz-storage-class\n"
            "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  // AWS's example signs x-amz-content-sha256 too: the header as SignV4 sends it.
  r.headers.Set("x-amz-content-sha256",
                "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  sig = Sign(r, kS3Example, {.region = "us-east-1"});
  EXPECT_EQ(sig.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d");
  EXPECT_EQ(sig.signed_headers, "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
  EXPECT_EQ(sig.signature, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4S3ExamplesTest, GetBucketLifecycle) {
  http::HttpRequest r = S3Request("GET", "/?lifecycle");
  r.headers.Set("x-amz-content-sha256", std::string(kEmptySha256));
  SigV4Signature sig = Sign(r, kS3Example, {.region = "us-east-1"});
  EXPECT_EQ(
      sig.canonical_request,
      "GET\n/\nlifecycle=\n"
      "host:examplebucket.s3.amazonaws.com\n"
      "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
      "x-amz-date:20130524T000000Z\n\n"
      "host;x-amz-content-sha256;x-amz-date\n"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sig.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca");
  EXPECT_EQ(sig.signature, "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(SigV4S3ExamplesTest, ListObjects) {
  // The query is sorted whatever order it was written in.
  http::HttpRequest r = S3Request("GET", "/?prefix=J&max-keys=2");
  r.headers.Set("x-amz-content-sha256", std::string(kEmptySha256));
  SigV4Signature sig = Sign(r, kS3Example, {.region = "us-east-1"});
  EXPECT_EQ(
      sig.canonical_request,
      "GET\n/\nmax-keys=2&prefix=J\n"
      "host:examplebucket.s3.amazonaws.com\n"
      "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
      "x-amz-date:20130524T000000Z\n\n"
      "host;x-amz-content-sha256;x-amz-date\n"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sig.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7");
  EXPECT_EQ(sig.signature, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

// SignV4 end to end: it adds the headers it should and the signature matches AWS's example.
TEST(SigV4S3ExamplesTest, SignV4SetsTheHeaders) {
  http::HttpRequest r;
  r.method = "GET";
  r.url = "https://examplebucket.s3.amazonaws.com/test.txt";
  r.headers.Set("Range", "bytes=0-9");
  r.headers.Set("User-Agent", "ferry");  // not signed
  SigV4Params params{.region = "us-east-1"};
  params.time = std::chrono::system_clock::from_time_t(1369353600);  // 2013-05-24T00:00:00Z
  ASSERT_TRUE(SignV4(&r, kS3Example, params).ok());
  EXPECT_EQ(r.headers.GetOr("x-amz-date"), "20130524T000000Z");
  EXPECT_EQ(r.headers.GetOr("x-amz-content-sha256"), kEmptySha256);
  EXPECT_FALSE(r.headers.Has("x-amz-security-token"));
  EXPECT_EQ(r.headers.GetOr("Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  // Signing again (a retry) replaces, never duplicates.
  ASSERT_TRUE(SignV4(&r, kS3Example, params).ok());
  EXPECT_EQ(r.headers.size(), 5u);
}

http::HttpRequest SuiteRequest(std::string method, std::string path_and_query) {
  http::HttpRequest r;
  r.method = std::move(method);
  r.url = "https://example.amazonaws.com" + path_and_query;
  r.headers.Set("X-Amz-Date", "20150830T123600Z");
  return r;
}

std::string SuiteSignature(const http::HttpRequest& r, const AwsCredentials& creds = kSuite) {
  return Sign(r, creds, {.region = "us-east-1", .service = "service"}).signature;
}

TEST(SigV4TestSuiteTest, VanillaCases) {
  // get-vanilla (and get-vanilla-query: an empty query signs the same).
  EXPECT_EQ(SuiteSignature(SuiteRequest("GET", "/")),
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_EQ(SuiteSignature(SuiteRequest("GET", "/?")),
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  // post-vanilla
  EXPECT_EQ(SuiteSignature(SuiteRequest("POST", "/")),
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
  // get-vanilla-query-order-key-case
  EXPECT_EQ(SuiteSignature(SuiteRequest("GET", "/?Param2=value2&Param1=value1")),
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
  // get-vanilla-empty-query-key
  EXPECT_EQ(SuiteSignature(SuiteRequest("GET", "/?Param1=value1")),
            "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb");
  // get-vanilla-query-unreserved
  EXPECT_EQ(SuiteSignature(
                SuiteRequest("GET",
                             "/?-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz="
                             "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")),
            "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197");
  // get-vanilla-utf8-query: "?ሴ=bar", sent encoded.
  EXPECT_EQ(SuiteSignature(SuiteRequest("GET", "/?%E1%88%B4=bar")),
            "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04");
  // get-utf8: the path "/ሴ"; other services than S3 encode the path as sent once more.
  EXPECT_EQ(SuiteSignature(SuiteRequest("GET", "/\xe1\x88\xb4")),
            "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
}

TEST(SigV4TestSuiteTest, HeaderValuesAreTrimmedAndCollapsed) {
  // get-header-value-trim
  http::HttpRequest r = SuiteRequest("GET", "/");
  r.headers.Set("My-Header1", " value1");
  r.headers.Set("My-Header2", " \"a   b   c\"");
  SigV4Signature sig = Sign(r, kSuite, {.region = "us-east-1", .service = "service"});
  EXPECT_NE(sig.canonical_request.find("my-header1:value1\nmy-header2:\"a b c\"\n"),
            std::string::npos)
      << sig.canonical_request;
  EXPECT_EQ(sig.signature, "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736");
}

TEST(SigV4TestSuiteTest, SessionTokenAndSignedBody) {
  // get-vanilla-with-session-token
  AwsCredentials session = kSuite;
  session.session_token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
  http::HttpRequest r = SuiteRequest("GET", "/");
  r.headers.Set("X-Amz-Security-Token", session.session_token);
  SigV4Signature sig = Sign(r, session, {.region = "us-east-1", .service = "service"});
  EXPECT_EQ(sig.signed_headers, "host;x-amz-date;x-amz-security-token");
  EXPECT_EQ(sig.signature, "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8");
  // SignV4 adds the token header itself (and never for long-term keys).
  http::HttpRequest signed_request = SuiteRequest("GET", "/");
  SigV4Params params{.region = "us-east-1", .service = "service"};
  params.time = std::chrono::system_clock::from_time_t(1440938160);  // 2015-08-30T12:36:00Z
  ASSERT_TRUE(SignV4(&signed_request, session, params).ok());
  EXPECT_EQ(signed_request.headers.GetOr("x-amz-security-token"), session.session_token);
  EXPECT_FALSE(signed_request.headers.Has("x-amz-content-sha256"));  // S3 only
  EXPECT_NE(signed_request.headers.GetOr("Authorization").find("Signature=07ec1639c89043aa"),
            std::string::npos);

  // post-x-www-form-urlencoded, with the body's hash signed in x-amz-content-sha256.
  http::HttpRequest post = SuiteRequest("POST", "/");
  post.headers.Set("Content-Type", "application/x-www-form-urlencoded");
  post.headers.Set("Content-Length", "13");
  post.headers.Set("x-amz-content-sha256",
                   "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
  post.body = "Param1=value1";
  sig = Sign(post, kSuite, {.region = "us-east-1", .service = "service"});
  EXPECT_EQ(sig.signed_headers, "content-length;content-type;host;x-amz-content-sha256;x-amz-date");
  EXPECT_EQ(sig.signature, "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b");
}

TEST(SigV4Test, BuildingBlocks) {
  EXPECT_EQ(AmzDate(std::chrono::system_clock::from_time_t(1440938160)), "20150830T123600Z");
  EXPECT_EQ(*CanonicalQueryString("b=2&a=1&A=0&a=0&list-type=2&prefix=x%2Fy&start-after=a/b"),
            "A=0&a=0&a=1&b=2&list-type=2&prefix=x%2Fy&start-after=a%2Fb");
  EXPECT_EQ(*CanonicalQueryString("uploads"), "uploads=");
  EXPECT_EQ(*CanonicalQueryString("k=a+b%20c"), "k=a%2Bb%20c");
  EXPECT_FALSE(CanonicalQueryString("k=%zz").ok());
  EXPECT_EQ(*CanonicalUri("", true), "/");
  EXPECT_EQ(*CanonicalUri("/t/x%3DA%252FA/a b.parquet", true), "/t/x%3DA%252FA/a%20b.parquet");
  EXPECT_EQ(*CanonicalUri("/a%20b", false), "/a%2520b");
  EXPECT_EQ(http::HexEncode(SigV4SigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830",
                                            "us-east-1", "iam")),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
}

TEST(SigV4Test, RefusesWhatItCannotSign) {
  http::HttpRequest r = S3Request("GET", "/k");
  EXPECT_FALSE(ComputeSigV4(r, AwsCredentials{}, {.region = "us-east-1"}).ok());
  http::BodyReader reader{.size = 10};
  r.method = "PUT";
  r.body_reader = &reader;
  Status s = SignV4(&r, kS3Example, {.region = "us-east-1"});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      SignV4(&r, kS3Example, {.region = "us-east-1", .payload_hash = std::string(kUnsignedPayload)})
          .ok());
  EXPECT_EQ(r.headers.GetOr("x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
  // No secret in the Authorization header or in any error.
  EXPECT_EQ(r.headers.GetOr("Authorization").find(kS3Example.secret_access_key), std::string::npos);
  r.url = "notaurl";
  s = SignV4(&r, kS3Example, {.region = "us-east-1", .payload_hash = "x"});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().find("EXAMPLEKEY"), std::string::npos);
}

}  // namespace
}  // namespace ferry::storage::s3

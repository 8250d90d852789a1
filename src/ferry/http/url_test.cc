#include "ferry/http/url.h"

#include <gtest/gtest.h>

#include "ferry/http/headers.h"

namespace ferry::http {
namespace {

TEST(UriEncodeTest, KeepsTheUnreservedSetOnly) {
  EXPECT_EQ(UriEncode("AZaz09-_.~"), "AZaz09-_.~");
  EXPECT_EQ(UriEncode("a b+c/d"), "a%20b%2Bc%2Fd");
  EXPECT_EQ(UriEncode("$&'()*,;=:@!"), "%24%26%27%28%29%2A%2C%3B%3D%3A%40%21");
  // UTF-8 bytes one by one, upper-case hex.
  EXPECT_EQ(UriEncode("\xe1\x88\xb4"), "%E1%88%B4");
  EXPECT_EQ(UriEncode(std::string_view("\0\xff", 2)), "%00%FF");
}

TEST(UriEncodeTest, PathsKeepTheirSlashes) {
  EXPECT_EQ(UriEncodePath("t/_delta_log/00000000000000000001.json"),
            "t/_delta_log/00000000000000000001.json");
  EXPECT_EQ(UriEncodePath("x=A%2FA/part 1.parquet"), "x%3DA%252FA/part%201.parquet");
  EXPECT_EQ(UriEncodePath("/test$file.text"), "/test%24file.text");
}

TEST(UriDecodeTest, RoundTripsAndRefusesBrokenEscapes) {
  std::string all;
  for (int c = 0; c < 256; ++c) {
    all.push_back(static_cast<char>(c));
  }
  Result<std::string> back = UriDecode(UriEncode(all));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, all);
  EXPECT_EQ(*UriDecode("a+b%2fc"), "a+b/c");
  EXPECT_FALSE(UriDecode("%").ok());
  EXPECT_FALSE(UriDecode("%4").ok());
  EXPECT_FALSE(UriDecode("%zz").ok());
}

TEST(QueryTest, ParsesAndBuilds) {
  Result<std::vector<QueryParam>> q = ParseQuery("list-type=2&prefix=a%2Fb&uploads&&x=");
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->size(), 4u);
  EXPECT_EQ((*q)[0].key, "list-type");
  EXPECT_EQ((*q)[1].value, "a/b");
  EXPECT_EQ((*q)[2].key, "uploads");
  EXPECT_EQ((*q)[2].value, "");
  EXPECT_EQ((*q)[3].key, "x");
  EXPECT_EQ(BuildQuery(*q), "list-type=2&prefix=a%2Fb&uploads=&x=");
  EXPECT_FALSE(ParseQuery("a=%g0").ok());
}

TEST(ParseUrlTest, SplitsHttpAndHttpsUrls) {
  Result<Url> u = ParseUrl("https://Bucket.S3.amazonaws.com/a%20b/c?x=1&y");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "bucket.s3.amazonaws.com");
  EXPECT_EQ(u->port, 0);
  EXPECT_EQ(u->EffectivePort(), 443);
  EXPECT_EQ(u->path, "/a%20b/c");
  EXPECT_EQ(u->query, "x=1&y");
  EXPECT_EQ(u->HostHeader(), "bucket.s3.amazonaws.com");

  u = ParseUrl("http://127.0.0.1:9000");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->path, "/");
  EXPECT_EQ(u->HostHeader(), "127.0.0.1:9000");
  u = ParseUrl("http://localhost:80/x");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->HostHeader(), "localhost");

  u = ParseUrl("http://[fd00:ec2::23]:8080/latest?");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(u->ipv6);
  EXPECT_EQ(u->host, "fd00:ec2::23");
  EXPECT_EQ(u->HostHeader(), "[fd00:ec2::23]:8080");
  EXPECT_EQ(u->query, "");
}

TEST(ParseUrlTest, RefusesWhatWeDoNotSend) {
  for (const char* bad :
       {"s3://bucket/key", "bucket/key", "http://", "http://:80/", "http://h:0/", "http://h:65536/",
        "http://h:8x/", "http://[::1/", "http://h/#frag", "https://user:secret@host/"}) {
    Result<Url> u = ParseUrl(bad);
    EXPECT_FALSE(u.ok()) << bad;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  // The refusal does not repeat the password it found.
  EXPECT_EQ(ParseUrl("https://user:secret@host/").status().message().find("secret"),
            std::string::npos);
}

TEST(RedactUrlTest, KeepsTheShapeAndDropsSecrets) {
  EXPECT_EQ(RedactUrl("https://b.s3.amazonaws.com/k?partNumber=3&uploadId=abc"),
            "https://b.s3.amazonaws.com/k?partNumber=3&uploadId=abc");
  std::string presigned = RedactUrl(
      "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F1"
      "&X-Amz-Security-Token=TOKEN&X-Amz-Signature=deadbeef");
  EXPECT_EQ(presigned.find("AKIA"), std::string::npos);
  EXPECT_EQ(presigned.find("TOKEN"), std::string::npos);
  EXPECT_EQ(presigned.find("deadbeef"), std::string::npos);
  EXPECT_NE(presigned.find("X-Amz-Signature=REDACTED"), std::string::npos);
  std::string sas = RedactUrl(
      "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=rw&sig=c2VjcmV0%3D&comp=block");
  EXPECT_EQ(sas.find("c2VjcmV0"), std::string::npos);
  EXPECT_NE(sas.find("comp=block"), std::string::npos);
  EXPECT_EQ(RedactUrl("http://alice:pw@host:1/p?uploads"), "http://host:1/p?uploads");
  EXPECT_EQ(RedactUrl("http://host/p#x"), "http://host/p");
}

TEST(HttpHeadersTest, LooksUpWithoutRegardToCase) {
  HttpHeaders h;
  h.Add("Content-Type", "text/plain");
  h.Add("x-amz-meta-a", "1");
  h.Add("X-Amz-Meta-A", "2");
  EXPECT_EQ(h.GetOr("content-type"), "text/plain");
  EXPECT_EQ(*h.Get("X-AMZ-META-A"), "1");
  EXPECT_FALSE(h.Get("etag").has_value());
  h.Set("x-amz-meta-A", "3");
  EXPECT_EQ(h.size(), 2u);
  EXPECT_EQ(*h.Get("x-amz-meta-a"), "3");
  EXPECT_EQ(h.fields()[0].first, "Content-Type");  // spelling kept
  h.Remove("CONTENT-TYPE");
  EXPECT_FALSE(h.Has("content-type"));
  EXPECT_TRUE(EqualsIgnoreCase("ETag", "etag"));
  EXPECT_FALSE(EqualsIgnoreCase("ETag", "etags"));
}

}  // namespace
}  // namespace ferry::http

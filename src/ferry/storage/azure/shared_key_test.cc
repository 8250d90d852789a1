// Shared Key signing (shared_key.h) against the canonicalized-resource examples Microsoft's
// "Authorize with Shared Key" publishes, and the string-to-sign layout it prescribes. (That the
// signatures are right end to end is shown by Azurite, which recomputes every one: the store's
// tests against it, tests/integration/azure_store_test.cc.)
#include "ferry/storage/azure/shared_key.h"

#include <gtest/gtest.h>

#include "ferry/http/digest.h"

namespace ferry::storage::azure {
namespace {

TEST(SharedKeyTest, CanonicalizedResourceOfMicrosoftsExamples) {
  // Get Container Metadata.
  EXPECT_EQ(
      *SharedKeyCanonicalizedResource(
          "https://myaccount.blob.core.windows.net/mycontainer?restype=container&comp=metadata",
          "myaccount"),
      "/myaccount/mycontainer\ncomp:metadata\nrestype:container");
  // List Blobs with a parameter given three times: values sorted, joined with ','.
  EXPECT_EQ(*SharedKeyCanonicalizedResource(
                "https://myaccount.blob.core.windows.net/mycontainer?restype=container&comp=list&"
                "include=snapshots&include=metadata&include=uncommittedblobs",
                "myaccount"),
            "/myaccount/mycontainer\ncomp:list\ninclude:metadata,snapshots,uncommittedblobs\n"
            "restype:container");
  // A blob read from the secondary location: the account's own name.
  EXPECT_EQ(
      *SharedKeyCanonicalizedResource(
          "https://myaccount-secondary.blob.core.windows.net/mycontainer/myblob", "myaccount"),
      "/myaccount/mycontainer/myblob");
  // The emulator's path-style URL holds the account, which the resource then names twice.
  EXPECT_EQ(*SharedKeyCanonicalizedResource("http://127.0.0.1:10000/devstoreaccount1/mycontainer",
                                            "devstoreaccount1"),
            "/devstoreaccount1/devstoreaccount1/mycontainer");
}

TEST(SharedKeyTest, CanonicalizedResourceKeepsThePathEncodedAndDecodesQueryValues) {
  EXPECT_EQ(
      *SharedKeyCanonicalizedResource(
          "https://a.blob.core.windows.net/c/x%3D1/a%20b%25?comp=block&blockid=QUJD%3D%3D", "a"),
      "/a/c/x%3D1/a%20b%25\nblockid:QUJD==\ncomp:block");
  EXPECT_EQ(*SharedKeyCanonicalizedResource("https://a.blob.core.windows.net", "a"), "/a/");
  EXPECT_FALSE(SharedKeyCanonicalizedResource("not a url", "a").ok());
}

TEST(SharedKeyTest, StringToSignHasTheTwelveFieldsThenHeadersThenResource) {
  http::HttpRequest r;
  r.method = "PUT";
  r.url = "https://myaccount.blob.core.windows.net/mycontainer/hello.txt";
  r.headers.Set("Content-MD5", "XrY7u+Ae7tCTyyK7j1rNww==");
  r.headers.Set("If-None-Match", "*");
  r.headers.Set("x-ms-version", "2021-08-06");
  r.headers.Set("X-MS-Date", "Fri, 26 Jun 2015 23:39:12 GMT");
  r.headers.Set("x-ms-blob-type", "  BlockBlob ");
  r.headers.Set("User-Agent", "ferry");  // not signed
  EXPECT_EQ(*SharedKeyStringToSign(r, "myaccount", 11),
            "PUT\n"
            "\n"                          // Content-Encoding
            "\n"                          // Content-Language
            "11\n"                        // Content-Length
            "XrY7u+Ae7tCTyyK7j1rNww==\n"  // Content-MD5
            "\n"                          // Content-Type
            "\n"                          // Date
            "\n"                          // If-Modified-Since
            "\n"                          // If-Match
            "*\n"                         // If-None-Match
            "\n"                          // If-Unmodified-Since
            "\n"                          // Range
            "x-ms-blob-type:BlockBlob\n"
            "x-ms-date:Fri, 26 Jun 2015 23:39:12 GMT\n"
            "x-ms-version:2021-08-06\n"
            "/myaccount/mycontainer/hello.txt");
  // Since version 2015-02-21 a zero length is an empty field.
  r.method = "GET";
  std::string get = *SharedKeyStringToSign(r, "myaccount", 0);
  EXPECT_TRUE(get.starts_with("GET\n\n\n\nXrY7u")) << get;
}

TEST(SharedKeyTest, SignSetsTheAuthorizationHeaderFromTheDecodedKey) {
  http::HttpRequest r;
  r.method = "GET";
  r.url = "http://127.0.0.1:10000/devstoreaccount1/c?restype=container&comp=list";
  EXPECT_EQ(SignSharedKey(&r, "devstoreaccount1", "key").code(), StatusCode::kInvalidArgument);
  r.headers.Set("x-ms-date", "Sun, 11 Oct 2009 21:49:13 GMT");
  r.headers.Set("x-ms-version", "2009-09-19");
  ASSERT_TRUE(SignSharedKey(&r, "devstoreaccount1", "key").ok());
  const std::string expected =
      "SharedKey devstoreaccount1:" +
      http::Base64Encode(http::HmacSha256("key", *SharedKeyStringToSign(r, "devstoreaccount1", 0)));
  EXPECT_EQ(r.headers.GetOr("Authorization"), expected);
  EXPECT_EQ(*SharedKeyStringToSign(r, "devstoreaccount1", 0),
            "GET\n\n\n\n\n\n\n\n\n\n\n\n"
            "x-ms-date:Sun, 11 Oct 2009 21:49:13 GMT\nx-ms-version:2009-09-19\n"
            "/devstoreaccount1/devstoreaccount1/c\ncomp:list\nrestype:container");
}

}  // namespace
}  // namespace ferry::storage::azure

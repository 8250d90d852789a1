// S3Store against a stand-in of S3 (testing/http_stand_in.h) for answers radosgw never gives;
// the store's behaviour against a real S3 server is tested in tests/integration/s3_store_test.cc.
#include "ferry/storage/s3/s3_store.h"

#include <gtest/gtest.h>

#include "ferry/storage/s3/credentials.h"
#include "ferry/testing/http_stand_in.h"

namespace ferry::storage::s3 {
namespace {

// AWS S3 encodes the keys of a ListObjectsV2 answer with encoding-type=url as HTML forms do: a
// space as '+', a '+' as %2B (botocore decodes them with unquote_plus). radosgw sends %20 for a
// space, so only this stand-in shows the '+'.
TEST(S3StoreStandInTest, ListedKeysDecodeAPlusAsASpace) {
  testing::HttpStandIn s3;
  std::string query;
  s3.server().Get("/bucket/", [&](const httplib::Request& req, httplib::Response& res) {
    query = req.target;
    res.set_content(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        "<ListBucketResult><Name>bucket</Name><Prefix>t%2F</Prefix><KeyCount>3</KeyCount>"
        "<EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>"
        "<Contents><Key>t/a%2Bb</Key><Size>1</Size>"
        "<LastModified>2026-12-02T05:29:03.584Z</LastModified></Contents>"
        "<Contents><Key>t/p%3Da%252Fb+e/part-0.parquet</Key><Size>2</Size>"
        "<LastModified>2026-12-02T05:29:03.584Z</LastModified></Contents>"
        "<Contents><Key>t/special+p%40%23h</Key><Size>3</Size>"
        "<LastModified>2026-12-02T05:29:03.584Z</LastModified></Contents>"
        "</ListBucketResult>",
        "application/xml");
  });
  ASSERT_TRUE(s3.Start().ok());
  http::HttpClientOptions client_options;
  client_options.allow_http = true;
  auto client = http::HttpClient::Create(client_options);
  ASSERT_TRUE(client.ok());
  auto store = S3Store::Create(
      {.bucket = "bucket", .root = "t", .endpoint = s3.url()}, std::move(*client),
      MakeStaticCredentialProvider({.access_key_id = "AKID", .secret_access_key = "secret"}));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ListOptions recursive;
  recursive.recursive = true;
  auto list = (*store)->List("", recursive);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].key, "a+b");
  EXPECT_EQ((*list)[1].key, "p=a%2Fb e/part-0.parquet");
  EXPECT_EQ((*list)[2].key, "special p@#h");
  EXPECT_EQ((*list)[2].size, 3u);
  EXPECT_NE(query.find("encoding-type=url"), std::string::npos) << query;
}

}  // namespace
}  // namespace ferry::storage::s3

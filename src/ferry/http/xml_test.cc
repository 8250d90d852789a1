#include "ferry/http/xml.h"

#include <gtest/gtest.h>

namespace ferry::http {
namespace {

TEST(HttpXmlTest, ReadsAListObjectsV2Page) {
  const char* doc = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name>
  <Prefix>t/_delta_log/</Prefix>
  <KeyCount>2</KeyCount>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents><Key>t/_delta_log/0.json</Key><Size>512</Size>
    <LastModified>2024-01-02T03:04:05.000Z</LastModified><ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag></Contents>
  <Contents><Key> a &amp; b &lt;c&gt; &#x263A;</Key><Size>0</Size></Contents>
</ListBucketResult>)";
  Result<XmlElement> root = ParseXml(doc);
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(root->name, "ListBucketResult");
  EXPECT_EQ(root->Attribute("xmlns").value_or(""), "http://s3.amazonaws.com/doc/2006-03-01/");
  EXPECT_EQ(root->ChildText("IsTruncated").value_or(""), "true");
  EXPECT_EQ(root->ChildText("NextContinuationToken").value_or(""),
            "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
  std::vector<const XmlElement*> contents = root->Children("Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(contents[0]->ChildText("ETag").value_or(""), "\"9b2cf535f27731c974343645a3985328\"");
  // Entities and character references decoded, spaces kept.
  EXPECT_EQ(contents[1]->ChildText("Key").value_or(""), " a & b <c> \xe2\x98\xba");
  EXPECT_FALSE(root->ChildText("StartAfter").has_value());
  EXPECT_EQ(root->Child("Missing"), nullptr);
}

TEST(HttpXmlTest, FindsByPathAndDropsPrefixes) {
  Result<XmlElement> root = ParseXml(
      "<sts:AssumeRoleWithWebIdentityResponse xmlns:sts='https://sts.amazonaws.com/doc/'>"
      "<sts:AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA1</AccessKeyId>"
      "</Credentials></sts:AssumeRoleWithWebIdentityResult>"
      "</sts:AssumeRoleWithWebIdentityResponse>");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(root->name, "AssumeRoleWithWebIdentityResponse");
  const XmlElement* id = root->Find("AssumeRoleWithWebIdentityResult/Credentials/AccessKeyId");
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->text, "ASIA1");
  EXPECT_EQ(root->Find("AssumeRoleWithWebIdentityResult/Nope/AccessKeyId"), nullptr);
  EXPECT_EQ(root->Find(""), &*root);
}

TEST(HttpXmlTest, RefusesMalformedDocuments) {
  for (const char* bad : {"", "   ", "<a>", "<a></b>", "<a>&bogus;</a>", "<a x='1' x='2'/>", "text",
                          "<a/><b/>", "<a>\x01</a>"}) {
    Result<XmlElement> r = ParseXml(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(r.status().message().find("XML"), std::string::npos);
    }
  }
}

TEST(HttpXmlTest, RefusesDoctypesAndEntityExpansion) {
  const char* laughs = R"(<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<lolz>&lol2;</lolz>)";
  Result<XmlElement> r = ParseXml(laughs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("DOCTYPE"), std::string::npos) << r.status().ToString();
  r = ParseXml("<!DOCTYPE a SYSTEM 'file:///etc/passwd'><a>&x;</a>");
  EXPECT_FALSE(r.ok());
}

TEST(HttpXmlTest, EnforcesItsLimits) {
  std::string deep;
  for (int i = 0; i < 100; ++i) {
    deep += "<a>";
  }
  for (int i = 0; i < 100; ++i) {
    deep += "</a>";
  }
  Result<XmlElement> r = ParseXml(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deeper than 64"), std::string::npos);
  EXPECT_TRUE(ParseXml(deep, XmlLimits{.max_depth = 100}).ok());

  std::string wide = "<r>";
  for (int i = 0; i < 50; ++i) {
    wide += "<e/>";
  }
  wide += "</r>";
  EXPECT_TRUE(ParseXml(wide, XmlLimits{.max_elements = 51}).ok());
  r = ParseXml(wide, XmlLimits{.max_elements = 50});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than 50 elements"), std::string::npos);
  r = ParseXml(wide, XmlLimits{.max_bytes = 10});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("larger than the limit"), std::string::npos);
}

TEST(HttpXmlTest, EscapedTextRoundTrips) {
  std::string text = "a&b<c>d\"e'f\r\n\tg \xe2\x98\xba";
  std::string doc = "<Delete><Object><Key>" + XmlEscape(text) + "</Key></Object></Delete>";
  Result<XmlElement> r = ParseXml(doc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Find("Object/Key")->text, text);
  EXPECT_EQ(XmlEscape("<&>"), "&lt;&amp;&gt;");
}

}  // namespace
}  // namespace ferry::http

// The registry client against a local stand-in: schemas by id (cached, surviving an outage),
// by subject, failover between URLs, basic auth, and each kind of answer mapped to its error.
#include "ferry/registry/schema_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "ferry/http/digest.h"
#include "ferry/testing/http_stand_in.h"

namespace ferry::registry {
namespace {

constexpr const char* kRegistryJson = "application/vnd.schemaregistry.v1+json";

class SchemaRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& s = server_.server();
    s.Get(R"(/schemas/ids/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
      ++hits_;
      if (!Authorized(req, res)) {
        return;
      }
      int id = std::stoi(req.matches[1]);
      if (id == 7) {
        res.set_content(
            R"({"schema": "syntax = \"proto3\"; message M { int64 id = 1; }",
                "schemaType": "PROTOBUF",
                "references": [{"name": "common.proto", "subject": "common", "version": 2}]})",
            kRegistryJson);
      } else if (id == 8) {
        res.set_content(R"({"schema": "{\"type\": \"string\"}"})", kRegistryJson);
      } else if (id == 9) {
        res.status = 500;
        res.set_content(R"({"error_code": 50001, "message": "Error in the backend"})",
                        kRegistryJson);
      } else if (id == 10) {
        res.set_content("not json", "text/plain");
      } else {
        res.status = 404;
        res.set_content(R"({"error_code": 40403, "message": "Schema not found"})", kRegistryJson);
      }
    });
    s.Get(R"(/subjects/([^/]+)/versions/(latest|\d+))", [this](const httplib::Request& req,
                                                               httplib::Response& res) {
      ++hits_;
      last_path_ = req.path;
      if (req.matches[1] == "orders-value") {
        res.set_content(
            R"({"subject": "orders-value", "version": 3, "id": 21,
                      "schema": "{\"type\": \"record\", \"name\": \"o\", \"fields\": []}"})",
            kRegistryJson);
        return;
      }
      res.status = 404;
      res.set_content(R"({"error_code": 40401, "message": "Subject not found."})", kRegistryJson);
    });
    ASSERT_TRUE(server_.Start().ok());
  }

  bool Authorized(const httplib::Request& req, httplib::Response& res) {
    if (expected_auth_.empty() || req.get_header_value("Authorization") == expected_auth_) {
      return true;
    }
    res.status = 401;
    res.set_content(R"({"error_code": 40101, "message": "Unauthorized"})", kRegistryJson);
    return false;
  }

  std::unique_ptr<SchemaRegistryClient> Client(std::vector<std::string> urls, std::string user = "",
                                               std::string pass = "") {
    SchemaRegistryOptions options;
    options.urls = std::move(urls);
    options.username = std::move(user);
    options.password = std::move(pass);
    options.http.connect_timeout = std::chrono::milliseconds(2000);
    auto client = SchemaRegistryClient::Create(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }

  testing::HttpStandIn server_;
  std::atomic<int> hits_{0};
  std::string expected_auth_;
  std::string last_path_;
};

TEST_F(SchemaRegistryTest, SchemaByIdIsFetchedOnceAndSurvivesAnOutage) {
  auto client = Client({server_.url()});
  auto schema = client->SchemaById(7);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ((*schema)->id, 7);
  EXPECT_EQ((*schema)->schema_type, "PROTOBUF");
  EXPECT_EQ((*schema)->schema, "syntax = \"proto3\"; message M { int64 id = 1; }");
  ASSERT_EQ((*schema)->references.size(), 1u);
  EXPECT_EQ((*schema)->references[0].name, "common.proto");
  EXPECT_EQ((*schema)->references[0].subject, "common");
  EXPECT_EQ((*schema)->references[0].version, 2);
  auto avro = client->SchemaById(8);
  ASSERT_TRUE(avro.ok());
  EXPECT_EQ((*avro)->schema_type, "AVRO");  // absent: Avro
  EXPECT_EQ(hits_.load(), 2);
  server_.Stop();
  // Cached: no request, the outage does not matter.
  auto again = client->SchemaById(7);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->get(), schema->get());
  EXPECT_EQ(client->requests(), 2u);
  // Not cached: the registry cannot be reached, which is not bad input.
  auto unreachable = client->SchemaById(11);
  EXPECT_EQ(unreachable.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(unreachable.status().message().find("schema id 11: no registry answered"),
            std::string::npos)
      << unreachable.status().ToString();
}

TEST_F(SchemaRegistryTest, EachAnswerMapsToItsError) {
  auto client = Client({server_.url()});
  auto missing = client->SchemaById(404);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("schema id 404: HTTP 404 (error 40403: Schema not "
                                            "found)"),
            std::string::npos)
      << missing.status().ToString();
  auto broken = client->SchemaById(9);
  EXPECT_EQ(broken.status().code(), StatusCode::kUnavailable) << broken.status().ToString();
  auto garbled = client->SchemaById(10);
  EXPECT_EQ(garbled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(garbled.status().message().find("not a JSON object"), std::string::npos);
  // Errors are not cached: a second ask asks again.
  int before = hits_.load();
  (void)client->SchemaById(404);
  EXPECT_EQ(hits_.load(), before + 1);
}

TEST_F(SchemaRegistryTest, SubjectsLatestAndVersions) {
  auto client = Client({server_.url() + "/"});
  auto latest = client->LatestVersion("orders-value");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->subject, "orders-value");
  EXPECT_EQ(latest->version, 3);
  EXPECT_EQ(latest->id, 21);
  EXPECT_EQ(last_path_, "/subjects/orders-value/versions/latest");
  auto version = client->Version("orders-value", 3);
  ASSERT_TRUE(version.ok());
  int before = hits_.load();
  ASSERT_TRUE(client->Version("orders-value", 3).ok());  // cached
  EXPECT_EQ(hits_.load(), before);
  // A space cannot go raw into a request line: the subject is percent-encoded (the stand-in
  // shows the path decoded).
  auto odd = client->LatestVersion("a b");
  EXPECT_EQ(odd.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(last_path_, "/subjects/a b/versions/latest");
  EXPECT_NE(odd.status().message().find("subject \"a b\": HTTP 404 (error 40401"),
            std::string::npos)
      << odd.status().ToString();
}

TEST_F(SchemaRegistryTest, FailsOverToTheNextUrl) {
  testing::HttpStandIn gone;
  ASSERT_TRUE(gone.Start().ok());
  std::string dead = gone.url();
  gone.Stop();
  auto client = Client({dead, server_.url()});
  auto schema = client->SchemaById(8);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ(client->requests(), 2u);
}

TEST_F(SchemaRegistryTest, BasicAuth) {
  expected_auth_ = "Basic " + http::Base64Encode("key:secret");
  auto anonymous = Client({server_.url()});
  auto refused = anonymous->SchemaById(8);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("HTTP 401 (error 40101: Unauthorized): check the "
                                            "registry's credentials"),
            std::string::npos)
      << refused.status().ToString();
  auto client = Client({server_.url()}, "key", "secret");
  EXPECT_TRUE(client->SchemaById(8).ok());
}

TEST(SchemaRegistryOptionsTest, BadOptionsAreRefused) {
  auto create = [](SchemaRegistryOptions o) { return SchemaRegistryClient::Create(o).status(); };
  EXPECT_NE(create({}).message().find("no URL"), std::string::npos);
  EXPECT_NE(create({.urls = {"registry:8081"}}).message().find("not an http:// or https:// URL"),
            std::string::npos);
  EXPECT_NE(create({.urls = {"http://r"}, .username = "u"}).message().find("needs a password"),
            std::string::npos);
  EXPECT_NE(create({.urls = {"http://r"}, .username = "u", .password = "p", .bearer_token = "t"})
                .message()
                .find("use one"),
            std::string::npos);
}

}  // namespace
}  // namespace ferry::registry

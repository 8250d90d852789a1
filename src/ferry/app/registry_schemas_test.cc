// RegistryWriterSchemas against a local stand-in registry: an id whose schema references a record
// in another subject that references an enum in a third, decoded from real Avro bytes; each
// reference fetched once; cycles, non-Avro schemas, missing and unparsable references refused;
// an unknown id NotFound; an outage Unavailable while the ids seen before are still served.
#include "ferry/app/registry_schemas.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "ferry/columnar/ddl.h"
#include "ferry/testing/http_stand_in.h"
#include "ferry/transform/avro_bytes_for_test.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/protobuf_decoder.h"
#include "ferry/transform/protobuf_test_support.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::app {
namespace {

using nlohmann::json;
using transform::avro_test::Long;
using transform::avro_test::Str;

constexpr const char* kRegistryJson = "application/vnd.schemaregistry.v1+json";

struct Registered {
  std::string schema;
  std::string type;  // empty: schemaType absent (AVRO)
  json references = json::array();
};

json Ref(const std::string& name, const std::string& subject, int version) {
  return {{"name", name}, {"subject", subject}, {"version", version}};
}

constexpr const char* kTier =
    R"({"type": "enum", "name": "Tier", "namespace": "com.acme", "symbols": ["BRONZE", "GOLD"]})";
constexpr const char* kCustomer = R"({"type": "record", "name": "com.acme.Customer", "fields": [
    {"name": "name", "type": "string"}, {"name": "tier", "type": "com.acme.Tier"}]})";
constexpr const char* kOrder = R"({"type": "record", "name": "Order", "namespace": "com.acme",
    "fields": [{"name": "id", "type": "long"}, {"name": "customer", "type": "Customer"}]})";
constexpr const char* kUsesX = R"({"type": "record", "name": "u", "fields": [
    {"name": "x", "type": "com.acme.Customer"}]})";

class RegistryWriterSchemasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // id 1: Order -> customer-value v1 (Customer) -> tier-value v1 (Tier).
    ids_[1] = {kOrder, "AVRO", json::array({Ref("com.acme.Customer", "customer-value", 1)})};
    versions_[{"customer-value", 1}] = {kCustomer, "",
                                        json::array({Ref("com.acme.Tier", "tier-value", 1)})};
    versions_[{"tier-value", 1}] = {kTier, ""};
    // id 2: the same two subjects again, both named directly (a diamond).
    ids_[2] = {kUsesX, "",
               json::array({Ref("com.acme.Tier", "tier-value", 1),
                            Ref("com.acme.Customer", "customer-value", 1)})};
    // id 3: a -> b -> a.
    ids_[3] = {kUsesX, "", json::array({Ref("A", "cycle-a", 1)})};
    versions_[{"cycle-a", 1}] = {kTier, "", json::array({Ref("B", "cycle-b", 1)})};
    versions_[{"cycle-b", 1}] = {kTier, "", json::array({Ref("A", "cycle-a", 1)})};
    // id 4: Protobuf; id 5: Avro referencing a JSON Schema.
    ids_[4] = {"syntax = \"proto3\"; message M { int64 id = 1; }", "PROTOBUF"};
    ids_[5] = {kUsesX, "", json::array({Ref("J", "json-value", 1)})};
    versions_[{"json-value", 1}] = {R"({"type": "object"})", "JSON"};
    // id 6: a reference the registry does not have; id 7: one that does not parse.
    ids_[6] = {kUsesX, "", json::array({Ref("M", "missing-value", 1)})};
    ids_[7] = {kUsesX, "",
               json::array({Ref("com.acme.Tier", "tier-value", 1), Ref("X", "broken-value", 3)})};
    versions_[{"broken-value", 3}] = {R"({"type": "record", "name": "X"})", ""};
    // id 8: Protobuf importing a file of another subject, itself importing a well-known type
    // the registry does not hold; id 9: Protobuf referencing an Avro schema.
    ids_[8] = {
        "syntax = \"proto3\"; package shop; import \"common/money.proto\";\n"
        "message Order { int64 id = 1; common.Money total = 2; }",
        "PROTOBUF", json::array({Ref("common/money.proto", "money-value", 1)})};
    versions_[{"money-value", 1}] = {
        "syntax = \"proto3\"; package common; import \"google/protobuf/timestamp.proto\";\n"
        "message Money { string currency = 1; int64 units = 2; google.protobuf.Timestamp at = "
        "3; }",
        "PROTOBUF"};
    ids_[9] = {"syntax = \"proto3\"; import \"t.proto\"; message M { int64 id = 1; }", "PROTOBUF",
               json::array({Ref("t.proto", "tier-value", 1)})};

    auto& s = server_.server();
    s.Get(R"(/schemas/ids/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
      int id = std::stoi(req.matches[1]);
      Count("ids/" + std::to_string(id));
      auto it = ids_.find(id);
      if (it == ids_.end()) {
        res.status = 404;
        res.set_content(R"({"error_code": 40403, "message": "Schema not found"})", kRegistryJson);
        return;
      }
      res.set_content(Body(it->second).dump(), kRegistryJson);
    });
    // httplib matches the decoded path: subjects here hold no character that needs encoding.
    s.Get(R"(/subjects/([^/]+)/versions/(\d+))", [this](const httplib::Request& req,
                                                        httplib::Response& res) {
      std::string subject = req.matches[1];
      int version = std::stoi(req.matches[2]);
      Count(subject + "/" + std::to_string(version));
      auto it = versions_.find({subject, version});
      if (it == versions_.end()) {
        res.status = 404;
        res.set_content(R"({"error_code": 40401, "message": "Subject not found."})", kRegistryJson);
        return;
      }
      json body = Body(it->second);
      body["subject"] = subject;
      body["version"] = version;
      res.set_content(body.dump(), kRegistryJson);
    });
    ASSERT_TRUE(server_.Start().ok());
    registry::SchemaRegistryOptions options;
    options.urls = {server_.url()};
    options.http.connect_timeout = std::chrono::milliseconds(2000);
    auto client = registry::SchemaRegistryClient::Create(options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
    schemas_ = std::make_shared<RegistryWriterSchemas>(client_);
  }

  static json Body(const Registered& r) {
    json body = {{"schema", r.schema}, {"references", r.references}};
    if (!r.type.empty()) {
      body["schemaType"] = r.type;
    }
    return body;
  }

  void Count(const std::string& what) {
    std::lock_guard lock(mu_);
    ++hits_[what];
  }
  std::map<std::string, int> Hits() {
    std::lock_guard lock(mu_);
    return hits_;
  }

  Status GetError(int32_t id) {
    auto got = schemas_->Get(id);
    return got.ok() ? Status::OK() : got.status();
  }

  std::map<int, Registered> ids_;
  std::map<std::pair<std::string, int>, Registered> versions_;
  testing::HttpStandIn server_;
  std::mutex mu_;
  std::map<std::string, int> hits_;  // "ids/1", "customer-value/1": requests served
  std::shared_ptr<registry::SchemaRegistryClient> client_;
  std::shared_ptr<RegistryWriterSchemas> schemas_;
};

columnar::SchemaPtr Table(const std::string& ddl) {
  auto parsed = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return std::make_shared<const columnar::Schema>(*parsed);
}

TEST_F(RegistryWriterSchemasTest, DecodesAvroThroughReferencesOfReferences) {
  auto table = Table("id BIGINT, customer STRUCT<name: STRING, tier: STRING>");
  auto decoder = transform::AvroDecoder::Create(table, {.schemas = schemas_});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  // Order{id: 7, customer: Customer{name: "Ada", tier: GOLD (symbol 1)}}.
  Status st = (*decoder)->Append(
      transform::MakeConfluentFrame(1, {}, Long(7) + Str("Ada") + Long(1), false), &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  st = (*decoder)->Append(
      transform::MakeConfluentFrame(1, {}, Long(-3) + Str("Bo") + Long(0), false), &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(batch.num_rows(), 2);
  EXPECT_EQ(transform::RowText(batch, 0), R"({id: 7, customer: {name: "Ada", tier: "GOLD"}})");
  EXPECT_EQ(transform::RowText(batch, 1), R"({id: -3, customer: {name: "Bo", tier: "BRONZE"}})");
  EXPECT_EQ(Hits(), (std::map<std::string, int>{
                        {"ids/1", 1}, {"customer-value/1", 1}, {"tier-value/1", 1}}));
}

TEST_F(RegistryWriterSchemasTest, EachReferenceIsFetchedOnce) {
  auto first = schemas_->Get(1);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // id 2 names tier-value directly and through customer-value: parsed once, not "defined twice".
  auto second = schemas_->Get(2);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_NE((*second)->Find("com.acme.Customer"), nullptr);
  auto again = schemas_->Get(1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), first->get());  // the parsed schema is kept
  EXPECT_EQ(Hits(), (std::map<std::string, int>{
                        {"ids/1", 1}, {"ids/2", 1}, {"customer-value/1", 1}, {"tier-value/1", 1}}));
}

TEST_F(RegistryWriterSchemasTest, ACycleIsRefusedNamingTheSubjects) {
  Status st = GetError(3);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("schema id 3: the schema references form a cycle: \"cycle-a\" "
                              "version 1 -> \"cycle-b\" version 1 -> \"cycle-a\" version 1"),
            std::string::npos)
      << st.ToString();
  EXPECT_EQ(Hits()["cycle-a/1"], 1);
  EXPECT_EQ(Hits()["cycle-b/1"], 1);
}

TEST_F(RegistryWriterSchemasTest, NonAvroSchemasAreRefused) {
  Status st = GetError(4);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("schema id 4: a PROTOBUF schema, not Avro"), std::string::npos)
      << st.ToString();
  st = GetError(5);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      st.message().find("schema id 5: reference \"json-value\" version 1: a JSON schema, not Avro"),
      std::string::npos)
      << st.ToString();
}

TEST_F(RegistryWriterSchemasTest, UnknownIdsMissingAndBadReferences) {
  Status st = GetError(404);
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("schema id 404: HTTP 404"), std::string::npos) << st.ToString();
  // The id exists; its reference does not: not NotFound (the id is known), but unreadable.
  st = GetError(6);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("schema id 6: reference \"missing-value\" version 1: "),
            std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("HTTP 404 (error 40401"), std::string::npos) << st.ToString();
  st = GetError(7);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("schema id 7 (references 1: \"tier-value\" version 1, 2: "
                              "\"broken-value\" version 3): Avro schema: reference 2: the top "
                              "level: record \"X\" has no \"fields\" array"),
            std::string::npos)
      << st.ToString();
  // Failures are not kept: asked again, the registry is asked again.
  (void)GetError(404);
  EXPECT_EQ(Hits()["ids/404"], 2);
}

TEST_F(RegistryWriterSchemasTest, AnOutageIsUnavailableButCachedIdsAreServed) {
  auto before = schemas_->Get(1);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  server_.Stop();
  auto cached = schemas_->Get(1);
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  EXPECT_EQ(cached->get(), before->get());
  Status st = GetError(2);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("schema id 2"), std::string::npos) << st.ToString();
  // A decoder made after the outage began still decodes the id seen before.
  auto table = Table("id BIGINT, customer STRUCT<name: STRING, tier: STRING>");
  auto decoder = transform::AvroDecoder::Create(table, {.schemas = schemas_});
  ASSERT_TRUE(decoder.ok());
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  st = (*decoder)->Append(
      transform::MakeConfluentFrame(1, {}, Long(1) + Str("Cy") + Long(1), false), &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(transform::RowText(batch, 0), R"({id: 1, customer: {name: "Cy", tier: "GOLD"}})");
}

TEST_F(RegistryWriterSchemasTest, ProtobufSchemasWithTheirImports) {
  auto schemas = std::make_shared<RegistryProtoSchemas>(client_);
  auto table = Table("id BIGINT, total STRUCT<currency: STRING, units: BIGINT, at: TIMESTAMP>");
  auto decoder = transform::ProtobufDecoder::Create(table, {.schemas = schemas});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  using transform::protobuf_test::LenField;
  using transform::protobuf_test::VarintField;
  std::string order = VarintField(1, 7) + LenField(2, LenField(1, "EUR") + VarintField(2, 12) +
                                                          LenField(3, VarintField(1, 86400)));
  Status st = (*decoder)->Append(transform::MakeConfluentFrame(8, {0}, order, true), &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(transform::RowText(batch, 0),
            R"({id: 7, total: {currency: "EUR", units: 12, at: 1970-01-02T00:00:00}})");
  auto again = schemas->Get(8);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->FirstMessageName(), "shop.Order");
  EXPECT_EQ(Hits()["ids/8"], 1);
  EXPECT_EQ(Hits()["money-value/1"], 1);

  auto avro = schemas->Get(1);
  ASSERT_FALSE(avro.ok());
  EXPECT_NE(avro.status().message().find("schema id 1: a AVRO schema, not Protobuf"),
            std::string::npos)
      << avro.status().ToString();
  auto mixed = schemas->Get(9);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("\"tier-value\" version 1: a AVRO schema, not Protobuf"),
            std::string::npos)
      << mixed.status().ToString();
  EXPECT_EQ(schemas->Get(404).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ferry::app

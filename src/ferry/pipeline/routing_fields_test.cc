// Routing by a decoded field of Avro and Protobuf messages (routing_fields.h): {field:...}
// templates and `where` routes over a narrow routing schema, a message whose field is missing
// (the fallback table) or that does not decode (a bad record the fallback or first route
// carries), a registry outage (Unavailable, nothing chosen; the same choices once it answers).
#include "ferry/pipeline/routing_fields.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/columnar/ddl.h"
#include "ferry/pipeline/route_selector.h"
#include "ferry/transform/avro_bytes_for_test.h"
#include "ferry/transform/avro_decoder.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/protobuf_decoder.h"
#include "ferry/transform/protobuf_test_support.h"

namespace ferry::pipeline {
namespace {

using transform::avro_test::Long;
using transform::avro_test::Str;

std::shared_ptr<const transform::avro::Schema> AvroSchema(const std::string& json) {
  auto schema = transform::avro::Schema::Parse(json);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return std::make_shared<const transform::avro::Schema>(std::move(*schema));
}

class RoutingAvroSchemas : public transform::WriterSchemas {
 public:
  Result<std::shared_ptr<const transform::avro::Schema>> Get(int32_t id) override {
    ++asked;
    if (down) {
      return Unavailable("registry at http://r:8081 unreachable");
    }
    auto it = schemas.find(id);
    if (it == schemas.end()) {
      return NotFound("HTTP 404 (error 40403: Schema not found)");
    }
    return it->second;
  }
  std::map<int32_t, std::shared_ptr<const transform::avro::Schema>> schemas;
  bool down = false;
  int asked = 0;
};

columnar::SchemaPtr RoutingDdl(const std::string& ddl) {
  auto parsed = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return std::make_shared<const columnar::Schema>(*parsed);
}

// Writer schema 1: {id, kind (enum), meta {region}, n}; 2: {id, note?} (no kind, no meta).
constexpr const char* kOrderV1 = R"({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["NEW", "PAID", "SHIPPED"]}},
    {"name": "meta", "type": {"type": "record", "name": "Meta",
                              "fields": [{"name": "region", "type": "string"}]}},
    {"name": "n", "type": "int"}]})";
constexpr const char* kOrderV2 = R"({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"]}]})";

std::string OrderV1(int64_t id, int kind, const std::string& region, int n) {
  return transform::MakeConfluentFrame(1, {}, Long(id) + Long(kind) + Str(region) + Long(n), false);
}

std::vector<source::Message> RoutingMessages(const std::vector<std::string>& payloads) {
  std::vector<source::Message> out;
  for (size_t i = 0; i < payloads.size(); ++i) {
    out.push_back({.partition = 0, .position = static_cast<int64_t>(i), .payload = payloads[i]});
  }
  return out;
}

std::unique_ptr<RoutingFields> AvroFields(columnar::SchemaPtr schema,
                                          std::shared_ptr<RoutingAvroSchemas> schemas) {
  auto decoder = transform::AvroDecoder::Create(schema, {.schemas = std::move(schemas)});
  EXPECT_TRUE(decoder.ok()) << decoder.status().ToString();
  return std::make_unique<RoutingFields>(std::move(schema), std::move(*decoder));
}

TEST(RoutingFieldsTest, StringSchemaNestsDottedPaths) {
  EXPECT_EQ(RoutingFields::StringSchema({"kind", "meta.region", "meta.zone", "a.b.c"})->ToString(),
            "kind STRING, meta STRUCT<region: STRING, zone: STRING>, "
            "a STRUCT<b: STRUCT<c: STRING>>");
}

TEST(RoutingFieldsTest, AvroTemplateRoutesByADecodedField) {
  auto schemas = std::make_shared<RoutingAvroSchemas>();
  schemas->schemas = {{1, AvroSchema(kOrderV1)}, {2, AvroSchema(kOrderV2)}};
  auto templ = TableTemplate::Parse("t_{field:kind}_{field:meta.region}", {});
  ASSERT_TRUE(templ.ok()) << templ.status().ToString();
  const std::vector<std::string> paths = templ->fields();
  TemplateSelector selector(std::move(*templ), "t_unknown",
                            AvroFields(RoutingFields::StringSchema(paths), schemas));
  std::vector<std::string> payloads = {
      OrderV1(1, 0, "EU", 5),
      OrderV1(2, 1, "us", 6),
      OrderV1(3, 2, "eu", 7),
      // Schema 2 has no kind: the fallback table, not a bad record.
      transform::MakeConfluentFrame(2, {}, Long(4) + Long(0), false),
      // A frame without the magic byte, and an id the registry does not know: bad records the
      // fallback carries, saying why.
      std::string("\x07not avro"),
      transform::MakeConfluentFrame(99, {}, Long(6), false),
  };
  std::vector<RouteChoice> choices;
  ASSERT_TRUE(selector.Select(RoutingMessages(payloads), &choices).ok());
  ASSERT_EQ(choices.size(), payloads.size());
  EXPECT_EQ(choices[0].table, "t_new_eu");
  EXPECT_EQ(choices[1].table, "t_paid_us");
  EXPECT_EQ(choices[2].table, "t_shipped_eu");
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(choices[i].bad_reason, "") << i;
  }
  EXPECT_EQ(choices[3].table, "t_unknown");
  EXPECT_EQ(choices[3].bad_reason, "");
  EXPECT_EQ(choices[4].table, "t_unknown");
  EXPECT_NE(choices[4].bad_reason.find("do not decode"), std::string::npos)
      << choices[4].bad_reason;
  EXPECT_EQ(choices[5].table, "t_unknown");
  EXPECT_NE(choices[5].bad_reason.find("99"), std::string::npos) << choices[5].bad_reason;

  // Deterministic: the same messages, the same choices (a new selector, as after a restart).
  auto again = TableTemplate::Parse("t_{field:kind}_{field:meta.region}", {});
  TemplateSelector restarted(std::move(*again), "t_unknown",
                             AvroFields(RoutingFields::StringSchema(paths), schemas));
  std::vector<RouteChoice> second;
  ASSERT_TRUE(restarted.Select(RoutingMessages(payloads), &second).ok());
  for (size_t i = 0; i < payloads.size(); ++i) {
    EXPECT_EQ(second[i].table, choices[i].table) << i;
    EXPECT_EQ(second[i].bad_reason, choices[i].bad_reason) << i;
  }
}

TEST(RoutingFieldsTest, ANumberNeedsItsTypeInTheRoutingSchema) {
  auto schemas = std::make_shared<RoutingAvroSchemas>();
  schemas->schemas = {{1, AvroSchema(kOrderV1)}};
  std::vector<std::string> payloads = {OrderV1(1, 0, "eu", 42)};
  {
    // As a STRING (no routing.schema): an int cannot be read into it: a bad record that says
    // what to do.
    auto templ = TableTemplate::Parse("t_{field:n}", {});
    TemplateSelector selector(std::move(*templ), "t_unknown",
                              AvroFields(RoutingFields::StringSchema({"n"}), schemas));
    std::vector<RouteChoice> choices;
    ASSERT_TRUE(selector.Select(RoutingMessages(payloads), &choices).ok());
    EXPECT_EQ(choices[0].table, "t_unknown");
    EXPECT_NE(choices[0].bad_reason.find("[pipeline.routing] schema"), std::string::npos)
        << choices[0].bad_reason;
  }
  auto templ = TableTemplate::Parse("t_{field:n}", {});
  TemplateSelector selector(std::move(*templ), "t_unknown",
                            AvroFields(RoutingDdl("n INT"), schemas));
  std::vector<RouteChoice> choices;
  ASSERT_TRUE(selector.Select(RoutingMessages(payloads), &choices).ok());
  EXPECT_EQ(choices[0].table, "t_42");
  EXPECT_EQ(choices[0].bad_reason, "");
}

TEST(RoutingFieldsTest, ARegistryOutageChoosesNothingThenTheSame) {
  auto schemas = std::make_shared<RoutingAvroSchemas>();
  schemas->schemas = {{1, AvroSchema(kOrderV1)}};
  schemas->down = true;
  auto templ = TableTemplate::Parse("t_{field:kind}", {});
  TemplateSelector selector(std::move(*templ), "t_unknown",
                            AvroFields(RoutingFields::StringSchema({"kind"}), schemas));
  std::vector<std::string> payloads = {OrderV1(1, 1, "eu", 0), OrderV1(2, 2, "eu", 0)};
  std::vector<RouteChoice> choices;
  Status st = selector.Select(RoutingMessages(payloads), &choices);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  schemas->down = false;
  ASSERT_TRUE(selector.Select(RoutingMessages(payloads), &choices).ok());
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(choices[0].table, "t_paid");
  EXPECT_EQ(choices[1].table, "t_shipped");
}

TEST(RoutingFieldsTest, AvroWhereRoutes) {
  auto schemas = std::make_shared<RoutingAvroSchemas>();
  schemas->schemas = {{1, AvroSchema(kOrderV1)}, {2, AvroSchema(kOrderV2)}};
  columnar::SchemaPtr schema = RoutingDdl("kind STRING, n INT");
  auto selector = PredicateSelector::Create(
      schema,
      {{.name = "big", .where = "n >= 100", .table = "t_big", .origin = "test: route[0]"},
       {.name = "paid", .where = "kind = 'PAID'", .table = "t_paid", .origin = "test: route[1]"},
       {.name = "default", .table = "t_rest"}},
      /*unmatched_default=*/true, "UTC", AvroFields(schema, schemas));
  ASSERT_TRUE(selector.ok()) << selector.status().ToString();
  std::vector<std::string> payloads = {
      OrderV1(1, 1, "eu", 100), OrderV1(2, 1, "eu", 5), OrderV1(3, 0, "eu", 5),
      // No kind and no n: no predicate holds; the default route.
      transform::MakeConfluentFrame(2, {}, Long(4) + Long(0), false)};
  std::vector<RouteChoice> choices;
  ASSERT_TRUE((*selector)->Select(RoutingMessages(payloads), &choices).ok());
  ASSERT_EQ(choices.size(), 4u);
  EXPECT_EQ(choices[0].table, "t_big");
  EXPECT_EQ(choices[1].table, "t_paid");
  EXPECT_EQ(choices[2].table, "t_rest");
  EXPECT_EQ(choices[3].table, "t_rest");

  // Without a default route, a message that does not decode is a bad record saying why.
  auto strict = PredicateSelector::Create(
      schema, {{.name = "paid", .where = "kind = 'PAID'", .table = "t_paid", .origin = "test"}},
      /*unmatched_default=*/false, "UTC", AvroFields(schema, schemas));
  ASSERT_TRUE(strict.ok());
  payloads = {std::string("\x07not avro")};
  ASSERT_TRUE((*strict)->Select(RoutingMessages(payloads), &choices).ok());
  EXPECT_EQ(choices[0].table, "t_paid");
  EXPECT_NE(choices[0].bad_reason.find("the routing fields do not decode"), std::string::npos)
      << choices[0].bad_reason;
}

constexpr const char* kRoutingProto = R"(syntax = "proto3"; package shop;
enum Kind { NEW = 0; PAID = 1; SHIPPED = 2; }
message Meta { string region = 1; }
message Order { int64 id = 1; Kind kind = 2; Meta meta = 3; int32 n = 4; string note = 5; })";

TEST(RoutingFieldsTest, ProtobufTemplateAndWhereRoutes) {
  auto file = transform::protobuf_test::ParseProto(kRoutingProto);
  ASSERT_NE(file, nullptr);
  auto message = file->Message("shop.Order");
  ASSERT_TRUE(message.ok()) << message.status().ToString();
  auto serialize = [&](const std::string& text) {
    return transform::protobuf_test::Serialize(*file, "shop.Order", text);
  };
  std::vector<std::string> payloads = {
      serialize(R"(id: 1 kind: PAID meta { region: "eu" } n: 3 note: "x")"),
      serialize(R"(id: 2 kind: SHIPPED meta { region: "us" } n: 300)"),
      serialize(R"(id: 3 n: 4)"),   // kind NEW (proto3's default), no meta
      std::string("\xff\xff\xff"),  // not a message
  };
  auto fields_of = [&](columnar::SchemaPtr schema) {
    auto decoder = transform::ProtobufDecoder::Create(schema, {.message = *message});
    EXPECT_TRUE(decoder.ok()) << decoder.status().ToString();
    return std::make_unique<RoutingFields>(std::move(schema), std::move(*decoder));
  };

  auto templ = TableTemplate::Parse("t_{field:kind}_{field:meta.region}", {});
  const std::vector<std::string> paths = templ->fields();
  TemplateSelector selector(std::move(*templ), "t_unknown",
                            fields_of(RoutingFields::StringSchema(paths)));
  std::vector<RouteChoice> choices;
  ASSERT_TRUE(selector.Select(RoutingMessages(payloads), &choices).ok());
  ASSERT_EQ(choices.size(), 4u);
  EXPECT_EQ(choices[0].table, "t_paid_eu");
  EXPECT_EQ(choices[1].table, "t_shipped_us");
  EXPECT_EQ(choices[2].table, "t_unknown");  // no meta: its region is missing
  EXPECT_EQ(choices[2].bad_reason, "");
  EXPECT_EQ(choices[3].table, "t_unknown");
  EXPECT_NE(choices[3].bad_reason, "");

  columnar::SchemaPtr schema = RoutingDdl("kind STRING, n INT");
  auto where = PredicateSelector::Create(
      schema,
      {{.name = "big", .where = "n >= 100", .table = "t_big", .origin = "test: route[0]"},
       {.name = "paid", .where = "kind = 'PAID'", .table = "t_paid", .origin = "test: route[1]"}},
      /*unmatched_default=*/false, "UTC", fields_of(schema));
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  ASSERT_TRUE((*where)->Select(RoutingMessages(payloads), &choices).ok());
  EXPECT_EQ(choices[0].table, "t_paid");
  EXPECT_EQ(choices[0].bad_reason, "");
  EXPECT_EQ(choices[1].table, "t_big");
  EXPECT_EQ(choices[2].table, "t_big");  // the first route carries the bad record
  EXPECT_EQ(choices[2].bad_reason, "no route matches");
  EXPECT_NE(choices[3].bad_reason.find("the routing fields do not decode"), std::string::npos)
      << choices[3].bad_reason;
}

}  // namespace
}  // namespace ferry::pipeline

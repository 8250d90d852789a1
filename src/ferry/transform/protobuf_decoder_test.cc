// The Protobuf decoder: unframed messages of a fixed type, framed ones with schemas by id and
// message indexes (each reader built once), a registry outage that is not a bad record, and an
// unknown id, a bad frame or an unreadable schema that is; new writer fields observed.
#include "ferry/transform/protobuf_decoder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ferry/columnar/ddl.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/protobuf_test_support.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::transform {
namespace {

using protobuf_test::LenField;
using protobuf_test::VarintField;

class MapSchemas : public ProtoSchemas {
 public:
  Result<std::shared_ptr<const protobuf::ProtoSchema>> Get(int32_t id) override {
    ++asked[id];
    if (down) {
      return Unavailable("registry at http://r:8081 unreachable");
    }
    auto it = schemas.find(id);
    if (it == schemas.end()) {
      return NotFound("HTTP 404 (error 40403: Schema not found)");
    }
    return it->second;
  }
  std::map<int32_t, std::shared_ptr<const protobuf::ProtoSchema>> schemas;
  std::map<int32_t, int> asked;
  bool down = false;
};

columnar::SchemaPtr TableSchema(const std::string& ddl) {
  auto parsed = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return std::make_shared<const columnar::Schema>(*parsed);
}

constexpr const char* kV1 = R"(syntax = "proto3"; package shop;
message Order { int64 id = 1; string item = 2; })";
// v2 adds a field; its second message is what index [1] names.
constexpr const char* kV2 = R"(syntax = "proto3"; package shop;
message Order { int64 id = 1; string item = 2; int32 qty = 3; }
message Refund { int64 order = 1; message Line { string why = 1; } })";

TEST(ProtobufDecoderTest, UnframedMessagesOfAFixedType) {
  auto table = TableSchema("id BIGINT, item STRING, _offset BIGINT");
  auto file = protobuf_test::ParseProto(kV1);
  ASSERT_NE(file, nullptr);
  ProtobufDecoderOptions options{.message = *file->Message("shop.Order"),
                                 .columns = {"id", "item"}};
  auto decoder = ProtobufDecoder::Create(table, options);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  EXPECT_EQ((*decoder)->output_columns(), (std::vector<int>{0, 1}));
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  ASSERT_TRUE((*decoder)->Append(VarintField(1, 7) + LenField(2, "pen"), &batch).ok());
  batch.mutable_column(2)->AppendNull();
  EXPECT_EQ(RowText(batch, 0), R"({id: 7, item: "pen", _offset: null})");
}

TEST(ProtobufDecoderTest, FramedMessagesFindTheirSchemaAndMessageOnce) {
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas[1] = protobuf_test::ParseProto(kV1);
  schemas->schemas[2] = protobuf_test::ParseProto(kV2);
  auto table = TableSchema("id BIGINT, item STRING, order BIGINT, why STRING");
  auto decoder = ProtobufDecoder::Create(table, {.schemas = schemas});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  std::string order = VarintField(1, 1) + LenField(2, "a");
  ASSERT_TRUE((*decoder)->Append(MakeConfluentFrame(1, {0}, order, true), &batch).ok());
  ASSERT_TRUE((*decoder)->Append(MakeConfluentFrame(1, {0}, order, true), &batch).ok());
  ASSERT_TRUE(
      (*decoder)->Append(MakeConfluentFrame(2, {0}, order + VarintField(3, 2), true), &batch).ok());
  ASSERT_TRUE((*decoder)->Append(MakeConfluentFrame(2, {1}, VarintField(1, 9), true), &batch).ok());
  ASSERT_TRUE(
      (*decoder)->Append(MakeConfluentFrame(2, {1, 0}, LenField(1, "late"), true), &batch).ok());
  EXPECT_EQ(RowText(batch, 2), R"({id: 1, item: "a", order: null, why: null})");
  EXPECT_EQ(RowText(batch, 3), R"({id: null, item: null, order: 9, why: null})");
  EXPECT_EQ(RowText(batch, 4), R"({id: null, item: null, order: null, why: "late"})");
  EXPECT_EQ(schemas->asked[1], 1);
  EXPECT_EQ((*decoder)->writer_types_seen(), 4U);
}

TEST(ProtobufDecoderTest, AnOutageIsNotABadRecordAndAnUnknownIdIs) {
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas[1] = protobuf_test::ParseProto(kV1);
  auto table = TableSchema("id BIGINT, item STRING");
  auto decoder = ProtobufDecoder::Create(table, {.schemas = schemas});
  ASSERT_TRUE(decoder.ok());
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  std::string message = MakeConfluentFrame(1, {0}, VarintField(1, 1), true);
  schemas->down = true;
  Status st = (*decoder)->Append(message, &batch);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_EQ(batch.column(0).length(), 0);
  schemas->down = false;
  EXPECT_TRUE((*decoder)->Append(message, &batch).ok());
  st = (*decoder)->Append(MakeConfluentFrame(5, {0}, "", true), &batch);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("unknown to the schema registry"), std::string::npos)
      << st.ToString();
  st = (*decoder)->Append(MakeConfluentFrame(5, {0}, "", true), &batch);
  EXPECT_EQ(schemas->asked[5], 1);  // the answer is kept
  st = (*decoder)->Append(std::string("\x01\x00\x00\x00\x01\x00", 6), &batch);
  EXPECT_NE(st.message().find("schema registry framing"), std::string::npos) << st.ToString();
  st = (*decoder)->Append(MakeConfluentFrame(1, {3}, "", true), &batch);
  EXPECT_NE(st.message().find("no message at index 3"), std::string::npos) << st.ToString();
  st = (*decoder)->Append(MakeConfluentFrame(1, {0}, VarintField(1, 1) + "\x80", true), &batch);
  EXPECT_NE(st.message().find("schema id 1: Protobuf message"), std::string::npos) << st.ToString();
  EXPECT_EQ(batch.column(0).length(), 1);
}

TEST(ProtobufDecoderTest, AWriterTypeTheTableCannotHoldIsABadRecordOfEveryMessage) {
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas[1] = protobuf_test::ParseProto(kV1);
  auto decoder = ProtobufDecoder::Create(TableSchema("id BIGINT, item INT"), {.schemas = schemas});
  ASSERT_TRUE(decoder.ok());
  auto batch = columnar::RecordBatch::MakeEmpty(TableSchema("id BIGINT, item INT"));
  for (int i = 0; i < 2; ++i) {
    Status st = (*decoder)->Append(MakeConfluentFrame(1, {0}, "", true), &batch);
    EXPECT_NE(st.message().find("cannot be read into"), std::string::npos) << st.ToString();
  }
  EXPECT_EQ(schemas->asked[1], 1);
}

TEST(ProtobufDecoderTest, NewWriterFieldsAreObserved) {
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas[2] = protobuf_test::ParseProto(kV2);
  auto table = TableSchema("id BIGINT, item STRING");
  auto decoder = ProtobufDecoder::Create(table, {.schemas = schemas, .observe = true});
  ASSERT_TRUE(decoder.ok());
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  ASSERT_TRUE((*decoder)->Append(MakeConfluentFrame(2, {0}, VarintField(3, 4), true), &batch).ok());
  ASSERT_TRUE((*decoder)->has_observations());
  auto seen = (*decoder)->TakeObservations();
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0].path, (std::vector<std::string>{"qty"}));
  EXPECT_EQ(seen[0].type->ToString(), "INT");
  EXPECT_TRUE(seen[0].missing);
}

// v3 adds fields inside nested messages: a message field, a repeated message's elements, a
// map's message values; and one at the top level.
constexpr const char* kProtoNestedV3 = R"(syntax = "proto3"; package shop;
message Order { int64 id = 1; Loc loc = 2; repeated Item items = 3; map<string, Item> by_sku = 4;
                string extra = 5; }
message Loc { double lat = 1; int64 alt = 2; }
message Item { string sku = 1; int32 qty = 2; })";
constexpr const char* kProtoNestedTable =
    "id BIGINT, loc STRUCT<lat: DOUBLE>, items ARRAY<STRUCT<sku: STRING>>, "
    "by_sku MAP<STRING, STRUCT<sku: STRING>>";
constexpr const char* kProtoNestedText =
    R"(id: 1 loc { lat: 1.5 alt: 7 } items { sku: "a" qty: 3 }
       by_sku { key: "k" value { sku: "k" qty: 9 } } extra: "e")";

// Under evolution the decoder reports fields new inside nested messages too, each with its path
// ("element" and "value" entering repeated fields and maps) and column type; a decoder for the
// widened schema reads them.
TEST(ProtobufDecoderTest, FieldsNewInsideNestedMessagesAreObserved) {
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas[7] = protobuf_test::ParseProto(kProtoNestedV3);
  ASSERT_NE(schemas->schemas[7], nullptr);
  const std::string message = MakeConfluentFrame(
      7, {0}, protobuf_test::Serialize(*schemas->schemas[7], "shop.Order", kProtoNestedText), true);
  auto table = TableSchema(kProtoNestedTable);
  auto decoder = ProtobufDecoder::Create(table, {.schemas = schemas, .observe = true});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  Status st = (*decoder)->Append(message, &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<std::string> seen;
  for (const FieldObservation& o : (*decoder)->TakeObservations()) {
    EXPECT_TRUE(o.missing);
    seen.push_back(fmt::format("{} {}", fmt::join(o.path, "/"), o.type->ToString()));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"loc/alt BIGINT", "items/element/qty INT",
                                            "by_sku/value/qty INT", "extra STRING"}));

  auto wider = TableSchema(
      "id BIGINT, loc STRUCT<lat: DOUBLE, alt: BIGINT>, items ARRAY<STRUCT<sku: STRING, qty: "
      "INT>>, by_sku MAP<STRING, STRUCT<sku: STRING, qty: INT>>, extra STRING");
  auto next = ProtobufDecoder::Create(wider, {.schemas = schemas, .observe = true});
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  auto rows = columnar::RecordBatch::MakeEmpty(wider);
  st = (*next)->Append(message, &rows);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE((*next)->has_observations());
  EXPECT_EQ((*next)->last_dropped(), nullptr);
  EXPECT_EQ(RowText(rows, 0), R"({id: 1, loc: {lat: 1.5, alt: 7}, items: [{sku: "a", qty: 3}], )"
                              R"(by_sku: {"k": {sku: "k", qty: 9}}, extra: "e"})");
}

// Without evolution the same fields are dropped, and last_dropped() names them with the writer
// type; a message whose type has no such field drops nothing.
TEST(ProtobufDecoderTest, DroppedFieldsAreNamedPerWriterType) {
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas[7] = protobuf_test::ParseProto(kProtoNestedV3);
  schemas->schemas[1] = protobuf_test::ParseProto(kV1);
  ASSERT_NE(schemas->schemas[7], nullptr);
  auto table = TableSchema(kProtoNestedTable);
  auto decoder = ProtobufDecoder::Create(table, {.schemas = schemas});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  Status st = (*decoder)->Append(
      MakeConfluentFrame(
          7, {0}, protobuf_test::Serialize(*schemas->schemas[7], "shop.Order", kProtoNestedText),
          true),
      &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE((*decoder)->has_observations());
  EXPECT_EQ(RowText(batch, 0),
            R"({id: 1, loc: {lat: 1.5}, items: [{sku: "a"}], by_sku: {"k": {sku: "k"}}})");
  const DroppedFields* dropped = (*decoder)->last_dropped();
  ASSERT_NE(dropped, nullptr);
  EXPECT_EQ(dropped->writer, "schema id 7 message shop.Order");
  EXPECT_EQ(dropped->fields, (std::vector<std::string>{"loc.alt", "items.element.qty",
                                                       "by_sku.value.qty", "extra"}));
  // Schema 1's Order has id (and item, which this table lacks).
  ASSERT_TRUE((*decoder)->Append(MakeConfluentFrame(1, {0}, VarintField(1, 2), true), &batch).ok());
  ASSERT_NE((*decoder)->last_dropped(), nullptr);
  EXPECT_EQ((*decoder)->last_dropped()->fields, std::vector<std::string>{"item"});
  auto exact = ProtobufDecoder::Create(TableSchema("id BIGINT, item STRING"), {.schemas = schemas});
  ASSERT_TRUE(exact.ok());
  auto rows = columnar::RecordBatch::MakeEmpty(TableSchema("id BIGINT, item STRING"));
  ASSERT_TRUE((*exact)->Append(MakeConfluentFrame(1, {0}, VarintField(1, 2), true), &rows).ok());
  EXPECT_EQ((*exact)->last_dropped(), nullptr);
}

TEST(ProtobufDecoderTest, AKeyIntoOneStructColumn) {
  auto file = protobuf_test::ParseProto(kV1);
  auto table = TableSchema("key STRUCT<id: BIGINT>, v STRING");
  auto decoder = ProtobufDecoder::Create(
      table, {.message = *file->Message("shop.Order"), .whole_message_column = "key"});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  EXPECT_EQ((*decoder)->output_columns(), (std::vector<int>{0}));
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  ASSERT_TRUE((*decoder)->Append(VarintField(1, 3), &batch).ok());
  EXPECT_EQ(CellText(batch.column(0), 0), "{id: 3}");
}

TEST(ProtobufDecoderTest, OptionsThatDoNotWork) {
  auto table = TableSchema("id BIGINT");
  EXPECT_FALSE(ProtobufDecoder::Create(table, {}).ok());
  auto file = protobuf_test::ParseProto(kV1);
  EXPECT_FALSE(
      ProtobufDecoder::Create(table, {.message = *file->Message("shop.Order"), .columns = {"x"}})
          .ok());
  EXPECT_FALSE(
      ProtobufDecoder::Create(TableSchema("item INT"), {.message = *file->Message("shop.Order")})
          .ok());
}

}  // namespace
}  // namespace ferry::transform

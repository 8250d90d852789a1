// The Avro decoder: unframed messages with a fixed schema, framed ones with schemas by id (each
// fetched once), a registry outage that is not a bad record, and an unknown id or an unreadable
// schema that is.
#include "ferry/transform/avro_decoder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ferry/columnar/ddl.h"
#include "ferry/transform/avro_bytes_for_test.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::transform {
namespace {

using avro_test::Long;
using avro_test::Str;

std::shared_ptr<const avro::Schema> Parse(const std::string& json) {
  auto schema = avro::Schema::Parse(json);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return std::make_shared<const avro::Schema>(std::move(*schema));
}

class MapSchemas : public WriterSchemas {
 public:
  Result<std::shared_ptr<const avro::Schema>> Get(int32_t id) override {
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
  std::map<int32_t, std::shared_ptr<const avro::Schema>> schemas;
  std::map<int32_t, int> asked;
  bool down = false;
};

columnar::SchemaPtr TableSchema(const std::string& ddl) {
  auto parsed = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return std::make_shared<const columnar::Schema>(*parsed);
}

constexpr const char* kV1 = R"({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "item", "type": "string"}]})";
// v2 adds a field with a default; the table does not have it (yet).
constexpr const char* kV2 = R"({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "item", "type": "string"},
    {"name": "qty", "type": "int", "default": 1}]})";

TEST(AvroDecoderTest, UnframedMessagesWithAFixedSchema) {
  auto table = TableSchema("id BIGINT, item STRING, _offset BIGINT");
  auto decoder =
      AvroDecoder::Create(table, {.writer_schema = Parse(kV1), .columns = {"id", "item"}});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  EXPECT_EQ((*decoder)->output_columns(), (std::vector<int>{0, 1}));
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  ASSERT_TRUE((*decoder)->Append(Long(1) + Str("pen"), &batch).ok());
  batch.mutable_column(2)->As<columnar::Int64Column>()->Append(100);  // the pipeline's column
  EXPECT_EQ(RowText(batch, 0), R"({id: 1, item: "pen", _offset: 100})");
}

TEST(AvroDecoderTest, FramedMessagesEachSchemaFetchedOnce) {
  auto table = TableSchema("id BIGINT, item STRING");
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas = {{1, Parse(kV1)}, {2, Parse(kV2)}};
  auto decoder = AvroDecoder::Create(table, {.schemas = schemas});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  for (int i = 0; i < 3; ++i) {
    Status st = (*decoder)->Append(MakeConfluentFrame(1, {}, Long(i) + Str("a"), false), &batch);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  Status st =
      (*decoder)->Append(MakeConfluentFrame(2, {}, Long(9) + Str("b") + Long(4), false), &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(batch.num_rows(), 4);
  EXPECT_EQ(RowText(batch, 3), R"({id: 9, item: "b"})");
  EXPECT_EQ(schemas->asked, (std::map<int32_t, int>{{1, 1}, {2, 1}}));
  EXPECT_EQ((*decoder)->writer_schemas_seen(), 2u);
}

// Under schema evolution the decoder reports a writer's top-level fields the batch lacks, with
// their column types, on every message of that schema (and nothing for the others); a decoder
// for the widened schema reads them.
TEST(AvroDecoderTest, ObservingReportsNewWriterFields) {
  auto table = TableSchema("id BIGINT, item STRING");
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas = {{1, Parse(kV1)}, {2, Parse(kV2)}};
  auto decoder = AvroDecoder::Create(table, {.schemas = schemas, .observe = true});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  ASSERT_TRUE(
      (*decoder)->Append(MakeConfluentFrame(1, {}, Long(1) + Str("a"), false), &batch).ok());
  EXPECT_FALSE((*decoder)->has_observations());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE((*decoder)
                    ->Append(MakeConfluentFrame(2, {}, Long(2) + Str("b") + Long(7), false), &batch)
                    .ok());
    std::vector<FieldObservation> seen = (*decoder)->TakeObservations();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].path, std::vector<std::string>{"qty"});
    EXPECT_EQ(seen[0].type->ToString(), "INT");
    EXPECT_TRUE(seen[0].missing);
  }
  auto wider = TableSchema("id BIGINT, item STRING, qty INT");
  auto next = AvroDecoder::Create(wider, {.schemas = schemas, .observe = true});
  ASSERT_TRUE(next.ok());
  auto rows = columnar::RecordBatch::MakeEmpty(wider);
  ASSERT_TRUE(
      (*next)->Append(MakeConfluentFrame(2, {}, Long(2) + Str("b") + Long(7), false), &rows).ok());
  EXPECT_FALSE((*next)->has_observations());
  EXPECT_EQ(RowText(rows, 0), R"({id: 2, item: "b", qty: 7})");
  // v1 into the wider table: qty is null.
  ASSERT_TRUE((*next)->Append(MakeConfluentFrame(1, {}, Long(3) + Str("c"), false), &rows).ok());
  EXPECT_EQ(RowText(rows, 1), R"({id: 3, item: "c", qty: null})");
}

// v3 adds fields inside nested records: in a record field, in an array's element records, in a
// nullable union's record; and one at the top level.
constexpr const char* kAvroNestedV3 = R"({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"},
    {"name": "loc", "type": {"type": "record", "name": "Loc", "fields": [
        {"name": "lat", "type": "double"}, {"name": "alt", "type": "long"}]}},
    {"name": "items", "type": {"type": "array", "items": {"type": "record", "name": "Item",
        "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}},
    {"name": "opt", "type": ["null", {"type": "record", "name": "Opt", "fields": [
        {"name": "x", "type": "int"}, {"name": "y", "type": "string"}]}], "default": null},
    {"name": "extra", "type": "string"}]})";
constexpr const char* kAvroNestedTable =
    "id BIGINT, loc STRUCT<lat: DOUBLE>, items ARRAY<STRUCT<sku: STRING>>, opt STRUCT<x: INT>";

// The v3 datum: id 1, loc {1.5, alt 7}, items [{a, qty 3}], opt {x 4, y "yy"}, extra "e".
std::string AvroNestedDatum() {
  std::string lat("\x00\x00\x00\x00\x00\x00\xf8\x3f", 8);  // 1.5, little-endian
  return Long(1) + lat + Long(7) + Long(1) + Str("a") + Long(3) + Long(0) + Long(1) + Long(4) +
         Str("yy") + Str("e");
}

// Under evolution the decoder reports fields new inside nested records too, each with its path
// (arrays entered by "element") and column type; a decoder for the widened schema reads them.
TEST(AvroDecoderTest, ObservingReportsFieldsNewInsideNestedRecords) {
  auto table = TableSchema(kAvroNestedTable);
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas = {{5, Parse(kAvroNestedV3)}};
  auto decoder = AvroDecoder::Create(table, {.schemas = schemas, .observe = true});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  Status st = (*decoder)->Append(MakeConfluentFrame(5, {}, AvroNestedDatum(), false), &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<std::string> seen;
  for (const FieldObservation& o : (*decoder)->TakeObservations()) {
    EXPECT_TRUE(o.missing);
    seen.push_back(fmt::format("{} {}", fmt::join(o.path, "/"), o.type->ToString()));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"loc/alt BIGINT", "items/element/qty INT",
                                            "opt/y STRING", "extra STRING"}));

  auto wider = TableSchema(
      "id BIGINT, loc STRUCT<lat: DOUBLE, alt: BIGINT>, items ARRAY<STRUCT<sku: STRING, qty: "
      "INT>>, opt STRUCT<x: INT, y: STRING>, extra STRING");
  auto next = AvroDecoder::Create(wider, {.schemas = schemas, .observe = true});
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  auto rows = columnar::RecordBatch::MakeEmpty(wider);
  st = (*next)->Append(MakeConfluentFrame(5, {}, AvroNestedDatum(), false), &rows);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE((*next)->has_observations());
  EXPECT_EQ((*next)->last_dropped(), nullptr);
  EXPECT_EQ(RowText(rows, 0), R"({id: 1, loc: {lat: 1.5, alt: 7}, items: [{sku: "a", qty: 3}], )"
                              R"(opt: {x: 4, y: "yy"}, extra: "e"})");
}

// Without evolution the same fields are dropped: the row has what the table holds, and
// last_dropped() names every skipped field, top-level and nested, with the writer schema; a
// message of a schema without such fields drops nothing.
TEST(AvroDecoderTest, DroppedFieldsAreNamedPerWriterSchema) {
  auto table = TableSchema(kAvroNestedTable);
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas = {{5, Parse(kAvroNestedV3)}};
  auto decoder = AvroDecoder::Create(table, {.schemas = schemas});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  Status st = (*decoder)->Append(MakeConfluentFrame(5, {}, AvroNestedDatum(), false), &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE((*decoder)->has_observations());
  EXPECT_EQ(RowText(batch, 0), R"({id: 1, loc: {lat: 1.5}, items: [{sku: "a"}], opt: {x: 4}})");
  const DroppedFields* dropped = (*decoder)->last_dropped();
  ASSERT_NE(dropped, nullptr);
  EXPECT_EQ(dropped->writer, "schema id 5");
  EXPECT_EQ(dropped->fields,
            (std::vector<std::string>{"loc.alt", "items.element.qty", "opt.y", "extra"}));
  // A bad datum of the same schema appends nothing and drops nothing.
  st = (*decoder)->Append(MakeConfluentFrame(5, {}, Long(1), false), &batch);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*decoder)->last_dropped(), nullptr);

  // The fixed schema of unframed messages is named by its record.
  auto fixed =
      AvroDecoder::Create(TableSchema("id BIGINT, item STRING"), {.writer_schema = Parse(kV2)});
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  auto rows = columnar::RecordBatch::MakeEmpty(TableSchema("id BIGINT, item STRING"));
  ASSERT_TRUE((*fixed)->Append(Long(2) + Str("b") + Long(7), &rows).ok());
  ASSERT_NE((*fixed)->last_dropped(), nullptr);
  EXPECT_EQ((*fixed)->last_dropped()->writer, "writer schema Order");
  EXPECT_EQ((*fixed)->last_dropped()->fields, std::vector<std::string>{"qty"});
  auto exact =
      AvroDecoder::Create(TableSchema("id BIGINT, item STRING"), {.writer_schema = Parse(kV1)});
  ASSERT_TRUE(exact.ok());
  ASSERT_TRUE((*exact)->Append(Long(2) + Str("b"), &rows).ok());
  EXPECT_EQ((*exact)->last_dropped(), nullptr);
}

TEST(AvroDecoderTest, AnOutageIsNotABadRecordAnUnknownIdIs) {
  auto table = TableSchema("id BIGINT, item STRING");
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas = {{1, Parse(kV1)}};
  auto decoder = AvroDecoder::Create(table, {.schemas = schemas});
  ASSERT_TRUE(decoder.ok());
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  const std::string message = MakeConfluentFrame(1, {}, Long(5) + Str("x"), false);
  schemas->down = true;
  Status st = (*decoder)->Append(message, &batch);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_EQ(batch.num_rows(), 0);
  schemas->down = false;  // back: the same message now decodes
  ASSERT_TRUE((*decoder)->Append(message, &batch).ok());
  EXPECT_EQ(batch.num_rows(), 1);

  st = (*decoder)->Append(MakeConfluentFrame(77, {}, Long(5) + Str("x"), false), &batch);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("schema id 77: unknown to the schema registry (HTTP 404"),
            std::string::npos)
      << st.ToString();
  // Remembered: a second message of id 77 does not ask again.
  (void)(*decoder)->Append(MakeConfluentFrame(77, {}, "", false), &batch);
  EXPECT_EQ(schemas->asked[77], 1);

  st = (*decoder)->Append("{\"id\": 5}", &batch);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("not the magic byte"), std::string::npos) << st.ToString();
  st = (*decoder)->Append(MakeConfluentFrame(1, {}, Long(5), false), &batch);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("schema id 1: Avro datum: field 'item'"), std::string::npos)
      << st.ToString();
  EXPECT_EQ(batch.num_rows(), 1);
}

TEST(AvroDecoderTest, AWriterSchemaTheTableCannotTakeMakesItsMessagesBadRecords) {
  auto table = TableSchema("id INT, item STRING");
  auto schemas = std::make_shared<MapSchemas>();
  schemas->schemas = {{3, Parse(kV1)}};
  auto decoder = AvroDecoder::Create(table, {.schemas = schemas});
  ASSERT_TRUE(decoder.ok());
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  for (int i = 0; i < 2; ++i) {
    Status st = (*decoder)->Append(MakeConfluentFrame(3, {}, Long(1) + Str("a"), false), &batch);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("schema id 3: Avro: field 'id': the writer's long cannot be read "
                                "into INT"),
              std::string::npos)
        << st.ToString();
  }
  EXPECT_EQ(schemas->asked[3], 1);
  // The fixed schema is checked up front instead.
  auto fixed = AvroDecoder::Create(table, {.writer_schema = Parse(kV1)});
  EXPECT_EQ(fixed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AvroDecoder::Create(table, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AvroDecoder::Create(table,
                                {
                                    .columns = {"nope"},
                                })
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::transform

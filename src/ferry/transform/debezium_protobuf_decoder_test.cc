// format = "debezium-protobuf": Debezium's envelope as Confluent's ProtobufConverter writes it,
// decoded into the same rows, ops, envelope columns and error messages as the debezium-json and
// debezium-avro fixtures (debezium_customers_for_test.h), tombstones from Protobuf keys, a new
// writer schema version that adds a column mid-stream, and the converter's options for nullable
// fields (wrapper.for.nullables, optional.for.nullables).
//
// The .proto texts are written here from what ProtobufData (Confluent's Connect-to-Protobuf
// mapping) makes of Debezium's PostgreSQL connector schemas: structs as messages nested in the
// envelope, fields numbered in Connect order, Connect Decimal as confluent.type.Decimal, Debezium's
// time types as plain integers. The messages are serialized by libprotobuf from text format.
#include "ferry/transform/debezium_protobuf_decoder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ferry/columnar/schema_for_test.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/debezium_customers_for_test.h"
#include "ferry/transform/debezium_json_decoder.h"
#include "ferry/transform/protobuf_test_support.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::transform {
namespace debezium_protobuf_test {

using columnar::Ddl;
using columnar::RecordBatch;
using columnar::SchemaPtr;
using debezium_customers::Expected;
using debezium_customers::kAfterRow;
using debezium_customers::kBeforeRow;
using debezium_customers::kTable;

using Files = std::vector<std::pair<std::string, std::string>>;

// The registry: each id's .proto files (its references first, as the registry client gives
// them).
class MapSchemas : public ProtoSchemas {
 public:
  Result<std::shared_ptr<const protobuf::ProtoSchema>> Get(int32_t id) override {
    auto it = files.find(id);
    if (it == files.end()) {
      return NotFound("HTTP 404 (error 40403: Schema not found)");
    }
    return protobuf::ProtoSchema::FromProtoFiles(it->second);
  }
  std::map<int32_t, Files> files;
};

// confluent/type/decimal.proto, which ProtobufConverter registers as a reference.
constexpr const char* kDecimalProto = R"(syntax = "proto3";
package confluent.type;
message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; })";

// The Value message: id, name, birth (io.debezium.time.Date: int32), seen (MicroTimestamp:
// int64), price (Connect Decimal(10,2)); `extra` adds fields (a new version of the source
// table). `wrap`: wrapper.for.nullables=true (optional fields as google.protobuf wrappers).
std::string ValueMessage(bool wrap, std::string_view extra = "") {
  if (wrap) {
    return fmt::format(
        "message Value {{ int32 id = 1; google.protobuf.StringValue name = 2; "
        "google.protobuf.Int32Value birth = 3; google.protobuf.Int64Value seen = 4; "
        "confluent.type.Decimal price = 5; {} }}",
        extra);
  }
  return fmt::format(
      "message Value {{ int32 id = 1; string name = 2; int32 birth = 3; int64 seen = 4; "
      "confluent.type.Decimal price = 5; {} }}",
      extra);
}

Files EnvelopeProto(bool wrap = false, std::string_view extra = "") {
  const std::string lsn = wrap ? "google.protobuf.Int64Value" : "int64";
  std::string text = fmt::format(
      R"(syntax = "proto3";
package shop.public.customers;
import "confluent/type/decimal.proto";
{2}
message Envelope {{
  Value before = 1;
  Value after = 2;
  Source source = 3;
  string op = 4;
  {0} ts_ms = 5;
  block transaction = 6;
  {1}
  message Source {{
    string version = 1; string connector = 2; string name = 3; int64 ts_ms = 4;
    string snapshot = 5; string db = 6; string sequence = 7; string schema = 8;
    string table = 9; {0} txId = 10; {0} lsn = 11; {0} xmin = 12;
  }}
  message block {{ string id = 1; int64 total_order = 2; int64 data_collection_order = 3; }}
}})",
      lsn, ValueMessage(wrap, extra), wrap ? "import \"google/protobuf/wrappers.proto\";" : "");
  return {{"confluent/type/decimal.proto", kDecimalProto}, {"customers.proto", text}};
}

constexpr const char* kKeyProto = R"(syntax = "proto3";
package shop.public.customers;
message Key { int32 id = 1; })";

// Text format of the rows of debezium_customers_for_test.h (price 12.34 is 0x04d2 at scale 2,
// -0.01 is 0xff); `wrap` as above.
std::string AfterText(bool wrap) {
  return wrap ? R"(id: 7 name { value: "Ada" } birth { value: 19675 }
                 seen { value: 1700000000123456 }
                 price { value: "\004\322" precision: 10 scale: 2 })"
              : R"(id: 7 name: "Ada" birth: 19675 seen: 1700000000123456
                 price { value: "\004\322" precision: 10 scale: 2 })";
}
std::string BeforeText(bool wrap) {
  return wrap ? R"(id: 7 name { value: "Ad" } price { value: "\377" precision: 10 scale: 2 })"
              : R"(id: 7 name: "Ad" price { value: "\377" precision: 10 scale: 2 })";
}

std::string SourceText(bool wrap) {
  return fmt::format(
      R"(source {{ version: "2.5.0.Final" connector: "postgresql" name: "shop"
         ts_ms: 1700000000000 snapshot: "false" db: "shop" table: "customers"
         txId: {} lsn: {} }})",
      wrap ? "{ value: 771 }" : "771", wrap ? "{ value: 23734904 }" : "23734904");
}

struct Harness {
  explicit Harness(std::string_view ddl = kTable, bool observe = false, bool wrapped = false)
      : wrap(wrapped),
        schemas(std::make_shared<MapSchemas>()),
        schema(Ddl(ddl)),
        batch(RecordBatch::MakeEmpty(schema)) {
    schemas->files = {{1, EnvelopeProto(wrapped)}, {5, {{"key.proto", kKeyProto}}}};
    DebeziumProtobufOptions o{.schemas = schemas,
                              .envelope_columns = debezium_customers::EnvelopeColumns(),
                              .observe = observe,
                              .epoch_micros_per_unit = 1};  // `seen` is a MicroTimestamp
    auto d = DebeziumProtobufDecoder::Create(schema, std::move(o));
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    if (d.ok()) {
      decoder = std::move(*d);
    }
  }

  // The framed Envelope of schema `id` with `op` and the rows' text (empty: absent, null).
  std::string Envelope(std::string_view op, const std::string& before, const std::string& after,
                       int32_t id = 1) {
    std::string text =
        fmt::format("op: \"{}\" ts_ms: {} {}", op,
                    wrap ? "{ value: 1700000000456 }" : "1700000000456", SourceText(wrap));
    if (!before.empty()) {
      text += " before { " + before + " }";
    }
    if (!after.empty()) {
      text += " after { " + after + " }";
    }
    Result<std::shared_ptr<const protobuf::ProtoSchema>> file = schemas->Get(id);
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    if (!file.ok()) {
      return "";
    }
    std::string bytes = protobuf_test::Serialize(**file, "shop.public.customers.Envelope", text);
    return MakeConfluentFrame(id, {0}, bytes, true);
  }

  std::string Decode(std::string_view message, bool tombstone = false) {
    return debezium_customers::DecodeChange(decoder.get(), &batch, message, tombstone);
  }

  bool wrap;
  std::shared_ptr<MapSchemas> schemas;
  SchemaPtr schema;
  RecordBatch batch;
  std::unique_ptr<DebeziumProtobufDecoder> decoder;
};

TEST(DebeziumProtobufDecoderTest, EveryOpAsTheJsonDecoderReadsIt) {
  for (bool wrap : {false, true}) {
    SCOPED_TRACE(wrap ? "wrapper.for.nullables" : "plain fields");
    Harness h(kTable, false, wrap);
    const std::string after = AfterText(wrap);
    const std::string before = BeforeText(wrap);
    EXPECT_EQ(h.Decode(h.Envelope("c", "", after)), Expected("upsert", kAfterRow, "c"));
    EXPECT_EQ(h.Decode(h.Envelope("r", "", after)), Expected("upsert", kAfterRow, "r"));
    EXPECT_EQ(h.Decode(h.Envelope("u", before, after)), Expected("upsert", kAfterRow, "u"));
    EXPECT_EQ(h.Decode(h.Envelope("d", before, "")), Expected("delete", kBeforeRow, "d"));
    EXPECT_EQ(h.batch.num_rows(), 4);
    EXPECT_EQ(h.decoder->last_dropped(), nullptr);
  }
}

// optional.for.nullables=true: proto3 `optional` fields (a synthetic oneof each).
TEST(DebeziumProtobufDecoderTest, OptionalForNullables) {
  Harness h;
  h.schemas->files[2] = {{"confluent/type/decimal.proto", kDecimalProto},
                         {"customers.proto",
                          R"(syntax = "proto3"; package shop.public.customers;
import "confluent/type/decimal.proto";
message Envelope {
  Value before = 1; Value after = 2; Source source = 3; string op = 4; optional int64 ts_ms = 5;
  message Value { int32 id = 1; optional string name = 2; optional int32 birth = 3;
                  optional int64 seen = 4; confluent.type.Decimal price = 5; }
  message Source { int64 ts_ms = 4; string db = 6; optional int64 lsn = 11; }
})"}};
  auto file = h.schemas->Get(2);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  std::string text =
      "op: \"c\" ts_ms: 1700000000456 source { ts_ms: 1700000000000 db: \"shop\" lsn: 23734904 } "
      "after { " +
      AfterText(false) + " }";
  std::string bytes = protobuf_test::Serialize(**file, "shop.public.customers.Envelope", text);
  EXPECT_EQ(h.Decode(MakeConfluentFrame(2, {0}, bytes, true)), Expected("upsert", kAfterRow, "c"));
}

TEST(DebeziumProtobufDecoderTest, Tombstones) {
  Harness h;
  std::string nulls =
      "name: null, birth: null, seen: null, price: null, _op: \"d\", _lsn: null, "
      "_source_ts: null, _ts_ms: null, _db: null}";
  std::string key = protobuf_test::VarintField(1, 7);
  EXPECT_EQ(h.Decode(MakeConfluentFrame(5, {0}, key, true), true), "delete: {id: 7, " + nulls);
  EXPECT_EQ(h.Decode("", true), "ERROR: key: a tombstone without a key deletes nothing");
  EXPECT_EQ(h.Decode(MakeConfluentFrame(9, {0}, key, true), true),
            "ERROR: key: schema id 9: unknown to the schema registry (HTTP 404 (error 40403: "
            "Schema not found))");
  // proto3 writes a zero as nothing: an empty Key is id 0 (the column is NOT NULL: a required
  // Connect field), and so is a `before` without its id.
  EXPECT_EQ(h.Decode(MakeConfluentFrame(5, {0}, "", true), true), "delete: {id: 0, " + nulls);
  EXPECT_EQ(h.Decode(h.Envelope("d", "name: \"Ad\"", "")),
            Expected("delete", "id: 0, name: \"Ad\", birth: null, seen: null, price: null", "d"));
  EXPECT_EQ(h.Decode(key, true).substr(0, 12), "ERROR: key: ");  // not framed
  EXPECT_EQ(h.Decode(h.Envelope("c", "", AfterText(false))), Expected("upsert", kAfterRow, "c"));
}

// The same bad envelopes as debezium-json, the same reasons (after the schema id).
TEST(DebeziumProtobufDecoderTest, BadEnvelopesNameTheFieldAsJsonDoes) {
  Harness h;
  auto json = DebeziumJsonDecoder::Create(h.schema, {.envelope_columns = {{"op", "_op"}}});
  ASSERT_TRUE(json.ok());
  auto json_error = [&](std::string_view message) {
    RecordBatch b = RecordBatch::MakeEmpty(h.schema);
    return "ERROR: schema id 1: " + (*json)->Append(message, &b).message();
  };
  const std::string after = AfterText(false);
  EXPECT_EQ(h.Decode(h.Envelope("x", "", after)), json_error(R"({"op":"x","after":{"id":1}})"));
  EXPECT_EQ(h.Decode(h.Envelope("c", "", "")), json_error(R"({"op":"c","after":null})"));
  EXPECT_EQ(h.Decode(h.Envelope("d", "", "")), json_error(R"({"op":"d","before":null})"));
  EXPECT_EQ(h.Decode(h.Envelope("t", "", "")),
            "ERROR: schema id 1: field 'op': unknown operation \"t\" (expected c, r, u or d; "
            "truncate 't' and message 'm' events carry no row)");
  EXPECT_EQ(h.Decode(h.Envelope("", "", after)), json_error(R"({"after":{"id":1}})"));
  // A writer schema without op: every message of it.
  h.schemas->files[2] = {{"e.proto", R"(syntax = "proto3"; package shop;
message Envelope { Value after = 1; message Value { int32 id = 1; } })"}};
  std::string no_op = protobuf_test::LenField(1, protobuf_test::VarintField(1, 1));
  EXPECT_EQ(h.Decode(MakeConfluentFrame(2, {0}, no_op, true)),
            "ERROR: schema id 2: field 'op': missing (not a Debezium change envelope: the "
            "writer's message \"shop.Envelope\" has no field op)");
  // `after` of a type that is not a message.
  h.schemas->files[3] = {{"e.proto", R"(syntax = "proto3"; package shop;
message Envelope { string after = 1; string op = 2; })"}};
  EXPECT_EQ(h.Decode(MakeConfluentFrame(3, {0}, no_op, true)),
            "ERROR: schema id 3: field 'after': the writer's type is not a message (not a "
            "Debezium change envelope)");
  // Bad data inside the row names the row's field.
  std::string bad_name = protobuf_test::VarintField(1, 7) + protobuf_test::LenField(2, "\xff");
  std::string envelope = protobuf_test::LenField(4, "c") + protobuf_test::LenField(2, bad_name);
  EXPECT_EQ(h.Decode(MakeConfluentFrame(1, {0}, envelope, true)),
            "ERROR: schema id 1: field 'after.name': a string that is not UTF-8 at byte 4");
  // A date out of DATE's range.
  std::string bad_date = protobuf_test::VarintField(1, 7) + protobuf_test::VarintField(3, 9999999);
  EXPECT_EQ(
      h.Decode(MakeConfluentFrame(
          1, {0}, protobuf_test::LenField(4, "c") + protobuf_test::LenField(2, bad_date), true)),
      "ERROR: schema id 1: field 'after.birth': the day count 9999999 is out of DATE's "
      "range at byte 2");
  // A truncated envelope (its last field, ts_ms, is a varint).
  std::string whole = h.Envelope("c", "", after);
  EXPECT_TRUE(h.Decode(whole.substr(0, whole.size() - 3))
                  .starts_with("ERROR: schema id 1: Protobuf message: field '<top>': a truncated "
                               "or over-long varint"))
      << h.Decode(whole.substr(0, whole.size() - 3));
  EXPECT_EQ(h.batch.num_rows(), 0);
  EXPECT_EQ(h.Decode(whole), Expected("upsert", kAfterRow, "c"));
}

// A column added in the source table: Debezium registers a new Envelope version whose Value has
// a field more. Observed (schema evolution), it is a new column; in a table that has the
// column, rows of the old version read it as null.
TEST(DebeziumProtobufDecoderTest, ANewValueFieldMidStream) {
  const Files v2 = EnvelopeProto(false, "string email = 6;");
  const std::string after = AfterText(false);
  {
    Harness h(kTable, /*observe=*/true);
    h.schemas->files[2] = v2;
    EXPECT_EQ(h.Decode(h.Envelope("c", "", after)), Expected("upsert", kAfterRow, "c"));
    EXPECT_FALSE(h.decoder->has_observations());
    EXPECT_EQ(h.Decode(h.Envelope("c", "", after + " email: \"ada@x\"", 2)),
              Expected("upsert", kAfterRow, "c"));
    debezium_customers::ExpectEmailObservedAndDropped(*h.decoder);
    if (HasFatalFailure()) {
      return;
    }
  }
  // The evolved table: the pipeline makes a new decoder over it.
  Harness h(std::string(kTable) + ", email STRING", /*observe=*/true);
  h.schemas->files[2] = v2;
  std::string with_null = Expected("upsert", kAfterRow, "c");
  with_null.insert(with_null.size() - 1, ", email: null");
  EXPECT_EQ(h.Decode(h.Envelope("c", "", after)), with_null);
  std::string with_email = Expected("upsert", kAfterRow, "u");
  with_email.insert(with_email.size() - 1, ", email: \"ada@x\"");
  EXPECT_EQ(h.Decode(h.Envelope("u", BeforeText(false), after + " email: \"ada@x\"", 2)),
            with_email);
  EXPECT_FALSE(h.decoder->has_observations());
}

// Debezium's other types without their Connect names: Timestamp (epoch millis, the default
// unit) and VariableScaleDecimal (rescaled; too wide for its column: bad data).
TEST(DebeziumProtobufDecoderTest, ConnectTypesWithoutTheirNames) {
  auto schemas = std::make_shared<MapSchemas>();
  schemas->files[3] = {{"e.proto", R"(syntax = "proto3"; package shop;
message Envelope {
  Value after = 1; string op = 2;
  message Value { int64 a = 1; VariableScaleDecimal v = 2; VariableScaleDecimal w = 3; }
  message VariableScaleDecimal { int32 scale = 1; bytes value = 2; }
})"}};
  SchemaPtr schema = Ddl("a TIMESTAMP, v DECIMAL(10,3), w DECIMAL(4,0)");
  auto d = DebeziumProtobufDecoder::Create(schema, {.schemas = schemas});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  auto file = schemas->Get(3);
  ASSERT_TRUE(file.ok());
  // 0x3039 = 12345 at scale 1 = 1234.5.
  std::string text = R"(op: "c" after { a: 1700000000123 v { scale: 1 value: "\060\071" } })";
  std::string bytes = protobuf_test::Serialize(**file, "shop.Envelope", text);
  Status st = (*d)->Append(MakeConfluentFrame(3, {0}, bytes, true), &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(batch, 0), "{a: 2023-11-14T22:13:20.123, v: 1234.500, w: null}");
  text = R"(op: "c" after { w { scale: 0 value: "\060\071" } })";
  bytes = protobuf_test::Serialize(**file, "shop.Envelope", text);
  EXPECT_EQ((*d)->Append(MakeConfluentFrame(3, {0}, bytes, true), &batch).message(),
            "schema id 3: field 'after.w': the decimal 12345 does not fit DECIMAL(4, 0) at byte 2");
  EXPECT_EQ(batch.num_rows(), 1);
}

TEST(DebeziumProtobufDecoderTest, CreateNeedsARegistryAndChecksEnvelopeColumns) {
  SchemaPtr schema = Ddl("id INT, _lsn DOUBLE");
  EXPECT_NE(DebeziumProtobufDecoder::Create(schema, {}).status().message().find("schema registry"),
            std::string::npos);
  EXPECT_EQ(DebeziumProtobufDecoder::Create(schema, {.schemas = std::make_shared<MapSchemas>(),
                                                     .envelope_columns = {{"source.lsn", "_lsn"}}})
                .status()
                .message(),
            "envelope_columns: column \"_lsn\" for 'source.lsn' is DOUBLE; envelope columns are "
            "STRING, BIGINT, INT, BOOLEAN, TIMESTAMP or TIMESTAMP_NTZ");
}

}  // namespace debezium_protobuf_test
}  // namespace ferry::transform
